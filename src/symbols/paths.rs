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

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use memmap2::Mmap;

use super::identity::DebugId;
use crate::model::file_name;

/// The longest path component any common file system accepts, in bytes.
pub(super) const MAX_COMPONENT: usize = 255;

/// The longest id accepted (a GNU build id is 40 hex digits; some linkers
/// write longer ones).
const MAX_ID: usize = 128;

/// Maps a file read-only.
pub(super) fn map_file(path: &Path) -> std::io::Result<Mmap> {
    let file = std::fs::File::open(path)?;
    // SAFETY: read-only private map; see native::pdb.
    unsafe { Mmap::map(&file) }
}

/// Whether `name` is one plain file name on every OS: not empty, at most
/// 255 bytes, no separator (`/`, `\`), no `:` (drive prefixes, alternate
/// data streams), no NUL or control character, none of the other
/// characters Windows forbids, not `.` or `..`, no trailing dot or space
/// (Windows drops them, so `x.pdb.` is `x.pdb`), and not a reserved Windows
/// device name with any extension (`CON`, `nul.pdb`, `COM1.dll`, ...).
pub(super) fn plain(name: &str) -> bool {
    if name.is_empty() || name.len() > MAX_COMPONENT || name == "." || name == ".." {
        return false;
    }
    if name.chars().any(|c| {
        c.is_control() || matches!(c, '/' | '\\' | ':' | '<' | '>' | '"' | '|' | '?' | '*')
    }) {
        return false;
    }
    if name.ends_with('.') || name.ends_with(' ') {
        return false;
    }
    !reserved_device(name)
}

/// `CON`, `PRN`, `AUX`, `NUL`, `COM0`-`COM9`, `LPT0`-`LPT9` (and the
/// superscript-digit forms Windows also reserves), `CONIN$`, `CONOUT$`:
/// Windows opens the device whatever the extension and the case.
fn reserved_device(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    let upper = stem.to_uppercase();
    if matches!(
        upper.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
    ) {
        return true;
    }
    let mut chars = upper.chars();
    let prefix: String = chars.by_ref().take(3).collect();
    let rest: Vec<char> = chars.collect();
    (prefix == "COM" || prefix == "LPT")
        && rest.len() == 1
        && (rest[0].is_ascii_digit() || matches!(rest[0], '¹' | '²' | '³'))
}

/// The file name at the end of a path a dump records (`C:\x\fakehip.pdb`
/// -> `fakehip.pdb`), when it is a [`plain`] name; `None` otherwise.
pub(super) fn component(recorded: &str) -> Option<&str> {
    let name = file_name(recorded);
    plain(name).then_some(name)
}

/// A name for messages: quoted and escaped, and cut short when long (a dump
/// may hold a 4 KB module name).
pub(super) fn shown(name: &str) -> String {
    const MAX: usize = 80;
    if name.chars().count() <= MAX {
        return format!("{name:?}");
    }
    let head: String = name.chars().take(MAX).collect();
    format!("{head:?}... ({} bytes)", name.len())
}

