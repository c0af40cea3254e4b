//! Linux core files (the kernel's, gdb's `gcore`, systemd-coredump's
//! compressed ones) read as minidumps: the core's notes become minidump
//! streams, and its memory segments become the dump's memory list without
//! being copied (view.rs says why this design). Everything after that —
//! symbols, unwinding, wait chains, exit phase, rules, reports — is the
//! minidump path, unchanged.

mod modules;
mod parse;
mod unpack;
mod view;
mod write;

use std::fs::File;
use std::io::Read;
use std::path::Path;

pub(crate) use view::View;

/// A core, ready for the minidump reader.
pub(crate) struct OpenedCore {
    pub view: View,
    /// What the core lacks or how it was read, one sentence each.
    pub warnings: Vec<String>,
    /// How the file was stored: `ELF core` or `zstd-compressed ELF core`.
    pub format: String,
}

/// True when the file's first bytes are an ELF core or a compressed stream
/// (which may hold one: only decompressing tells).
pub(crate) fn looks_like_core(head: &[u8]) -> bool {
    parse::is_core(head) || unpack::Packing::sniff(head).is_some()
}

/// Whose core an uncompressed core file is: the process id, its process
/// group, its name, and the signal that ended it (0: none recorded).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) struct CoreOwner {
    pub pid: u32,
    pub pgrp: u32,
    pub name: String,
    pub signal: i32,
}

/// Reads only the notes of the core at `path` (for `run`, which looks for
/// the cores its command's processes left).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn owner(path: &Path) -> Option<CoreOwner> {
    let file = File::open(path).ok()?;
    // SAFETY: sound while nobody truncates or rewrites the core during the
    // map's life (see view.rs). We never write it; a core the kernel is
    // still writing only grows, which leaves the mapped bytes alone.
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    let core = parse::parse(&map).ok()?;
    let ps = core.psinfo.as_ref()?;
    let signal = core
        .threads
        .iter()
        .filter_map(|t| t.siginfo.map(|s| s.signo).or(Some(i32::from(t.cursig))))
        .find(|s| *s != 0)
        .unwrap_or(0);
    Some(CoreOwner {
        pid: ps.pid,
        pgrp: ps.pgrp,
        name: ps.name.clone(),
        signal,
    })
}

/// Reads the core at `path`. The error is one line naming the problem.
pub(crate) fn open(path: &Path) -> Result<OpenedCore, String> {
    let mut file = File::open(path).map_err(|e| format!("cannot read file: {e}"))?;
    let mut head = [0u8; 18];
    let n = file
        .read(&mut head)
        .map_err(|e| format!("cannot read file: {e}"))?;
    let mut warnings = Vec::new();
    let mut format = "ELF core".to_string();
    let time = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs() as u32);
    let (file, len) = match unpack::Packing::sniff(&head[..n]) {
        Some(packing) => {
            drop(file);
            let source = File::open(path).map_err(|e| format!("cannot read file: {e}"))?;
            let unpacked = unpack::unpack(source, packing)
                .map_err(|e| format!("{}-compressed file: {e}", packing.name()))?;
            let mut inner = [0u8; 18];
            let got = read_start(&unpacked.file, &mut inner);
            if !parse::is_core(&inner[..got]) {
                return Err(format!(
                    "{}-compressed data that is not an ELF core file (it starts with {:?})",
                    packing.name(),
                    String::from_utf8_lossy(&inner[..got.min(4)])
                ));
            }
            if let Some(why) = unpacked.broken {
                warnings.push(format!(
                    "the {} stream is corrupt after {} MB ({why}): what came before is read",
                    packing.name(),
                    unpacked.len >> 20
                ));
            }
            format = format!("{}-compressed ELF core", packing.name());
            (unpacked.file, unpacked.len)
        }
        None => {
            let len = file
                .metadata()
                .map_err(|e| format!("cannot read file: {e}"))?
                .len();
            (file, len)
        }
    };
    // SAFETY: sound while nobody truncates or rewrites the core (or the
    // file it was unpacked to, a temporary file of our own) during the
    // map's life; we never write either once mapped. See view.rs.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| format!("cannot map file: {e}"))?;
    let core = parse::parse(&map).map_err(|e| e.to_string())?;
    let memory = parse::Memory {
        file: &map,
        loads: &core.loads,
    };
    let modules = modules::modules(&core, &memory, &mut warnings);
    if !core.lost.is_empty() {
        warnings.insert(
            0,
            format!("the core is incomplete: missing {}", core.lost.join("; ")),
        );
    }
    if let Some(note) = requested_dump(&core) {
        warnings.push(note);
    }
    let mut streams = write::streams(&core, &modules, len, time);
    let head = view::head_size(streams.bytes.len());
    streams.place(head);
    drop(map);
    let view = View::new(&streams.bytes, head, &file, len)
        .map_err(|e| format!("cannot map the core: {e}"))?;
    Ok(OpenedCore {
        view,
        warnings,
        format,
    })
}

