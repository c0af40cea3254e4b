//! x86-64 ELF unwinding from DWARF call frame information: `.eh_frame`
//! (looked up through `.eh_frame_hdr`'s sorted table when the file has
//! one) and `.debug_frame`, in the binary or in its separate debug file.
//! Read with gimli; CFA rules of the register + offset kind are evaluated,
//! expression rules are declined (the walker then falls back to frame
//! pointers and scanning).

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use gimli::{
    BaseAddresses, CfaRule, CieOrFde, DebugFrame, EhFrame, EhFrameHdr, EndianArcSlice,
    FrameDescriptionEntry, ParsedEhFrameHdr, RegisterRule, RunTimeEndian, UnwindContext,
    UnwindSection, UnwindTableRow,
};
use memmap2::Mmap;
use object::{Object as _, ObjectSection as _, ObjectSegment as _, SectionFlags};

use super::{Callee, Registers, ReturnAddress, Stack, Unwinder, NONVOLATILE_SYSV, RIP, RSP};
use crate::symbols::paths::map_file;

type Reader = EndianArcSlice<RunTimeEndian>;
type Fde = FrameDescriptionEntry<Reader>;

/// A sorted index of a section's FDEs, for sections without a lookup table.
fn index<S: UnwindSection<Reader>>(section: &S, bases: &BaseAddresses) -> Vec<Fde> {
    let mut out = Vec::new();
    let mut entries = section.entries(bases);
    // A malformed entry ends the section: what came before stays usable.
    while let Ok(Some(entry)) = entries.next() {
        if let CieOrFde::Fde(partial) = entry {
            if let Ok(fde) = partial.parse(|s, b, o| s.cie_from_offset(b, o)) {
                if fde.len() > 0 {
                    out.push(fde);
                }
            }
        }
    }
    out.sort_by_key(|fde| fde.initial_address());
    out
}

fn find(index: &[Fde], address: u64) -> Option<&Fde> {
    let i = index
        .partition_point(|fde| fde.initial_address() <= address)
        .checked_sub(1)?;
    let fde = &index[i];
    fde.contains(address).then_some(fde)
}

struct EhFrameTable {
    section: EhFrame<Reader>,
    bases: BaseAddresses,
    header: Option<ParsedEhFrameHdr<Reader>>,
    /// Only when there is no usable header table.
    index: Vec<Fde>,
}

impl EhFrameTable {
    fn fde(&self, address: u64) -> Option<Fde> {
        if let Some(table) = self.header.as_ref().and_then(|h| h.table()) {
            return table
                .fde_for_address(&self.section, &self.bases, address, |s, b, o| {
                    s.cie_from_offset(b, o)
                })
                .ok();
        }
        find(&self.index, address).cloned()
    }
}

struct DebugFrameTable {
    section: DebugFrame<Reader>,
    index: Vec<Fde>,
}

/// The call frame information of one ELF module.
pub(crate) struct ElfUnwinder {
    eh_frame: Option<EhFrameTable>,
    debug_frame: Option<DebugFrameTable>,
    /// Where the module's base lies in the file's address space.
    bias: u64,
    /// Executable sections: (start, end, file offset) in file addresses.
    executable: Vec<(u64, u64, u64)>,
    /// The binary, for the bytes before a return address.
    code: Option<Mmap>,
    what: String,
}

fn section_data(file: &object::File<'_>, name: &str, endian: RunTimeEndian) -> Option<Reader> {
    let section = file.section_by_name(name)?;
    if section.kind() == object::SectionKind::UninitializedData {
        return None; // NOBITS: a debug file's placeholder
    }
    let bytes: Cow<'_, [u8]> = section.uncompressed_data().ok()?;
    if bytes.is_empty() {
        return None;
    }
    Some(EndianArcSlice::new(Arc::from(&*bytes), endian))
}

fn endian(file: &object::File<'_>) -> RunTimeEndian {
    if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    }
}

