//! x64 PE unwinding from the exception directory (`.pdata`) and the
//! UNWIND_INFO records it points at (`.xdata`), as Windows' own unwinder
//! (RtlVirtualUnwind) reads them, following the x64 exception-handling
//! documentation: the unwind codes of the function's prologue, undone in
//! order and only as far as the instruction got into the prologue; chained
//! unwind info of functions split into parts; and, for the frame that was
//! interrupted (the thread's context), an epilogue recognised from the code
//! bytes and emulated forwards instead.
//!
//! Own code rather than the `pe-unwind-info` crate: the interpreter is small
//! and fully specified, the image bytes come from two places (the binary
//! file, or the image in a full-memory dump) through one bounded reader,
//! the same `.pdata` table also answers the stack scanner's question (is
//! this a return address?), and the behaviour on hostile input (chain
//! loops, truncated records) is ours to test.

use std::path::Path;

use memmap2::Mmap;
use object::pe::{
    ImageDosHeader, ImageNtHeaders64, IMAGE_DIRECTORY_ENTRY_EXCEPTION, IMAGE_FILE_MACHINE_AMD64,
};
use object::read::pe::{ImageNtHeaders, ImageOptionalHeader};
use object::LittleEndian as LE;

use super::{Callee, Registers, ReturnAddress, Stack, Unwinder, NONVOLATILE_WINDOWS, RIP, RSP};
use crate::symbols::identity::pe_code_id;
use crate::symbols::paths::map_file;

/// Bytes of a PE image by RVA, wherever the image is.
pub(crate) trait ImageBytes: Send + Sync {
    /// Up to `len` bytes at `rva` (fewer where what is there ends first);
    /// `None` when there is nothing at `rva`.
    fn read(&self, rva: u64, len: usize) -> Option<Vec<u8>>;
}

/// Exactly `len` bytes at `rva`.
fn read_exact(image: &dyn ImageBytes, rva: u64, len: usize) -> Option<Vec<u8>> {
    image.read(rva, len).filter(|bytes| bytes.len() == len)
}

/// One `.pdata` entry: a function (or a part of one) and its unwind info.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RuntimeFunction {
    begin: u64,
    end: u64,
    unwind: u64,
}

const RUNTIME_FUNCTION_SIZE: usize = 12;
const UNW_FLAG_CHAININFO: u8 = 0x4;
/// Chains are short in practice; a loop in a hostile image must end.
const MAX_CHAIN: usize = 32;
/// A directory larger than any image is hostile or corrupt.
const MAX_DIRECTORY: u64 = 64 << 20;

// Unwind operation codes.
const UWOP_PUSH_NONVOL: u8 = 0;
const UWOP_ALLOC_LARGE: u8 = 1;
const UWOP_ALLOC_SMALL: u8 = 2;
const UWOP_SET_FPREG: u8 = 3;
const UWOP_SAVE_NONVOL: u8 = 4;
const UWOP_SAVE_NONVOL_FAR: u8 = 5;
/// Version 2: epilogue locations (skipped: epilogues are read from code).
const UWOP_EPILOG: u8 = 6;
/// Version 1's UWOP_SAVE_XMM_FAR; unused since.
const UWOP_SPARE_CODE: u8 = 7;
const UWOP_SAVE_XMM128: u8 = 8;
const UWOP_SAVE_XMM128_FAR: u8 = 9;
const UWOP_PUSH_MACHFRAME: u8 = 10;

/// x86 register numbers (as unwind codes and instruction encodings use
/// them) to the DWARF numbers of [`Registers`].
const X86_TO_DWARF: [usize; 16] = [0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15];

/// One UNWIND_INFO record.
#[derive(Debug, Clone, PartialEq, Eq)]
struct UnwindInfo {
    prolog_size: u64,
    /// x86 number of the frame register; 0 when the function has none.
    frame_register: u8,
    /// Scaled by 16.
    frame_offset: u64,
    /// The unwind code slots, as (prolog offset, operation, info) for the
    /// first slot of a code and raw 16-bit values for the ones after.
    slots: Vec<u16>,
    /// The function this part continues, when chained.
    chained: Option<RuntimeFunction>,
}

impl UnwindInfo {
    fn parse(image: &dyn ImageBytes, rva: u64) -> Option<UnwindInfo> {
        let header = read_exact(image, rva, 4)?;
        let version = header[0] & 7;
        if version != 1 && version != 2 {
            return None;
        }
        let flags = header[0] >> 3;
        let count = usize::from(header[2]);
        let codes = if count > 0 {
            read_exact(image, rva + 4, count * 2)?
        } else {
            Vec::new()
        };
        let slots = codes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        let chained = if flags & UNW_FLAG_CHAININFO != 0 {
            let at = rva + 4 + (count.next_multiple_of(2) * 2) as u64;
            let entry = read_exact(image, at, RUNTIME_FUNCTION_SIZE)?;
            Some(runtime_function(&entry)?)
        } else {
            None
        };
        Some(UnwindInfo {
            prolog_size: u64::from(header[1]),
            frame_register: header[3] & 0xf,
            frame_offset: u64::from(header[3] >> 4) * 16,
            slots,
            chained,
        })
    }
}

