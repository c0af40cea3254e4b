//! An ELF module's DWARF and symbol tables: separate debug files by build
//! id (folders, /usr/lib/debug, then debuginfod servers), the binary itself
//! (where the dump says it was, in the folders, then debuginfod), then its
//! `.gnu_debuglink`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;

use super::super::identity::{debug_id_from_build_id, same_code_id, CodeId, Identity};
use super::super::location::{BinaryInfo, FoundBinary, Location};
use super::super::log::{Log, Refusal};
use super::super::native::elf::{self, Dwarf, ElfInfo};
use super::super::native::index::{Loader, Planned};
use super::super::native::NativeSymbols;
use super::super::paths::{self, map_file, DebuginfodKind};
use super::super::places::Places;
use super::super::safe_name;
use super::super::server::Fetched;
use crate::model::SymbolSource;

/// The module a file must belong to: its build id (or the debug id made
/// from it).
struct Wanted<'a> {
    identity: &'a Identity,
    /// The module's id, for messages.
    module_has: String,
}

impl<'a> Wanted<'a> {
    fn new(identity: &'a Identity) -> Self {
        let module_has = identity
            .code_id
            .clone()
            .or_else(|| identity.debug_id.map(|d| d.breakpad().to_string()))
            .unwrap_or_else(|| "no identity".to_string());
        Wanted {
            identity,
            module_has,
        }
    }

    /// `Err` with the file's own id when it is not the module's.
    fn check(&self, info: &ElfInfo) -> Result<(), String> {
        let identity = self.identity;
        let found = info
            .build_id
            .as_deref()
            .map(|id| CodeId::from_binary(id).to_string());
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
    }

    /// The check a download passes before it is kept.
    fn check_file(&self, path: &Path) -> Result<(), Refusal> {
        let map = map_file(path).map_err(|e| Refusal::Corrupt(e.to_string()))?;
        let info = elf::read_identity(&map).map_err(Refusal::Corrupt)?;
        self.check(&info).map_err(|found| Refusal::Mismatch {
            what: "build id",
            found,
            expected: self.module_has.clone(),
        })
    }

    /// The file at `path`, read and checked.
    fn open(&self, path: &Path, log: &mut Log) -> Option<(Mmap, ElfInfo)> {
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
        match elf::read_identity(&map) {
            Ok(info) => match self.check(&info) {
                Ok(()) => Some((map, info)),
                Err(found) => {
                    log.mismatch(&shown, "build id", &found, &self.module_has);
                    None
                }
            },
            Err(why) => {
                log.corrupt(&shown, &why);
                None
            }
        }
    }
}

fn load_dwarf(
    places: &Places,
    path: &Path,
    map: Mmap,
    mut info: ElfInfo,
    log: &mut Log,
) -> Option<Arc<dyn NativeSymbols>> {
    let shown = path.display().to_string();
    // A big DWARF file is read through its index once it has one (the
    // caller checked its build id).
    let id = info
        .build_id
        .as_deref()
        .map(|id| CodeId::from_binary(id).to_string());
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("debuginfo");
    let planned =
        id.and_then(|id| Planned::new(&places.index, path, name, &id, SymbolSource::Dwarf));
    if let Some(planned) = &planned {
        let again = path.to_path_buf();
        let load: Loader = Box::new(move || {
            let map = map_file(&again).ok()?;
            let info = elf::read_file(&map).ok()?;
            Dwarf::load(map, info, &again.display().to_string())
                .ok()
                .map(|dwarf| Arc::new(dwarf) as Arc<dyn NativeSymbols>)
        });
        if let Some(indexed) = planned.read(load, log) {
            log.named_by(shown, path);
            return Some(indexed);
        }
    }
    elf::read_tables(&map, &mut info);
    match Dwarf::load(map, info, &path.display().to_string()) {
        Ok(dwarf) => {
            log.named_by(shown, path);
            let dwarf = Arc::new(dwarf);
            if let Some(planned) = planned {
                planned.write(dwarf.clone(), log);
            }
            Some(dwarf as Arc<dyn NativeSymbols>)
        }
        Err(why) => {
            log.corrupt(&shown, &why);
            None
        }
    }
}

