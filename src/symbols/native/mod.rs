//! Names from native files: PDBs, DWARF, and export tables.
//!
//! Each reader is loaded once, checked against the module's identity by the
//! caller, and then answers lookups by offset from the module's base (an
//! RVA). Readers are `Send + Sync` so that one loaded file serves every dump
//! of a run, in any thread. Every name is returned exactly as the file
//! spells it: C names keep their leading underscores, and only names in a
//! mangling scheme (MSVC `?`, Itanium C++ `_Z`, Rust) are undecorated.
//!
//! Names from export and symbol tables are honest about what they know: an
//! address past the real end of the function an export names only gets
//! that name as a guess (`Symbol::guessed`).

pub mod elf;
mod guarded;
pub mod index;
pub mod pdb;
pub mod pe;

use crate::model::SymbolSource;

/// What one source knows about an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub function: String,
    /// Offset of the function's first instruction from the module base.
    pub function_rva: u64,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// Functions inlined at the address, outermost first; each with the
    /// source location inside it.
    pub inlines: Vec<(String, Option<String>, Option<u32>)>,
    /// The name is the nearest export or symbol before the address, which
    /// may not be the function the address lies in: its extent is unknown
    /// or ends before the address.
    pub guessed: bool,
}

/// Where functions begin and end, from a PE image's exception directory
/// (x64 `.pdata`): the start of the function holding an address, so an
/// export's name can be checked against it.
#[derive(Debug, Default)]
pub(crate) struct FunctionExtents {
    /// (begin, end, start of the whole function): a function split into
    /// chained parts has one entry per part, each knowing its primary start.
    /// Sorted by begin.
    entries: Vec<(u64, u64, u64)>,
}

impl FunctionExtents {
    pub(crate) fn new(mut entries: Vec<(u64, u64, u64)>) -> Self {
        entries.retain(|(begin, end, _)| begin < end);
        entries.sort_unstable();
        FunctionExtents { entries }
    }

    /// The start of the function holding `rva`, if an entry covers it.
    pub(crate) fn function_start(&self, rva: u64) -> Option<u64> {
        let index = self
            .entries
            .partition_point(|e| e.0 <= rva)
            .checked_sub(1)?;
        let (_, end, start) = self.entries[index];
        (rva < end).then_some(start)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A loaded source of names for one module.
pub trait NativeSymbols: Send + Sync {
    /// Names the function holding `rva`, if this source can.
    fn lookup(&self, rva: u64) -> Option<Symbol>;
    /// What kind of source this is, for `symbol_source`.
    fn source(&self) -> SymbolSource;
    /// A warning for the report when a look-up failed inside the reader (a
    /// damaged file): the first such failure.
    fn failure(&self) -> Option<String> {
        None
    }
}

/// Function start addresses (RVA) with names and, when known, sizes: what an
/// export table or ELF symbol table gives.
#[derive(Debug, Default)]
pub struct AddressTable {
    /// Sorted by start.
    entries: Vec<(u64, Option<u64>, String)>,
    source: Option<SymbolSource>,
    /// Where the table ends (size of the image or of its code); addresses
    /// past it get no name rather than the last entry's.
    limit: u64,
    /// Function extents of the image, when it has them (PE x64): an export
    /// name is certain only for addresses in the function it starts.
    extents: FunctionExtents,
    /// The names are as the file spells them, undecorated when looked up
    /// (an ELF symbol table holds hundreds of thousands of names, of which
    /// a dump needs a few).
    undecorate: bool,
}

/// How far past an unsized symbol (no extent known at all) an address may
/// lie and still get its name, as a guess.
const UNSIZED_REACH: u64 = 0x1000;

impl AddressTable {
    pub fn new(
        mut entries: Vec<(u64, Option<u64>, String)>,
        source: SymbolSource,
        limit: u64,
    ) -> Self {
        entries.retain(|(_, _, name)| !name.is_empty());
        entries.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.2.cmp(&b.2)));
        entries.dedup_by_key(|e| e.0);
        AddressTable {
            entries,
            source: Some(source),
            limit,
            extents: FunctionExtents::default(),
            undecorate: false,
        }
    }

