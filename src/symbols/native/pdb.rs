//! Windows PDBs, read with pdb-addr2line: procedures, inlined functions and
//! line numbers, and public symbols where a PDB has nothing better.

use std::collections::HashMap;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use pdb_addr2line::pdb::PDB;
use pdb_addr2line::{ContextPdbData, TypeFormatterFlags};

use super::guarded::Guarded;
use super::index::{within_limit, Boundaries};
use super::{NativeSymbols, Symbol};
use crate::model::SymbolSource;
use crate::symbols::identity::DebugId;

type Data = ContextPdbData<'static, 'static, Cursor<Mmap>>;
type PdbContext<'a> = pdb_addr2line::Context<'a, 'static>;

self_cell::self_cell!(
    /// The parsed streams and the lookup context that borrows them.
    struct Cell {
        owner: Data,
        #[not_covariant]
        dependent: PdbContext,
    }
);

/// A PDB whose identity has been checked, ready for lookups.
pub struct Pdb {
    // The context caches per-procedure data in a RefCell, so lookups from
    // several threads take turns; a reader's panic on a damaged file costs
    // one look-up, not the file.
    cell: Guarded<Cell>,
    /// Where it was read from, and its GUID and age: its index asks the
    /// file again for where answers change.
    path: PathBuf,
    id: DebugId,
}

/// Why a PDB could not be used.
#[derive(Debug)]
pub enum PdbError {
    /// Its GUID and age are not the module's.
    Mismatch(DebugId),
    Corrupt(String),
}

impl Pdb {
    /// Opens `path` if its GUID and age are `expected`. The PDB reader
    /// panics on some corrupt files (arithmetic overflow on sizes read from
    /// the file, found by fuzz/read_pdb): such a file is corrupt, like any
    /// other, not the end of the dump's analysis.
    pub fn open(path: &Path, expected: DebugId) -> Result<Pdb, PdbError> {
        std::panic::catch_unwind(|| Pdb::open_unguarded(path, expected)).unwrap_or_else(|_| {
            Err(PdbError::Corrupt(
                "the PDB reader failed on this file".to_string(),
            ))
        })
    }

    fn open_unguarded(path: &Path, expected: DebugId) -> Result<Pdb, PdbError> {
        let corrupt = |e: &dyn std::fmt::Display| PdbError::Corrupt(e.to_string());
        let mut pdb = map_pdb(path).map_err(PdbError::Corrupt)?;
        let found = pdb_identity(&mut pdb).map_err(|e| corrupt(&e))?;
        if found != expected {
            return Err(PdbError::Mismatch(found));
        }
        // A section whose address range wraps around makes the PDB reader
        // overflow while mapping addresses (found by fuzz/read_pdb).
        if let Ok(Some(sections)) = pdb.sections() {
            if let Some(bad) = sections.iter().position(|s| {
                s.virtual_address.checked_add(s.size_of_raw_data).is_none()
                    || s.virtual_address.checked_add(s.virtual_size).is_none()
            }) {
                return Err(PdbError::Corrupt(format!(
                    "section {} lies past the end of the address space",
                    bad + 1
                )));
            }
        }
        let data = ContextPdbData::try_from_pdb(pdb).map_err(|e| corrupt(&e))?;
        // Names as the PDB spells them, without a synthesized argument list.
        let flags = TypeFormatterFlags::default() | TypeFormatterFlags::NO_ARGUMENTS;
        let cell = Cell::try_new(data, |data| data.make_context_with_formatter_flags(flags))
            .map_err(|e| corrupt(&e))?;
        Ok(Pdb {
            cell: Guarded::new(cell, "PDB", path.display().to_string()),
            path: path.to_path_buf(),
            id: expected,
        })
    }
}

/// The GUID and age of the PDB at `path`, without loading anything else:
/// a download is checked with it before it is kept.
pub fn identity(path: &Path) -> Result<DebugId, String> {
    pdb_identity(&mut map_pdb(path)?).map_err(|e| e.to_string())
}

/// The PDB at `path`, memory-mapped, its stream directory read.
fn map_pdb(path: &Path) -> Result<PDB<'static, Cursor<Mmap>>, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    // SAFETY: sound while nobody truncates or writes the PDB during the
    // map's life: we never write a file we map (cache files are renamed
    // into place, see `paths::map_file`); another program rewriting it in
    // place is the condition left, as for every memory-mapped reader.
    let map = unsafe { Mmap::map(&file) }.map_err(|e| e.to_string())?;
    PDB::open(Cursor::new(map)).map_err(|e| e.to_string())
}

fn pdb_identity(
    pdb: &mut PDB<'static, Cursor<Mmap>>,
) -> Result<DebugId, pdb_addr2line::pdb::Error> {
    let info = pdb.pdb_information()?;
    // The DBI stream's age is the one the linker wrote into the image;
    // the PDB info stream's can be newer after incremental links.
    let age = pdb
        .debug_information()
        .ok()
        .and_then(|dbi| dbi.age())
        .unwrap_or(info.age);
    Ok(DebugId::from_parts(info.guid, age))
}

impl NativeSymbols for Pdb {
    fn lookup(&self, rva: u64) -> Option<Symbol> {
        // A corrupt file can make the reader panic here too (see `open`):
        // `Guarded` catches it.
        let rva32 = u32::try_from(rva).ok()?;
        self.cell.with(rva, |cell| {
            cell.with_dependent(|_, context| symbol(context, rva32))
        })
    }

    fn source(&self) -> SymbolSource {
        SymbolSource::Pdb
    }

