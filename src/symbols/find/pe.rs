//! A PE image (DLL, EXE) by its CODE_FILE and CODE_ID: from symbol stores,
//! flat folders, servers, and (for this machine's processes) the path the
//! dump records. Its export table and its CodeView record (which names the
//! PDB) are what the search uses.

use std::path::{Path, PathBuf};

use super::super::identity::{same_code_id, Identity};
use super::super::location::{BinaryInfo, FoundBinary, Location};
use super::super::log::{Log, Refusal};
use super::super::native::pe;
use super::super::paths::{self, map_file};
use super::super::places::Places;
use super::super::safe_name;
use super::super::server::Fetched;

/// Reads `path` as a PE image whose timestamp and size are `code_id`.
fn read_checked(path: &Path, code_id: &str) -> Result<pe::PeInfo, Refusal> {
    let info = map_file(path)
        .map_err(|e| e.to_string())
        .and_then(|m| pe::read_file(&m))
        .map_err(Refusal::Corrupt)?;
    if same_code_id(&info.code_id, code_id) {
        Ok(info)
    } else {
        Err(Refusal::Mismatch {
            what: "timestamp+size",
            found: info.code_id,
            expected: code_id.to_string(),
        })
    }
}

/// The PE binary of a module, found by CODE_FILE and CODE_ID.
pub(crate) fn binary(places: &Places, identity: &Identity, log: &mut Log) -> Option<FoundBinary> {
    let code_id = paths::pe_code_id(identity.code_id.as_deref()?)?;
    let recorded = identity.code_name();
    let Some(name) = safe_name::component(recorded) else {
        if !recorded.is_empty() {
            log.unusable_name("code file", recorded);
        }
        return None;
    };
    let key = paths::pe_binary(name, &code_id)?;
    let mut layouts = vec![key.clone()];
    if let (Some(debug), Some(id)) = (
        identity.debug_name().and_then(safe_name::component),
        identity.debug_id.as_ref(),
    ) {
        layouts.extend(paths::pe_binary_by_debug_id(debug, id, name));
    }
    layouts.extend(paths::flat(name));
    let check = |path: &Path| read_checked(path, &code_id).map(|_| ());
    let open = |shown: String, path: PathBuf, log: &mut Log| -> Option<FoundBinary> {
        match read_checked(&path, &code_id) {
            Ok(info) => Some((path, BinaryInfo::Pe(info))),
            Err(refusal) => {
                log.refused(&shown, &refusal);
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
                        if let Some(found) = open(path.display().to_string(), path, log) {
                            return Some(found);
                        }
                    }
                }
                if !hit {
                    log.tried(format!("{}: no {name} ({code_id})", dir.display()));
                }
            }
            Location::Server(server) => match server.fetch(&key, &check) {
                Fetched::File(path, _) => {
                    if let Some(found) = open(server.url_of(&key), path, log) {
                        return Some(found);
                    }
                }
                Fetched::NotFound => log.tried(format!("{}: not found", server.url_of(&key))),
                Fetched::Refused(refusal) => log.refused(&server.url_of(&key), &refusal),
                Fetched::Failed(why) => log.server_failed(server.url(), why),
            },
        }
    }
    if places.system {
        if let Some(path) = safe_name::local_file(&identity.code_file).filter(|p| p.is_file()) {
            return open(path.display().to_string(), path, log);
        }
    }
    None
}