    /// A table of names as the file spells them (mangled), undecorated
    /// only when looked up: the same answers as `new` with every name
    /// undecorated first. Of several names at one address, the one first
    /// in order once undecorated is kept, as `new` keeps it.
    pub(crate) fn of_raw_names(
        mut entries: Vec<(u64, Option<u64>, String)>,
        source: SymbolSource,
        limit: u64,
    ) -> Self {
        entries.retain(|(_, _, name)| !name.is_empty());
        entries.sort_unstable_by_key(|e| e.0);
        let kept = entries
            .chunk_by(|a, b| a.0 == b.0)
            .filter_map(|same_start| match same_start {
                [one] => Some(one.clone()),
                // Several names at one address: the first once undecorated.
                several => several.iter().min_by_key(|e| demangle(&e.2)).cloned(),
            })
            .collect();
        AddressTable {
            entries: kept,
            source: Some(source),
            limit,
            extents: FunctionExtents::default(),
            undecorate: true,
        }
    }

    /// The start of the entry `lookup` would name `rva` after, without
    /// its name.
    pub(crate) fn start_of(&self, rva: u64) -> Option<u64> {
        self.find_entry(rva).map(|(index, _)| self.entries[index].0)
    }

    /// The same table, checked against the image's function extents.
    pub(crate) fn with_extents(mut self, extents: FunctionExtents) -> Self {
        self.extents = extents;
        self
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Adds every address at which `lookup`'s answer may change: where
    /// entries start, the address after (a name at its own address is
    /// certain), where sized ones end and unsized ones stop reaching, and
    /// where the table and the image's function extents end.
    pub(crate) fn boundaries(&self, points: &mut Vec<u64>) {
        for &(start, size, _) in &self.entries {
            let end = match size {
                Some(size) => start.saturating_add(size.max(1)),
                None => start.saturating_add(UNSIZED_REACH + 1),
            };
            points.extend([start, start.saturating_add(1), end]);
        }
        for &(begin, end, _) in &self.extents.entries {
            points.extend([begin, end]);
        }
        points.push(self.limit);
    }
}

impl AddressTable {
    /// The number of the entry naming `rva`, and whether its name is only
    /// a guess.
    fn find_entry(&self, rva: u64) -> Option<(usize, bool)> {
        if rva >= self.limit {
            return None;
        }
        let index = self
            .entries
            .partition_point(|e| e.0 <= rva)
            .checked_sub(1)?;
        let (start, size, _) = &self.entries[index];
        let guessed = match size {
            // A sized symbol (ELF) covers only its own bytes.
            Some(size) if rva >= start.saturating_add((*size).max(1)) => return None,
            Some(_) => false,
            // An export covers up to the next one, which is only certain
            // when the image's extents say the address is in the function
            // the export starts.
            None if self.source == Some(SymbolSource::Exports) && !self.extents.is_empty() => {
                self.extents.function_start(rva) != Some(*start)
            }
            None if self.source == Some(SymbolSource::Exports) => rva != *start,
            // An unsized ELF symbol (`_fini`, assembly labels) says nothing
            // of its end: far past it, no name at all.
            None if rva - start > UNSIZED_REACH => return None,
            None => rva != *start,
        };
        Some((index, guessed))
    }
}

impl NativeSymbols for AddressTable {
    fn lookup(&self, rva: u64) -> Option<Symbol> {
        let (index, guessed) = self.find_entry(rva)?;
        let (start, _, name) = &self.entries[index];
        Some(Symbol {
            function: if self.undecorate {
                demangle(name)
            } else {
                name.clone()
            },
            function_rva: *start,
            file: None,
            line: None,
            inlines: Vec::new(),
            guessed,
        })
    }

