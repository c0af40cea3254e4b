//! A module's image bytes for the PE unwinder: from the dump's memory
//! where it holds them, else from the binary found for the module.

use super::super::unwind::pe::{FileImage, ImageBytes};
use minidump::UnifiedMemoryList;

/// Up to `len` bytes at `address` out of the dump's memory, across
/// adjacent regions (a full-memory dump splits an image by protection);
/// fewer where the memory the dump holds ends, `None` when it holds nothing
/// at `address`.
pub(super) fn read_memory(
    memory: &UnifiedMemoryList<'_>,
    address: u64,
    len: usize,
) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(len.min(1 << 20));
    let mut cursor = address;
    while out.len() < len {
        let Some(region) = memory.memory_at_address(cursor) else {
            break;
        };
        let start = usize::try_from(cursor.checked_sub(region.base_address())?).ok()?;
        let available = region.bytes().get(start..).unwrap_or_default();
        if available.is_empty() {
            break;
        }
        let take = available.len().min(len - out.len());
        out.extend_from_slice(&available[..take]);
        cursor = cursor.checked_add(take as u64)?;
    }
    (!out.is_empty()).then_some(out)
}

/// A PE image as the dump's memory holds it (full-memory dumps).
pub(super) struct MemoryImage<'a> {
    pub(super) memory: &'a UnifiedMemoryList<'a>,
    pub(super) base: u64,
}

impl ImageBytes for MemoryImage<'_> {
    fn read(&self, rva: u64, len: usize) -> Option<Vec<u8>> {
        read_memory(self.memory, self.base.checked_add(rva)?, len)
    }
}

/// A module's image by RVA: the dump's memory where it holds the bytes,
/// else the binary found for the module.
pub(crate) struct ModuleImage<'a> {
    pub(super) memory: Option<MemoryImage<'a>>,
    pub(super) file: Option<FileImage>,
}

impl ImageBytes for ModuleImage<'_> {
    fn read(&self, rva: u64, len: usize) -> Option<Vec<u8>> {
        self.memory
            .as_ref()
            .and_then(|m| m.read(rva, len))
            .or_else(|| self.file.as_ref()?.read(rva, len))
    }
}
