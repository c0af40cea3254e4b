//! The minidump streams that describe a core: threads with their register
//! contexts, modules with their build ids, the signal as the exception,
//! the process id and command line, /proc/PID/maps rebuilt from the
//! segments, and one Memory64List whose data *is* the core file's
//! segments (see view.rs: the core is mapped right after these streams, so
//! a segment at file offset `o` is at RVA `head + o`).

use minidump_common::format as md;
use scroll::Pwrite;

use super::modules::CoreModule;
use super::parse::{Arch, Core, Load, ThreadNote};

const HEADER_SIZE: usize = 32;
const DIRECTORY_ENTRY: usize = 12;
/// The number of streams `streams` writes (fewer are used when there is no
/// exception: the entry stays, as an unused stream).
const STREAMS: usize = 9;
/// Padding pieces of the memory list are placed here: no process can map
/// these non-canonical addresses, so no lookup of a real one finds them.
const PADDING_BASE: u64 = 0xdead_0000_0000_0000;

/// Fault signals, whose si_addr is the faulting address.
const FAULT_SIGNALS: [i32; 5] = [4, 5, 7, 8, 11];

/// The streams, and where the Memory64List's base RVA must be patched in
/// once the size of the stream area is known.
pub(crate) struct Streams {
    pub bytes: Vec<u8>,
    base_rva_at: usize,
    first_offset: u64,
}

impl Streams {
    /// Sets the memory list's base now that the core's bytes are known to
    /// start at RVA `head`.
    pub(super) fn place(&mut self, head: u64) {
        let base = head.saturating_add(self.first_offset);
        self.bytes[self.base_rva_at..self.base_rva_at + 8].copy_from_slice(&base.to_le_bytes());
    }
}

/// Signals whose default action writes a core (signal(7)): SIGQUIT, SIGILL,
/// SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGXCPU, SIGXFSZ, SIGSYS.
const CORE_SIGNALS: [i32; 10] = [3, 4, 5, 6, 7, 8, 11, 24, 25, 31];

/// The exception, when the core records a crash: the thread that took a
/// core-dumping signal the process did not receive from someone else. A
/// signal another process sent (SIGQUIT or SIGABRT from `kill`,
/// `timeout -s`, a CI watchdog) asked for the core, and gdb's `gcore`
/// stops the process with SIGSTOP: those are dumps of a running process.
pub(crate) fn crashing_thread(core: &Core) -> Option<&ThreadNote> {
    let thread = core.threads.iter().find(|t| signal(t) != 0)?;
    let sent = thread.siginfo.and_then(|s| requester(core, &s));
    (CORE_SIGNALS.contains(&signal(thread)) && sent.is_none()).then_some(thread)
}

fn signal(thread: &ThreadNote) -> i32 {
    thread
        .siginfo
        .map(|s| s.signo)
        .filter(|s| *s != 0)
        .unwrap_or(i32::from(thread.cursig))
}

/// The process that sent the signal, when it was not the process itself.
pub(crate) fn requester(core: &Core, info: &super::parse::SigInfo) -> Option<u32> {
    let pid = core.psinfo.as_ref().map(|p| p.pid);
    info.sender()
        .filter(|from| *from != 0 && Some(*from) != pid)
}

pub(crate) fn streams(core: &Core, modules: &[CoreModule], file_len: u64, time: u32) -> Streams {
    let arch = core.arch.unwrap_or(Arch::X86_64);
    let mut w = Writer {
        out: vec![0; HEADER_SIZE + STREAMS * DIRECTORY_ENTRY],
        entries: 0,
    };
    let header = md::MINIDUMP_HEADER {
        signature: md::MINIDUMP_SIGNATURE,
        version: md::MINIDUMP_VERSION,
        stream_count: STREAMS as u32,
        stream_directory_rva: HEADER_SIZE as u32,
        checksum: 0,
        time_date_stamp: time,
        flags: 0,
    };
    let _ = w.out.pwrite_with(header, 0, scroll::LE);

    let contexts = w.threads(core, arch);
    w.modules(modules);
    // Memory: the segments the file holds, in file order, with padding
    // pieces where a writer left a gap between two segments.
    let (memory, first_offset) = memory_list(&core.loads, file_len);
    let base_rva_at = w.stream(md::MINIDUMP_STREAM_TYPE::Memory64ListStream as u32, &memory) + 8;
    w.exception(core, arch, &contexts);
    w.system(arch);
    w.process(core);

    Streams {
        bytes: w.out,
        base_rva_at,
        first_offset,
    }
}