impl UnwindInfo {
    /// The first slot of each code.
    fn codes(&self) -> impl Iterator<Item = u16> + '_ {
        let mut i = 0;
        std::iter::from_fn(move || {
            let slot = *self.slots.get(i)?;
            i += code_slots(slot);
            Some(slot)
        })
    }
}

fn runtime_function(bytes: &[u8]) -> Option<RuntimeFunction> {
    let u32_at = |at: usize| -> Option<u64> {
        Some(u64::from(u32::from_le_bytes(
            bytes.get(at..at + 4)?.try_into().ok()?,
        )))
    };
    Some(RuntimeFunction {
        begin: u32_at(0)?,
        end: u32_at(4)?,
        unwind: u32_at(8)?,
    })
}

/// How many slots the code starting with `slot` takes.
fn code_slots(slot: u16) -> usize {
    let op = (slot >> 8) as u8 & 0xf;
    let info = (slot >> 12) as u8;
    match op {
        UWOP_ALLOC_LARGE if info == 0 => 2,
        UWOP_ALLOC_LARGE => 3,
        UWOP_SAVE_NONVOL | UWOP_SAVE_XMM128 | UWOP_EPILOG => 2,
        UWOP_SAVE_NONVOL_FAR | UWOP_SAVE_XMM128_FAR | UWOP_SPARE_CODE => 3,
        _ => 1,
    }
}

/// What undoing one UNWIND_INFO's codes ended with.
enum Undone {
    /// The return address is on top of the stack.
    Return,
    /// A machine frame (an interrupt or exception) gave rip and rsp.
    MachineFrame,
}

/// Undoes the codes of `info` on `regs`. `reached`: how far into the
/// prologue the instruction is (codes for prologue instructions not yet
/// run are skipped); `None` for a chained parent, whose prologue has run
/// whole. `frame_base`: the establisher frame, which SAVE_NONVOL offsets
/// are relative to.
fn undo_codes(
    info: &UnwindInfo,
    reached: Option<u64>,
    frame_base: u64,
    regs: &mut Registers,
    stack: &Stack<'_>,
) -> Option<Undone> {
    let mut i = 0;
    while i < info.slots.len() {
        let slot = info.slots[i];
        let size = code_slots(slot);
        let offset = u64::from(slot & 0xff);
        let op = (slot >> 8) as u8 & 0xf;
        let op_info = (slot >> 12) as u8;
        let at = i;
        let extra = |n: usize| -> Option<u64> { info.slots.get(at + n).map(|&s| u64::from(s)) };
        if i + size > info.slots.len() {
            return None;
        }
        i += size;
        if reached.is_some_and(|reached| offset > reached) {
            continue;
        }
        let rsp = regs.get(RSP)?;
        match op {
            UWOP_PUSH_NONVOL => {
                regs.set(X86_TO_DWARF[usize::from(op_info)], stack(rsp)?);
                regs.set(RSP, rsp.checked_add(8)?);
            }
            UWOP_ALLOC_LARGE => {
                let size = if op_info == 0 {
                    extra(1)? * 8
                } else {
                    extra(1)? | extra(2)? << 16
                };
                regs.set(RSP, rsp.checked_add(size)?);
            }
            UWOP_ALLOC_SMALL => {
                regs.set(RSP, rsp.checked_add(u64::from(op_info) * 8 + 8)?);
            }
            UWOP_SET_FPREG => {
                let frame = regs.get(X86_TO_DWARF[usize::from(info.frame_register)])?;
                regs.set(RSP, frame.checked_sub(info.frame_offset)?);
            }
            UWOP_SAVE_NONVOL | UWOP_SAVE_NONVOL_FAR => {
                let at = if op == UWOP_SAVE_NONVOL {
                    extra(1)? * 8
                } else {
                    extra(1)? | extra(2)? << 16
                };
                let value = stack(frame_base.checked_add(at)?)?;
                regs.set(X86_TO_DWARF[usize::from(op_info)], value);
            }
            UWOP_PUSH_MACHFRAME => {
                // An error code above the frame, then RIP, CS, EFLAGS,
                // the old RSP, SS.
                let frame = rsp.checked_add(if op_info == 1 { 8 } else { 0 })?;
                regs.set(RIP, stack(frame)?);
                regs.set(RSP, stack(frame.checked_add(24)?)?);
                return Some(Undone::MachineFrame);
            }
            // XMM registers are not tracked; epilogue records and the
            // spare code describe nothing to undo.
            UWOP_SAVE_XMM128 | UWOP_SAVE_XMM128_FAR | UWOP_EPILOG | UWOP_SPARE_CODE => {}
            _ => return None,
        }
    }
    Some(Undone::Return)
}

