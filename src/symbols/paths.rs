//! Every path built from a name a dump records, for every store layout and
//! for the download cache, so that what may reach the file system can be
//! read in one place.
//!
//! A dump is input from anyone: its module names, debug file names and ids
//! end up as path components. Each one must be a single plain file name on
//! every OS ([`plain`]): nothing that `PathBuf::join` or Windows would read
//! as a separator, a parent, a drive (`C:x.pdb` leaves the folder on
//! Windows), an alternate data stream (`x.pdb:s`) or a device (`CON.pdb`).
//! Ids must be hex. Module paths the dump records are opened only when they
//! are local absolute paths of this OS ([`local_file`]): never a network
//! path, whose mere opening makes an SMB connection on Windows.
//!
//! Stores are laid out the way symstore writes them: `NAME/%08X%x/NAME`
//! for binaries (timestamp upper case, image size lower case), and
//! `NAME/GUID%X/NAME` for PDBs. Names and folders often differ in case
//! between the dump and the store (`KERNEL32.dll`, `kernel32.dll`); the
//! canonical spelling is tried first, then each component is matched
//! without regard to case ([`Finder`]).

use std::path::{Path, PathBuf};

use memmap2::Mmap;

use super::identity::DebugId;
use super::safe_name::{hex_id, plain};

/// Maps a file read-only.
pub(super) fn map_file(path: &Path) -> std::io::Result<Mmap> {
    let file = std::fs::File::open(path)?;
    // SAFETY: a map is sound while nobody truncates or writes the file
    // during its life. This program never writes a file it maps: what it
    // adds to a symbols cache is written under a temporary name and renamed
    // into place (server.rs, indexfile.rs), which replaces the name, not
    // the mapped bytes. Another program rewriting a symbol file or binary
    // in place during the analysis is the condition left, as for every
    // memory-mapped reader; the other maps of `symbols` say the same.
    unsafe { Mmap::map(&file) }
}

/// A PE code id as symstore spells the folder: the timestamp as `%08X`
/// (upper case, 8 digits), then SizeOfImage as `%x` (lower case, no
/// padding). Dumps and tools differ in case; a hex letter in the size is
/// common, so upper-casing all of it misses most modules on a
/// case-sensitive file system.
pub(super) fn pe_code_id(code_id: &str) -> Option<String> {
    let id = hex_id(code_id)?;
    if id.len() <= 8 || id.len() > 16 {
        return None;
    }
    let (timestamp, size) = id.split_at(8);
    let size = size.trim_start_matches('0');
    let size = if size.is_empty() { "0" } else { size };
    Some(format!(
        "{}{}",
        timestamp.to_ascii_uppercase(),
        size.to_ascii_lowercase()
    ))
}

/// A PDB's folder name in a Microsoft store: GUID in upper case, then the
/// age as `%X`. (Breakpad spells the age in lower case; see [`sym`].)
pub(super) fn pdb_id(id: &DebugId) -> String {
    format!("{:X}{:X}", id.uuid().simple(), id.appendix())
}

/// A relative path inside a symbol store or cache, every component checked
/// ([`plain`]). The only way the symbol code turns names into paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Rel {
    parts: Vec<String>,
    /// A `NAME/ID/FILE` path of a symstore-style store, which a two-tier
    /// store keeps under one more folder, and a server may send compressed
    /// or as a `file.ptr`.
    store: bool,
    /// Already under a two-tier store's two-letter folder.
    tiered: bool,
}

impl Rel {
    /// `None` when any component is not [`plain`].
    fn new<const N: usize>(parts: [&str; N]) -> Option<Rel> {
        parts.iter().all(|p| plain(p)).then(|| Rel {
            parts: parts.iter().map(|p| p.to_string()).collect(),
            store: false,
            tiered: false,
        })
    }

    /// A `NAME/ID/FILE` path of a symstore-style store.
    fn store<const N: usize>(parts: [&str; N]) -> Option<Rel> {
        Rel::new(parts).map(|rel| Rel { store: true, ..rel })
    }

    /// The components, for a URL (each one percent-encoded by the server).
    pub(crate) fn parts(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().map(String::as_str)
    }

    /// The path below `root`, in this spelling.
    pub(super) fn under(&self, root: &Path) -> PathBuf {
        self.parts.iter().fold(root.to_path_buf(), |p, c| p.join(c))
    }

    /// For messages: `a/b/c`.
    pub(super) fn shown(&self) -> String {
        self.parts.join("/")
    }

