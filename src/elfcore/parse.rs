//! The parts of an ELF core file the analysis needs: its memory segments
//! (PT_LOAD) and its notes (PT_NOTE): each thread's registers
//! (NT_PRSTATUS, NT_FPREGSET), the signal (NT_SIGINFO), the process name
//! and arguments (NT_PRPSINFO), the mapped files (NT_FILE) and the
//! auxiliary vector (NT_AUXV).
//!
//! Every count and offset comes from the file and is checked against its
//! length: a truncated core (the common case when `ulimit -c` or
//! systemd-coredump's size limit cut it) keeps what lies in the file, and
//! what is missing is named in `lost`.

use object::elf::{self, FileHeader64, ProgramHeader64};
use object::read::elf::{FileHeader as _, NoteIterator, ProgramHeader as _};
use object::{LittleEndian, ReadRef as _};

/// The ELF containers (file header, program headers, notes) are read
/// through object's types; the kernel's note payloads (elf_prstatus,
/// elf_prpsinfo, siginfo_t, NT_FILE's table), which object does not
/// declare, are read here at their offsets.
type Header = FileHeader64<LittleEndian>;
type ProgramHeader = ProgramHeader64<LittleEndian>;
const LE: LittleEndian = LittleEndian;

/// Architectures whose register notes we read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arch {
    X86_64,
    Aarch64,
}

/// Offset of pr_reg in struct elf_prstatus (the same on x86-64 and arm64).
const PR_REG: usize = 112;
/// Register words: x86-64's user_regs_struct, arm64's user_pt_regs.
const X86_64_REGS: usize = 27;
const AARCH64_REGS: usize = 34;
/// Notes bigger than this are not read (a real core's notes are a few
/// hundred KB even with thousands of threads and mapped files).
const MAX_NOTES: u64 = 256 << 20;
/// Linux aligns core notes to 4 bytes whatever the class (the kernel
/// writes p_align 4): the alignment NoteIterator is given.
const CORE_NOTE_ALIGN: u64 = 4;

/// A memory segment: `filesz` bytes at `offset` in the file hold the first
/// bytes of `memsz` bytes of memory at `vaddr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Load {
    pub vaddr: u64,
    pub memsz: u64,
    pub offset: u64,
    pub filesz: u64,
    pub flags: u32,
}

