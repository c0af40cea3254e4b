//! A module's PDB by debug file and debug id (GUID + age): from
//! Microsoft-style stores, flat folders and servers.

use std::path::Path;
use std::sync::Arc;

use super::super::identity::{DebugId, Identity};
use super::super::log::{Log, Refusal};
use super::super::native::pdb::{self, Pdb, PdbError};
use super::super::native::NativeSymbols;
use super::super::paths;
use super::super::server::Fetched;
use super::super::sources::{Location, Sources};

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
pub fn pdb(
    sources: &Sources,
    identity: &Identity,
    log: &mut Log,
) -> Option<Arc<dyn NativeSymbols>> {
    let recorded = identity.debug_name()?;
    if !recorded.to_ascii_lowercase().ends_with(".pdb") {
        return None;
    }
    let Some(name) = paths::component(recorded) else {
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
        match Pdb::open(path, id) {
            Ok(pdb) => {
                log.file = Some(shown);
                Some(Arc::new(pdb))
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
    for location in &sources.locations {
        match location {
            Location::Debuginfod(_) => {}
            Location::Folder(dir) => {
                let mut hit = false;
                for rel in &layouts {
                    if let Some(path) = sources.finder.find(dir, rel) {
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