/// The x64 unwind tables of one PE image.
pub(crate) struct PeUnwinder<I> {
    /// Sorted by begin.
    functions: Vec<RuntimeFunction>,
    image: I,
    what: String,
}

impl<I: ImageBytes> PeUnwinder<I> {
    /// Reads the exception directory of the x64 image `image` holds. Also
    /// returns the code id (timestamp + size) its headers carry, for the
    /// caller to check against the module's. `None` when the image is not
    /// x64 or has no exception directory.
    pub(crate) fn new(image: I, what: String) -> Option<(Self, String)> {
        let headers = image.read(0, 0x1000)?;
        let dos = ImageDosHeader::parse(&headers[..]).ok()?;
        let mut offset = u64::from(dos.nt_headers_offset());
        let (nt, directories) = ImageNtHeaders64::parse(&headers[..], &mut offset).ok()?;
        if nt.file_header().machine.get(LE) != IMAGE_FILE_MACHINE_AMD64 {
            return None;
        }
        let code_id = pe_code_id(
            nt.file_header().time_date_stamp.get(LE),
            nt.optional_header().size_of_image(),
        );
        let directory = directories.get(IMAGE_DIRECTORY_ENTRY_EXCEPTION)?;
        let rva = u64::from(directory.virtual_address.get(LE));
        let size = u64::from(directory.size.get(LE));
        if size == 0 || size > MAX_DIRECTORY {
            return None;
        }
        let table = read_exact(&image, rva, size as usize)?;
        let mut functions: Vec<RuntimeFunction> = table
            .chunks_exact(RUNTIME_FUNCTION_SIZE)
            .filter_map(runtime_function)
            .filter(|f| f.begin < f.end)
            .collect();
        functions.sort_unstable_by_key(|f| f.begin);
        Some((
            PeUnwinder {
                functions,
                image,
                what,
            },
            code_id,
        ))
    }

    fn function(&self, rva: u64) -> Option<RuntimeFunction> {
        let index = self
            .functions
            .partition_point(|f| f.begin <= rva)
            .checked_sub(1)?;
        let function = self.functions[index];
        (rva < function.end).then_some(function)
    }

    /// The frame register and its offset, when the function has one and
    /// the prologue has set it by `reached`; a chained part uses its
    /// parent's, set in the parent's prologue.
    fn frame_register(&self, info: &UnwindInfo, reached: u64) -> Option<(u8, u64)> {
        if info.frame_register != 0 {
            let set = info.codes().any(|slot| {
                (slot >> 8) as u8 & 0xf == UWOP_SET_FPREG && u64::from(slot & 0xff) <= reached
            });
            return set.then_some((info.frame_register, info.frame_offset));
        }
        let mut parent = info.chained;
        for _ in 0..MAX_CHAIN {
            let current = UnwindInfo::parse(&self.image, parent?.unwind)?;
            if current.frame_register != 0 {
                return Some((current.frame_register, current.frame_offset));
            }
            parent = current.chained;
        }
        None
    }

