//! The symbol sources of a run, and the search that picks one per module.
//!
//! For each module identity the search runs once per run, whichever dump or
//! thread asks first; the others wait for its result and share it. Sources
//! are tried best first:
//!
//! 1. A Windows module whose record has no CodeView debug id (Wine writes
//!    them so) is first looked up by CODE_FILE/CODE_ID: the binary found
//!    that way names its PDB, and that identity is used from then on.
//! 2. Breakpad .sym files, from folders and servers (parsed by
//!    breakpad-symbols, whole or through their index; they also give CFI
//!    for unwinding).
//! 3. Native debug information: the PDB (Windows), or DWARF in the binary or
//!    its separate debug file (ELF).
//! 4. The binary's export table (PE) or dynamic symbol table (ELF), or the
//!    full symbol table of an unstripped ELF binary.
//!
//! Every file is checked against the module's identity before use; a file
//! that differs is refused, and the refusal is a warning naming both.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures_util::lock::Mutex as AsyncMutex;

use super::breakpad::{self, BreakpadSupplier, Handed};
use super::find;
use super::identity::{Format, Identity};
use super::location::{BinaryInfo, FoundBinary, Location};
use super::log::Log;
use super::native::NativeSymbols;
use super::places::Places;
use super::symfile::{IndexSettings, SymFile};
use super::unwind::elf::ElfUnwinder;
use super::unwind::{self, Unwinder};
use crate::model::{ModuleSymbols, SymbolSource};

/// What the search found for one module identity.
pub struct Resolution {
    /// The identity lookups used: the module's own, or with the debug file
    /// and id its binary's CodeView record gave.
    pub identity: Identity,
    /// The Breakpad .sym file found for `identity`.
    pub sym: Option<Arc<SymFile>>,
    /// Native debug information or a symbol table, when no .sym was found.
    pub native: Option<Arc<dyn NativeSymbols>>,
    /// The binary found for the module, for exports and for callers.
    pub binary: Option<PathBuf>,
    /// Whether the search already looked for the module's PE binary (so a
    /// `None` above means there is none to find).
    pub pe_binary_searched: bool,
    /// The file or URL names come from.
    pub file: Option<String>,
    /// The local file names were read from (for a URL, its copy in the
    /// cache).
    pub local_file: Option<PathBuf>,
    pub status: ModuleSymbols,
    pub tried: Vec<String>,
    pub warnings: Vec<String>,
}

impl Resolution {
    pub fn source(&self) -> SymbolSource {
        if self.sym.is_some() {
            SymbolSource::Sym
        } else {
            self.native
                .as_ref()
                .map_or(SymbolSource::None, |n| n.source())
        }
    }
}
/// Where one identity's search result is kept; the first asker fills it
/// while the others wait on the lock.
type Slot = Arc<AsyncMutex<Option<Arc<Resolution>>>>;

/// The symbol sources of one run, shared by every dump (and thread) in it.
pub struct Sources {
    /// Where files are looked for; what the look-ups in `find` read.
    pub(super) places: Places,
    /// .sym files a code-id look-up found, for the Breakpad supplier.
    handed: Handed,
    breakpad: BreakpadSupplier,
    resolutions: Mutex<HashMap<Identity, Slot>>,
    /// Warnings about the run's set-up, given with every report.
    notes: Vec<String>,
    /// The private folder downloads go to when there is no cache; removed
    /// when the run ends.
    scratch: Mutex<Option<tempfile::TempDir>>,
    /// Unwind tables read from the binaries, by module identity (None:
    /// none found).
    unwinders: Mutex<HashMap<Identity, Option<Arc<dyn Unwinder>>>>,
    /// Binaries found after the search, for unwinding (by identity).
    later_binaries: Mutex<HashMap<Identity, PathBuf>>,
}