    /// Where a two-tier store (one with `index2.txt` at its root) keeps
    /// this file: under a folder named after the first two characters of
    /// the file name, lower-cased as symstore does (`ntdll.pdb/ID/ntdll.pdb`
    /// -> `nt/ntdll.pdb/ID/ntdll.pdb`). `None` for paths that are not of a
    /// store's layout.
    pub(crate) fn two_tier(&self) -> Option<Rel> {
        if !self.store || self.tiered {
            return None;
        }
        let first = self.parts.first()?;
        let prefix: String = first.chars().take(2).collect::<String>().to_lowercase();
        if !plain(&prefix) {
            return None;
        }
        let mut parts = vec![prefix];
        parts.extend(self.parts.iter().cloned());
        // Still a store path: it may be compressed or a file.ptr too.
        Some(Rel {
            parts,
            store: true,
            tiered: true,
        })
    }

    /// The name symstore /compress gives the file: its last character
    /// replaced by `_` (`ntdll.pdb` -> `ntdll.pd_`), a CAB archive holding
    /// it. `None` for paths not of a store's layout.
    pub(super) fn compressed(&self) -> Option<Rel> {
        let last = self.parts.last()?;
        if !self.store || last.ends_with('_') {
            return None;
        }
        let mut name: String = last.clone();
        name.pop();
        name.push('_');
        self.with_last(&name)
    }

    /// The `file.ptr` beside the file: a pointer store's redirect.
    pub(super) fn pointer(&self) -> Option<Rel> {
        if !self.store {
            return None;
        }
        self.with_last("file.ptr")
    }

    fn with_last(&self, name: &str) -> Option<Rel> {
        if !plain(name) {
            return None;
        }
        let mut parts = self.parts.clone();
        *parts.last_mut()? = name.to_string();
        Some(Rel {
            parts,
            store: false,
            tiered: false,
        })
    }

    /// This path as a store path with a two-tier spelling, when the store
    /// is two-tier.
    pub(crate) fn in_store(&self, two_tier: bool) -> Rel {
        if two_tier {
            self.two_tier().unwrap_or_else(|| self.clone())
        } else {
            self.clone()
        }
    }
}

/// What a debuginfod server is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DebuginfodKind {
    /// The separate debug file (DWARF, `.debug_frame`, `.symtab`).
    Debuginfo,
    /// The binary itself (`.eh_frame`, symbol tables).
    Executable,
}

impl DebuginfodKind {
    pub(super) fn name(self) -> &'static str {
        match self {
            DebuginfodKind::Debuginfo => "debuginfo",
            DebuginfodKind::Executable => "executable",
        }
    }
}

/// `buildid/BUILD_ID/KIND` on a debuginfod server, and `BUILD_ID/KIND` in
/// its cache, as elfutils' client lays out `$DEBUGINFOD_CACHE_PATH`. The
/// build id is lower-case hex, as debuginfod servers expect.
pub(super) fn debuginfod(build_id: &str, kind: DebuginfodKind) -> Option<(Rel, Rel)> {
    let id = hex_id(build_id)?.to_ascii_lowercase();
    Some((
        Rel::new(["buildid", &id, kind.name()])?,
        Rel::new([&id, kind.name()])?,
    ))
}

/// `NAME/%08X%x/NAME`: a PE binary in a Microsoft store, by code id.
pub(super) fn pe_binary(code_name: &str, code_id: &str) -> Option<Rel> {
    let id = pe_code_id(code_id)?;
    Rel::store([code_name, &id, code_name])
}

/// `DEBUG_NAME/GUIDAGE/CODE_NAME`: a binary stored beside its PDB's id, as
/// some build systems lay out their symbol folders.
pub(super) fn pe_binary_by_debug_id(
    debug_name: &str,
    id: &DebugId,
    code_name: &str,
) -> Option<Rel> {
    Rel::store([debug_name, &pdb_id(id), code_name])
}

/// `NAME/GUID%X/NAME`: a PDB in a Microsoft store.
pub(super) fn pdb(debug_name: &str, id: &DebugId) -> Option<Rel> {
    Rel::store([debug_name, &pdb_id(id), debug_name])
}

/// `DEBUG_FILE/DEBUG_ID/NAME.sym`: a Breakpad symbol file, with the id as
/// Breakpad writes it.
pub(super) fn sym(debug_file: &str, id: &DebugId) -> Option<Rel> {
    Rel::store([
        debug_file,
        &id.breakpad().to_string(),
        &sym_name(debug_file),
    ])
}

/// `DEBUG_FILE/DEBUG_ID/NAME-KEY.dtidx`: the index of a .sym file (in the
/// symbols cache's `index/` folder); `key` tells copies of the file apart.
pub(super) fn sym_index(debug_file: &str, id: &DebugId, key: u64) -> Option<Rel> {
    let stem = sym_name(debug_file);
    let stem = stem.strip_suffix(".sym").unwrap_or(&stem);
    Rel::new([
        "index",
        debug_file,
        &id.breakpad().to_string(),
        &format!("{stem}-{key:016x}.dtidx"),
    ])
}

