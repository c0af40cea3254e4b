//! Finding a store's files when their names differ in case from the dump's,
//! and following what a folder store holds instead of a file: a `file.ptr`
//! pointer, or a CAB-compressed copy (`ntdll.pd_`) unpacked for the run.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::paths::Rel;
use super::safe_name::local_file;

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
    pub(super) fn find(&self, root: &Path, rel: &Rel) -> Option<PathBuf> {
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
    use crate::symbols::paths::pe_binary;

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