/// An id from a dump, when it is hex digits only (debug ids, code ids,
/// build ids are).
pub(super) fn hex_id(id: &str) -> Option<&str> {
    (!id.is_empty() && id.len() <= MAX_ID && id.bytes().all(|b| b.is_ascii_hexdigit()))
        .then_some(id)
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
    pub fn under(&self, root: &Path) -> PathBuf {
        self.parts.iter().fold(root.to_path_buf(), |p, c| p.join(c))
    }

    /// For messages: `a/b/c`.
    pub fn shown(&self) -> String {
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
    pub fn compressed(&self) -> Option<Rel> {
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
    pub fn pointer(&self) -> Option<Rel> {
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
    pub fn name(self) -> &'static str {
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

/// A module path the dump records, when this machine may open it: a local
/// absolute path of this OS. Never a network path (`//host/share/x.dll`,
/// `\\host\share\x.dll`, `\\?\UNC\...`), a device path (`\\.\`, `/dev/`,
/// `/proc/`), a relative or drive-relative one, or one with `.`/`..`.
pub(super) fn local_file(recorded: &str) -> Option<PathBuf> {
    is_local_absolute(recorded, cfg!(windows)).then(|| PathBuf::from(recorded))
}

/// [`local_file`]'s rule for Windows (`windows`) or Unix paths.
fn is_local_absolute(path: &str, windows: bool) -> bool {
    if path.is_empty() || path.len() > 4096 || path.contains('\0') {
        return false;
    }
    if windows {
        // `X:\` then plain components; `\\` and `//` (UNC, `\\?\`, `\\.\`)
        // and a lone `\` (the current drive's root) are refused.
        let bytes = path.as_bytes();
        if bytes.len() < 4
            || !bytes[0].is_ascii_alphabetic()
            || bytes[1] != b':'
            || !matches!(bytes[2], b'\\' | b'/')
        {
            return false;
        }
        path[3..].split(['\\', '/']).all(plain)
    } else {
        // One leading `/` (POSIX leaves `//` to the system: some read it as
        // a network root), no backslash (a Windows path), and none of the
        // pseudo file systems.
        let Some(rest) = path.strip_prefix('/') else {
            return false;
        };
        if rest.starts_with('/') || path.contains('\\') {
            return false;
        }
        if matches!(rest.split('/').next(), Some("dev" | "proc" | "sys")) {
            return false;
        }
        rest.split('/')
            .all(|p| !p.is_empty() && p != "." && p != ".." && p.len() <= MAX_COMPONENT)
    }
}

/// Where a `file.ptr` in a folder points: its `PATH:` when that is a local
/// absolute path to a file (a `MSG:`, a network share or a relative path
/// leads nowhere).
fn follow_pointer(pointer: &Path) -> Option<PathBuf> {
    use std::io::Read as _;
    let mut text = Vec::new();
    std::fs::File::open(pointer)
        .ok()?
        .take(4096)
        .read_to_end(&mut text)
        .ok()?;
    let text = String::from_utf8_lossy(&text);
    let (kind, rest) = text.trim().split_once(':')?;
    if !kind.trim().eq_ignore_ascii_case("PATH") {
        return None;
    }
    local_file(rest.trim()).filter(|path| path.is_file())
}

/// The most directory entries kept in memory at once, over every folder
/// listed; past it the lists are dropped and read again when needed.
const MAX_LISTED: usize = 500_000;

/// Finds files in stores whose names differ in case from the dump's: the
/// canonical spelling first, then each component matched without regard
/// to case. Each folder is listed at most once per run (a big store's root
/// holds a folder per module), within [`MAX_LISTED`] names.
#[derive(Default)]
pub(super) struct Finder {
    listings: Mutex<Listings>,
    /// Whether each store root seen is two-tier (has `index2.txt`).
    two_tier: Mutex<HashMap<PathBuf, bool>>,
    /// Files unpacked from CAB archives in folders (`ntdll.pd_`), in a
    /// private folder of the run's own, removed when it ends: the files a
    /// folder holds are not copied anywhere that outlives the run.
    unpacked: Mutex<Option<tempfile::TempDir>>,
}

/// The largest file unpacked from a CAB archive in a folder.
const MAX_UNPACKED: u64 = super::server::DEFAULT_MAX_DOWNLOAD;

#[derive(Default)]
struct Listings {
    dirs: HashMap<PathBuf, Arc<Listing>>,
    names: usize,
}

/// A folder's entries by their lower-case name.
type Listing = HashMap<String, Vec<OsString>>;

/// More spellings of one path than this are not tried.
const MAX_SPELLINGS: usize = 8;

impl Finder {
    /// The file `rel` names below `root`, in the canonical spelling or
    /// else in any case; in a two-tier store (`index2.txt` at its root,
    /// as symstore writes one) under its two-letter folder first.
    ///
    /// A store path not there may be there as symstore /compress and
    /// pointer stores leave it: a CAB archive (`ntdll.pd_`), unpacked into
    /// the run's private folder, or a `file.ptr` whose `PATH:` is a local
    /// absolute path (never a network share). The caller checks whatever
    /// is found against the module's identity.
    pub fn find(&self, root: &Path, rel: &Rel) -> Option<PathBuf> {
        let stored = rel
            .two_tier()
            .filter(|_| self.is_two_tier(root))
            .into_iter()
            .chain([rel.clone()]);
        for rel in stored {
            if let Some(found) = self.find_spelled(root, &rel) {
                return Some(found);
            }
            if let Some(archive) = rel.compressed().and_then(|c| self.find_spelled(root, &c)) {
                if let Some(unpacked) = self.unpack(&archive, rel.parts().last().unwrap_or("")) {
                    return Some(unpacked);
                }
            }
            if let Some(pointer) = rel.pointer().and_then(|p| self.find_spelled(root, &p)) {
                if let Some(target) = follow_pointer(&pointer) {
                    return Some(target);
                }
            }
        }
        None
    }

    /// Removes the files unpacked so far.
    pub(crate) fn remove_unpacked(&self) {
        if let Ok(mut private) = self.unpacked.lock() {
            private.take();
        }
    }

    fn unpack(&self, archive: &Path, want: &str) -> Option<PathBuf> {
        let mut private = self.unpacked.lock().ok()?;
        if private.is_none() {
            *private = tempfile::Builder::new()
                .prefix("dumptriage-unpacked-")
                .tempdir()
                .ok();
        }
        let dir = private.as_ref()?.path();
        let file = super::server::unpack(archive, want, dir, MAX_UNPACKED).ok()?;
        // Kept (under a name of its own) until the private folder goes.
        let (_, path) = file.keep().ok()?;
        Some(path)
    }

    /// Whether `root` is a two-tier store; looked at once per run.
    pub(crate) fn is_two_tier(&self, root: &Path) -> bool {
        let mut known = match self.two_tier.lock() {
            Ok(k) => k,
            Err(poisoned) => poisoned.into_inner(),
        };
        *known
            .entry(root.to_path_buf())
            .or_insert_with(|| root.join("index2.txt").is_file())
    }

    fn find_spelled(&self, root: &Path, rel: &Rel) -> Option<PathBuf> {
        let canonical = rel.under(root);
        if canonical.is_file() {
            return Some(canonical);
        }
        let mut current = vec![root.to_path_buf()];
        for part in rel.parts() {
            let key = part.to_lowercase();
            let mut next = Vec::new();
            for dir in &current {
                let listing = self.listing(dir);
                for name in listing.get(&key).into_iter().flatten() {
                    if next.len() < MAX_SPELLINGS {
                        next.push(dir.join(name));
                    }
                }
            }
            if next.is_empty() {
                return None;
            }
            current = next;
        }
        current.into_iter().find(|p| p.is_file())
    }

    fn listing(&self, dir: &Path) -> Arc<Listing> {
        if let Some(found) = self.lock().dirs.get(dir) {
            return found.clone();
        }
        let mut listing = Listing::new();
        let mut count = 0usize;
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                if let Some(text) = name.to_str() {
                    listing.entry(text.to_lowercase()).or_default().push(name);
                    count += 1;
                }
            }
        }
        let listing = Arc::new(listing);
        let mut listings = self.lock();
        if count <= MAX_LISTED {
            if listings.names + count > MAX_LISTED {
                listings.dirs.clear();
                listings.names = 0;
            }
            listings.names += count;
            listings.dirs.insert(dir.to_path_buf(), listing.clone());
        }
        listing
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Listings> {
        match self.listings.lock() {
            Ok(l) => l,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_a_dump_stay_inside_their_folder() {
        assert_eq!(component("C:\\x\\fakehip.pdb"), Some("fakehip.pdb"));
        assert_eq!(component("/usr/lib/libc.so.6"), Some("libc.so.6"));
        assert_eq!(component("..\\..\\x.dll"), Some("x.dll"));
        assert_eq!(component("//host/share/x.dll"), Some("x.dll"));
        for bad in [
            "..",
            "a\\..",
            "",
            ".",
            "C:evil.pdb",
            "x.pdb:stream",
            "CON.pdb",
            "con",
            "Nul.txt",
            "COM1.dll",
            "lpt9",
            "COM¹.dll",
            "AUX .pdb",
            "x.pdb.",
            "x.pdb ",
            "a\0b",
            "a|b",
            "a?b",
            "a*b",
            "a\nb",
        ] {
            assert_eq!(component(bad), None, "{bad:?}");
        }
        assert!(component(&"a".repeat(255)).is_some());
        assert!(component(&"a".repeat(256)).is_none());
        // Names that only look like devices are fine.
        for good in [
            "console.dll",
            "COM10.dll",
            "nullable.pdb",
            "LPT.dll",
            "com.pdb",
        ] {
            assert!(plain(good), "{good}");
        }
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

    #[test]
    fn only_local_absolute_paths_are_opened() {
        for (path, ok) in [
            ("/usr/lib/libc.so.6", true),
            ("/opt/app/lib:x.so", true),
            ("//host/share/x.dll", false),
            ("\\\\host\\share\\x.dll", false),
            ("relative/x.so", false),
            ("/usr/../etc/x", false),
            ("/proc/self/mem", false),
            ("/dev/zero", false),
            ("C:\\Windows\\x.dll", false),
            ("", false),
        ] {
            assert_eq!(is_local_absolute(path, false), ok, "unix {path}");
        }
        for (path, ok) in [
            ("C:\\Windows\\System32\\ntdll.dll", true),
            ("d:/app/x.dll", true),
            ("\\\\host\\share\\x.dll", false),
            ("//host/share/x.dll", false),
            ("\\\\?\\UNC\\host\\share\\x.dll", false),
            ("\\\\?\\C:\\x.dll", false),
            ("\\\\.\\pipe\\x", false),
            ("\\x.dll", false),
            ("C:x.dll", false),
            ("C:\\app\\..\\x.dll", false),
            ("C:\\app\\x.dll:stream", false),
            ("C:\\app\\CON.dll", false),
            ("/usr/lib/libc.so.6", false),
        ] {
            assert_eq!(is_local_absolute(path, true), ok, "windows {path}");
        }
    }

    #[test]
    fn finder_matches_each_component_without_regard_to_case() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("kernel32.dll/63F14E2B5E5000/Kernel32.DLL");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, b"x").unwrap();
        let finder = Finder::default();
        let rel = pe_binary("KERNEL32.dll", "63F14E2B5e5000").unwrap();
        assert_eq!(finder.find(dir.path(), &rel), Some(file.clone()));
        // Listed once: a file added later under another spelling is not
        // seen through the cached listing, the canonical one is.
        let canonical = rel.under(dir.path());
        std::fs::create_dir_all(canonical.parent().unwrap()).unwrap();
        std::fs::write(&canonical, b"y").unwrap();
        assert_eq!(finder.find(dir.path(), &rel), Some(canonical));
        let missing = pe_binary("other.dll", "63F14E2B5e5000").unwrap();
        assert_eq!(finder.find(dir.path(), &missing), None);
    }
}
