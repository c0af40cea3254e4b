//! What each blocked thread waits for, and who holds it (issue 28), where
//! the dump can tell: Linux futex waits (linux.rs) and Windows critical
//! sections, the loader lock, SRW locks, condition variables and handle
//! waits (windows.rs). Nothing is guessed: a value that cannot be read is
//! said, not inferred.

mod common;
mod linux;
mod windows;

use minidump_processor::ProcessState;

use crate::model::Report;
use crate::python::Memory;
pub(super) use common::DumpThread;

/// The stream `run` and `attach` add with the bytes around each futex a
/// thread waits on (the dump's own memory lists seldom hold a mutex in a
/// program's data): entries of an address (u64), a length (u32) and the
/// bytes, little-endian.
pub(crate) const WAIT_OBJECTS_STREAM: u32 = 0x4454_0002;

/// The wait-object stream's entries.
pub(super) fn kept_objects(raw: Option<&[u8]>) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    let Some(mut raw) = raw else { return out };
    while raw.len() >= 12 {
        let address = u64::from_le_bytes(raw[..8].try_into().expect("8 bytes"));
        let len = u32::from_le_bytes(raw[8..12].try_into().expect("4 bytes")) as usize;
        let Some(end) = len.checked_add(12).filter(|end| *end <= raw.len()) else {
            break;
        };
        out.push((address, raw[12..end].to_vec()));
        raw = &raw[end..];
    }
    out
}

/// Fills `wait` of each blocked thread.
pub(super) fn find_waits(
    state: &ProcessState,
    memory: &dyn Memory,
    threads: &[DumpThread],
    report: &mut Report,
) {
    match report.system.as_ref().map(|s| s.os.as_str()) {
        Some("Linux") => linux::find_waits(state, memory, report),
        Some(os) if os.starts_with("Windows") => {
            windows::find_waits(state, memory, threads, report)
        }
        _ => {}
    }
    // Where each object lives: a module's image (a global) or not.
    for thread in &mut report.threads {
        let Some(wait) = thread.wait.as_mut() else {
            continue;
        };
        wait.in_module = wait.address.and_then(|address| {
            report
                .modules
                .iter()
                .find(|m| address >= m.base && address - m.base < m.size)
                .map(|m| format!("{}+{:#x}", m.name, address - m.base))
        });
    }
}