fn read_start(file: &File, buf: &mut [u8]) -> usize {
    use std::io::{Seek, SeekFrom};
    let mut file = file;
    if file.seek(SeekFrom::Start(0)).is_err() {
        return 0;
    }
    file.read(buf).unwrap_or(0)
}

/// A note for a core written while the process ran on: a signal another
/// process sent asked for it (`kill -QUIT`, `timeout -s ABRT`, a
/// watchdog), or a debugger stopped it (gdb's `gcore`).
fn requested_dump(core: &parse::Core) -> Option<String> {
    if !core.threads.is_empty() && write::crashing_thread(core).is_none() {
        let info = core
            .threads
            .iter()
            .filter_map(|t| t.siginfo)
            .find(|s| s.signo != 0);
        return Some(match info {
            Some(s) => match write::requester(core, &s) {
                Some(from) => format!(
                    "the core was written on signal {} sent by process {from}: a dump on \
                     request of a running process, not a crash",
                    s.signo
                ),
                None => format!(
                    "the core was written while the process was stopped (signal {}, as gdb's \
                     gcore does): a dump of a running process, not a crash",
                    s.signo
                ),
            },
            None => {
                "the core records no signal: a dump of a running process (gdb's gcore)".to_string()
            }
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use minidump::{Minidump, MinidumpSystemInfo, MinidumpThreadList};
    use parse::tests::note;

    /// A minimal arm64 core: one thread (pc, sp, frame pointer and link
    /// register set), its process info, and one page of stack.
    fn arm64_core() -> Vec<u8> {
        let mut status = vec![0u8; 112 + 34 * 8 + 8];
        status[32..36].copy_from_slice(&42u32.to_le_bytes());
        let reg = |status: &mut Vec<u8>, i: usize, value: u64| {
            status[112 + i * 8..120 + i * 8].copy_from_slice(&value.to_le_bytes());
        };
        reg(&mut status, 29, 0x7000_0800); // fp
        reg(&mut status, 30, 0x4000_2000); // lr
        reg(&mut status, 31, 0x7000_0100); // sp
        reg(&mut status, 32, 0x4000_1234); // pc
        let mut info = vec![0u8; 136];
        info[24..28].copy_from_slice(&42u32.to_le_bytes());
        info[40..44].copy_from_slice(b"prog");
        info[56..68].copy_from_slice(b"prog --flag\0");
        let mut notes = note(1, &status);
        notes.extend(note(3, &info));

        let mut file = vec![0u8; 0x1000];
        file[..4].copy_from_slice(b"\x7fELF");
        file[4] = 2;
        file[5] = 1;
        file[6] = 1;
        file[16..18].copy_from_slice(&4u16.to_le_bytes());
        file[18..20].copy_from_slice(&183u16.to_le_bytes());
        file[32..40].copy_from_slice(&64u64.to_le_bytes());
        file[54..56].copy_from_slice(&56u16.to_le_bytes());
        file[56..58].copy_from_slice(&2u16.to_le_bytes());
        let phdr = |file: &mut Vec<u8>, at: usize, fields: [u64; 5], kind: u32, flags: u32| {
            file[at..at + 4].copy_from_slice(&kind.to_le_bytes());
            file[at + 4..at + 8].copy_from_slice(&flags.to_le_bytes());
            let [offset, vaddr, filesz, memsz, _] = fields;
            file[at + 8..at + 16].copy_from_slice(&offset.to_le_bytes());
            file[at + 16..at + 24].copy_from_slice(&vaddr.to_le_bytes());
            file[at + 32..at + 40].copy_from_slice(&filesz.to_le_bytes());
            file[at + 40..at + 48].copy_from_slice(&memsz.to_le_bytes());
        };
        phdr(&mut file, 64, [0x100, 0, notes.len() as u64, 0, 0], 4, 0);
        phdr(
            &mut file,
            120,
            [0x1000, 0x7000_0000, 0x1000, 0x1000, 0],
            1,
            6,
        );
        file[0x100..0x100 + notes.len()].copy_from_slice(&notes);
        let mut stack = vec![0u8; 0x1000];
        stack[0x100..0x108].copy_from_slice(&0xfeed_u64.to_le_bytes());
        file.extend(stack);
        file
    }

    #[test]
    fn an_arm64_core_reads_as_a_minidump_with_its_registers_and_stack() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("core");
        std::fs::write(&path, arm64_core()).unwrap();
        let core = open(&path).unwrap();
        assert!(
            core.warnings.iter().any(|w| w.contains("no NT_FILE")),
            "{:?}",
            core.warnings
        );
        let dump = Minidump::read(core.view).unwrap();
        let system = dump.get_stream::<MinidumpSystemInfo>().unwrap();
        assert_eq!(system.cpu, minidump::system_info::Cpu::Arm64);
        let threads = dump.get_stream::<MinidumpThreadList>().unwrap();
        let thread = &threads.threads[0];
        assert_eq!(thread.raw.thread_id, 42);
        let context = thread.context(&system, None).unwrap();
        assert_eq!(context.get_instruction_pointer(), 0x4000_1234);
        assert_eq!(context.get_stack_pointer(), 0x7000_0100);
        let memory = dump.get_memory().unwrap();
        let stack = thread.stack_memory(&memory).unwrap();
        assert_eq!(
            stack.get_memory_at_address::<u64>(0x7000_0100),
            Some(0xfeed)
        );
        // No signal: a dump of a running process, not a crash.
        assert!(dump.get_stream::<minidump::MinidumpException>().is_err());
    }

    /// More than 65534 segments: e_phnum says PN_XNUM and section 0's
    /// sh_info holds the count, as the kernel writes it.
    #[test]
    fn an_extended_program_header_count_is_read_from_section_zero() {
        let mut core = arm64_core();
        core[56..58].copy_from_slice(&0xffffu16.to_le_bytes());
        let shoff = core.len() as u64;
        core[40..48].copy_from_slice(&shoff.to_le_bytes());
        core[58..60].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
        core[60..62].copy_from_slice(&1u16.to_le_bytes()); // e_shnum
        let mut section = [0u8; 64];
        section[44..48].copy_from_slice(&2u32.to_le_bytes()); // sh_info
        core.extend(section);
        let parsed = parse::parse(&core).unwrap();
        assert_eq!(parsed.loads.len(), 1);
        assert_eq!(parsed.threads.len(), 1);
        assert!(parsed.lost.iter().all(|l| !l.contains("program headers")));
    }

    #[test]
    fn other_machines_are_refused_by_name() {
        let mut core = arm64_core();
        core[18..20].copy_from_slice(&40u16.to_le_bytes()); // EM_ARM
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("core");
        std::fs::write(&path, core).unwrap();
        let error = open(&path).err().unwrap();
        assert!(error.contains("unsupported architecture"), "{error}");
    }
}