    /// The caller of a frame stopped inside an epilogue, by running the
    /// rest of the epilogue forwards; `None` when `pc` is not in one.
    fn epilogue(
        &self,
        pc: u64,
        function: RuntimeFunction,
        info: &UnwindInfo,
        regs: &Registers,
        stack: &Stack<'_>,
    ) -> Option<Registers> {
        let code = self.image.read(pc, 64)?;
        let byte = |i: usize| code.get(i).copied();
        let mut out = regs.clone();
        let mut i = 0;
        // Optional stack adjustment: add rsp, imm8 / imm32, or
        // lea rsp, [frame register + disp8 / disp32].
        match (byte(0)?, byte(1), byte(2)) {
            (0x48, Some(0x83), Some(0xc4)) => {
                let imm = byte(3)? as i8 as i64 as u64;
                out.set(RSP, out.get(RSP)?.wrapping_add(imm));
                i = 4;
            }
            (0x48, Some(0x81), Some(0xc4)) => {
                let imm = i32::from_le_bytes(code.get(3..7)?.try_into().ok()?) as i64 as u64;
                out.set(RSP, out.get(RSP)?.wrapping_add(imm));
                i = 7;
            }
            (rex @ (0x48 | 0x49), Some(0x8d), Some(modrm))
                if info.frame_register != 0 && modrm >> 3 & 7 == 4 =>
            {
                let base = modrm & 7 | (rex & 1) << 3;
                if base != info.frame_register {
                    return None;
                }
                let mut at = 3;
                if modrm & 7 == 4 {
                    at += 1; // SIB byte of an r12 base
                }
                let disp = match modrm >> 6 {
                    1 => {
                        at += 1;
                        byte(at - 1)? as i8 as i64
                    }
                    2 => {
                        at += 4;
                        i32::from_le_bytes(code.get(at - 4..at)?.try_into().ok()?) as i64
                    }
                    _ => return None,
                };
                let frame = out.get(X86_TO_DWARF[usize::from(base)])?;
                out.set(RSP, frame.wrapping_add(disp as u64));
                i = at;
            }
            _ => {}
        }
        // Pops of nonvolatile registers, with any REX prefix (as Windows
        // takes them: only REX.B, which selects r8-r15, changes a pop).
        let mut pops = Vec::new();
        loop {
            match (byte(i), byte(i + 1)) {
                (Some(op @ 0x58..=0x5f), _) => {
                    pops.push(usize::from(op - 0x58));
                    i += 1;
                }
                (Some(rex @ 0x40..=0x4f), Some(op @ 0x58..=0x5f)) => {
                    pops.push(usize::from(op - 0x58) + usize::from(rex & 1) * 8);
                    i += 2;
                }
                _ => break,
            }
        }
        // The end: a return, or a jump out of the function (a tail call).
        let outside = |target: i64| {
            let target = target as u64;
            target < function.begin || target >= function.end
        };
        // Addresses wrap, as the processor computes them.
        let here = (pc as i64).wrapping_add(i as i64);
        let ends = match (byte(i)?, byte(i + 1), byte(i + 2)) {
            (0xc3 | 0xc2, _, _) | (0xf3, Some(0xc3), _) => true,
            (0xe9, _, _) => {
                let rel = i32::from_le_bytes(code.get(i + 1..i + 5)?.try_into().ok()?);
                outside(here.wrapping_add(5 + i64::from(rel)))
            }
            (0xeb, Some(rel), _) => outside(here.wrapping_add(2 + i64::from(rel as i8))),
            // jmp [rip + disp32], with or without REX.W
            (0xff, Some(0x25), _) | (0x48, Some(0xff), Some(0x25)) => true,
            _ => false,
        };
        if !ends {
            return None;
        }
        for register in pops {
            let rsp = out.get(RSP)?;
            out.set(X86_TO_DWARF[register], stack(rsp)?);
            out.set(RSP, rsp.checked_add(8)?);
        }
        let rsp = out.get(RSP)?;
        out.set(RIP, stack(rsp)?);
        out.set(RSP, rsp.checked_add(8)?);
        Some(out)
    }
}

impl<I: ImageBytes> Unwinder for PeUnwinder<I> {
    fn unwind(
        &self,
        callee: Callee,
        registers: &Registers,
        stack: &Stack<'_>,
    ) -> Option<Registers> {
        let rsp = registers.get(RSP)?;
        let Some(function) = self.function(callee.rva) else {
            // A leaf function has no entry: it neither pushes nor
            // allocates, so its return address is on top. Only the
            // interrupted frame can be one; a caller is always in a
            // function that called, which has an entry.
            if !callee.first {
                return None;
            }
            let mut out = registers.clone();
            out.set(RIP, stack(rsp)?);
            out.set(RSP, rsp.checked_add(8)?);
            return Some(out);
        };
        let info = UnwindInfo::parse(&self.image, function.unwind)?;
        // The instruction the frame would resume at: the context's own, or
        // the return address for a caller (whose `rva` is inside the call).
        let pc = if callee.first {
            callee.rva
        } else {
            callee.rva.checked_add(1)?
        };
        let reached = pc - function.begin;
        if callee.first && reached >= info.prolog_size {
            if let Some(unwound) = self.epilogue(pc, function, &info, registers, stack) {
                return Some(unwound);
            }
        }
        // The establisher frame: the frame register less its offset once
        // the prologue has set it, the stack pointer before that.
        let frame_base = match self.frame_register(&info, reached) {
            Some((register, offset)) => registers
                .get(X86_TO_DWARF[usize::from(register)])?
                .checked_sub(offset)?,
            None => rsp,
        };

        let mut out = registers.clone();
        let mut current = info;
        let mut reached = Some(reached);
        for _ in 0..MAX_CHAIN {
            if let Undone::MachineFrame =
                undo_codes(&current, reached, frame_base, &mut out, stack)?
            {
                return Some(out);
            }
            let Some(parent) = current.chained else {
                let rsp = out.get(RSP)?;
                out.set(RIP, stack(rsp)?);
                out.set(RSP, rsp.checked_add(8)?);
                return Some(out);
            };
            current = UnwindInfo::parse(&self.image, parent.unwind)?;
            reached = None;
        }
        None
    }

