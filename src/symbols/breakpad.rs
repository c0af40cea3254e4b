//! Breakpad symbol files (`.sym`): found in folders and on servers, checked
//! against the module's identity, and opened ([`SymFile`]: parsed, or read
//! through their index).

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::finder::Finder;
use super::identity::{DebugId, Identity};
use super::location::Location;
use super::log::{Log, Refusal};
use super::paths;
use super::safe_name;
use super::server::Fetched;
use super::symfile::{IndexSettings, SymFile};

/// .sym files a code-id look-up found, under the identity they gave the
/// module, so that the supplier uses them without asking again. Kept for
/// the run only: a server's answer never chooses a path in the cache.
#[derive(Clone, Default)]
pub(super) struct Handed(Arc<Mutex<HashMap<Identity, PathBuf>>>);

impl Handed {
    fn insert(&self, identity: Identity, path: PathBuf) {
        if let Ok(mut map) = self.0.lock() {
            map.insert(identity, path);
        }
    }
    fn get(&self, identity: &Identity) -> Option<PathBuf> {
        self.0.lock().ok()?.get(identity).cloned()
    }
}

/// Finds Breakpad symbol files in folders and on servers, and notes each
/// attempt for the report.
pub(super) struct BreakpadSupplier {
    locations: Vec<Location>,
    finder: Arc<Finder>,
    handed: Handed,
    index: IndexSettings,
}

/// The debug file and id of a .sym file's `MODULE` record, its first line,
/// read without reading the rest of the file.
fn module_record(path: &Path) -> Result<(String, DebugId), Refusal> {
    let corrupt = |why: &str| Refusal::Corrupt(why.to_string());
    let file = std::fs::File::open(path).map_err(|e| corrupt(&e.to_string()))?;
    let mut line = Vec::new();
    BufReader::new(file)
        .take(4096)
        .read_until(b'\n', &mut line)
        .map_err(|e| corrupt(&e.to_string()))?;
    let line = String::from_utf8_lossy(&line);
    let mut words = line.split_whitespace();
    if words.next() != Some("MODULE") {
        return Err(corrupt("no MODULE record on the first line"));
    }
    let (Some(_os), Some(_arch), Some(id)) = (words.next(), words.next(), words.next()) else {
        return Err(corrupt("incomplete MODULE record"));
    };
    let debug_file = words.collect::<Vec<_>>().join(" ");
    let id = DebugId::from_breakpad(id).map_err(|_| corrupt("bad id in the MODULE record"))?;
    Ok((debug_file, id))
}

/// Whether a .sym file is the module's: its `MODULE` record's id must be
/// the module's debug id (breakpad-symbols does not check it).
fn check_sym(path: &Path, expected: &DebugId) -> Result<(), Refusal> {
    let (_, found) = module_record(path)?;
    if found == *expected {
        Ok(())
    } else {
        Err(Refusal::Mismatch {
            what: "debug id",
            found: found.breakpad().to_string(),
            expected: expected.breakpad().to_string(),
        })
    }
}

impl BreakpadSupplier {
    pub(super) fn new(
        locations: Vec<Location>,
        finder: Arc<Finder>,
        handed: Handed,
        index: IndexSettings,
    ) -> Self {
        BreakpadSupplier {
            locations,
            finder,
            handed,
            index,
        }
    }

    /// The module's .sym file, opened, from the first place that has one
    /// that reads.
    pub(super) fn find(&self, identity: &Identity, log: &mut Log) -> Option<SymFile> {
        // Breakpad names the store folder after the debug file, or the code
        // file when the debug file is empty (MinGW builds without a PDB).
        let recorded = identity
            .debug_name()
            .unwrap_or_else(|| identity.code_name())
            .to_string();
        let id = identity.debug_id?;
        let name = safe_name::component(&recorded);
        let Some((name, rel)) = name.and_then(|n| Some((n, paths::sym(n, &id)?))) else {
            if !recorded.is_empty() {
                log.unusable_name("debug file", &recorded);
            }
            return None;
        };
        let check = |path: &Path| check_sym(path, &id);
        let mut found: Vec<(String, PathBuf)> = Vec::new();
        if let Some(path) = self.handed.get(identity) {
            found.push((path.display().to_string(), path));
        }
        for location in &self.locations {
            if !found.is_empty() {
                break;
            }
            let (shown, path) = match location {
                Location::Debuginfod(_) => continue,
                Location::Folder(dir) => {
                    let Some(path) = self.finder.find(dir, &rel) else {
                        log.tried(format!("{}: no {}", dir.display(), rel.shown()));
                        continue;
                    };
                    let shown = path.display().to_string();
                    if let Err(refusal) = check(&path) {
                        log.refused(&shown, &refusal);
                        continue;
                    }
                    (shown, path)
                }
                Location::Server(server) => match server.fetch(&rel, &check) {
                    Fetched::File(path, from_cache) => {
                        let url = server.url_of(&rel);
                        if from_cache {
                            log.tried(format!("{url}: in the cache {}", path.display()));
                        }
                        (url, path)
                    }
                    Fetched::NotFound => {
                        log.tried(format!("{}: not found", server.url_of(&rel)));
                        continue;
                    }
                    Fetched::Refused(refusal) => {
                        log.refused(&server.url_of(&rel), &refusal);
                        continue;
                    }
                    Fetched::Failed(why) => {
                        log.server_failed(server.url(), why);
                        continue;
                    }
                },
            };
            found.push((shown, path));
        }
        for (shown, path) in found {
            match SymFile::open(&path, &id, name, &self.index, log) {
                Ok(file) => {
                    log.named_by(shown, &path);
                    return Some(file);
                }
                Err(e) => log.corrupt(&shown, &e.to_string()),
            }
        }
        None
    }
}

/// Servers that answer `CODE_FILE/CODE_ID/NAME.sym` (Tecken redirects
/// to the debug-id path) give the debug id of a module whose binary
/// could not be found either. The file stays in the cache under the path
/// of the module's own code id; the supplier is handed it for this run.
pub(super) fn code_id_lookup(
    locations: &[Location],
    handed: &Handed,
    identity: &mut Identity,
    log: &mut Log,
) {
    let Some(code_id) = identity.code_id.clone() else {
        return;
    };
    let name = identity.code_name().to_string();
    let Some(rel) = safe_name::component(&name).and_then(|n| paths::sym_by_code_id(n, &code_id))
    else {
        if !name.is_empty() {
            log.unusable_name("code file", &name);
        }
        return;
    };
    let check = |path: &Path| module_record(path).map(|_| ());
    for location in locations {
        let Location::Server(server) = location else {
            continue;
        };
        let url = server.url_of(&rel);
        match server.fetch(&rel, &check) {
            Fetched::File(path, _) => match module_record(&path) {
                Ok((debug_file, id)) => {
                    log.tried(format!(
                        "{url}: code-id lookup names {} {}",
                        safe_name::shown(&debug_file),
                        id.breakpad()
                    ));
                    identity.debug_file = Some(debug_file);
                    identity.debug_id = Some(id);
                    handed.insert(identity.clone(), path);
                    return;
                }
                Err(refusal) => log.refused(&url, &refusal),
            },
            Fetched::NotFound => log.tried(format!("{url}: not found")),
            Fetched::Refused(refusal) => log.refused(&url, &refusal),
            Fetched::Failed(why) => log.server_failed(server.url(), why),
        }
    }
}