/// `index/NAME/ID/NAME-KEY.dtnidx`: the index of a PDB or DWARF file (in
/// the symbols cache); `key` tells copies of the file apart.
pub(super) fn native_index(name: &str, id: &str, key: u64) -> Option<Rel> {
    Rel::new([
        "index",
        name,
        hex_id(id)?,
        &format!("{name}-{key:016x}.dtnidx"),
    ])
}

/// `CODE_FILE/CODE_ID/NAME.sym`: the code-id lookup servers such as Tecken
/// answer.
pub(super) fn sym_by_code_id(code_name: &str, code_id: &str) -> Option<Rel> {
    let id = pe_code_id(code_id).or_else(|| hex_id(code_id).map(str::to_string))?;
    Rel::store([code_name, &id, &sym_name(code_name)])
}

/// `NAME`: a file among the build's files side by side.
pub(super) fn flat(name: &str) -> Option<Rel> {
    Rel::new([name])
}

/// `NAME/BUILD_ID/NAME`: an ELF binary in a store keyed by build id.
pub(super) fn elf_binary(name: &str, build_id: &str) -> Option<Rel> {
    let id = hex_id(build_id)?.to_ascii_lowercase();
    Rel::store([name, &id, name])
}

/// `.build-id/xx/yyyy.debug` and `usr/lib/debug/.build-id/xx/yyyy.debug`:
/// separate debug files by build id (Debian's -dbg layout).
pub(super) fn build_id_debug(build_id: &str) -> Vec<Rel> {
    let Some(id) = hex_id(build_id).filter(|id| id.len() > 2) else {
        return Vec::new();
    };
    let id = id.to_ascii_lowercase();
    let (head, tail) = id.split_at(2);
    let file = format!("{tail}.debug");
    [
        Rel::new([".build-id", head, &file]),
        Rel::new(["usr", "lib", "debug", ".build-id", head, &file]),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// `NAME.pdb` -> `NAME.sym`, `NAME.dll` -> `NAME.sym`, `libc.so.6` ->
/// `libc.so.6.sym`: the Breakpad symbol file's name.
pub(super) fn sym_name(debug_file: &str) -> String {
    let lower = debug_file.to_ascii_lowercase();
    for ext in [".pdb", ".dll", ".exe"] {
        if lower.ends_with(ext) {
            return format!("{}.sym", &debug_file[..debug_file.len() - ext.len()]);
        }
    }
    format!("{debug_file}.sym")
}

/// The system's separate debug files by build id (`/usr/lib/debug`).
pub(super) fn system_build_id_debug(build_id: &str) -> Option<PathBuf> {
    build_id_debug(build_id)
        .into_iter()
        .nth(1)
        .map(|rel| rel.under(Path::new("/")))
}

/// `/usr/lib/debug/DIR/LINK`: where a distribution keeps the
/// `.gnu_debuglink` file of a binary found in DIR.
pub(super) fn system_debuglink(binary_dir: &Path, link: &str) -> Option<PathBuf> {
    if !plain(link) {
        return None;
    }
    let rel = binary_dir.strip_prefix("/").ok()?;
    Some(Path::new("/usr/lib/debug").join(rel).join(link))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::safe_name::hex_id;

    #[test]
    fn sym_files_are_named_after_the_debug_file() {
        assert_eq!(sym_name("fakehip.pdb"), "fakehip.sym");
        assert_eq!(sym_name("libc.so.6"), "libc.so.6.sym");
    }

    #[test]
    fn ids_are_hex_and_spelled_as_symstore_does() {
        assert_eq!(
            pe_code_id("63f14e2b5E5000").as_deref(),
            Some("63F14E2B5e5000")
        );
        assert_eq!(
            pe_code_id("6553F1000006000").as_deref(),
            Some("6553F1006000")
        );
        assert_eq!(pe_code_id("6553F100/../x"), None);
        assert_eq!(pe_code_id("6553F100"), None);
        assert_eq!(hex_id("68548ea76ac0"), Some("68548ea76ac0"));
        assert_eq!(hex_id("ab:cd"), None);
        let id = DebugId::from_breakpad("177DA8A0FB75170A4C4C44205044422E1a").unwrap();
        assert_eq!(pdb_id(&id), "177DA8A0FB75170A4C4C44205044422E1A");
        assert_eq!(
            pdb("Ntdll.pdb", &id).unwrap().shown(),
            "Ntdll.pdb/177DA8A0FB75170A4C4C44205044422E1A/Ntdll.pdb"
        );
        assert_eq!(
            sym("ntdll.pdb", &id).unwrap().shown(),
            "ntdll.pdb/177DA8A0FB75170A4C4C44205044422E1a/ntdll.sym"
        );
        assert_eq!(pe_binary("CON.dll", "6553F1006000"), None);
        assert_eq!(build_id_debug("ab/../cd").len(), 0);
    }
}
