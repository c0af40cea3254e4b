//! Names from native files: PDBs, DWARF, and export tables.
//!
//! Each reader is loaded once, checked against the module's identity by the
//! caller, and then answers lookups by offset from the module's base (an
//! RVA). Readers are `Send + Sync` so that one loaded file serves every dump
//! of a run, in any thread. Every name is returned exactly as the file
//! spells it: C names keep their leading underscores, and only names in a
//! mangling scheme (C++ `_Z`, Rust) are demangled.

pub mod elf;
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
}

/// A loaded source of names for one module.
pub trait NativeSymbols: Send + Sync {
    /// Names the function holding `rva`, if this source can.
    fn lookup(&self, rva: u64) -> Option<Symbol>;
    /// What kind of source this is, for `symbol_source`.
    fn source(&self) -> SymbolSource;
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
}

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
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

impl NativeSymbols for AddressTable {
    fn lookup(&self, rva: u64) -> Option<Symbol> {
        if rva >= self.limit {
            return None;
        }
        let index = self
            .entries
            .partition_point(|e| e.0 <= rva)
            .checked_sub(1)?;
        let (start, size, name) = &self.entries[index];
        // A sized symbol (ELF) covers only its own bytes; an export (no size)
        // covers everything up to the next one.
        if size.is_some_and(|size| rva >= start.saturating_add(size.max(1))) {
            return None;
        }
        Some(Symbol {
            function: name.clone(),
            function_rva: *start,
            file: None,
            line: None,
            inlines: Vec::new(),
        })
    }

    fn source(&self) -> SymbolSource {
        self.source.unwrap_or(SymbolSource::Exports)
    }
}

/// Demangles names in a mangling scheme (Itanium C++ `_Z...`, Rust) and
/// leaves every other name exactly as it is: `__run_exit_handlers` stays
/// `__run_exit_handlers`.
pub fn demangle(name: &str) -> String {
    if name.starts_with("_Z") || name.starts_with("_R") || name.starts_with("__Z") {
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
