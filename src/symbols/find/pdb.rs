//! A module's PDB by debug file and debug id (GUID + age): from
//! Microsoft-style stores, flat folders and servers.

use std::path::PathBuf;
use std::sync::Arc;

use super::super::identity::Identity;
use super::super::log::Log;
use super::super::native::pdb::{Pdb, PdbError};
use super::super::native::NativeSymbols;
use super::super::paths::safe;
use super::super::server::Fetched;
use super::super::sources::{Location, Sources};

/// The module's PDB, from Microsoft-style stores, flat folders and servers.
pub fn pdb(
    sources: &Sources,
    identity: &Identity,
    log: &mut Log,
) -> Option<Arc<dyn NativeSymbols>> {
    let name = identity.debug_name().and_then(safe)?;
    if !name.to_ascii_lowercase().ends_with(".pdb") {
        return None;
    }
    let id = identity.debug_id?;
    let id_text = id.breakpad().to_string();
    let mut candidates: Vec<(String, PathBuf)> = Vec::new();
    for location in &sources.locations {
        match location {
            Location::Folder(dir) => {
                let mut hit = false;
                for path in [dir.join(name).join(&id_text).join(name), dir.join(name)] {
                    if path.is_file() {
                        candidates.push((path.display().to_string(), path));
                        hit = true;
                    }
                }
                if !hit {
                    log.tried(format!("{}: no {name} ({id_text})", dir.display()));
                }
            }
            Location::Server(server) => {
                let rel = [name, id_text.as_str(), name];
                match server.fetch(&rel) {
                    Fetched::File(path, _) => candidates.push((server.url_of(&rel), path)),
                    Fetched::NotFound => log.tried(format!("{}: not found", server.url_of(&rel))),
                    Fetched::Failed(why) => log.server_failed(server.url(), why),
                }
            }
        }
    }
    for (shown, path) in candidates {
        match Pdb::open(&path, id) {
            Ok(pdb) => {
                log.file = Some(shown);
                return Some(Arc::new(pdb));
            }
            Err(PdbError::Mismatch(found)) => {
                log.mismatch(&shown, "GUID+age", &found.breakpad().to_string(), &id_text)
            }
            Err(PdbError::Corrupt(why)) => log.corrupt(&shown, &why),
        }
    }
    None
}
