//! Who a module is: the identities a dump records and a file on disk must
//! share before its names may be used.
//!
//! A Windows module is named by its PDB (file name + GUID + age, the "debug
//! id") and by its image (file name + timestamp + SizeOfImage, the "code
//! id"). An ELF module is named by its GNU build id, which the dump writer
//! also turns into a debug id.

use std::borrow::Cow;

use minidump::Module;

use crate::model::file_name;

pub(crate) use debugid::{CodeId, DebugId};

/// A module's identity, detached from any one dump so that lookups made for
/// one dump are shared with every other dump of the run holding the same
/// module (where it may be loaded at another address).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identity {
    /// The image's path as the dump records it.
    pub code_file: String,
    pub code_id: Option<String>,
    pub debug_file: Option<String>,
    pub debug_id: Option<DebugId>,
}

/// What kind of binary a module is, which decides where its files are looked
/// for and how they are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Pe,
    Elf,
}

impl Identity {
    pub fn of(module: &dyn Module) -> Self {
        let nonempty = |s: Option<Cow<'_, str>>| s.map(Cow::into_owned).filter(|s| !s.is_empty());
        Identity {
            code_file: module.code_file().into_owned(),
            code_id: module
                .code_identifier()
                .map(|id| id.to_string())
                .filter(|id| !id.is_empty()),
            debug_file: nonempty(module.debug_file()),
            debug_id: module.debug_identifier().filter(|id| !id.is_nil()),
        }
    }

    /// A PE code id is 8 hex digits of timestamp and up to 8 of image size;
    /// an ELF build id is longer. Without a code id, a `.pdb` debug file
    /// still says Windows.
    pub fn format(&self) -> Format {
        match &self.code_id {
            Some(id) if id.len() <= 16 => Format::Pe,
            Some(_) => Format::Elf,
            None if self
                .debug_file
                .as_deref()
                .is_some_and(|f| f.to_ascii_lowercase().ends_with(".pdb")) =>
            {
                Format::Pe
            }
            None if self.code_file.contains('\\') => Format::Pe,
            None => Format::Elf,
        }
    }

    /// The file name of the image (`fakehip.dll`, `libc.so.6`).
    pub(crate) fn code_name(&self) -> &str {
        file_name(&self.code_file)
    }

    /// The file name of the debug file (`fakehip.pdb`), when known.
    pub(crate) fn debug_name(&self) -> Option<&str> {
        self.debug_file
            .as_deref()
            .map(file_name)
            .filter(|s| !s.is_empty())
    }

    /// The ELF build id, when the code id is one.
    pub fn build_id(&self) -> Option<&str> {
        match self.format() {
            Format::Elf => self.code_id.as_deref(),
            Format::Pe => None,
        }
    }

    /// A copy positioned at `base`, as the symbol file readers need.
    pub fn at(&self, base: u64, size: u64) -> Placed<'_> {
        Placed {
            identity: self,
            base,
            size,
        }
    }
}

/// An [`Identity`] with the address it is loaded at in one dump.
pub struct Placed<'a> {
    pub identity: &'a Identity,
    pub base: u64,
    pub size: u64,
}

impl Module for Placed<'_> {
    fn base_address(&self) -> u64 {
        self.base
    }
    fn size(&self) -> u64 {
        self.size
    }
    fn code_file(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.identity.code_file)
    }
    fn code_identifier(&self) -> Option<CodeId> {
        self.identity.code_id.clone().map(CodeId::new)
    }
    fn debug_file(&self) -> Option<Cow<'_, str>> {
        self.identity.debug_file.as_deref().map(Cow::Borrowed)
    }
    fn debug_identifier(&self) -> Option<DebugId> {
        self.identity.debug_id
    }
    fn version(&self) -> Option<Cow<'_, str>> {
        None
    }
}

/// The code id of a PE image, as Windows symbol stores and minidumps spell
/// it: the timestamp in 8 hex digits, then SizeOfImage without leading zeros.
pub(crate) fn pe_code_id(timestamp: u32, size_of_image: u32) -> String {
    format!("{timestamp:08X}{size_of_image:x}")
}

/// Code ids are compared without regard to case: stores write them upper
/// case, dumps and tools differ.
pub(crate) fn same_code_id(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// The debug id a CodeView record (or a PDB) names: its GUID, stored in the
/// little-endian layout Windows uses, and its age.
pub(crate) fn debug_id_from_guid(guid: &[u8; 16], age: u32) -> DebugId {
    DebugId::from_guid_age(guid, age).unwrap_or_default()
}

/// The debug id Breakpad derives from an ELF build id: its first 16 bytes
/// read as a little-endian GUID, with age 0.
pub(crate) fn debug_id_from_build_id(build_id: &[u8]) -> DebugId {
    let mut guid = [0u8; 16];
    let n = build_id.len().min(16);
    guid[..n].copy_from_slice(&build_id[..n]);
    debug_id_from_guid(&guid, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_and_debug_ids_are_spelled_like_the_dump_writers() {
        assert_eq!(pe_code_id(0x6553_f100, 0x6000), "6553F1006000");
        let guid = [
            0xa0, 0xa8, 0x7d, 0x17, 0x75, 0xfb, 0x0a, 0x17, 0x4c, 0x4c, 0x44, 0x20, 0x50, 0x44,
            0x42, 0x2e,
        ];
        assert_eq!(
            debug_id_from_guid(&guid, 1).breakpad().to_string(),
            "177DA8A0FB75170A4C4C44205044422E1"
        );
        let build_id = [0x68, 0x54, 0x8e, 0xa7, 0x6a, 0xc0, 0xbc, 0x5d, 0x6b, 0x3a];
        assert_eq!(
            debug_id_from_build_id(&build_id).breakpad().to_string(),
            "A78E5468C06A5DBC6B3A0000000000000"
        );
    }
}