impl ElfUnwinder {
    /// Reads the binary at `binary` (`.eh_frame`, `.debug_frame`, the
    /// executable sections) and, when given, the `.debug_frame` of its
    /// separate debug file. Both were checked to be the module's by the
    /// caller. `None` when neither has call frame information for x86-64.
    pub(crate) fn load(binary: Option<&Path>, debug: Option<&Path>) -> Option<ElfUnwinder> {
        let mut unwinder = ElfUnwinder {
            eh_frame: None,
            debug_frame: None,
            bias: 0,
            executable: Vec::new(),
            code: None,
            what: String::new(),
        };
        let mut read = Vec::new();
        if let Some(path) = binary {
            let map = map_file(path).ok()?;
            let file = object::File::parse(&*map).ok()?;
            if file.architecture() != object::Architecture::X86_64 {
                return None;
            }
            let endian = endian(&file);
            unwinder.bias = file.segments().map(|s| s.address()).min().unwrap_or(0) & !0xfff;
            unwinder.executable = file
                .sections()
                .filter(|s| match s.flags() {
                    SectionFlags::Elf { sh_flags } => {
                        sh_flags & u64::from(object::elf::SHF_EXECINSTR) != 0
                    }
                    _ => false,
                })
                .filter_map(|s| {
                    let (offset, _) = s.file_range()?;
                    Some((s.address(), s.address().saturating_add(s.size()), offset))
                })
                .collect();
            let address = |name: &str| file.section_by_name(name).map(|s| s.address());
            if let Some(data) = section_data(&file, ".eh_frame", endian) {
                let mut bases = BaseAddresses::default();
                if let Some(at) = address(".eh_frame") {
                    bases = bases.set_eh_frame(at);
                }
                if let Some(at) = address(".text") {
                    bases = bases.set_text(at);
                }
                if let Some(at) = address(".got") {
                    bases = bases.set_got(at);
                }
                let mut section = EhFrame::from(data);
                section.set_address_size(8);
                let header = section_data(&file, ".eh_frame_hdr", endian).and_then(|data| {
                    let at = address(".eh_frame_hdr")?;
                    let hdr_bases = bases.clone().set_eh_frame_hdr(at);
                    let parsed = EhFrameHdr::from(data).parse(&hdr_bases, 8).ok()?;
                    bases = hdr_bases;
                    Some(parsed)
                });
                let indexed = header.as_ref().and_then(|h| h.table()).is_some();
                let index = match indexed {
                    true => Vec::new(),
                    false => index(&section, &bases),
                };
                // A section with no entry (just its terminator) describes
                // nothing.
                if indexed || !index.is_empty() {
                    read.push(match indexed {
                        true => ".eh_frame (.eh_frame_hdr)",
                        false => ".eh_frame",
                    });
                    unwinder.eh_frame = Some(EhFrameTable {
                        section,
                        bases,
                        header,
                        index,
                    });
                }
            }
            unwinder.debug_frame = debug_frame(&file, endian);
            if unwinder.debug_frame.is_some() {
                read.push(".debug_frame");
            }
            unwinder.code = Some(map);
            if !read.is_empty() {
                unwinder.what = format!("{} of {}", read.join(" and "), path.display());
            }
        }
        if unwinder.debug_frame.is_none() {
            if let Some(path) = debug {
                let map = map_file(path).ok()?;
                let file = object::File::parse(&*map).ok()?;
                if file.architecture() != object::Architecture::X86_64 {
                    return None;
                }
                if let Some(table) = debug_frame(&file, endian(&file)) {
                    if binary.is_none() {
                        unwinder.bias =
                            file.segments().map(|s| s.address()).min().unwrap_or(0) & !0xfff;
                    }
                    unwinder.debug_frame = Some(table);
                    let part = format!(".debug_frame of {}", path.display());
                    unwinder.what = match unwinder.what.is_empty() {
                        true => part,
                        false => format!("{}, {part}", unwinder.what),
                    };
                }
            }
        }
        (unwinder.eh_frame.is_some() || unwinder.debug_frame.is_some()).then_some(unwinder)
    }

    /// The CFI row for a file address, from `.eh_frame` first.
    fn evaluate(
        &self,
        address: u64,
        registers: &Registers,
        stack: &Stack<'_>,
    ) -> Option<Registers> {
        let mut context = UnwindContext::new();
        if let Some(table) = &self.eh_frame {
            if let Some(fde) = table.fde(address) {
                if let Ok(row) =
                    fde.unwind_info_for_address(&table.section, &table.bases, &mut context, address)
                {
                    return apply(row, registers, stack);
                }
            }
        }
        let table = self.debug_frame.as_ref()?;
        let fde = find(&table.index, address)?;
        let row = fde
            .unwind_info_for_address(
                &table.section,
                &BaseAddresses::default(),
                &mut context,
                address,
            )
            .ok()?;
        apply(row, registers, stack)
    }
}

fn debug_frame(file: &object::File<'_>, endian: RunTimeEndian) -> Option<DebugFrameTable> {
    let data = section_data(file, ".debug_frame", endian)?;
    let mut section = DebugFrame::from(data);
    section.set_address_size(8);
    let index = index(&section, &BaseAddresses::default());
    (!index.is_empty()).then_some(DebugFrameTable { section, index })
}