/// The minidump being written: its bytes, and how many directory entries
/// are filled.
struct Writer {
    out: Vec<u8>,
    entries: usize,
}

impl Writer {
    /// The thread list, each thread with its context; returns where each
    /// context is.
    fn threads(&mut self, core: &Core, arch: Arch) -> Vec<u32> {
        let contexts: Vec<u32> = core.threads.iter().map(|t| self.context(arch, t)).collect();
        let mut list = (core.threads.len() as u32).to_le_bytes().to_vec();
        for (thread, rva) in core.threads.iter().zip(&contexts) {
            let raw = md::MINIDUMP_THREAD {
                thread_id: thread.tid,
                suspend_count: 0,
                priority_class: 0,
                priority: 0,
                teb: 0,
                // No stack copy: the reader finds the stack pointer's segment in
                // the memory list.
                stack: md::MINIDUMP_MEMORY_DESCRIPTOR {
                    start_of_memory_range: stack_pointer(arch, &thread.regs),
                    memory: md::MINIDUMP_LOCATION_DESCRIPTOR::default(),
                },
                thread_context: md::MINIDUMP_LOCATION_DESCRIPTOR {
                    data_size: context_size(arch),
                    rva: *rva,
                },
            };
            let mut buf = [0u8; 48];
            let _ = buf.pwrite_with(raw, 0, scroll::LE);
            list.extend(buf);
        }
        self.stream(md::MINIDUMP_STREAM_TYPE::ThreadListStream as u32, &list);
        contexts
    }

    /// The module list, with each module's name and build id.
    fn modules(&mut self, modules: &[CoreModule]) {
        let mut list = (modules.len() as u32).to_le_bytes().to_vec();
        let mut names = Vec::new();
        for module in modules {
            names.push((
                self.string(&module.path),
                module.build_id.as_ref().map(|id| self.cv_record(id)),
            ));
        }
        for (module, (name, cv)) in modules.iter().zip(names) {
            let raw = md::MINIDUMP_MODULE {
                base_of_image: module.base,
                size_of_image: u32::try_from(module.size).unwrap_or(u32::MAX),
                module_name_rva: name,
                cv_record: cv.unwrap_or_default(),
                ..md::MINIDUMP_MODULE::default()
            };
            let mut buf = [0u8; 108];
            let _ = buf.pwrite_with(raw, 0, scroll::LE);
            list.extend(buf);
        }
        self.stream(md::MINIDUMP_STREAM_TYPE::ModuleListStream as u32, &list);
    }

    /// The exception stream: the signal of the crashing thread, if any.
    fn exception(&mut self, core: &Core, arch: Arch, contexts: &[u32]) {
        if let Some(thread) = crashing_thread(core) {
            let info = thread.siginfo.unwrap_or_default();
            let index = core
                .threads
                .iter()
                .position(|t| t.tid == thread.tid)
                .unwrap_or(0);
            let mut bytes = Vec::with_capacity(168);
            bytes.extend(thread.tid.to_le_bytes());
            bytes.extend(0u32.to_le_bytes());
            bytes.extend((info.signo as u32).to_le_bytes());
            bytes.extend((info.code as u32).to_le_bytes());
            bytes.extend(0u64.to_le_bytes());
            let address = if FAULT_SIGNALS.contains(&info.signo) {
                info.word
            } else {
                0
            };
            bytes.extend(address.to_le_bytes());
            bytes.extend(0u32.to_le_bytes());
            bytes.extend(0u32.to_le_bytes());
            bytes.extend([0u8; 15 * 8]);
            bytes.extend(context_size(arch).to_le_bytes());
            bytes.extend(contexts.get(index).copied().unwrap_or(0).to_le_bytes());
            self.stream(md::MINIDUMP_STREAM_TYPE::ExceptionStream as u32, &bytes);
        }
    }

