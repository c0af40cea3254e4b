//! Where a run looks for files: the symbol locations, whether the
//! system's own folders count, and the folder listings every search
//! shares. A leaf of `symbols`: the per-module search (`sources.rs`) and
//! each kind of look-up (`find/`) both read it, so neither needs the other.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use super::finder::Finder;
use super::location::Location;
use super::symfile::IndexSettings;

/// At most this many `*.debug` files of one folder are read for their
/// build id: a folder of dumps holds a few.
const DEBUG_FILES_PER_DIR: usize = 256;

/// The places of one run, shared by every dump (and thread) in it.
pub(super) struct Places {
    pub(super) locations: Vec<Location>,
    /// Look beside the module paths the dump records, and in the system's
    /// debug directories (for dumps of this machine's processes).
    pub(super) system: bool,
    /// Folder look-ups, each folder listed once per run.
    pub(super) finder: Arc<Finder>,
    /// Where big PDB and DWARF files get their index.
    pub(super) index: IndexSettings,
    /// Folders whose `*.debug` files are matched to modules by build id
    /// (the dumps' folders), and those files' build ids once read.
    pub(super) debug_dirs: Vec<PathBuf>,
    debug_files: OnceLock<Vec<(Vec<u8>, PathBuf)>>,
}

impl Places {
    pub(super) fn new(locations: Vec<Location>, system: bool, index: IndexSettings) -> Places {
        Places {
            locations,
            system,
            finder: Arc::new(Finder::default()),
            index,
            debug_dirs: Vec::new(),
            debug_files: OnceLock::new(),
        }
    }

    /// The `*.debug` files of the symbol folders and the dumps' folders
    /// whose build id is `build_id`: a separate debug file named for its
    /// binary (`abort.debug`) rather than laid out by build id. Each folder
    /// is listed and its files' ids read once per run.
    pub(super) fn debug_files_with_build_id(&self, build_id: &[u8]) -> Vec<PathBuf> {
        let files = self.debug_files.get_or_init(|| {
            let mut dirs: Vec<&PathBuf> = self.debug_dirs.iter().collect();
            dirs.extend(self.locations.iter().filter_map(|l| match l {
                Location::Folder(dir) => Some(dir),
                _ => None,
            }));
            let mut found = Vec::new();
            for dir in dirs {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                let mut names: Vec<PathBuf> = entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "debug") && p.is_file())
                    .collect();
                names.sort();
                for path in names.into_iter().take(DEBUG_FILES_PER_DIR) {
                    let id = super::paths::map_file(&path)
                        .ok()
                        .and_then(|map| super::native::elf::read_identity(&map).ok())
                        .and_then(|info| info.build_id);
                    if let Some(id) = id {
                        found.push((id, path));
                    }
                }
            }
            found
        });
        files
            .iter()
            .filter(|(id, _)| id == build_id)
            .map(|(_, path)| path.clone())
            .collect()
    }
}
