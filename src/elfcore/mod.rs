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
    // SAFETY: read-only map of a file we opened; see view.rs on files
    // changed while mapped.
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