/// One thread's NT_PRSTATUS (and the NT_FPREGSET / NT_SIGINFO notes that
/// follow it).
#[derive(Debug, Clone, Default)]
pub(crate) struct ThreadNote {
    pub tid: u32,
    /// The signal the thread stopped on (0: none).
    pub cursig: u16,
    pub regs: Vec<u64>,
    /// x86-64: the 512-byte FXSAVE area; arm64: user_fpsimd_state.
    pub fpregs: Option<Vec<u8>>,
    pub siginfo: Option<SigInfo>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SigInfo {
    pub signo: i32,
    pub code: i32,
    /// si_addr (fault signals) or si_pid in the low half (signals sent by a
    /// process): which one depends on the signal and code.
    pub word: u64,
}

impl SigInfo {
    /// The sender's pid, for a signal sent by a process (kill, tgkill,
    /// sigqueue: si_code <= 0).
    pub(super) fn sender(&self) -> Option<u32> {
        (self.code <= 0).then_some(self.word as u32)
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct PsInfo {
    pub pid: u32,
    pub pgrp: u32,
    pub name: String,
    /// The first 80 bytes of the command line, spaces between words.
    pub args: String,
}

/// One NT_FILE entry: a mapping of `path` at `start..end` from page
/// `page_offset` of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileMap {
    pub start: u64,
    pub end: u64,
    pub file_offset: u64,
    pub path: String,
}

#[derive(Debug, Default)]
pub(crate) struct Core {
    pub arch: Option<Arch>,
    pub loads: Vec<Load>,
    pub threads: Vec<ThreadNote>,
    pub psinfo: Option<PsInfo>,
    pub files: Vec<FileMap>,
    pub auxv: Vec<(u64, u64)>,
    /// What the file lacks, one phrase each.
    pub lost: Vec<String>,
}

/// Why a file is not a core we read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ParseError {
    #[error("not an ELF core file")]
    NotACore,
    #[error("32-bit or big-endian core files are not supported")]
    Class,
    #[error("unsupported architecture: ELF machine {0} (x86-64 and arm64 cores are read)")]
    Machine(u16),
    #[error("the core is cut before its program headers")]
    NoHeaders,
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}
fn i32_at(b: &[u8], at: usize) -> Option<i32> {
    u32_at(b, at).map(|v| v as i32)
}
pub(crate) fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// True when `head` starts an ELF file of type ET_CORE. Read by hand:
/// callers sniff a file's first 18 bytes, and object's header type needs
/// all 64.
pub(crate) fn is_core(head: &[u8]) -> bool {
    head.starts_with(&elf::ELFMAG)
        && match head.get(5) {
            Some(&elf::ELFDATA2LSB) => u16_at(head, 16) == Some(elf::ET_CORE),
            Some(&elf::ELFDATA2MSB) => head.get(16..18) == Some(&elf::ET_CORE.to_be_bytes()[..]),
            _ => false,
        }
}

/// The program headers of the 64-bit little-endian ELF file `data` that lie
/// whole in it, and how many of the header's count do not. object's
/// `program_headers` refuses a table that is not whole, but a cut core (or
/// the first page of an image kept in a core) keeps the headers before the
/// cut.
pub(crate) fn program_headers(data: &[u8]) -> Result<(Vec<&ProgramHeader>, usize), ParseError> {
    if data.get(4) != Some(&elf::ELFCLASS64) || data.get(5) != Some(&elf::ELFDATA2LSB) {
        return Err(ParseError::Class);
    }
    let header = data
        .read_at::<Header>(0)
        .map_err(|()| ParseError::NoHeaders)?;
    let phoff = header.e_phoff(LE);
    let phentsize = u64::from(header.e_phentsize(LE));
    if phentsize < std::mem::size_of::<ProgramHeader>() as u64 {
        return Err(ParseError::NoHeaders);
    }
    // More than 65534 segments: the count is in section 0 (PN_XNUM).
    let count = header
        .phnum(LE, data)
        .unwrap_or(usize::from(header.e_phnum(LE)));
    // The headers that end in the file: bounded by its length, whatever
    // the count says.
    let size = std::mem::size_of::<ProgramHeader>() as u64;
    let whole = (data.len() as u64)
        .checked_sub(phoff)
        .and_then(|room| room.checked_sub(size))
        .map_or(0, |room| room / phentsize + 1);
    let whole = usize::try_from(whole).unwrap_or(usize::MAX).min(count);
    // Each offset is below the file's length: no overflow.
    let headers = (0..whole as u64)
        .filter_map(|i| data.read_at::<ProgramHeader>(phoff + i * phentsize).ok())
        .collect::<Vec<_>>();
    let cut = count - headers.len();
    Ok((headers, cut))
}

/// Reads the core in `file` (the whole file, memory-mapped).
pub(crate) fn parse(file: &[u8]) -> Result<Core, ParseError> {
    if !is_core(file) {
        return Err(ParseError::NotACore);
    }
    if file.get(4) != Some(&elf::ELFCLASS64) || file.get(5) != Some(&elf::ELFDATA2LSB) {
        return Err(ParseError::Class);
    }
    let header = file
        .read_at::<Header>(0)
        .map_err(|()| ParseError::NoHeaders)?;
    let arch = match header.e_machine(LE) {
        elf::EM_X86_64 => Arch::X86_64,
        elf::EM_AARCH64 => Arch::Aarch64,
        other => return Err(ParseError::Machine(other)),
    };
    let (headers, cut_headers) = program_headers(file)?;
    let phnum = headers.len() + cut_headers;
    if headers.is_empty() && phnum > 0 {
        return Err(ParseError::NoHeaders);
    }
    let mut core = Core {
        arch: Some(arch),
        ..Core::default()
    };
    if cut_headers > 0 {
        core.lost
            .push(format!("{cut_headers} of {phnum} program headers"));
    }
    let len = file.len() as u64;
    let mut notes = Vec::new();
    for h in headers {
        let load = Load {
            flags: h.p_flags(LE),
            offset: h.p_offset(LE),
            vaddr: h.p_vaddr(LE),
            filesz: h.p_filesz(LE),
            memsz: h.p_memsz(LE),
        };
        match h.p_type(LE) {
            elf::PT_LOAD => core.loads.push(load),
            elf::PT_NOTE => notes.push(load),
            _ => {}
        }
    }
    for note in notes {
        let end = note.offset.saturating_add(note.filesz.min(MAX_NOTES));
        if note.offset >= len {
            core.lost
                .push("the notes (threads, registers, mapped files)".into());
            continue;
        }
        if end > len {
            lose_end_of_notes(&mut core);
        }
        // Both ends are within the file, whose length is a usize.
        let bytes = &file[note.offset as usize..end.min(len) as usize];
        read_notes(bytes, arch, &mut core);
    }
    let missing = core
        .loads
        .iter()
        .filter(|l| l.filesz > 0 && l.offset.saturating_add(l.filesz) > len)
        .count();
    if missing > 0 {
        let bytes = core
            .loads
            .iter()
            .filter(|l| l.filesz > 0)
            .map(|l| {
                l.offset
                    .saturating_add(l.filesz)
                    .saturating_sub(len.max(l.offset))
            })
            .fold(0u64, u64::saturating_add);
        core.lost.push(format!(
            "{missing} of {} memory segments ({} MB): the file is cut short",
            core.loads.len(),
            bytes.div_ceil(1 << 20)
        ));
    }
    if core.threads.is_empty() {
        core.lost.push("every thread (no NT_PRSTATUS note)".into());
    }
    if core.files.is_empty() {
        core.lost
            .push("the list of mapped files (no NT_FILE note): modules are unknown".into());
    }
    Ok(core)
}

fn lose_end_of_notes(core: &mut Core) {
    const END: &str = "the end of the notes";
    if !core.lost.iter().any(|l| l == END) {
        core.lost.push(END.into());
    }
}

/// The CORE notes of a PT_NOTE segment; a note cut short ends the reading.
fn read_notes(bytes: &[u8], arch: Arch, core: &mut Core) {
    let Ok(mut notes) = NoteIterator::<Header>::new(LE, CORE_NOTE_ALIGN, bytes) else {
        return;
    };
    loop {
        match notes.next() {
            Ok(Some(note)) => {
                if note.name() == elf::ELF_NOTE_CORE {
                    read_note(note.n_type(LE), note.desc(), arch, core);
                }
            }
            Ok(None) => break,
            Err(_) => {
                lose_end_of_notes(core);
                break;
            }
        }
    }
}

fn read_note(kind: u32, desc: &[u8], arch: Arch, core: &mut Core) {
    match kind {
        elf::NT_PRSTATUS => {
            let words = match arch {
                Arch::X86_64 => X86_64_REGS,
                Arch::Aarch64 => AARCH64_REGS,
            };
            let regs: Vec<u64> = (0..words)
                .map_while(|i| u64_at(desc, PR_REG + i * 8))
                .collect();
            if regs.len() != words {
                core.lost
                    .push("a thread's registers (short NT_PRSTATUS)".into());
                return;
            }
            core.threads.push(ThreadNote {
                tid: u32_at(desc, 32).unwrap_or(0),
                cursig: u16_at(desc, 12).unwrap_or(0),
                regs,
                ..ThreadNote::default()
            });
        }
        elf::NT_PRFPREG => {
            if let Some(thread) = core.threads.last_mut() {
                thread.fpregs = Some(desc.to_vec());
            }
        }
        elf::NT_SIGINFO => {
            let info = SigInfo {
                signo: i32_at(desc, 0).unwrap_or(0),
                code: i32_at(desc, 8).unwrap_or(0),
                word: u64_at(desc, 16).unwrap_or(0),
            };
            // The kernel writes one NT_SIGINFO, after the first (the
            // dumping) thread's notes; gdb's gcore writes one per thread.
            if let Some(thread) = core.threads.last_mut() {
                thread.siginfo = Some(info);
            }
        }
        elf::NT_PRPSINFO => {
            let text = |from: usize, to: usize| {
                let raw = desc.get(from..to.min(desc.len())).unwrap_or(&[]);
                let end = raw.iter().position(|b| *b == 0).unwrap_or(raw.len());
                String::from_utf8_lossy(&raw[..end]).trim_end().to_string()
            };
            core.psinfo = Some(PsInfo {
                pid: u32_at(desc, 24).unwrap_or(0),
                pgrp: u32_at(desc, 32).unwrap_or(0),
                name: text(40, 56),
                args: text(56, 136),
            });
        }
        elf::NT_AUXV => {
            core.auxv = desc
                .chunks_exact(16)
                .map(|p| (u64_at(p, 0).unwrap_or(0), u64_at(p, 8).unwrap_or(0)))
                .take_while(|(kind, _)| *kind != 0)
                .collect();
        }
        elf::NT_FILE => core.files = read_file_note(desc),
        _ => {}
    }
}

/// NT_FILE: count, page size, `count` (start, end, page offset) triples,
/// then `count` NUL-terminated paths.
fn read_file_note(desc: &[u8]) -> Vec<FileMap> {
    let (Some(count), Some(page)) = (u64_at(desc, 0), u64_at(desc, 8)) else {
        return Vec::new();
    };
    // Each entry needs 24 bytes and a path: a hostile count is bounded by
    // the note's own size.
    let count = count.min(desc.len() as u64 / 25) as usize;
    let mut names = desc
        .get(16 + count * 24..)
        .unwrap_or(&[])
        .split(|b| *b == 0);
    (0..count)
        .map_while(|i| {
            let at = 16 + i * 24;
            let start = u64_at(desc, at)?;
            let end = u64_at(desc, at + 8)?;
            let pages = u64_at(desc, at + 16)?;
            let path = String::from_utf8_lossy(names.next()?).into_owned();
            Some(FileMap {
                start,
                end: end.max(start),
                file_offset: pages.saturating_mul(page),
                path,
            })
        })
        .collect()
}

/// The memory of a core: reads bytes at an address from the segments that
/// hold them in the file.
pub(crate) struct Memory<'a> {
    pub file: &'a [u8],
    pub loads: &'a [Load],
}