/// The caller's registers from one CFI row.
fn apply(
    row: &UnwindTableRow<usize>,
    registers: &Registers,
    stack: &Stack<'_>,
) -> Option<Registers> {
    let cfa = match row.cfa() {
        CfaRule::RegisterAndOffset { register, offset } => registers
            .get(usize::from(register.0))?
            .wrapping_add(*offset as u64),
        CfaRule::Expression(_) => return None,
    };
    let evaluate = |rule: &RegisterRule<usize>| -> Option<u64> {
        match rule {
            RegisterRule::Undefined => None,
            RegisterRule::SameValue => None,
            RegisterRule::Offset(offset) => stack(cfa.wrapping_add(*offset as u64)),
            RegisterRule::ValOffset(offset) => Some(cfa.wrapping_add(*offset as u64)),
            RegisterRule::Register(other) => registers.get(usize::from(other.0)),
            // Expression rules are declined; the register is lost.
            _ => None,
        }
    };
    // An undefined return address (gimli lists no rule for it) marks the
    // outermost frame (`_start`, a thread's start routine): a caller at 0
    // ends the walk.
    let return_address = match row.register(gimli::Register(RIP as u16)) {
        RegisterRule::Undefined => 0,
        rule => evaluate(&rule)?,
    };
    let mut out = registers.clone();
    for (register, rule) in row.registers() {
        let number = usize::from(register.0);
        if number >= RIP {
            continue; // the return address, vector and control registers
        }
        match rule {
            RegisterRule::SameValue => {}
            rule => match evaluate(rule) {
                Some(value) => out.set(number, value),
                None => out.clear(number),
            },
        }
    }
    out.set(RIP, return_address);
    out.set(RSP, cfa);
    Some(out)
}

impl Unwinder for ElfUnwinder {
    fn unwind(
        &self,
        callee: Callee,
        registers: &Registers,
        stack: &Stack<'_>,
    ) -> Option<Registers> {
        // A caller's rva is already inside its call; the interrupted frame's
        // is the instruction itself.
        let address = callee.rva.checked_add(self.bias)?;
        self.evaluate(address, registers, stack)
    }

    fn return_address(&self, rva: u64) -> Option<ReturnAddress> {
        if self.executable.is_empty() {
            return None;
        }
        let call = rva.checked_sub(1)?.checked_add(self.bias)?;
        let Some(&(start, _, offset)) = self
            .executable
            .iter()
            .find(|(start, end, _)| call >= *start && call < *end)
        else {
            return Some(ReturnAddress::Impossible);
        };
        let code = self.code.as_ref()?;
        // The 8 bytes before the return address, within the section.
        let back = (call + 1 - start).min(8);
        // The section's file offset comes from the file: any value.
        let end = usize::try_from(offset.checked_add(call + 1 - start)?).ok()?;
        let bytes = code.get(end.checked_sub(back as usize)?..end)?;
        Some(ReturnAddress::after(bytes))
    }

    fn describe(&self) -> String {
        self.what.clone()
    }

    fn nonvolatile(&self) -> &'static [usize] {
        NONVOLATILE_SYSV
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn native(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/native")
            .join(name)
    }

    /// libfakeexit.so has no CFI of its own (-fno-asynchronous-unwind-tables);
    /// its debug file has .debug_frame. Offsets from objdump.
    #[test]
    fn return_addresses_need_code_and_a_call() {
        let unwinder = ElfUnwinder::load(
            Some(&native("libfakeexit.so")),
            Some(&native("libfakeexit.so.debug")),
        )
        .unwrap();
        assert!(unwinder.debug_frame.is_some());
        // After `call 4a9` in __cxa_finalize_streams.
        assert_eq!(
            unwinder.return_address(0x4c8),
            Some(ReturnAddress::Plausible)
        );
        // After a `mov`, inside a function.
        assert_eq!(
            unwinder.return_address(0x4ce),
            Some(ReturnAddress::Impossible)
        );
        // In .data: not code at all.
        assert_eq!(
            unwinder.return_address(0x2004),
            Some(ReturnAddress::Impossible)
        );
    }

    #[test]
    fn files_without_call_frame_information_give_no_unwinder() {
        assert!(ElfUnwinder::load(Some(&native("libfakeexit.so")), None).is_none());
        assert!(ElfUnwinder::load(Some(&native("fakehip.dll")), None).is_none());
    }
}