    fn return_address(&self, rva: u64) -> Option<ReturnAddress> {
        // A function that calls has an entry (only leaf functions may have
        // none), so the call lies inside one.
        if self.function(rva.checked_sub(1)?).is_none() {
            return Some(ReturnAddress::Impossible);
        }
        let start = rva.checked_sub(8)?;
        let code = read_exact(&self.image, start, 8)?;
        Some(ReturnAddress::after(&code))
    }

    fn describe(&self) -> String {
        self.what.clone()
    }

    fn nonvolatile(&self) -> &'static [usize] {
        NONVOLATILE_WINDOWS
    }
}

/// A PE file on disk, read through its section table.
pub(crate) struct FileImage {
    map: Mmap,
    /// (rva, virtual size, file offset, raw size), and the headers first.
    sections: Vec<(u64, u64, u64, u64)>,
}

impl FileImage {
    pub(crate) fn open(path: &Path) -> Option<FileImage> {
        let map = map_file(path).ok()?;
        let file = object::read::pe::PeFile64::parse(&*map).ok()?;
        let headers = u64::from(file.nt_headers().optional_header().size_of_headers());
        let mut sections = vec![(0, headers, 0, headers)];
        for section in file.section_table().iter() {
            let (offset, raw) = section.pe_file_range();
            sections.push((
                u64::from(section.virtual_address.get(LE)),
                u64::from(section.virtual_size.get(LE)).max(u64::from(raw)),
                u64::from(offset),
                u64::from(raw),
            ));
        }
        Some(FileImage { map, sections })
    }
}

impl ImageBytes for FileImage {
    fn read(&self, rva: u64, len: usize) -> Option<Vec<u8>> {
        let &(va, _, offset, raw) = self
            .sections
            .iter()
            .find(|(va, size, _, _)| rva >= *va && rva - va < *size)?;
        let within = rva - va;
        if within >= raw {
            return None; // uninitialized data
        }
        let start = usize::try_from(offset + within).ok()?;
        let available = usize::try_from(raw - within).ok()?.min(len);
        Some(self.map.get(start..start.checked_add(available)?)?.to_vec())
    }
}