impl Sources {
    pub fn new(
        locations: Vec<Location>,
        system: bool,
        notes: Vec<String>,
        scratch: Option<tempfile::TempDir>,
        index: IndexSettings,
    ) -> Sources {
        let places = Places::new(locations, system, index);
        let handed = Handed::default();
        let breakpad = BreakpadSupplier::new(
            places.locations.clone(),
            places.finder.clone(),
            handed.clone(),
            places.index.clone(),
        );
        Sources {
            places,
            handed,
            breakpad,
            resolutions: Mutex::new(HashMap::new()),
            notes,
            scratch: Mutex::new(scratch),
            unwinders: Mutex::new(HashMap::new()),
            later_binaries: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn with_debug_dirs(mut self, dirs: Vec<PathBuf>) -> Self {
        self.places.debug_dirs = dirs;
        self
    }

    /// Removes the run's private folders (downloads without a cache, files
    /// unpacked from archives) now, not whenever the sources are dropped.
    pub(crate) fn remove_private_folders(&self) {
        if let Ok(mut scratch) = self.scratch.lock() {
            scratch.take();
        }
        self.places.finder.remove_unpacked();
    }

    /// Warnings about the run's set-up (no cache, ...).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Whether any source can reach the network (only when a URL was given).
    #[cfg(test)]
    pub(crate) fn uses_network(&self) -> bool {
        self.places
            .locations
            .iter()
            .any(|l| matches!(l, Location::Server(_) | Location::Debuginfod(_)))
    }

    /// The search result for `identity`, searching on first use.
    pub async fn resolve(&self, identity: &Identity) -> Arc<Resolution> {
        let slot = {
            let mut map = match self.resolutions.lock() {
                Ok(map) => map,
                Err(poisoned) => poisoned.into_inner(),
            };
            map.entry(identity.clone()).or_default().clone()
        };
        let mut guard = slot.lock().await;
        if let Some(done) = guard.as_ref() {
            return done.clone();
        }
        let resolution = Arc::new(self.search(identity.clone()).await);
        *guard = Some(resolution.clone());
        resolution
    }

    /// The unwind tables of a module's binary, for a module the search
    /// found no .sym file for: the binary it found, else one looked for now
    /// by code id (PE) or build id (ELF); for ELF also the `.debug_frame`
    /// of the separate debug file the names came from. Read once per run.
    pub fn unwinder(&self, resolution: &Resolution) -> Option<Arc<dyn Unwinder>> {
        let identity = &resolution.identity;
        if let Some(known) = self.lock_unwinders().get(identity) {
            return known.clone();
        }
        // What is tried here is not reported: the symbol search already
        // said where names were looked for.
        let mut log = Log::default();
        let found: Option<Arc<dyn Unwinder>> = match identity.format() {
            Format::Pe => self
                .binary_with(resolution, &mut log)
                .and_then(|path| unwind::pe::from_file(&path))
                .map(|unwinder| Arc::new(unwinder) as Arc<dyn Unwinder>),
            Format::Elf => {
                let binary = self.binary_with(resolution, &mut log);
                let debug = match resolution.source() {
                    SymbolSource::Dwarf => resolution
                        .file
                        .as_ref()
                        .map(PathBuf::from)
                        .filter(|file| Some(file) != binary.as_ref()),
                    _ => None,
                };
                ElfUnwinder::load(binary.as_deref(), debug.as_deref())
                    .map(|unwinder| Arc::new(unwinder) as Arc<dyn Unwinder>)
            }
        };
        self.lock_unwinders()
            .entry(identity.clone())
            .or_insert(found)
            .clone()
    }

    /// The module's binary: the one the search found, else one looked for
    /// now by code id (PE) or build id (ELF).
    pub fn binary(&self, resolution: &Resolution) -> Option<PathBuf> {
        self.binary_with(resolution, &mut Log::default())
    }

    fn binary_with(&self, resolution: &Resolution, log: &mut Log) -> Option<PathBuf> {
        let identity = &resolution.identity;
        let found = match identity.format() {
            Format::Pe => match (&resolution.binary, resolution.pe_binary_searched) {
                (Some(path), _) => Some(path.clone()),
                (None, true) => None,
                (None, false) => {
                    find::pe::binary(&self.places, identity, log).map(|(path, _)| path)
                }
            },
            Format::Elf => resolution
                .binary
                .clone()
                .or_else(|| find::elf::binary(&self.places, identity, log)),
        };
        if let (Some(path), None) = (&found, &resolution.binary) {
            if let Ok(mut later) = self.later_binaries.lock() {
                later.insert(identity.clone(), path.clone());
            }
        }
        found
    }

    /// Every search result of the run so far, with the binary found for
    /// unwinding after it (if any).
    pub(super) fn resolved(&self) -> Vec<(Arc<Resolution>, Option<PathBuf>)> {
        let slots: Vec<Slot> = match self.resolutions.lock() {
            Ok(map) => map.values().cloned().collect(),
            Err(poisoned) => poisoned.into_inner().values().cloned().collect(),
        };
        let later = match self.later_binaries.lock() {
            Ok(map) => map.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        slots
            .iter()
            .filter_map(|slot| slot.try_lock()?.clone())
            .map(|resolution| {
                let binary = later.get(&resolution.identity).cloned();
                (resolution, binary)
            })
            .collect()
    }

    fn lock_unwinders(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<Identity, Option<Arc<dyn Unwinder>>>> {
        match self.unwinders.lock() {
            Ok(map) => map,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    async fn search(&self, mut identity: Identity) -> Resolution {
        let mut log = Log::default();
        let format = identity.format();
        let mut binary: Option<(PathBuf, BinaryInfo)> = None;
        let mut binary_searched = false;

        // 1. A Windows module without a debug id: find its binary by code id.
        if format == Format::Pe && identity.debug_id.is_none() {
            binary = find::pe::binary(&self.places, &identity, &mut log);
            binary_searched = true;
            if let Some((path, BinaryInfo::Pe(info))) = &binary {
                if let Some((name, id)) = &info.pdb {
                    log.tried(format!(
                        "{}: found by code id; its CodeView record names {name} {}",
                        path.display(),
                        id.breakpad()
                    ));
                    identity.debug_file = Some(name.clone());
                    identity.debug_id = Some(*id);
                }
            }
            if identity.debug_id.is_none() {
                breakpad::code_id_lookup(
                    &self.places.locations,
                    &self.handed,
                    &mut identity,
                    &mut log,
                );
            }
        }

        // 2. Breakpad symbol files.
        if let Some(sym) = self.breakpad.find(&identity, &mut log) {
            return finish(
                identity,
                log,
                Some(Arc::new(sym)),
                None,
                binary,
                binary_searched,
            );
        }

        // 3. Native debug information.
        let native: Option<Arc<dyn NativeSymbols>> = match format {
            Format::Pe => find::pdb::pdb(&self.places, &identity, &mut log),
            Format::Elf => {
                let (native, elf_binary) = find::elf::debug_info(&self.places, &identity, &mut log);
                binary_searched = true;
                if binary.is_none() {
                    binary = elf_binary;
                }
                native
            }
        };
        if native.is_some() {
            return finish(identity, log, None, native, binary, binary_searched);
        }

        // 4. Export tables.
        if format == Format::Pe && !binary_searched {
            binary = find::pe::binary(&self.places, &identity, &mut log);
            binary_searched = true;
        }
        let native: Option<Arc<dyn NativeSymbols>> = match binary {
            Some((ref path, BinaryInfo::Pe(ref mut info))) if !info.exports.is_empty() => {
                log.named_by(path.display().to_string(), path);
                Some(Arc::new(std::mem::take(&mut info.exports)))
            }
            Some((ref path, BinaryInfo::Elf(ref mut info))) => {
                let table = if !info.symtab.is_empty() {
                    std::mem::take(&mut info.symtab)
                } else {
                    std::mem::take(&mut info.dynsym)
                };
                (!table.is_empty()).then(|| {
                    log.named_by(path.display().to_string(), path);
                    Arc::new(table) as Arc<dyn NativeSymbols>
                })
            }
            _ => None,
        };
        finish(identity, log, None, native, binary, binary_searched)
    }
}

fn finish(
    identity: Identity,
    mut log: Log,
    sym: Option<Arc<SymFile>>,
    native: Option<Arc<dyn NativeSymbols>>,
    binary: Option<FoundBinary>,
    binary_searched: bool,
) -> Resolution {
    if log.tried.is_empty() && sym.is_none() && native.is_none() {
        log.tried(
            "nothing: no --symbols, _NT_SYMBOL_PATH or symbols folder beside the dump".to_string(),
        );
    }
    let status = if sym.is_some() || native.is_some() {
        ModuleSymbols::Loaded
    } else if log.mismatched {
        ModuleSymbols::Mismatched
    } else if log.corrupt {
        ModuleSymbols::Corrupt
    } else {
        ModuleSymbols::Missing
    };
    let pe_binary_searched = binary_searched && identity.format() == Format::Pe;
    Resolution {
        identity,
        sym,
        native,
        binary: binary.map(|b| b.0),
        pe_binary_searched,
        file: log.file,
        local_file: log.local,
        status,
        tried: log.tried,
        warnings: log.warnings,
    }
}
