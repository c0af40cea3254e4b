//! The symbol sources of a run, and the search that picks one per module.
//!
//! For each module identity the search runs once per run, whichever dump or
//! thread asks first; the others wait for its result and share it. Sources
//! are tried best first:
//!
//! 1. A Windows module whose record has no CodeView debug id (Wine writes
//!    them so) is first looked up by CODE_FILE/CODE_ID: the binary found
//!    that way names its PDB, and that identity is used from then on.
//! 2. Breakpad .sym files, from folders and servers (through
//!    breakpad-symbols' `Symbolizer`, which also gives CFI for unwinding).
//! 3. Native debug information: the PDB (Windows), or DWARF in the binary or
//!    its separate debug file (ELF).
//! 4. The binary's export table (PE) or dynamic symbol table (ELF), or the
//!    full symbol table of an unstripped ELF binary.
//!
//! Every file is checked against the module's identity before use; a file
//! that differs is refused, and the refusal is a warning naming both.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures_util::lock::Mutex as AsyncMutex;
use memmap2::Mmap;
use minidump::Module;
use minidump_unwind::{
    FileError, FileKind, FrameSymbolizer, LocateSymbolsResult, SymbolError, SymbolFile,
    SymbolSupplier, Symbolizer,
};

use super::identity::{debug_id_from_build_id, hex, leaf, same_code_id, Format, Identity};
use super::native::elf::{self, Dwarf, ElfInfo};
use super::native::pdb::{Pdb, PdbError};
use super::native::{pe, NativeSymbols};
use super::server::{Fetched, Server};
use crate::model::{ModuleSymbols, SymbolSource};

/// A place symbols are looked for.
#[derive(Clone)]
pub enum Location {
    /// A folder: a Breakpad store, a Microsoft-style store, a build-id tree,
    /// or just files side by side; all layouts are tried.
    Folder(PathBuf),
    Server(Arc<Server>),
}

/// What the search found for one module identity.
pub struct Resolution {
    /// The identity lookups used: the module's own, or with the debug file
    /// and id its binary's CodeView record gave.
    pub identity: Identity,
    /// Whether a Breakpad .sym file was found for `identity`.
    pub breakpad: bool,
    /// Native debug information or a symbol table, when no .sym was found.
    pub native: Option<Arc<dyn NativeSymbols>>,
    /// The binary found for the module, for exports and for callers.
    pub binary: Option<PathBuf>,
    /// The file or URL names come from.
    pub file: Option<String>,
    pub status: ModuleSymbols,
    pub tried: Vec<String>,
    pub warnings: Vec<String>,
}

impl Resolution {
    pub fn source(&self) -> SymbolSource {
        if self.breakpad {
            SymbolSource::Sym
        } else {
            self.native
                .as_ref()
                .map_or(SymbolSource::None, |n| n.source())
        }
    }
}

/// Notes made while searching, and what went wrong.
#[derive(Default, Clone)]
struct Log {
    tried: Vec<String>,
    warnings: Vec<String>,
    mismatched: bool,
    corrupt: bool,
    file: Option<String>,
}

impl Log {
    fn tried(&mut self, line: String) {
        self.tried.push(line);
    }
    fn mismatch(&mut self, path: &str, what: &str, file_has: &str, module_has: &str) {
        let line = format!(
            "{path}: {what} {file_has} differs from the module's {module_has}: file ignored"
        );
        self.tried.push(line.clone());
        self.warnings.push(line);
        self.mismatched = true;
    }
    fn corrupt(&mut self, path: &str, why: &str) {
        let line = format!("{path}: unreadable or corrupt ({why}): file ignored");
        self.tried.push(line.clone());
        self.warnings.push(line);
        self.corrupt = true;
    }
    fn server_failed(&mut self, url: &str, why: String) {
        self.tried.push(format!("{url}: {why}"));
        self.warnings.push(format!(
            "symbol server {url} failed ({why}); continuing without it"
        ));
    }
    fn merge(&mut self, other: Log) {
        self.tried.extend(other.tried);
        self.warnings.extend(other.warnings);
        self.mismatched |= other.mismatched;
        self.corrupt |= other.corrupt;
        if self.file.is_none() {
            self.file = other.file;
        }
    }
}

