//! A pack's manifest, its first entry: what the pack holds, where each
//! file came from, and what was left out. Written by pack.rs, read back
//! by unpack.rs.

use serde::{Deserialize, Serialize};

/// The manifest's name, the archive's first entry (how a pack is told
/// from any other `.tar.zst`).
pub(crate) const MANIFEST: &str = "dumptriage-pack.json";
/// The manifest's `format`.
pub(crate) const FORMAT: &str = "dumptriage-pack";
/// Bumped when a reader of an older version could not read a pack right.
pub(crate) const VERSION: u32 = 1;

/// What a pack holds, first in the archive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    /// The program and version that wrote it.
    pub tool: String,
    /// When (UTC, RFC 3339).
    pub created: String,
    pub inputs: Vec<PackedInput>,
    pub files: Vec<PackedFile>,
    pub left_out: Vec<LeftOut>,
}

/// One input, at the archive's top.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackedInput {
    /// Its name in the archive.
    pub name: String,
    /// Its path on the machine that packed it.
    pub from: String,
    pub bytes: u64,
    /// `minidump`, `core`, `text`, or `minidump converted from a core`.
    pub kind: String,
}

/// One binary or symbol file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackedFile {
    /// Its path in the archive.
    pub path: String,
    pub from: String,
    /// The module it was used for, and the id that matched.
    pub module: String,
    pub id: String,
    /// `binary`, `debug file`, `pdb` or `sym`.
    pub kind: String,
    pub bytes: u64,
}

/// Something the pack does not hold, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    pub what: String,
    pub why: String,
}
