//! Where symbols are looked for, and what a search found for a module's
//! binary: the types the symbol sources (`sources`), the store readers
//! (`breakpad`) and the binary finders (`find/`) share, kept in this leaf so
//! none of them imports another for them.

use std::path::PathBuf;
use std::sync::Arc;

use super::native::elf::ElfInfo;
use super::native::pe::PeInfo;
use super::server::Server;

/// A place symbols are looked for.
#[derive(Clone)]
pub enum Location {
    /// A folder: a Breakpad store, a Microsoft-style store, a build-id tree,
    /// or just files side by side; all layouts are tried.
    Folder(PathBuf),
    /// A symbol server: Breakpad and Microsoft layouts.
    Server(Arc<Server>),
    /// A debuginfod server: ELF files by build id.
    Debuginfod(Arc<Server>),
}

/// A binary found for a module, parsed.
pub(super) enum BinaryInfo {
    Pe(PeInfo),
    Elf(ElfInfo),
}

/// A binary found for a module, with its path.
pub(super) type FoundBinary = (PathBuf, BinaryInfo);