/// Where one identity's search result is kept; the first asker fills it
/// while the others wait on the lock.
type Slot = Arc<AsyncMutex<Option<Arc<Resolution>>>>;

/// A binary found for a module, with its path.
type FoundBinary = (PathBuf, BinaryInfo);

/// The symbol sources of one run, shared by every dump (and thread) in it.
pub struct Sources {
    locations: Vec<Location>,
    /// Look beside the module paths the dump records, and in the system's
    /// debug directories (for dumps of this machine's processes).
    system: bool,
    symbolizer: Symbolizer,
    breakpad_log: Arc<Mutex<HashMap<Identity, Log>>>,
    resolutions: Mutex<HashMap<Identity, Slot>>,
}

impl Sources {
    pub fn new(locations: Vec<Location>, system: bool) -> Sources {
        let breakpad_log = Arc::new(Mutex::new(HashMap::new()));
        let supplier = BreakpadSupplier {
            locations: locations.clone(),
            log: breakpad_log.clone(),
        };
        Sources {
            locations,
            system,
            symbolizer: Symbolizer::new(supplier),
            breakpad_log,
            resolutions: Mutex::new(HashMap::new()),
        }
    }

    /// Whether any source can reach the network (only when a URL was given).
    pub fn uses_network(&self) -> bool {
        self.locations
            .iter()
            .any(|l| matches!(l, Location::Server(_)))
    }

    pub fn locations(&self) -> &[Location] {
        &self.locations
    }

    pub fn symbolizer(&self) -> &Symbolizer {
        &self.symbolizer
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

    async fn search(&self, mut identity: Identity) -> Resolution {
        let mut log = Log::default();
        let format = identity.format();
        let mut binary: Option<(PathBuf, BinaryInfo)> = None;
        let mut binary_searched = false;

        // 1. A Windows module without a debug id: find its binary by code id.
        if format == Format::Pe && identity.debug_id.is_none() {
            binary = self.find_pe_binary(&identity, &mut log);
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
                self.code_id_sym_lookup(&mut identity, &mut log);
            }
        }

        // 2. Breakpad symbol files.
        if identity.debug_id.is_some() {
            let probe = identity.at(0, u64::MAX);
            let mut frame = Probe;
            let found = self
                .symbolizer
                .fill_symbol(&probe, &mut frame)
                .await
                .is_ok();
            let breakpad_log = self
                .breakpad_log
                .lock()
                .ok()
                .and_then(|mut l| l.remove(&identity))
                .unwrap_or_default();
            log.merge(breakpad_log);
            if found {
                return finish(identity, log, true, None, binary.map(|b| b.0));
            }
        }

        // 3. Native debug information.
        let native: Option<Arc<dyn NativeSymbols>> = match format {
            Format::Pe => self.find_pdb(&identity, &mut log),
            Format::Elf => {
                let (native, elf_binary) = self.find_elf(&identity, &mut log);
                binary_searched = true;
                if binary.is_none() {
                    binary = elf_binary;
                }
                native
            }
        };
        if native.is_some() {
            return finish(identity, log, false, native, binary.map(|b| b.0));
        }

        // 4. Export tables.
        if format == Format::Pe && !binary_searched {
            binary = self.find_pe_binary(&identity, &mut log);
        }
        let native: Option<Arc<dyn NativeSymbols>> = match binary {
            Some((ref path, BinaryInfo::Pe(ref mut info))) if !info.exports.is_empty() => {
                log.file = Some(path.display().to_string());
                Some(Arc::new(std::mem::take(&mut info.exports)))
            }
            Some((ref path, BinaryInfo::Elf(ref mut info))) => {
                let table = if !info.symtab.is_empty() {
                    std::mem::take(&mut info.symtab)
                } else {
                    std::mem::take(&mut info.dynsym)
                };
                (!table.is_empty()).then(|| {
                    log.file = Some(path.display().to_string());
                    Arc::new(table) as Arc<dyn NativeSymbols>
                })
            }
            _ => None,
        };
        finish(identity, log, false, native, binary.map(|b| b.0))
    }

