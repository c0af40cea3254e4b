//! Keeping what the Python stacks need when `run` or `attach` dumps a
//! live CPython process: the walk of walk.rs runs on the stopped process's
//! memory (/proc/PID/mem), and every range it read is kept, for a stream
//! of the dump (the same records as the wait objects': address, length,
//! bytes), so the dump alone gives the stacks later, on another machine.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;

use super::{LoadedModule, Memory};

/// At most this much memory is kept (a process with 50 threads deep in
/// Python needs a few hundred KB).
const BUDGET: usize = 8 << 20;

struct Recording {
    mem: File,
    kept: RefCell<BTreeMap<u64, Vec<u8>>>,
    used: RefCell<usize>,
}

impl Memory for Recording {
    fn read(&self, address: u64, len: usize) -> Option<Vec<u8>> {
        let end = address.checked_add(len as u64)?;
        // Already kept (a range starting at or before it covers it).
        if let Some((start, bytes)) = self.kept.borrow().range(..=address).next_back() {
            if end <= start.saturating_add(bytes.len() as u64) {
                let at = (address - start) as usize;
                return Some(bytes[at..at + len].to_vec());
            }
        }
        if self.used.borrow().saturating_add(len) > BUDGET {
            return None;
        }
        let mut bytes = vec![0u8; len];
        self.mem.read_exact_at(&mut bytes, address).ok()?;
        *self.used.borrow_mut() += len;
        self.kept.borrow_mut().insert(address, bytes.clone());
        Some(bytes)
    }
}

/// The interpreter modules mapped in `pid` (from /proc/PID/maps).
fn modules(pid: u32) -> Vec<LoadedModule> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    maps.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let range = fields.next()?;
            let offset = fields.nth(1)?;
            let path = fields.nth(2)?;
            let start = u64::from_str_radix(range.split('-').next()?, 16).ok()?;
            (u64::from_str_radix(offset, 16).ok()? == 0 && super::version_of(path).is_some()).then(
                || LoadedModule {
                    path: path.to_string(),
                    base: start,
                    code_id: None,
                },
            )
        })
        .collect()
}

/// The memory the Python stacks of `pid` need, as stream records. Empty
/// when the process is not CPython. What the budget or unreadable memory
/// cut shows in the analysis as a stack cut short, with its reason.
pub(crate) fn keep(pid: u32) -> Vec<u8> {
    let modules = modules(pid);
    if modules.is_empty() {
        return Vec::new();
    }
    let Ok(mem) = File::open(format!("/proc/{pid}/mem")) else {
        return Vec::new();
    };
    let recording = Recording {
        mem,
        kept: RefCell::new(BTreeMap::new()),
        used: RefCell::new(0),
    };
    // The binary is read once: for the walk, and for the record of the
    // version and globals, so the dump needs no binary to be read.
    let Some(Ok((layout, globals))) = super::find_globals(&modules, &recording) else {
        return Vec::new();
    };
    let _ = super::walk(&layout, globals, &recording);
    let record = globals.to_record(&layout);
    let mut out = Vec::new();
    out.extend_from_slice(&super::GLOBALS_RECORD.to_le_bytes());
    out.extend_from_slice(&(record.len() as u32).to_le_bytes());
    out.extend_from_slice(&record);
    for (address, bytes) in recording.kept.borrow().iter() {
        out.extend_from_slice(&address.to_le_bytes());
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    out
}