    fn failure(&self) -> Option<String> {
        self.cell.failure()
    }
}

/// The PDB's answer for `rva`, as a symbol.
fn symbol(context: &PdbContext, rva: u32) -> Option<Symbol> {
    let frames = context.find_frames(rva).ok()??;
    let (outer, inner) = frames.frames.split_last()?;
    Some(Symbol {
        // Public symbols (no procedure record) keep their decoration.
        function: super::demangle(outer.function.as_deref()?),
        function_rva: u64::from(frames.start_rva),
        file: outer.file.as_deref().map(str::to_string),
        line: outer.line,
        guessed: false,
        inlines: inner
            .iter()
            .rev()
            .map(|f| {
                (
                    f.function
                        .as_deref()
                        .map_or_else(|| "?".to_string(), super::demangle),
                    f.file.as_deref().map(str::to_string),
                    f.line,
                )
            })
            .collect(),
    })
}

impl Boundaries for Pdb {
    fn boundaries(&self, limit: usize) -> Result<Vec<u64>, String> {
        // A corrupt file can make the PDB reader panic (see `open`).
        std::panic::catch_unwind(|| boundaries(&self.path, limit))
            .unwrap_or_else(|_| Err("the PDB reader failed on this file".to_string()))
    }

    fn fresh(&self) -> Result<Box<dyn NativeSymbols>, String> {
        match Pdb::open(&self.path, self.id) {
            Ok(pdb) => Ok(Box::new(pdb)),
            Err(PdbError::Mismatch(found)) => Err(format!("now {}", found.breakpad())),
            Err(PdbError::Corrupt(why)) => Err(why),
        }
    }
}

/// Every RVA at which pdb-addr2line's answer may change: the ends of the
/// image's sections and of the section contributions (which choose the
/// module), of procedures (nested ones too), of the line records and of
/// every inline site's ranges; and where public symbols start (a public's
/// extent runs to the next one).
fn boundaries(path: &Path, limit: usize) -> Result<Vec<u64>, String> {
    use pdb_addr2line::pdb::{FallibleIterator, PdbInternalSectionOffset, SymbolData};

    let mut pdb = map_pdb(path)?;
    let text = |e: pdb_addr2line::pdb::Error| e.to_string();
    let address_map = pdb.address_map().map_err(text)?;
    let mut points = Vec::new();
    let point = |offset: PdbInternalSectionOffset, points: &mut Vec<u64>| {
        if let Some(rva) = offset.to_rva(&address_map) {
            points.push(u64::from(rva.0));
        }
    };
    let range = |offset: PdbInternalSectionOffset, len: u32, points: &mut Vec<u64>| {
        let (Some(start), Some(end)) = (
            offset.to_internal_rva(&address_map),
            offset.offset.checked_add(len).and_then(|end| {
                PdbInternalSectionOffset::new(offset.section, end).to_internal_rva(&address_map)
            }),
        ) else {
            return;
        };
        for rvas in address_map.rva_ranges(start..end) {
            points.extend([u64::from(rvas.start.0), u64::from(rvas.end.0)]);
        }
        point(offset, points);
    };
    if let Some(sections) = pdb.sections().map_err(text)? {
        for s in sections {
            let start = u64::from(s.virtual_address);
            points.extend([
                start,
                start + u64::from(s.virtual_size),
                start + u64::from(s.size_of_raw_data),
            ]);
        }
    }
    let dbi = pdb.debug_information().map_err(text)?;
    let mut contributions = dbi.section_contributions().map_err(text)?;
    while let Some(c) = contributions.next().map_err(text)? {
        range(c.offset, c.size, &mut points);
    }
    let globals = pdb.global_symbols().map_err(text)?;
    let mut symbols = globals.iter();
    while let Some(symbol) = symbols.next().map_err(text)? {
        if let Ok(SymbolData::Public(public)) = symbol.parse() {
            point(public.offset, &mut points);
        }
    }
    let mut modules = dbi.modules().map_err(text)?;
    while let Some(module) = modules.next().map_err(text)? {
        within_limit(&points, limit)?;
        // A module the reader cannot read gives no answers to bound.
        let Ok(Some(info)) = pdb.module_info(&module) else {
            continue;
        };
        if let Ok(program) = info.line_program() {
            let mut lines = program.lines();
            while let Ok(Some(line)) = lines.next() {
                range(line.offset, line.length.unwrap_or(0), &mut points);
            }
        }
        let inlinees: HashMap<_, _> = match info.inlinees() {
            Ok(inlinees) => inlinees
                .map(|i| Ok((i.index(), i)))
                .collect()
                .unwrap_or_default(),
            Err(_) => HashMap::new(),
        };
        let Ok(mut symbols) = info.symbols() else {
            continue;
        };
        // The procedure whose inline sites follow.
        let mut procedure = None;
        while let Ok(Some(symbol)) = symbols.next() {
            match symbol.parse() {
                Ok(SymbolData::Procedure(p)) => {
                    range(p.offset, p.len, &mut points);
                    procedure = Some(p.offset);
                }
                Ok(SymbolData::InlineSite(site)) => {
                    let (Some(parent), Some(inlinee)) = (procedure, inlinees.get(&site.inlinee))
                    else {
                        continue;
                    };
                    let mut lines = inlinee.lines(parent, &site);
                    while let Ok(Some(line)) = lines.next() {
                        range(line.offset, line.length.unwrap_or(0), &mut points);
                    }
                }
                _ => {}
            }
        }
    }
    Ok(points)
}
