//! A module's PDB by debug file and debug id (GUID + age): from
//! Microsoft-style stores, flat folders and servers.

use std::path::Path;
use std::sync::Arc;

use super::super::identity::{DebugId, Identity};
use super::super::location::Location;
use super::super::log::{Log, Refusal};
use super::super::native::index::{Loader, Planned};
use super::super::native::pdb::{self, Pdb, PdbError};
use super::super::native::NativeSymbols;
use super::super::paths;
use super::super::places::Places;
use super::super::safe_name;
use super::super::server::Fetched;
use crate::model::SymbolSource;

/// Whether the PDB at `path` has the GUID and age `id` (a download is
/// checked so before it is kept).
fn check(path: &Path, id: DebugId) -> Result<(), Refusal> {
    match pdb::identity(path) {
        Ok(found) if found == id => Ok(()),
        Ok(found) => Err(Refusal::Mismatch {
            what: "GUID+age",
            found: found.breakpad().to_string(),
            expected: id.breakpad().to_string(),
        }),
        Err(why) => Err(Refusal::Corrupt(why)),
    }
}

/// The module's PDB, from Microsoft-style stores, flat folders and servers.
pub(crate) fn pdb(
    places: &Places,
    identity: &Identity,
    log: &mut Log,
) -> Option<Arc<dyn NativeSymbols>> {
    let recorded = identity.debug_name()?;
    if !recorded.to_ascii_lowercase().ends_with(".pdb") {
        return None;
    }
    let Some(name) = safe_name::component(recorded) else {
        log.unusable_name("debug file", recorded);
        return None;
    };
    let id = identity.debug_id?;
    let key = paths::pdb(name, &id)?;
    let layouts: Vec<paths::Rel> = std::iter::once(key.clone())
        .chain(paths::flat(name))
        .collect();
    let id_text = id.breakpad().to_string();
    let check = |path: &Path| check(path, id);
    let open = |shown: String, path: &Path, log: &mut Log| -> Option<Arc<dyn NativeSymbols>> {
        // A big PDB is read through its index once it has one: checked
        // first to be the module's, as the reader would.
        let planned = Planned::new(&places.index, path, name, &id_text, SymbolSource::Pdb);
        if let Some(planned) = planned.as_ref().filter(|p| p.has_index()) {
            if check(path).is_ok() {
                let again = path.to_path_buf();
                let load: Loader = Box::new(move || {
                    Pdb::open(&again, id)
                        .ok()
                        .map(|pdb| Arc::new(pdb) as Arc<dyn NativeSymbols>)
                });
                if let Some(indexed) = planned.read(load, log) {
                    log.named_by(shown, path);
                    return Some(indexed);
                }
            }
        }
        match Pdb::open(path, id) {
            Ok(pdb) => {
                log.named_by(shown, path);
                let pdb = Arc::new(pdb);
                if let Some(planned) = planned {
                    planned.write(pdb.clone(), log);
                }
                Some(pdb)
            }
            Err(PdbError::Mismatch(found)) => {
                log.mismatch(&shown, "GUID+age", &found.breakpad().to_string(), &id_text);
                None
            }
            Err(PdbError::Corrupt(why)) => {
                log.corrupt(&shown, &why);
                None
            }
        }
    };
    // In order, the first good file wins: a server is asked only when no
    // folder before it had one.
    for location in &places.locations {
        match location {
            Location::Debuginfod(_) => {}
            Location::Folder(dir) => {
                let mut hit = false;
                for rel in &layouts {
                    if let Some(path) = places.finder.find(dir, rel) {
                        hit = true;
                        if let Some(found) = open(path.display().to_string(), &path, log) {
                            return Some(found);
                        }
                    }
                }
                if !hit {
                    log.tried(format!("{}: no {name} ({id_text})", dir.display()));
                }
            }
            Location::Server(server) => match server.fetch(&key, &check) {
                Fetched::File(path, _) => {
                    if let Some(found) = open(server.url_of(&key), &path, log) {
                        return Some(found);
                    }
                }
                Fetched::NotFound => log.tried(format!("{}: not found", server.url_of(&key))),
                Fetched::Refused(refusal) => log.refused(&server.url_of(&key), &refusal),
                Fetched::Failed(why) => log.server_failed(server.url(), why),
            },
        }
    }
    None
}
