//! Where frame names come from.
//!
//! Today: Breakpad symbol stores (`DEBUG_FILE/DEBUG_ID/NAME.sym`), given with
//! `--symbols DIR` or found as a `symbols` folder beside a dump. Symbol servers,
//! PDBs, binaries and export tables plug in here as further sources.

use std::path::{Path, PathBuf};

use minidump_unwind::{simple_symbol_supplier, Symbolizer};

/// The symbol sources of one run, in the order they are searched.
#[derive(Debug, Clone, Default)]
pub struct SymbolConfig {
    /// Breakpad symbol stores.
    pub stores: Vec<PathBuf>,
}

impl SymbolConfig {
    /// Adds the `symbols` folder beside each dump, after the user's own stores,
    /// so `analyze sample-dumps/` needs no flags. Symbol files are matched by
    /// module identity (debug file + debug id), so a store beside one dump
    /// cannot give wrong names to another.
    pub fn with_dump_neighbours<'a>(mut self, dumps: impl IntoIterator<Item = &'a Path>) -> Self {
        for dump in dumps {
            let Some(dir) = dump.parent() else { continue };
            let candidate = if dir.as_os_str().is_empty() {
                PathBuf::from("symbols")
            } else {
                dir.join("symbols")
            };
            if candidate.is_dir() && !self.stores.contains(&candidate) {
                self.stores.push(candidate);
            }
        }
        self
    }

    /// Builds the symbolizer shared by every dump of the run: it caches each
    /// symbol file the first time a module needs it.
    pub fn symbolizer(&self) -> Symbolizer {
        Symbolizer::new(simple_symbol_supplier(self.stores.clone()))
    }
}