/// The module's build id as debuginfod and build-id trees spell it.
fn build_id(identity: &Identity) -> Option<String> {
    identity
        .build_id()
        .and_then(safe_name::hex_id)
        .map(str::to_ascii_lowercase)
}

/// Asks each debuginfod server for the module's `kind` file, in order; the
/// first one kept (checked) is returned with its path in the cache.
fn from_debuginfod(
    places: &Places,
    wanted: &Wanted<'_>,
    build_id: Option<&str>,
    kind: DebuginfodKind,
    log: &mut Log,
) -> Option<(PathBuf, Mmap, ElfInfo)> {
    let (remote, cached) = paths::debuginfod(build_id?, kind)?;
    let check = |path: &Path| wanted.check_file(path);
    for location in &places.locations {
        let Location::Debuginfod(server) = location else {
            continue;
        };
        let url = server.url_of(&remote);
        match server.fetch_debuginfod(&remote, &cached, &check) {
            Fetched::File(path, from_cache) => {
                log.tried(if from_cache {
                    format!("{url}: in the cache {}", path.display())
                } else {
                    format!("{url}: downloaded to {}", path.display())
                });
                if let Some((map, info)) = wanted.open(&path, log) {
                    return Some((path, map, info));
                }
            }
            Fetched::NotFound => log.tried(format!("{url}: not found")),
            Fetched::Refused(refusal) => log.refused(&url, &refusal),
            Fetched::Failed(why) => log.server_failed(server.url(), why),
        }
    }
    None
}

fn hex_bytes(hex: &str) -> Option<Vec<u8>> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The folders among the symbol locations.
fn roots(places: &Places) -> Vec<PathBuf> {
    places
        .locations
        .iter()
        .filter_map(|l| match l {
            Location::Folder(dir) => Some(dir.clone()),
            Location::Server(_) | Location::Debuginfod(_) => None,
        })
        .collect()
}

