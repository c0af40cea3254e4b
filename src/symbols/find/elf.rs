//! An ELF module's DWARF and symbol tables: separate debug files by build
//! id, the binary itself (where the dump says it was, or in the folders),
//! then its `.gnu_debuglink`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;

use super::super::identity::{debug_id_from_build_id, same_code_id, CodeId, Identity};
use super::super::log::Log;
use super::super::native::elf::{self, Dwarf, ElfInfo};
use super::super::native::NativeSymbols;
use super::super::paths::{map_file, safe};
use super::super::sources::{BinaryInfo, FoundBinary, Location, Sources};

/// Where an ELF module's files are looked for, and how each is checked.
struct Finder<'s> {
    sources: &'s Sources,
    identity: &'s Identity,
    build_id: Option<String>,
    module_has: String,
    roots: Vec<PathBuf>,
}

impl<'s> Finder<'s> {
    fn new(sources: &'s Sources, identity: &'s Identity) -> Self {
        let mut roots: Vec<PathBuf> = sources
            .locations
            .iter()
            .filter_map(|l| match l {
                Location::Folder(dir) => Some(dir.clone()),
                Location::Server(_) => None,
            })
            .collect();
        if sources.system {
            roots.push(PathBuf::from("/"));
        }
        Finder {
            sources,
            identity,
            build_id: identity.build_id().map(str::to_ascii_lowercase),
            module_has: identity
                .code_id
                .clone()
                .or_else(|| identity.debug_id.map(|d| d.breakpad().to_string()))
                .unwrap_or_else(|| "no identity".to_string()),
            roots,
        }
    }

    /// Whether a file's build id is the module's; `Err` has the file's.
    fn check(&self, info: &ElfInfo) -> Result<(), String> {
        let found = info
            .build_id
            .as_deref()
            .map(|id| CodeId::from_binary(id).to_string());
        match (&self.identity.code_id, &self.identity.debug_id, found) {
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

    /// Separate debug files named by build id.
    fn debug_candidates(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if let Some(id) = self.build_id.as_deref().filter(|id| id.len() > 2) {
            let (head, tail) = id.split_at(2);
            let file = format!("{tail}.debug");
            for root in &self.roots {
                for sub in [".build-id", "usr/lib/debug/.build-id"] {
                    if root == Path::new("/") && sub == ".build-id" {
                        continue;
                    }
                    out.push(root.join(sub).join(head).join(&file));
                }
            }
        }
        out
    }

    /// The binary: where the dump says it was, then in the folders.
    fn binary_candidates(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if self.sources.system {
            let path = PathBuf::from(&self.identity.code_file);
            if path.is_absolute() {
                out.push(path);
            }
        }
        if let Some(name) = safe(self.identity.code_name()) {
            for root in self.roots.iter().filter(|r| *r != Path::new("/")) {
                out.push(root.join(name));
                if let Some(id) = &self.build_id {
                    out.push(root.join(name).join(id).join(name));
                }
            }
        }
        out
    }

    /// Maps and checks one candidate file.
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
        match elf::read_file(&map) {
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

    /// The first candidate binary that is the module's.
    fn binary(&self, log: &mut Log) -> Option<(PathBuf, Mmap, ElfInfo)> {
        let candidates = self.binary_candidates();
        for path in &candidates {
            if let Some((map, info)) = self.open(path, log) {
                return Some((path.clone(), map, info));
            }
        }
        if !candidates.is_empty() {
            log.tried(format!(
                "no binary {} (looked at {})",
                self.identity.code_name(),
                candidates
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        None
    }
}

/// The ELF binary of a module, found and checked as [`debug_info`] does:
/// what the unwinder reads `.eh_frame` from when the names came from a
/// separate debug file.
pub fn binary(sources: &Sources, identity: &Identity, log: &mut Log) -> Option<PathBuf> {
    Finder::new(sources, identity)
        .binary(log)
        .map(|(path, _, _)| path)
}

/// DWARF for an ELF module: separate debug files by build id, the binary
/// itself, then its `.gnu_debuglink`. Also returns the binary found.
pub fn debug_info(
    sources: &Sources,
    identity: &Identity,
    log: &mut Log,
) -> (Option<Arc<dyn NativeSymbols>>, Option<FoundBinary>) {
    let finder = Finder::new(sources, identity);
    let build_id = finder.build_id.clone();
    let roots = finder.roots.clone();
    let debug_candidates = finder.debug_candidates();
    let open = |path: &Path, log: &mut Log| finder.open(path, log);
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

    let Some((binary_path, map, info)) = finder.binary(log) else {
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
        if sources.system {
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