    /// System: the OS and CPU; the rest is not in a core.
    fn system(&mut self, arch: Arch) {
        let csd = self.string("");
        let mut system = Vec::with_capacity(56);
        let cpu = match arch {
            Arch::X86_64 => md::ProcessorArchitecture::PROCESSOR_ARCHITECTURE_AMD64,
            Arch::Aarch64 => md::ProcessorArchitecture::PROCESSOR_ARCHITECTURE_ARM64,
        };
        system.extend((cpu as u16).to_le_bytes());
        system.extend([0u8; 4]);
        system.extend([0u8, 0]);
        system.extend([0u8; 12]);
        system.extend((md::PlatformId::Linux as u32).to_le_bytes());
        system.extend(csd.to_le_bytes());
        system.extend([0u8; 4]);
        system.extend([0u8; 24]);
        self.stream(md::MINIDUMP_STREAM_TYPE::SystemInfoStream as u32, &system);
    }

    /// The process: its pid and command line, its mappings and auxv.
    fn process(&mut self, core: &Core) {
        if let Some(ps) = &core.psinfo {
            let mut misc = Vec::with_capacity(24);
            misc.extend(24u32.to_le_bytes());
            misc.extend(1u32.to_le_bytes()); // MINIDUMP_MISC1_PROCESS_ID
            misc.extend(ps.pid.to_le_bytes());
            misc.extend([0u8; 12]);
            self.stream(md::MINIDUMP_STREAM_TYPE::MiscInfoStream as u32, &misc);
            // NUL-separated, as /proc/PID/cmdline: the core keeps only the first
            // 80 bytes, with spaces between the words.
            let args = if ps.args.is_empty() {
                &ps.name
            } else {
                &ps.args
            };
            self.stream(
                md::MINIDUMP_STREAM_TYPE::LinuxCmdLine as u32,
                args.as_bytes(),
            );
        }
        self.stream(
            md::MINIDUMP_STREAM_TYPE::LinuxMaps as u32,
            maps(core).as_bytes(),
        );
        let auxv: Vec<u8> = core
            .auxv
            .iter()
            .flat_map(|(k, v)| k.to_le_bytes().into_iter().chain(v.to_le_bytes()))
            .collect();
        self.stream(md::MINIDUMP_STREAM_TYPE::LinuxAuxv as u32, &auxv);
    }
}

impl Writer {
    fn append(&mut self, bytes: &[u8]) -> u32 {
        while !self.out.len().is_multiple_of(8) {
            self.out.push(0);
        }
        let rva = self.out.len() as u32;
        self.out.extend_from_slice(bytes);
        rva
    }

    /// Appends a stream and its directory entry; returns where it starts.
    fn stream(&mut self, kind: u32, bytes: &[u8]) -> usize {
        let rva = self.append(bytes);
        if self.entries == STREAMS {
            return rva as usize;
        }
        let at = HEADER_SIZE + self.entries * DIRECTORY_ENTRY;
        self.out[at..at + 4].copy_from_slice(&kind.to_le_bytes());
        self.out[at + 4..at + 8].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
        self.out[at + 8..at + 12].copy_from_slice(&rva.to_le_bytes());
        self.entries += 1;
        rva as usize
    }

    /// A MINIDUMP_STRING: byte length, UTF-16LE, a terminating NUL.
    fn string(&mut self, text: &str) -> u32 {
        let units: Vec<u16> = text.encode_utf16().collect();
        let mut bytes = ((units.len() * 2) as u32).to_le_bytes().to_vec();
        bytes.extend(units.iter().flat_map(|u| u.to_le_bytes()));
        bytes.extend([0, 0]);
        self.append(&bytes)
    }