/// DWARF for an ELF module: separate debug files by build id, the binary
/// itself, then its `.gnu_debuglink`. Also returns the binary found.
pub(crate) fn debug_info(
    places: &Places,
    identity: &Identity,
    log: &mut Log,
) -> (Option<Arc<dyn NativeSymbols>>, Option<FoundBinary>) {
    let build_id = build_id(identity);
    let wanted = Wanted::new(identity);
    let roots = roots(places);

    // Separate debug files named by build id.
    let mut debug_candidates: Vec<PathBuf> = Vec::new();
    if let Some(id) = build_id.as_deref() {
        let layouts = paths::build_id_debug(id);
        for root in &roots {
            for rel in &layouts {
                debug_candidates.extend(places.finder.find(root, rel));
            }
        }
        if places.system {
            debug_candidates.extend(paths::system_build_id_debug(id));
        }
        if let Some(bytes) = hex_bytes(id) {
            debug_candidates.extend(places.debug_files_with_build_id(&bytes));
        }
    }
    for path in &debug_candidates {
        if let Some((map, info)) = wanted.open(path, log) {
            if info.has_dwarf {
                if let Some(found) = load_dwarf(places, path, map, info, log) {
                    return (Some(found), None);
                }
            }
        }
    }
    if build_id.is_some() && (!roots.is_empty() || places.system) {
        let mut searched: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        if places.system {
            searched.push("/usr/lib/debug".to_string());
        }
        log.tried(format!(
            "no debug file by build id in {}",
            searched.join(", ")
        ));
    }
    // Then debuginfod, which is asked only when nothing on this machine
    // had the debug file.
    if let Some((path, map, info)) = from_debuginfod(
        places,
        &wanted,
        build_id.as_deref(),
        DebuginfodKind::Debuginfo,
        log,
    ) {
        if info.has_dwarf {
            if let Some(found) = load_dwarf(places, &path, map, info, log) {
                return (Some(found), None);
            }
        }
    }

    let Some((binary_path, map, mut info)) = find_binary(places, &wanted, &roots, log) else {
        return (None, None);
    };
    if info.has_dwarf {
        // The binary's own DWARF (its map goes to the reader; `info` stays
        // with the binary, for its symbol tables should the DWARF be
        // unreadable).
        if let Ok(again) = elf::read_identity(&map) {
            if let Some(found) = load_dwarf(places, &binary_path, map, again, log) {
                return (Some(found), Some((binary_path, BinaryInfo::Elf(info))));
            }
        }
    }
    // The link is a name from the binary: one plain file name, or nothing.
    if let Some(link) = info.debuglink.as_deref().filter(|l| safe_name::plain(l)) {
        let dir = binary_path.parent().unwrap_or(Path::new("/"));
        let mut links = vec![dir.join(link), dir.join(".debug").join(link)];
        if places.system {
            links.extend(paths::system_debuglink(dir, link));
        }
        if let Some(rel) = paths::flat(link) {
            for root in &roots {
                links.extend(places.finder.find(root, &rel));
            }
        }
        for path in links {
            if path == binary_path {
                continue;
            }
            if let Some((debug_map, debug_info)) = wanted.open(&path, log) {
                if debug_info.has_dwarf {
                    if let Some(found) = load_dwarf(places, &path, debug_map, debug_info, log) {
                        return (Some(found), Some((binary_path, BinaryInfo::Elf(info))));
                    }
                }
            }
        }
        log.tried(format!("no debug file {link} (.gnu_debuglink)"));
    }
    // No DWARF: the binary's symbol tables name its functions.
    if let Ok(map) = map_file(&binary_path) {
        elf::read_tables(&map, &mut info);
    }
    (None, Some((binary_path, BinaryInfo::Elf(info))))
}

/// The module's binary: where the dump says it was, then in the folders,
/// then from debuginfod servers.
fn find_binary(
    places: &Places,
    wanted: &Wanted<'_>,
    roots: &[PathBuf],
    log: &mut Log,
) -> Option<(PathBuf, Mmap, ElfInfo)> {
    let identity = wanted.identity;
    let build_id = build_id(identity);
    let mut binary_candidates: Vec<PathBuf> = Vec::new();
    let mut looked: Vec<String> = Vec::new();
    if places.system {
        if let Some(path) = safe_name::local_file(&identity.code_file) {
            looked.push(path.display().to_string());
            binary_candidates.push(path);
        }
    }
    if let Some(name) = safe_name::component(identity.code_name()) {
        let mut layouts: Vec<paths::Rel> = paths::flat(name).into_iter().collect();
        if let Some(id) = &build_id {
            layouts.extend(paths::elf_binary(name, id));
        }
        for root in roots {
            for rel in &layouts {
                looked.push(rel.under(root).display().to_string());
                binary_candidates.extend(places.finder.find(root, rel));
            }
        }
    } else if !identity.code_name().is_empty() {
        log.unusable_name("code file", identity.code_name());
    }
    for path in &binary_candidates {
        if let Some((map, info)) = wanted.open(path, log) {
            return Some((path.clone(), map, info));
        }
    }
    if !looked.is_empty() {
        log.tried(format!(
            "no binary {} (looked at {})",
            identity.code_name(),
            looked.join(", ")
        ));
    }
    from_debuginfod(
        places,
        wanted,
        build_id.as_deref(),
        DebuginfodKind::Executable,
        log,
    )
}

/// The ELF binary of a module, found and checked as [`debug_info`] does:
/// what the unwinder reads `.eh_frame` from when the names came from a
/// separate debug file.
pub(crate) fn binary(places: &Places, identity: &Identity, log: &mut Log) -> Option<PathBuf> {
    let wanted = Wanted::new(identity);
    find_binary(places, &wanted, &roots(places), log).map(|(path, _, _)| path)
}