impl<'a> Memory<'a> {
    /// `len` bytes at `addr`, when one segment holds all of them in the file.
    pub(super) fn read(&self, addr: u64, len: usize) -> Option<&'a [u8]> {
        let load = self
            .loads
            .iter()
            .find(|l| addr >= l.vaddr && addr - l.vaddr < l.filesz)?;
        let inside = addr - load.vaddr;
        if inside.checked_add(len as u64)? > load.filesz {
            return None;
        }
        let from = usize::try_from(load.offset.checked_add(inside)?).ok()?;
        self.file.get(from..from.checked_add(len)?)
    }

    /// The segment that maps `addr` (whether or not the file holds it).
    pub(super) fn segment(&self, addr: u64) -> Option<&'a Load> {
        self.loads
            .iter()
            .find(|l| addr >= l.vaddr && addr - l.vaddr < l.memsz)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A CORE note, as the kernel writes it (for the tests of elfcore).
    pub(in crate::elfcore) fn note(kind: u32, desc: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(5u32.to_le_bytes());
        out.extend((desc.len() as u32).to_le_bytes());
        out.extend(kind.to_le_bytes());
        out.extend(b"CORE\0\0\0\0");
        out.extend(desc);
        while !out.len().is_multiple_of(4) {
            out.push(0);
        }
        out
    }

    #[test]
    fn a_hostile_file_note_count_is_bounded_by_the_note() {
        let mut desc = Vec::new();
        desc.extend(u64::MAX.to_le_bytes());
        desc.extend(4096u64.to_le_bytes());
        desc.extend([1u8; 24]);
        desc.extend(b"/lib/x.so\0");
        let files = read_file_note(&desc);
        assert!(files.len() <= 1, "{files:?}");
    }

    #[test]
    fn notes_cut_in_the_middle_keep_the_threads_before_the_cut() {
        let mut status = vec![0u8; PR_REG + X86_64_REGS * 8 + 8];
        status[32..36].copy_from_slice(&77u32.to_le_bytes());
        let mut bytes = note(elf::NT_PRSTATUS, &status);
        let second = note(elf::NT_PRSTATUS, &status);
        bytes.extend(&second[..40]);
        let mut core = Core::default();
        read_notes(&bytes, Arch::X86_64, &mut core);
        assert_eq!(core.threads.len(), 1);
        assert_eq!(core.threads[0].tid, 77);
        assert!(core.lost.iter().any(|l| l.contains("end of the notes")));
    }

    #[test]
    fn memory_reads_only_what_one_segment_holds() {
        let file = vec![7u8; 0x3000];
        let loads = [Load {
            vaddr: 0x1000,
            memsz: 0x2000,
            offset: 0x1000,
            filesz: 0x1000,
            flags: 4,
        }];
        let memory = Memory {
            file: &file,
            loads: &loads,
        };
        assert_eq!(memory.read(0x1ff8, 8), Some(&[7u8; 8][..]));
        assert_eq!(memory.read(0x1ffc, 8), None, "past filesz");
        assert_eq!(memory.read(0x2000, 1), None);
        assert!(memory.segment(0x2fff).is_some());
        assert_eq!(memory.read(u64::MAX - 2, 8), None);
    }
}