    /// Breakpad's ELF CodeView record: 'BpEL' and the build id.
    fn cv_record(&mut self, build_id: &[u8]) -> md::MINIDUMP_LOCATION_DESCRIPTOR {
        let mut bytes = (md::CvSignature::Elf as u32).to_le_bytes().to_vec();
        bytes.extend(build_id);
        let rva = self.append(&bytes);
        md::MINIDUMP_LOCATION_DESCRIPTOR {
            data_size: bytes.len() as u32,
            rva,
        }
    }

    fn context(&mut self, arch: Arch, thread: &ThreadNote) -> u32 {
        let r = |i: usize| thread.regs.get(i).copied().unwrap_or(0);
        match arch {
            Arch::X86_64 => {
                let mut c = md::CONTEXT_AMD64 {
                    context_flags: md::ContextFlagsAmd64::CONTEXT_AMD64_FULL.bits(),
                    r15: r(0),
                    r14: r(1),
                    r13: r(2),
                    r12: r(3),
                    rbp: r(4),
                    rbx: r(5),
                    r11: r(6),
                    r10: r(7),
                    r9: r(8),
                    r8: r(9),
                    rax: r(10),
                    rcx: r(11),
                    rdx: r(12),
                    rsi: r(13),
                    rdi: r(14),
                    rip: r(16),
                    cs: r(17) as u16,
                    eflags: r(18) as u32,
                    rsp: r(19),
                    ss: r(20) as u16,
                    ds: r(23) as u16,
                    es: r(24) as u16,
                    fs: r(25) as u16,
                    gs: r(26) as u16,
                    ..md::CONTEXT_AMD64::default()
                };
                if let Some(fx) = thread.fpregs.as_deref().filter(|f| f.len() >= 512) {
                    c.float_save.copy_from_slice(&fx[..512]);
                    c.mx_csr = u32::from_le_bytes([fx[24], fx[25], fx[26], fx[27]]);
                }
                let mut buf = vec![0u8; context_size(arch) as usize];
                let _ = buf.pwrite_with(c, 0, scroll::LE);
                self.append(&buf)
            }
            Arch::Aarch64 => {
                let mut c = md::CONTEXT_ARM64 {
                    context_flags: md::ContextFlagsArm64::CONTEXT_ARM64_FULL.bits(),
                    cpsr: r(33) as u32,
                    sp: r(31),
                    pc: r(32),
                    ..md::CONTEXT_ARM64::default()
                };
                for (i, reg) in c.iregs.iter_mut().enumerate() {
                    *reg = r(i);
                }
                if let Some(fp) = thread.fpregs.as_deref().filter(|f| f.len() >= 520) {
                    for (i, reg) in c.float_regs.iter_mut().enumerate() {
                        let b: [u8; 16] = fp[i * 16..i * 16 + 16].try_into().unwrap_or([0; 16]);
                        *reg = u128::from_le_bytes(b);
                    }
                    c.fpsr = u32::from_le_bytes([fp[512], fp[513], fp[514], fp[515]]);
                    c.fpcr = u32::from_le_bytes([fp[516], fp[517], fp[518], fp[519]]);
                }
                let mut buf = vec![0u8; context_size(arch) as usize];
                let _ = buf.pwrite_with(c, 0, scroll::LE);
                self.append(&buf)
            }
        }
    }
}

fn context_size(arch: Arch) -> u32 {
    use scroll::ctx::SizeWith;
    match arch {
        Arch::X86_64 => md::CONTEXT_AMD64::size_with(&scroll::LE) as u32,
        Arch::Aarch64 => md::CONTEXT_ARM64::size_with(&scroll::LE) as u32,
    }
}

fn stack_pointer(arch: Arch, regs: &[u64]) -> u64 {
    let at = match arch {
        Arch::X86_64 => 19,
        Arch::Aarch64 => 31,
    };
    regs.get(at).copied().unwrap_or(0)
}