    fn source(&self) -> SymbolSource {
        self.source.unwrap_or(SymbolSource::Exports)
    }
}

/// Undecorates names in a mangling scheme (MSVC `?...`, Itanium C++
/// `_Z...`, Rust) and leaves every other name exactly as it is:
/// `__run_exit_handlers` stays `__run_exit_handlers`. A name that does not
/// undecorate is kept as written.
pub(crate) fn demangle(name: &str) -> String {
    if name.starts_with('?') {
        use msvc_demangler::DemangleFlags as F;
        let flags = F::NO_FUNCTION_RETURNS
            | F::NO_MS_KEYWORDS
            | F::NO_ACCESS_SPECIFIERS
            | F::NO_MEMBER_TYPE
            | F::NO_CLASS_TYPE
            | F::SPACE_AFTER_COMMA
            | F::HUG_TYPE;
        msvc_demangler::demangle(name, flags).unwrap_or_else(|_| name.to_string())
    } else if name.starts_with("_Z") || name.starts_with("_R") || name.starts_with("__Z") {
        addr2line::demangle_auto(name.into(), None).into_owned()
    } else {
        name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_underscores_survive_demangling() {
        for name in [
            "__hipUnregisterFatBinary",
            "__run_exit_handlers",
            "_wait_for_streams",
            "_",
            "__",
        ] {
            assert_eq!(demangle(name), name);
        }
        assert_eq!(demangle("_ZN3foo3barEv"), "foo::bar()");
    }

    #[test]
    fn msvc_names_are_undecorated() {
        assert_eq!(
            demangle("?FreeEnvironment@node@@YAXPEAVEnvironment@1@@Z"),
            "node::FreeEnvironment(node::Environment*)"
        );
        assert_eq!(
            demangle("?Release@EpCatalog@winml@@QEAAJXZ"),
            "winml::EpCatalog::Release(void)"
        );
        // Not a valid decoration: kept as written.
        assert_eq!(demangle("?not valid"), "?not valid");
        assert_eq!(
            demangle("_ZN3amd9HostQueueC1EiPNS_3pal10VirtualGPUE"),
            "amd::HostQueue::HostQueue(int, amd::pal::VirtualGPU*)"
        );
    }

    #[test]
    fn export_names_past_their_function_are_guesses() {
        // Two exports; .pdata says 0x1000-0x1040 is the first one's
        // function and 0x1040-0x1050 an internal one.
        let table = AddressTable::new(
            vec![
                (0x1000, None, "hipFree".into()),
                (0x2000, None, "hipMalloc".into()),
            ],
            SymbolSource::Exports,
            0x6000,
        )
        .with_extents(FunctionExtents::new(vec![
            (0x1000, 0x1040, 0x1000),
            (0x1040, 0x1050, 0x1040),
            (0x2000, 0x2100, 0x2000),
            // A chained part of hipMalloc, placed after it.
            (0x3000, 0x3010, 0x2000),
        ]));
        assert!(!table.lookup(0x1020).unwrap().guessed);
        assert!(table.lookup(0x1045).unwrap().guessed);
        assert!(!table.lookup(0x3008).unwrap().guessed);
        assert_eq!(table.lookup(0x3008).unwrap().function, "hipMalloc");
        // Without extents every name past the export's own address guesses.
        let bare = AddressTable::new(
            vec![(0x1000, None, "f".into())],
            SymbolSource::Exports,
            0x6000,
        );
        assert!(!bare.lookup(0x1000).unwrap().guessed);
        assert!(bare.lookup(0x1001).unwrap().guessed);
        // An unsized ELF symbol names nothing far past it.
        let elf = AddressTable::new(
            vec![(0x100, None, "_fini".into())],
            SymbolSource::Symtab,
            0x30_0000,
        );
        assert!(elf.lookup(0x110).unwrap().guessed);
        assert_eq!(elf.lookup(0x22_c487), None);
    }

    #[test]
    fn export_tables_name_the_nearest_export_before_an_address() {
        let table = AddressTable::new(
            vec![
                (0x1000, None, "__hipUnregisterFatBinary".into()),
                (0x1050, None, "hipStreamSynchronize".into()),
            ],
            SymbolSource::Exports,
            0x6000,
        );
        assert_eq!(table.lookup(0xfff), None);
        assert_eq!(
            table.lookup(0x1031).unwrap().function,
            "__hipUnregisterFatBinary"
        );
        assert_eq!(table.lookup(0x1050).unwrap().function_rva, 0x1050);
        assert_eq!(table.lookup(0x6000), None);

        let sized = AddressTable::new(
            vec![(0x4a9, Some(0xf), "__run_exit_handlers".into())],
            SymbolSource::Symtab,
            0x2000,
        );
        assert!(sized.lookup(0x4b7).is_some());
        assert_eq!(sized.lookup(0x4b8), None);
    }
}
