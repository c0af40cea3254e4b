//! A PE image (DLL, EXE) by its CODE_FILE and CODE_ID: from symbol stores,
//! flat folders, servers, and (for this machine's processes) the path the
//! dump records. Its export table and its CodeView record (which names the
//! PDB) are what the search uses.

use std::path::PathBuf;

use super::super::identity::{same_code_id, Identity};
use super::super::log::Log;
use super::super::native::pe;
use super::super::paths::{map_file, safe};
use super::super::server::Fetched;
use super::super::sources::{BinaryInfo, FoundBinary, Location, Sources};

/// The PE binary of a module, found by CODE_FILE and CODE_ID.
pub fn binary(sources: &Sources, identity: &Identity, log: &mut Log) -> Option<FoundBinary> {
    let code_id = identity.code_id.as_deref()?;
    let name = safe(identity.code_name())?;
    let upper = code_id.to_ascii_uppercase();
    let mut candidates: Vec<(String, PathBuf)> = Vec::new();
    for location in &sources.locations {
        match location {
            Location::Folder(dir) => {
                let mut paths = vec![dir.join(name).join(&upper).join(name)];
                if let (Some(debug), Some(id)) = (
                    identity.debug_name().and_then(safe),
                    identity.debug_id.as_ref(),
                ) {
                    paths.push(dir.join(debug).join(id.breakpad().to_string()).join(name));
                }
                paths.push(dir.join(name));
                let mut hit = false;
                for path in paths {
                    if path.is_file() {
                        candidates.push((path.display().to_string(), path));
                        hit = true;
                    }
                }
                if !hit {
                    log.tried(format!("{}: no {name} ({upper})", dir.display()));
                }
            }
            Location::Server(server) => match server.fetch(&[name, &upper, name]) {
                Fetched::File(path, _) => {
                    candidates.push((server.url_of(&[name, &upper, name]), path));
                }
                Fetched::NotFound => log.tried(format!(
                    "{}: not found",
                    server.url_of(&[name, &upper, name])
                )),
                Fetched::Failed(why) => log.server_failed(server.url(), why),
            },
        }
    }
    if sources.system && !identity.code_file.contains('\\') {
        let path = PathBuf::from(&identity.code_file);
        if path.is_absolute() && path.is_file() {
            candidates.push((path.display().to_string(), path));
        }
    }
    for (shown, path) in candidates {
        match map_file(&path)
            .map_err(|e| e.to_string())
            .and_then(|m| pe::read_file(&m))
        {
            Ok(info) if same_code_id(&info.code_id, code_id) => {
                return Some((path, BinaryInfo::Pe(info)));
            }
            Ok(info) => log.mismatch(&shown, "timestamp+size", &info.code_id, &upper),
            Err(why) => log.corrupt(&shown, &why),
        }
    }
    None
}