/// MINIDUMP_MEMORY64_LIST: count, base RVA (patched later), descriptors.
/// Its data must be contiguous: segments are listed in file order, one
/// that overlaps the one before (a hostile file) is left out, and a gap is
/// covered by a padding piece at an address no process has. Returns the
/// list and the file offset its data starts at.
fn memory_list(loads: &[Load], file_len: u64) -> (Vec<u8>, u64) {
    let mut present: Vec<Load> = loads
        .iter()
        .filter(|l| l.filesz > 0 && l.offset < file_len)
        .map(|l| Load {
            filesz: l.filesz.min(file_len - l.offset),
            ..*l
        })
        .collect();
    present.sort_by_key(|l| l.offset);
    let first = present.first().map_or(0, |l| l.offset);
    let mut descriptors: Vec<(u64, u64)> = Vec::new();
    let mut at = first;
    let mut padding = 0u64;
    for load in present {
        if load.offset < at {
            continue;
        }
        if load.offset > at {
            // A hostile number of gaps (over 500 million) wraps around
            // instead of overflowing.
            let address = PADDING_BASE.wrapping_add(padding.wrapping_shl(32));
            descriptors.push((address, load.offset - at));
            padding += 1;
        }
        descriptors.push((load.vaddr, load.filesz));
        at = load.offset + load.filesz;
    }
    let mut out = Vec::with_capacity(16 + descriptors.len() * 16);
    out.extend((descriptors.len() as u64).to_le_bytes());
    out.extend(0u64.to_le_bytes());
    for (start, size) in descriptors {
        out.extend(start.to_le_bytes());
        out.extend(size.to_le_bytes());
    }
    (out, first)
}

/// /proc/PID/maps as the process had it, rebuilt from the segments and the
/// mapped files.
fn maps(core: &Core) -> String {
    use std::fmt::Write;
    let mut text = String::new();
    for load in core.loads.iter().take(65_536) {
        let file = core
            .files
            .iter()
            .find(|f| load.vaddr >= f.start && load.vaddr < f.end);
        let perms = format!(
            "{}{}{}p",
            if load.flags & 4 != 0 { 'r' } else { '-' },
            if load.flags & 2 != 0 { 'w' } else { '-' },
            if load.flags & 1 != 0 { 'x' } else { '-' },
        );
        let (offset, path) = file.map_or((0, ""), |f| {
            // NT_FILE's page offsets come from the file: any value.
            (
                f.file_offset.wrapping_add(load.vaddr - f.start),
                f.path.as_str(),
            )
        });
        let _ = writeln!(
            text,
            "{:x}-{:x} {perms} {offset:08x} 00:00 0 {path}",
            load.vaddr,
            load.vaddr.saturating_add(load.memsz)
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(vaddr: u64, offset: u64, filesz: u64) -> Load {
        Load {
            vaddr,
            memsz: filesz.max(0x1000),
            offset,
            filesz,
            flags: 6,
        }
    }

    fn descriptors(list: &[u8]) -> Vec<(u64, u64)> {
        list[16..]
            .chunks_exact(16)
            .map(|c| {
                (
                    u64::from_le_bytes(c[..8].try_into().unwrap()),
                    u64::from_le_bytes(c[8..].try_into().unwrap()),
                )
            })
            .collect()
    }

    #[test]
    fn gaps_are_padded_overlaps_dropped_and_the_cut_end_clipped() {
        let loads = [
            load(0x1000, 0x100, 0x1000),
            load(0x5000, 0x1400, 0x1000), // a gap of 0x300
            load(0x9000, 0x1800, 0x1000), // overlaps the one before
            load(0xa000, 0x2400, 0x1000), // cut: the file ends at 0x2c00
            load(0xb000, 0x3400, 0x1000), // not in the file at all
        ];
        let (list, first) = memory_list(&loads, 0x2c00);
        assert_eq!(first, 0x100);
        let d = descriptors(&list);
        assert_eq!(d[0], (0x1000, 0x1000));
        assert_eq!(d[1], (PADDING_BASE, 0x300));
        assert_eq!(d[2], (0x5000, 0x1000));
        assert_eq!(d[3], (0xa000, 0x800));
        assert_eq!(d.len(), 4);
        // The data is contiguous: the sizes add up to the last byte used.
        assert_eq!(first + d.iter().map(|x| x.1).sum::<u64>(), 0x2c00);
    }
}
