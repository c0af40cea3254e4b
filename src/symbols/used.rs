//! The files a run's analysis read for its modules, and where each one
//! goes in a symbol store so that a later search finds it by the module's
//! identity (`dumptriage pack`).
//!
//! Only files the search accepted are listed: each was checked against the
//! module's build id, PDB GUID and age, or .sym debug id before use. The
//! store path comes from that identity (never from the file's own name or
//! folder), in the layouts the search reads: `NAME/BUILD_ID/NAME` for ELF
//! binaries, `.build-id/xx/rest.debug` for their separate debug files,
//! `NAME/TIMESTAMPSIZE/NAME` for PE binaries, `NAME.pdb/GUIDAGE/NAME.pdb`
//! for PDBs, and `DEBUG_FILE/DEBUG_ID/NAME.sym` for Breakpad files.

use std::path::{Path, PathBuf};

use super::identity::{Format, Identity};
use super::paths;
use super::safe_name;
use super::sources::{Resolution, Sources};
use crate::model::SymbolSource;

/// One file the analysis read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct UsedFile {
    /// Where it is on this machine.
    pub path: PathBuf,
    /// Where it goes in a symbol store, `/`-separated.
    pub store_path: String,
    /// The module it was used for (its file name), and the id that
    /// matched (build id, GUID+age, debug id, timestamp+size).
    pub module: String,
    pub id: String,
    /// What it is: `binary`, `debug file`, `pdb`, `sym`.
    pub kind: &'static str,
}

impl Sources {
    /// Every file the run's searches accepted and used, each once.
    pub fn used_files(&self) -> Vec<UsedFile> {
        let mut out: Vec<UsedFile> = self
            .resolved()
            .iter()
            .flat_map(|(resolution, later)| used(resolution, later.as_deref()))
            .collect();
        out.sort();
        out.dedup_by(|a, b| a.store_path == b.store_path);
        out
    }
}

fn used(resolution: &Resolution, later_binary: Option<&Path>) -> Vec<UsedFile> {
    let identity = &resolution.identity;
    let mut out = Vec::new();
    let mut push = |path: &Path, store: Option<paths::Rel>, id: String, kind: &'static str| {
        if let Some(store) = store {
            out.push(UsedFile {
                path: path.to_path_buf(),
                store_path: store.shown(),
                module: identity.code_name().to_string(),
                id,
                kind,
            });
        }
    };
    let binary = resolution.binary.as_deref().or(later_binary);
    if let Some(path) = &resolution.local_file {
        match resolution.source() {
            SymbolSource::Sym => {
                if let Some((id, rel)) = sym(identity) {
                    push(path, Some(rel), id, "sym");
                }
            }
            SymbolSource::Pdb => {
                if let (Some(name), Some(id)) = (
                    identity.debug_name().and_then(safe_name::component),
                    identity.debug_id,
                ) {
                    push(path, paths::pdb(name, &id), paths::pdb_id(&id), "pdb");
                }
            }
            // A separate debug file; the binary's own DWARF or symbol
            // tables go with the binary below.
            SymbolSource::Dwarf if Some(path.as_path()) != binary => {
                if let Some(id) = elf_id(identity) {
                    let rel = paths::build_id_debug(&id).into_iter().next();
                    push(path, rel, id, "debug file");
                }
            }
            _ => {}
        }
    }
    if let Some(path) = binary {
        match identity.format() {
            Format::Elf => {
                if let (Some(name), Some(id)) =
                    (safe_name::component(identity.code_name()), elf_id(identity))
                {
                    push(path, paths::elf_binary(name, &id), id, "binary");
                }
            }
            Format::Pe => {
                if let (Some(name), Some(code_id)) = (
                    safe_name::component(identity.code_name()),
                    identity.code_id.as_deref(),
                ) {
                    let rel = paths::pe_binary(name, code_id);
                    push(path, rel, code_id.to_string(), "binary");
                }
            }
        }
    }
    out
}

/// The .sym file's id and store path, named as the search names it.
fn sym(identity: &Identity) -> Option<(String, paths::Rel)> {
    let recorded = identity
        .debug_name()
        .unwrap_or_else(|| identity.code_name());
    let id = identity.debug_id?;
    let name = safe_name::component(recorded)?;
    Some((id.breakpad().to_string(), paths::sym(name, &id)?))
}

fn elf_id(identity: &Identity) -> Option<String> {
    identity
        .build_id()
        .and_then(safe_name::hex_id)
        .map(str::to_ascii_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModuleSymbols;

    fn resolution(identity: Identity, local: Option<&str>, binary: Option<&str>) -> Resolution {
        Resolution {
            identity,
            sym: None,
            native: None,
            binary: binary.map(PathBuf::from),
            pe_binary_searched: false,
            file: local.map(str::to_string),
            local_file: local.map(PathBuf::from),
            status: ModuleSymbols::Loaded,
            tried: Vec::new(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn files_go_where_the_search_looks_by_identity_not_by_their_own_names() {
        let elf = Identity {
            code_file: "/usr/lib/libc.so.6".into(),
            code_id: Some("93AC61EC5A8EB1396F9FBD350E3169A558528A40".into()),
            debug_file: Some("/usr/lib/libc.so.6".into()),
            debug_id: None,
        };
        // A binary found later for unwinding; no names source (no DWARF).
        let found = used(
            &resolution(elf.clone(), None, None),
            Some(Path::new("/x/other-name")),
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, Path::new("/x/other-name"));
        assert_eq!(
            found[0].store_path,
            "libc.so.6/93ac61ec5a8eb1396f9fbd350e3169a558528a40/libc.so.6"
        );
        // A hostile module name is no path component: nothing is stored.
        let hostile = Identity {
            code_file: "/lib/..".into(),
            ..elf
        };
        assert!(used(&resolution(hostile, None, Some("/lib/x")), None).is_empty());
    }
}
