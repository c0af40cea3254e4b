//! Breakpad symbol files (`.sym`): found in folders and on servers for
//! minidump-unwind's `Symbolizer`, which parses them and also gives CFI.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use minidump::Module;
use minidump_unwind::{
    FileError, FileKind, LocateSymbolsResult, SymbolError, SymbolFile, SymbolSupplier,
};

use super::identity::Identity;
use super::log::Log;
use super::paths::{safe, sym_name};
use super::server::Fetched;
use super::sources::Location;

/// Finds Breakpad symbol files in folders and on servers, and notes each
/// attempt for the report.
pub(super) struct BreakpadSupplier {
    locations: Vec<Location>,
    log: Arc<Mutex<HashMap<Identity, Log>>>,
}

impl BreakpadSupplier {
    pub fn new(locations: Vec<Location>, log: Arc<Mutex<HashMap<Identity, Log>>>) -> Self {
        BreakpadSupplier { locations, log }
    }

    fn locate(
        &self,
        module: &(dyn Module + Sync),
        log: &mut Log,
    ) -> Result<SymbolFile, SymbolError> {
        let identity = Identity::of(module);
        // Breakpad names the store folder after the debug file, or the code
        // file when the debug file is empty (MinGW builds without a PDB).
        let debug_file = identity
            .debug_name()
            .unwrap_or_else(|| identity.code_name())
            .to_string();
        let (Some(debug_file), Some(id)) = (safe(&debug_file), identity.debug_id) else {
            return Err(SymbolError::MissingDebugFileOrId);
        };
        let id = id.breakpad().to_string();
        let sym = sym_name(debug_file);
        let rel = [debug_file, id.as_str(), sym.as_str()];
        for location in &self.locations {
            let (shown, path) = match location {
                Location::Folder(dir) => {
                    let path = dir.join(debug_file).join(&id).join(&sym);
                    if !path.is_file() {
                        log.tried(format!("{}: no {}", dir.display(), rel.join("/")));
                        continue;
                    }
                    (path.display().to_string(), path)
                }
                Location::Server(server) => match server.fetch(&rel) {
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
                    Fetched::Failed(why) => {
                        log.server_failed(server.url(), why);
                        continue;
                    }
                },
            };
            match SymbolFile::from_file(&path) {
                Ok(file) => {
                    log.file = Some(shown);
                    return Ok(file);
                }
                Err(e) => log.corrupt(&shown, &e.to_string()),
            }
        }
        Err(SymbolError::NotFound)
    }
}

#[async_trait::async_trait]
impl SymbolSupplier for BreakpadSupplier {
    async fn locate_symbols(
        &self,
        module: &(dyn Module + Sync),
    ) -> Result<LocateSymbolsResult, SymbolError> {
        let mut log = Log::default();
        let result = self.locate(module, &mut log);
        if let Ok(mut map) = self.log.lock() {
            map.entry(Identity::of(module)).or_default().merge(log);
        }
        result.map(|symbols| LocateSymbolsResult {
            symbols,
            extra_debug_info: None,
        })
    }

    async fn locate_file(
        &self,
        _module: &(dyn Module + Sync),
        _file_kind: FileKind,
    ) -> Result<PathBuf, FileError> {
        Err(FileError::NotFound)
    }
}

/// Servers that answer `CODE_FILE/CODE_ID/NAME.sym` (Tecken redirects
/// to the debug-id path) give the debug id of a module whose binary
/// could not be found either.
pub(super) fn code_id_lookup(locations: &[Location], identity: &mut Identity, log: &mut Log) {
    let (Some(code_id), Some(name)) = (identity.code_id.clone(), safe(identity.code_name())) else {
        return;
    };
    let upper = code_id.to_ascii_uppercase();
    let sym = sym_name(name);
    for location in locations {
        let Location::Server(server) = location else {
            continue;
        };
        let rel = [name, upper.as_str(), sym.as_str()];
        match server.fetch(&rel) {
            Fetched::File(path, _) => match SymbolFile::from_file(&path) {
                Ok(file) => match file.module_id.parse() {
                    Ok(id) => {
                        log.tried(format!(
                            "{}: code-id lookup names {} {}",
                            server.url_of(&rel),
                            file.debug_file,
                            file.module_id
                        ));
                        identity.debug_file = Some(file.debug_file.clone());
                        identity.debug_id = Some(id);
                        // Keep it where the debug-id lookup will look, so
                        // it is not downloaded twice.
                        if let Some(stem) = safe(&file.debug_file) {
                            let target =
                                server.cache_path(&[stem, &file.module_id, &sym_name(stem)]);
                            if let Some(dir) = target.parent() {
                                let _ = std::fs::create_dir_all(dir);
                            }
                            let _ = std::fs::copy(&path, target);
                        }
                        return;
                    }
                    Err(_) => log.corrupt(&server.url_of(&rel), "bad MODULE record"),
                },
                Err(e) => log.corrupt(&server.url_of(&rel), &e.to_string()),
            },
            Fetched::NotFound => log.tried(format!("{}: not found", server.url_of(&rel))),
            Fetched::Failed(why) => log.server_failed(server.url(), why),
        }
    }
}
