//! What the Linux and Windows wait readers share.

use std::ops::Range;

use crate::model::signature_name;
use crate::model::Thread;
use crate::python::Memory;

/// A thread as the dump's thread list gives it.
pub(in crate::dump) struct DumpThread {
    /// Its TEB (Windows).
    pub teb: u64,
    /// Its stack memory's range.
    pub stack: Range<u64>,
}

pub(super) fn read_u32(memory: &dyn Memory, address: u64) -> Option<u32> {
    let bytes = memory.read(address, 4)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

pub(super) fn read_u64(memory: &dyn Memory, address: u64) -> Option<u64> {
    let bytes = memory.read(address, 8)?;
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

/// The function names of a thread's top `depth` frames as signatures
/// spell them (no parameters, glibc's `__GI_` aliases, symbol versions or
/// compiler clone suffixes such as `.constprop.0`), with each frame's index.
pub(super) fn top_names(thread: &Thread, depth: usize) -> Vec<(usize, &str)> {
    thread
        .frames
        .iter()
        .take(depth)
        .enumerate()
        .flat_map(|(i, f)| f.names().map(move |n| (i, signature_name(n))))
        .collect()
}