    /// The PE binary of a module, found by CODE_FILE and CODE_ID.
    fn find_pe_binary(&self, identity: &Identity, log: &mut Log) -> Option<(PathBuf, BinaryInfo)> {
        let code_id = identity.code_id.as_deref()?;
        let name = safe(identity.code_name())?;
        let upper = code_id.to_ascii_uppercase();
        let mut candidates: Vec<(String, PathBuf)> = Vec::new();
        for location in &self.locations {
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
        if self.system && !identity.code_file.contains('\\') {
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

    /// Servers that answer `CODE_FILE/CODE_ID/NAME.sym` (Tecken redirects
    /// to the debug-id path) give the debug id of a module whose binary
    /// could not be found either.
    fn code_id_sym_lookup(&self, identity: &mut Identity, log: &mut Log) {
        let (Some(code_id), Some(name)) = (identity.code_id.clone(), safe(identity.code_name()))
        else {
            return;
        };
        let upper = code_id.to_ascii_uppercase();
        let sym = sym_name(name);
        for location in &self.locations {
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

    /// The module's PDB, from Microsoft-style stores, flat folders and servers.
    fn find_pdb(&self, identity: &Identity, log: &mut Log) -> Option<Arc<dyn NativeSymbols>> {
        let name = identity.debug_name().and_then(safe)?;
        if !name.to_ascii_lowercase().ends_with(".pdb") {
            return None;
        }
        let id = identity.debug_id?;
        let id_text = id.breakpad().to_string();
        let mut candidates: Vec<(String, PathBuf)> = Vec::new();
        for location in &self.locations {
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
                        Fetched::NotFound => {
                            log.tried(format!("{}: not found", server.url_of(&rel)))
                        }
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

    /// DWARF for an ELF module: separate debug files by build id, the binary
    /// itself, then its `.gnu_debuglink`. Also returns the binary found.
    fn find_elf(
        &self,
        identity: &Identity,
        log: &mut Log,
    ) -> (Option<Arc<dyn NativeSymbols>>, Option<FoundBinary>) {
        let build_id = identity.build_id().map(str::to_ascii_lowercase);
        let name = safe(identity.code_name());
        let check = |info: &ElfInfo| -> Result<(), String> {
            let found = info.build_id.as_deref().map(hex);
            match (&identity.code_id, &identity.debug_id, found) {
                (Some(want), _, Some(found)) if same_code_id(want, &found) => Ok(()),
                (Some(_), _, Some(found)) => Err(found),
                (None, Some(want), Some(_)) => {
                    let have = debug_id_from_build_id(info.build_id.as_deref().unwrap_or(&[]));
                    if have == *want {
                        Ok(())
                    } else {
                        Err(have.breakpad().to_string())
                    }
                }
                (_, _, None) => Err("no build id".to_string()),
                (None, None, Some(found)) => Err(found),
            }
        };
        let module_has = identity
            .code_id
            .clone()
            .or_else(|| identity.debug_id.map(|d| d.breakpad().to_string()))
            .unwrap_or_else(|| "no identity".to_string());

        // Separate debug files named by build id.
        let mut debug_candidates: Vec<PathBuf> = Vec::new();
        let mut roots: Vec<PathBuf> = self
            .locations
            .iter()
            .filter_map(|l| match l {
                Location::Folder(dir) => Some(dir.clone()),
                Location::Server(_) => None,
            })
            .collect();
        if self.system {
            roots.push(PathBuf::from("/"));
        }
        if let Some(id) = build_id.as_deref().filter(|id| id.len() > 2) {
            let (head, tail) = id.split_at(2);
            let file = format!("{tail}.debug");
            for root in &roots {
                for sub in [".build-id", "usr/lib/debug/.build-id"] {
                    if root == Path::new("/") && sub == ".build-id" {
                        continue;
                    }
                    debug_candidates.push(root.join(sub).join(head).join(&file));
                }
            }
        }

        // The binary: where the dump says it was, then in the folders.
        let mut binary_candidates: Vec<PathBuf> = Vec::new();
        if self.system {
            let path = PathBuf::from(&identity.code_file);
            if path.is_absolute() {
                binary_candidates.push(path);
            }
        }
        if let Some(name) = name {
            for root in roots.iter().filter(|r| *r != Path::new("/")) {
                binary_candidates.push(root.join(name));
                if let Some(id) = &build_id {
                    binary_candidates.push(root.join(name).join(id).join(name));
                }
            }
        }

        let open = |path: &Path, log: &mut Log| -> Option<(Mmap, ElfInfo)> {
            if !path.is_file() {
                return None;
            }
            let shown = path.display().to_string();
            let map = match map_file(path) {
                Ok(map) => map,
                Err(e) => {
                    log.corrupt(&shown, &e.to_string());
                    return None;
                }
            };
            match elf::read_file(&map) {
                Ok(info) => match check(&info) {
                    Ok(()) => Some((map, info)),
                    Err(found) => {
                        log.mismatch(&shown, "build id", &found, &module_has);
                        None
                    }
                },
                Err(why) => {
                    log.corrupt(&shown, &why);
                    None
                }
            }
        };
        let load_dwarf =
            |path: &Path, map: &Mmap, info: ElfInfo, log: &mut Log| match Dwarf::load(map, info) {
                Ok(dwarf) => {
                    log.file = Some(path.display().to_string());
                    Some(Arc::new(dwarf) as Arc<dyn NativeSymbols>)
                }
                Err(why) => {
                    log.corrupt(&path.display().to_string(), &why);
                    None
                }
            };

        for path in &debug_candidates {
            if let Some((map, info)) = open(path, log) {
                if info.has_dwarf {
                    if let Some(found) = load_dwarf(path, &map, info, log) {
                        return (Some(found), None);
                    }
                }
            }
        }
        if build_id.is_some() && !debug_candidates.is_empty() {
            log.tried(format!(
                "no debug file by build id in {}",
                roots
                    .iter()
                    .map(|r| match r == Path::new("/") {
                        true => "/usr/lib/debug".to_string(),
                        false => r.display().to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }

        let mut binary: Option<(PathBuf, Mmap, ElfInfo)> = None;
        for path in &binary_candidates {
            if let Some((map, info)) = open(path, log) {
                binary = Some((path.clone(), map, info));
                break;
            }
        }
        let Some((binary_path, map, info)) = binary else {
            if !binary_candidates.is_empty() {
                log.tried(format!(
                    "no binary {} (looked at {})",
                    identity.code_name(),
                    binary_candidates
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            return (None, None);
        };
        if info.has_dwarf {
            // The binary's own DWARF; its tables stay with the binary for
            // exports should the DWARF be unreadable.
            if let Ok(again) = elf::read_file(&map) {
                if let Some(found) = load_dwarf(&binary_path, &map, again, log) {
                    return (Some(found), Some((binary_path, BinaryInfo::Elf(info))));
                }
            }
        }
        if let Some(link) = info.debuglink.as_deref().and_then(safe) {
            let dir = binary_path.parent().unwrap_or(Path::new("/"));
            let mut links = vec![dir.join(link), dir.join(".debug").join(link)];
            if self.system {
                let rel = dir.strip_prefix("/").unwrap_or(dir);
                links.push(Path::new("/usr/lib/debug").join(rel).join(link));
            }
            for root in roots.iter().filter(|r| *r != Path::new("/")) {
                links.push(root.join(link));
            }
            for path in links {
                if path == binary_path {
                    continue;
                }
                if let Some((debug_map, debug_info)) = open(&path, log) {
                    if debug_info.has_dwarf {
                        if let Some(found) = load_dwarf(&path, &debug_map, debug_info, log) {
                            return (Some(found), Some((binary_path, BinaryInfo::Elf(info))));
                        }
                    }
                }
            }
            log.tried(format!("no debug file {link} (.gnu_debuglink)"));
        }
        (None, Some((binary_path, BinaryInfo::Elf(info))))
    }
}

fn finish(
    identity: Identity,
    mut log: Log,
    breakpad: bool,
    native: Option<Arc<dyn NativeSymbols>>,
    binary: Option<PathBuf>,
) -> Resolution {
    if log.tried.is_empty() && !breakpad && native.is_none() {
        log.tried(
            "nothing: no --symbols, _NT_SYMBOL_PATH or symbols folder beside the dump".to_string(),
        );
    }
    let status = if breakpad || native.is_some() {
        ModuleSymbols::Loaded
    } else if log.mismatched {
        ModuleSymbols::Mismatched
    } else if log.corrupt {
        ModuleSymbols::Corrupt
    } else {
        ModuleSymbols::Missing
    };
    Resolution {
        identity,
        breakpad,
        native,
        binary,
        file: log.file,
        status,
        tried: log.tried,
        warnings: log.warnings,
    }
}

/// A binary found for a module, parsed.
enum BinaryInfo {
    Pe(pe::PeInfo),
    Elf(ElfInfo),
}

/// Maps a file read-only.
fn map_file(path: &Path) -> std::io::Result<Mmap> {
    let file = std::fs::File::open(path)?;
    // SAFETY: read-only private map; see native::pdb.
    unsafe { Mmap::map(&file) }
}

/// A name from a dump used as one path component, or `None` when it could
/// escape its folder (`..`, separators) or is empty.
fn safe(name: &str) -> Option<&str> {
    let name = leaf(name);
    (!name.is_empty() && name != "." && name != ".." && !name.contains('\0')).then_some(name)
}

/// `NAME.pdb` -> `NAME.sym`, `NAME.dll` -> `NAME.sym`, `libc.so.6` ->
/// `libc.so.6.sym`: the Breakpad symbol file's name.
fn sym_name(debug_file: &str) -> String {
    let lower = debug_file.to_ascii_lowercase();
    for ext in [".pdb", ".dll", ".exe"] {
        if lower.ends_with(ext) {
            return format!("{}.sym", &debug_file[..debug_file.len() - ext.len()]);
        }
    }
    format!("{debug_file}.sym")
}

/// Finds Breakpad symbol files in folders and on servers, and notes each
/// attempt for the report.
struct BreakpadSupplier {
    locations: Vec<Location>,
    log: Arc<Mutex<HashMap<Identity, Log>>>,
}

impl BreakpadSupplier {
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

/// A frame that only asks whether symbols exist.
struct Probe;

impl FrameSymbolizer for Probe {
    fn get_instruction(&self) -> u64 {
        0
    }
    fn set_function(&mut self, _: &str, _: u64, _: u32) {}
    fn set_source_file(&mut self, _: &str, _: u32, _: u64) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_a_dump_stay_inside_their_folder() {
        assert_eq!(safe("C:\\x\\fakehip.pdb"), Some("fakehip.pdb"));
        assert_eq!(safe("/usr/lib/libc.so.6"), Some("libc.so.6"));
        assert_eq!(safe(".."), None);
        assert_eq!(safe("a\\.."), None);
        assert_eq!(safe(""), None);
        assert_eq!(sym_name("fakehip.pdb"), "fakehip.sym");
        assert_eq!(sym_name("libc.so.6"), "libc.so.6.sym");
    }
}