/// The unwinder of the x64 PE file at `path`, which the caller has checked
/// is the module's.
pub(crate) fn from_file(path: &Path) -> Option<PeUnwinder<FileImage>> {
    let image = FileImage::open(path)?;
    let what = format!(".pdata of {}", path.display());
    PeUnwinder::new(image, what).map(|(unwinder, _)| unwinder)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// An image made of byte runs at RVAs.
    struct Bytes(Vec<(u64, Vec<u8>)>);

    impl ImageBytes for Bytes {
        fn read(&self, rva: u64, len: usize) -> Option<Vec<u8>> {
            let (at, bytes) = self
                .0
                .iter()
                .find(|(at, bytes)| rva >= *at && rva < at + bytes.len() as u64)?;
            let start = (rva - at) as usize;
            Some(bytes[start..(start + len).min(bytes.len())].to_vec())
        }
    }

    /// One unwind code slot.
    fn code(offset: u8, op: u8, info: u8) -> [u8; 2] {
        [offset, op | info << 4]
    }

    fn unwind_info(prolog: u8, frame: u8, codes: &[[u8; 2]], chained: Option<[u32; 3]>) -> Vec<u8> {
        let flags = if chained.is_some() {
            UNW_FLAG_CHAININFO
        } else {
            0
        };
        let mut out = vec![1 | flags << 3, prolog, codes.len() as u8, frame];
        for c in codes {
            out.extend_from_slice(c);
        }
        if codes.len() % 2 == 1 {
            out.extend_from_slice(&[0, 0]);
        }
        if let Some(entry) = chained {
            for v in entry {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        out
    }

    /// A stack of 8-byte words from `base` up.
    fn stack(base: u64, words: &[u64]) -> HashMap<u64, u64> {
        words
            .iter()
            .enumerate()
            .map(|(i, w)| (base + 8 * i as u64, *w))
            .collect()
    }

    fn unwinder(functions: &[(u32, u32, u32)], runs: Vec<(u64, Vec<u8>)>) -> PeUnwinder<Bytes> {
        PeUnwinder {
            functions: functions
                .iter()
                .map(|&(begin, end, unwind)| RuntimeFunction {
                    begin: begin.into(),
                    end: end.into(),
                    unwind: unwind.into(),
                })
                .collect(),
            image: Bytes(runs),
            what: "test".into(),
        }
    }

    fn regs(pairs: &[(usize, u64)]) -> Registers {
        let mut r = Registers::default();
        for &(reg, value) in pairs {
            r.set(reg, value);
        }
        r
    }

    fn run(
        u: &PeUnwinder<Bytes>,
        rva: u64,
        first: bool,
        r: &Registers,
        mem: &HashMap<u64, u64>,
    ) -> Option<Registers> {
        let read = |a: u64| mem.get(&a).copied();
        u.unwind(Callee { rva, first }, r, &read)
    }

    // Prologue of the function at 0x1000 (x86 numbers: rbx 3, rbp 5,
    // rsi 6, r12 12):
    //   0x1000 push rbp           ; ends at offset 1
    //   0x1001 push rbx           ; 2
    //   0x1002 sub rsp, 0x28      ; 6
    //   0x1006 lea rbp, [rsp+0x20]; 11
    //   0x100b mov [rsp+0x38], r12? no: SAVE_NONVOL r12 at frame + 0x40 ; 16
    fn push_alloc_setfp() -> PeUnwinder<Bytes> {
        let info = unwind_info(
            16,
            5 | 2 << 4, // frame register rbp, offset 2*16
            &[
                code(16, UWOP_SAVE_NONVOL, 12),
                [8, 0], // offset 8*8 = 0x40 from the establisher frame
                code(11, UWOP_SET_FPREG, 0),
                code(6, UWOP_ALLOC_SMALL, 4), // 4*8+8 = 0x28
                code(2, UWOP_PUSH_NONVOL, 3),
                code(1, UWOP_PUSH_NONVOL, 5),
            ],
            None,
        );
        unwinder(&[(0x1000, 0x1100, 0x3000)], vec![(0x3000, info)])
    }

    #[test]
    fn push_alloc_and_frame_register_in_the_body() {
        let u = push_alloc_setfp();
        // In the body: rsp = 0x8000 (after a further alloca of 0x100: the
        // frame register keeps the frame), establisher = rbp - 0x20.
        let establisher = 0x8100u64;
        let rbp = establisher + 0x20;
        let mut mem = stack(establisher, &[0, 0, 0, 0, 0, 0xb0b, 0xf00d, 0xca11e4]);
        mem.insert(establisher + 0x40, 0x1212);
        let r = regs(&[(RSP, 0x8000), (super::super::RBP, rbp), (RIP, 0x1050)]);
        let out = run(&u, 0x1050, true, &r, &mem).unwrap();
        // 0x28 bytes, then rbx, rbp, the return address.
        assert_eq!(out.get(RIP), Some(0xca11e4));
        assert_eq!(out.get(RSP), Some(establisher + 0x28 + 24));
        assert_eq!(out.get(super::super::RBX), Some(0xb0b));
        assert_eq!(out.get(super::super::RBP), Some(0xf00d));
        assert_eq!(out.get(12), Some(0x1212));
        // The same as a caller frame (rva is inside the call).
        let out = run(&u, 0x104f, false, &r, &mem).unwrap();
        assert_eq!(out.get(RIP), Some(0xca11e4));
    }

    #[test]
    fn partway_through_the_prologue_only_what_ran_is_undone() {
        let u = push_alloc_setfp();
        // Stopped at 0x1002 (offset 2): both pushes ran, nothing else.
        let mem = stack(0x9000, &[0xb0b, 0xf00d, 0xca11e4]);
        let r = regs(&[(RSP, 0x9000), (super::super::RBP, 0x1), (RIP, 0x1002)]);
        let out = run(&u, 0x1002, true, &r, &mem).unwrap();
        assert_eq!(out.get(RIP), Some(0xca11e4));
        assert_eq!(out.get(RSP), Some(0x9018));
        assert_eq!(out.get(super::super::RBX), Some(0xb0b));
        // Offset 1: only `push rbp` ran.
        let mem = stack(0x9000, &[0xf00d, 0xca11e4]);
        let out = run(&u, 0x1001, true, &r, &mem).unwrap();
        assert_eq!(out.get(RIP), Some(0xca11e4));
        assert_eq!(out.get(RSP), Some(0x9010));
        // Offset 6: the allocation too, not the frame register yet.
        let mem = stack(0x9000, &[0, 0, 0, 0, 0, 0xb0b, 0xf00d, 0xca11e4]);
        let out = run(&u, 0x1006, true, &r, &mem).unwrap();
        assert_eq!(out.get(RIP), Some(0xca11e4));
        assert_eq!(out.get(RSP), Some(0x9040));
    }

    #[test]
    fn large_allocations() {
        let info = unwind_info(
            12,
            0,
            &[
                code(12, UWOP_ALLOC_LARGE, 1),
                [0x08, 0x00], // 0x0001_0008
                [0x01, 0x00],
                code(4, UWOP_ALLOC_LARGE, 0),
                [0x20, 0x00], // 0x20 * 8
            ],
            None,
        );
        let u = unwinder(&[(0x1000, 0x1100, 0x3000)], vec![(0x3000, info)]);
        let top = 0x20_0000u64;
        let ret_at = top + 0x1_0008 + 0x100;
        let mem = stack(ret_at, &[0xca11e4]);
        let r = regs(&[(RSP, top)]);
        let out = run(&u, 0x1050, true, &r, &mem).unwrap();
        assert_eq!(out.get(RIP), Some(0xca11e4));
        assert_eq!(out.get(RSP), Some(ret_at + 8));
    }

    #[test]
    fn chained_parts_undo_their_parents_codes() {
        // Primary 0x1000-0x1040: push rbx; sub rsp, 0x20. A cold part at
        // 0x2000-0x2040 saves r12 with a mov (its own prologue) and chains
        // to the primary.
        let primary = unwind_info(
            5,
            0,
            &[code(5, UWOP_ALLOC_SMALL, 3), code(1, UWOP_PUSH_NONVOL, 3)],
            None,
        );
        let part = unwind_info(
            0,
            0,
            &[code(0, UWOP_SAVE_NONVOL, 12), [2, 0]],
            Some([0x1000, 0x1040, 0x3000]),
        );
        let u = unwinder(
            &[(0x1000, 0x1040, 0x3000), (0x2000, 0x2040, 0x3100)],
            vec![(0x3000, primary), (0x3100, part)],
        );
        let mut mem = stack(0x7000, &[0, 0, 0x1212, 0, 0xb0b, 0xca11e4]);
        mem.insert(0x7010, 0x1212);
        let r = regs(&[(RSP, 0x7000)]);
        let out = run(&u, 0x2010, false, &r, &mem).unwrap();
        assert_eq!(out.get(RIP), Some(0xca11e4));
        assert_eq!(out.get(RSP), Some(0x7030));
        assert_eq!(out.get(super::super::RBX), Some(0xb0b));
        assert_eq!(out.get(12), Some(0x1212));

        // A chain that loops ends.
        let looped = unwind_info(0, 0, &[], Some([0x2000, 0x2040, 0x3100]));
        let u = unwinder(&[(0x2000, 0x2040, 0x3100)], vec![(0x3100, looped)]);
        assert_eq!(run(&u, 0x2010, false, &r, &mem), None);
    }

    /// An epilogue pop may carry any REX prefix (`48 5b` is `pop rbx`,
    /// `49 5f` `pop r15`): Windows' unwinder reads them so, and MSVC and
    /// Wine's DLLs emit them (found by comparing with pe-unwind-info on
    /// KERNELBASE.dll).
    #[test]
    fn epilogue_pops_take_any_rex_prefix() {
        // push rbx; push r15 ... 0x1080: pop r15 (49 5f); pop rbx (48 5b); ret
        let info = unwind_info(
            3,
            0,
            &[code(3, UWOP_PUSH_NONVOL, 15), code(1, UWOP_PUSH_NONVOL, 3)],
            None,
        );
        let mut text = vec![0xcc; 0x80];
        text.extend_from_slice(&[0x49, 0x5f, 0x48, 0x5b, 0xc3]);
        let u = unwinder(
            &[(0x1000, 0x1100, 0x3000)],
            vec![(0x3000, info), (0x1000, text)],
        );
        let r = regs(&[(RSP, 0x9000)]);
        let mem = stack(0x9000, &[0xf15, 0xb0b, 0xca11e4]);
        let out = run(&u, 0x1080, true, &r, &mem).unwrap();
        assert_eq!(out.get(RIP), Some(0xca11e4));
        assert_eq!(out.get(RSP), Some(0x9018));
        assert_eq!(out.get(15), Some(0xf15));
        assert_eq!(out.get(super::super::RBX), Some(0xb0b));
        // At `48 5b`: r15 is already restored.
        let mem = stack(0x9000, &[0xb0b, 0xca11e4]);
        let out = run(&u, 0x1082, true, &r, &mem).unwrap();
        assert_eq!(out.get(RSP), Some(0x9010));
        assert_eq!(out.get(super::super::RBX), Some(0xb0b));
    }

    #[test]
    fn epilogues_are_run_forwards() {
        // push rbx; push rsi; sub rsp, 0x28 ... body ...
        // 0x1080: add rsp, 0x28; pop rsi; pop rbx; ret
        let info = unwind_info(
            6,
            0,
            &[
                code(6, UWOP_ALLOC_SMALL, 4),
                code(2, UWOP_PUSH_NONVOL, 6),
                code(1, UWOP_PUSH_NONVOL, 3),
            ],
            None,
        );
        let mut text = vec![0xcc; 0x80];
        text.extend_from_slice(&[0x48, 0x83, 0xc4, 0x28, 0x5e, 0x5b, 0xc3]);
        let u = unwinder(
            &[(0x1000, 0x1100, 0x3000)],
            vec![(0x3000, info), (0x1000, text)],
        );
        // At the `add`: the frame is whole.
        let mem = stack(0x9000, &[0, 0, 0, 0, 0, 0x5151, 0xb0b, 0xca11e4]);
        let r = regs(&[(RSP, 0x9000)]);
        let out = run(&u, 0x1080, true, &r, &mem).unwrap();
        assert_eq!(out.get(RIP), Some(0xca11e4));
        assert_eq!(out.get(RSP), Some(0x9040));
        assert_eq!(out.get(super::super::RSI), Some(0x5151));
        // At `pop rbx`: the allocation and rsi are already gone; the
        // prologue codes would undo them again.
        let mem = stack(0x9000, &[0xb0b, 0xca11e4]);
        let out = run(&u, 0x1085, true, &r, &mem).unwrap();
        assert_eq!(out.get(RIP), Some(0xca11e4));
        assert_eq!(out.get(RSP), Some(0x9010));
        assert_eq!(out.get(super::super::RBX), Some(0xb0b));
        // At `ret`.
        let mem = stack(0x9000, &[0xca11e4]);
        let out = run(&u, 0x1086, true, &r, &mem).unwrap();
        assert_eq!(out.get(RSP), Some(0x9008));
        // A caller frame is never in an epilogue: at the same address it is
        // unwound by the prologue codes.
        let mem = stack(0x9000, &[0, 0, 0, 0, 0, 0x5151, 0xb0b, 0xca11e4]);
        let out = run(&u, 0x107f, false, &r, &mem).unwrap();
        assert_eq!(out.get(RSP), Some(0x9040));
    }

    #[test]
    fn an_epilogue_through_the_frame_register_and_a_tail_jump() {
        // push rbp; lea rbp, [rsp]... frame register rbp, offset 0;
        // epilogue: lea rsp, [rbp+0x10]; pop rbp; jmp elsewhere.
        let info = unwind_info(
            4,
            5,
            &[code(4, UWOP_SET_FPREG, 0), code(1, UWOP_PUSH_NONVOL, 5)],
            None,
        );
        let mut text = vec![0xcc; 0x40];
        text.extend_from_slice(&[0x48, 0x8d, 0x65, 0x10, 0x5d, 0xe9, 0x00, 0x10, 0x00, 0x00]);
        let u = unwinder(
            &[(0x1000, 0x1080, 0x3000)],
            vec![(0x3000, info), (0x1000, text)],
        );
        let mem = stack(0x9010, &[0xf00d, 0xca11e4]);
        let r = regs(&[(RSP, 0x8f00), (super::super::RBP, 0x9000)]);
        let out = run(&u, 0x1040, true, &r, &mem).unwrap();
        assert_eq!(out.get(RIP), Some(0xca11e4));
        assert_eq!(out.get(RSP), Some(0x9020));
        assert_eq!(out.get(super::super::RBP), Some(0xf00d));
    }

    #[test]
    fn leaf_functions_and_machine_frames() {
        let info = unwind_info(1, 0, &[code(1, UWOP_PUSH_MACHFRAME, 1)], None);
        let u = unwinder(&[(0x1000, 0x1100, 0x3000)], vec![(0x3000, info)]);
        // Error code, then RIP, CS, EFLAGS, RSP, SS.
        let mem = stack(0x9000, &[0xe, 0xfa017, 0x33, 0x246, 0x7777_0000, 0x2b]);
        let r = regs(&[(RSP, 0x9000)]);
        let out = run(&u, 0x1050, false, &r, &mem).unwrap();
        assert_eq!(out.get(RIP), Some(0xfa017));
        assert_eq!(out.get(RSP), Some(0x7777_0000));
        // No entry: a leaf, for the interrupted frame only.
        let mem = stack(0x9000, &[0xca11e4]);
        let out = run(&u, 0x2000, true, &r, &mem).unwrap();
        assert_eq!(out.get(RIP), Some(0xca11e4));
        assert_eq!(run(&u, 0x2000, false, &r, &mem), None);
    }

    #[test]
    fn truncated_records_are_declined() {
        let mut info = unwind_info(6, 0, &[code(6, UWOP_ALLOC_LARGE, 1), [8, 0], [1, 0]], None);
        info.truncate(6);
        let u = unwinder(&[(0x1000, 0x1100, 0x3000)], vec![(0x3000, info)]);
        let mem = stack(0x9000, &[0xca11e4]);
        assert_eq!(run(&u, 0x1050, true, &regs(&[(RSP, 0x9000)]), &mem), None);
    }

    #[test]
    fn return_addresses_follow_calls_inside_functions() {
        let mut text = vec![0x90; 0x40];
        text[0x10..0x15].copy_from_slice(&[0xe8, 0, 0, 0, 0]); // call at 0x1010
        let u = unwinder(&[(0x1000, 0x1040, 0x3000)], vec![(0x1000, text)]);
        assert_eq!(u.return_address(0x1015), Some(ReturnAddress::Plausible));
        // The middle of a function, not after a call.
        assert_eq!(u.return_address(0x1020), Some(ReturnAddress::Impossible));
        // Outside every function.
        assert_eq!(u.return_address(0x1050), Some(ReturnAddress::Impossible));
    }
}
