//! The index file's kind and sections (the layout is described in the
//! parent module), shared by the reader and the writer.

use crate::symbols::indexfile::Kind;

/// Bumped whenever the layout or what is stored changes (or the version of
/// breakpad-symbols whose parse it records).
pub(super) const KIND: Kind<'static> = Kind {
    magic: b"DTSYMIDX",
    version: 2,
    sections: SECTIONS,
};

pub(super) const FUNCS: usize = 0;
pub(super) const CFI: usize = 1;
pub(super) const WIN_FRAMEDATA: usize = 2;
pub(super) const WIN_FPO: usize = 3;
pub(super) const PUBLICS: usize = 4;
pub(super) const FILES: usize = 5;
pub(super) const ORIGINS: usize = 6;
pub(super) const STRINGS: usize = 7;
pub(super) const SOURCE_CRCS: usize = 8;
pub(super) const SECTIONS: usize = 9;

pub(super) const RANGE_ENTRY: usize = 24;
pub(super) const PUBLIC_ENTRY: usize = 24;
pub(super) const NAME_ENTRY: usize = 16;
