//! ELF binaries and their separate debug files: build id, .gnu_debuglink,
//! DWARF (read with addr2line), and the symbol tables.

use std::borrow::Cow;
use std::sync::Arc;

use gimli::{EndianReader, RunTimeEndian};
use object::{Object as _, ObjectSection as _, ObjectSegment as _, ObjectSymbol as _, SymbolKind};

use super::guarded::Guarded;
use super::index::{within_limit, Boundaries};
use super::{AddressTable, NativeSymbols, Symbol};
use crate::model::SymbolSource;

type Reader = EndianReader<RunTimeEndian, Section>;

/// Bytes that stay where they are for as long as they live: a file's
/// memory map or a heap buffer, neither changed once made. `Section`'s
/// `StableDeref` promise rests on this, which is why there are only these
/// two kinds rather than any `AsRef<[u8]>`.
pub enum StableBytes {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl StableBytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            StableBytes::Mapped(map) => map,
            StableBytes::Owned(bytes) => bytes,
        }
    }
}

impl From<memmap2::Mmap> for StableBytes {
    fn from(map: memmap2::Mmap) -> Self {
        StableBytes::Mapped(map)
    }
}

impl From<Vec<u8>> for StableBytes {
    fn from(bytes: Vec<u8>) -> Self {
        StableBytes::Owned(bytes)
    }
}

/// One DWARF section's bytes: a range of the mapped file, or the section
/// unpacked (SHF_COMPRESSED). Not copied: only the pages addr2line reads
/// are read.
#[derive(Clone)]
pub struct Section {
    bytes: Arc<StableBytes>,
    start: usize,
    len: usize,
}

impl std::fmt::Debug for Section {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Section({} bytes at {:#x})", self.len, self.start)
    }
}

impl std::ops::Deref for Section {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes.as_slice()[self.start..self.start + self.len]
    }
}

// SAFETY: `deref` returns a range of a `StableBytes` behind an `Arc`: a
// memory map (its address is fixed until it is unmapped, on drop) or a
// `Vec`'s heap buffer (fixed while the `Vec` is not changed, and nothing
// can change it behind a shared `Arc`). Moving a `Section` moves the `Arc`
// pointer only, so the bytes stay where they are while it lives.
unsafe impl stable_deref_trait::StableDeref for Section {}
// SAFETY: a clone shares the same `Arc<StableBytes>` and the same range,
// so it derefs to the very same bytes as the original.
unsafe impl stable_deref_trait::CloneStableDeref for Section {}

/// What an ELF file says about itself, and the names it holds.
pub struct ElfInfo {
    pub build_id: Option<Vec<u8>>,
    /// The separate debug file's name, from `.gnu_debuglink`.
    pub debuglink: Option<String>,
    /// Whether it carries DWARF line and function information.
    pub has_dwarf: bool,
    /// The lowest address a PT_LOAD segment asks for, page-aligned: where
    /// the module's base lies in the file's own address space.
    pub bias: u64,
    /// `.symtab` functions (an unstripped binary or a debug file).
    pub symtab: AddressTable,
    /// `.dynsym` functions: what a stripped shared object still exports.
    pub dynsym: AddressTable,
}

/// Reads an ELF file's identity and symbol tables. `Err` says why it is not
/// a usable ELF file.
pub fn read_file(data: &[u8]) -> Result<ElfInfo, String> {
    let mut info = read_identity(data)?;
    read_tables(data, &mut info);
    Ok(info)
}

/// Reads an ELF file's identity only: its symbol tables are left empty
/// (a big binary has hundreds of thousands of symbols, which a file read
/// through its index, or only checked, does not need).
pub(crate) fn read_identity(data: &[u8]) -> Result<ElfInfo, String> {
    let file = object::File::parse(data).map_err(|e| e.to_string())?;
    if file.format() != object::BinaryFormat::Elf {
        return Err(format!("not an ELF file ({:?})", file.format()));
    }
    let build_id = file.build_id().ok().flatten().map(<[u8]>::to_vec);
    let debuglink = file
        .gnu_debuglink()
        .ok()
        .flatten()
        .map(|(name, _crc)| String::from_utf8_lossy(name).into_owned());
    let has_dwarf = file
        .section_by_name(".debug_info")
        .is_some_and(|s| s.size() > 0 && s.kind() != object::SectionKind::UninitializedData);
    let bias = file.segments().map(|s| s.address()).min().unwrap_or(0) & !0xfff;
    Ok(ElfInfo {
        build_id,
        debuglink,
        has_dwarf,
        bias,
        symtab: AddressTable::default(),
        dynsym: AddressTable::default(),
    })
}

/// Reads the symbol tables of the ELF file `data` into `info` (its
/// identity, read by [`read_identity`]).
pub(crate) fn read_tables(data: &[u8], info: &mut ElfInfo) {
    let Ok(file) = object::File::parse(data) else {
        return;
    };
    let bias = info.bias;
    let limit = file
        .segments()
        .map(|s| s.address().saturating_add(s.size()))
        .max()
        .unwrap_or(u64::MAX)
        .saturating_sub(bias);
    let table = |symbols: object::SymbolIterator<'_, '_>, source| {
        let entries = symbols
            .filter(|s| s.kind() == SymbolKind::Text && s.is_definition() && s.address() >= bias)
            .filter_map(|s| {
                let name = s.name().ok()?;
                Some((
                    s.address() - bias,
                    (s.size() > 0).then_some(s.size()),
                    name.to_string(),
                ))
            })
            .collect();
        AddressTable::of_raw_names(entries, source, limit)
    };
    info.symtab = table(file.symbols(), SymbolSource::Symtab);
    info.dynsym = table(file.dynamic_symbols(), SymbolSource::Exports);
}

/// DWARF of one ELF file, for lookups.
pub struct Dwarf {
    /// A reader's panic on a damaged file costs one look-up, not the file.
    context: Guarded<addr2line::Context<Reader>>,
    /// The sections the context reads, for its index's boundaries.
    sections: Arc<gimli::Dwarf<Reader>>,
    bias: u64,
    /// Function starts, for the offset into the function (DWARF frames name
    /// functions but do not give their start).
    symtab: Arc<AddressTable>,
}

impl Dwarf {
    /// Loads the DWARF sections of `file` (an ELF file with `.debug_info`,
    /// usually mapped, named `origin` in warnings): kept, and read in place.
    pub fn load(
        file: impl Into<StableBytes>,
        info: ElfInfo,
        origin: &str,
    ) -> Result<Dwarf, String> {
        let map = Arc::new(file.into());
        let data: &[u8] = map.as_slice();
        let file = object::File::parse(data).map_err(|e| e.to_string())?;
        let endian = if file.is_little_endian() {
            RunTimeEndian::Little
        } else {
            RunTimeEndian::Big
        };
        let whole = data.as_ptr() as usize..data.as_ptr() as usize + data.len();
        let load = |id: gimli::SectionId| -> Result<Reader, gimli::Error> {
            let bytes: Cow<'_, [u8]> = match file.section_by_name(id.name()) {
                Some(section) => section.uncompressed_data().unwrap_or(Cow::Borrowed(&[])),
                None => Cow::Borrowed(&[]),
            };
            let section = match bytes {
                // A range of the map: where it starts in the file.
                Cow::Borrowed(slice) if whole.contains(&(slice.as_ptr() as usize)) => Section {
                    bytes: map.clone(),
                    start: slice.as_ptr() as usize - whole.start,
                    len: slice.len(),
                },
                other => Section {
                    len: other.len(),
                    bytes: Arc::new(StableBytes::Owned(other.into_owned())),
                    start: 0,
                },
            };
            Ok(EndianReader::new(section, endian))
        };
        let sections = Arc::new(gimli::Dwarf::load(load).map_err(|e| e.to_string())?);
        let context =
            addr2line::Context::from_arc_dwarf(sections.clone()).map_err(|e| e.to_string())?;
        Ok(Dwarf {
            context: Guarded::new(context, "DWARF", origin.to_string()),
            sections,
            bias: info.bias,
            symtab: Arc::new(info.symtab),
        })
    }
}

impl NativeSymbols for Dwarf {
    fn lookup(&self, rva: u64) -> Option<Symbol> {
        self.context.with(rva, |context| self.symbol(context, rva))
    }

    fn source(&self) -> SymbolSource {
        SymbolSource::Dwarf
    }

    fn failure(&self) -> Option<String> {
        self.context.failure()
    }
}

impl Dwarf {
    /// The DWARF's answer for `rva`, completed from the symbol table.
    fn symbol(&self, context: &addr2line::Context<Reader>, rva: u64) -> Option<Symbol> {
        // addr2line probes [probe, probe + 1): the last address would
        // overflow inside it (found by fuzz/read_elf).
        let probe = rva.checked_add(self.bias).filter(|&p| p < u64::MAX)?;
        let mut found = Vec::new();
        if let Ok(mut frames) = context.find_frames(probe).skip_all_loads() {
            while let Ok(Some(frame)) = frames.next() {
                let Some(function) = frame.function.as_ref() else {
                    continue;
                };
                let name = match function.raw_name() {
                    Ok(raw) => addr2line::demangle_auto(raw, function.language).into_owned(),
                    Err(_) => continue,
                };
                let (file, line) = frame
                    .location
                    .map(|l| (l.file.map(str::to_string), l.line))
                    .unwrap_or((None, None));
                found.push((name, file, line));
            }
        }
        // Innermost first, the containing function last.
        let Some((mut function, file, line)) = found.pop() else {
            // No DWARF function here: the symbol table may still know.
            return self.symtab.lookup(rva);
        };
        // GCC gives a constructor or destructor no linkage name, so its
        // DWARF name is bare (`~PluginRegistry`): the symbol table's name
        // of the same function is the qualified one.
        if !function.contains("::") {
            if let Some(qualified) = self.symtab.lookup(rva).filter(|s| !s.guessed) {
                let bare = crate::model::bare_name(&qualified.function);
                if bare
                    .strip_suffix(function.as_str())
                    .is_some_and(|scope| scope.ends_with("::"))
                {
                    function = qualified.function;
                }
            }
        }
        Some(Symbol {
            function,
            function_rva: self.symtab.start_of(rva).unwrap_or(rva),
            file,
            line,
            inlines: found.into_iter().rev().collect(),
            guessed: false,
        })
    }
}

impl Boundaries for Dwarf {
    /// Every RVA at which addr2line's answer, or the symbol table's, may
    /// change: the ends of compilation units' ranges (theirs and
    /// `.debug_aranges`'), of every DIE's ranges (functions and inlined
    /// calls among them), every line row's address (a row runs to the
    /// next), and the symbol table's own.
    fn boundaries(&self, limit: usize) -> Result<Vec<u64>, String> {
        let dwarf = &*self.sections;
        let text = |e: gimli::Error| e.to_string();
        let mut addresses = Vec::new();
        let mut aranges = dwarf.debug_aranges.headers();
        while let Some(header) = aranges.next().map_err(text)? {
            let mut entries = header.entries();
            while let Ok(Some(entry)) = entries.next() {
                let range = entry.range();
                addresses.extend([range.begin, range.end]);
            }
        }
        let mut units = dwarf.units();
        while let Some(header) = units.next().map_err(text)? {
            within_limit(&addresses, limit)?;
            // A unit the reader cannot parse gives no answers to bound.
            let Ok(unit) = dwarf.unit(header) else {
                continue;
            };
            if let Ok(mut ranges) = dwarf.unit_ranges(&unit) {
                while let Ok(Some(range)) = ranges.next() {
                    addresses.extend([range.begin, range.end]);
                }
            }
            let mut entries = unit.entries();
            while let Ok(Some((_, entry))) = entries.next_dfs() {
                if let Ok(mut ranges) = dwarf.die_ranges(&unit, entry) {
                    while let Ok(Some(range)) = ranges.next() {
                        addresses.extend([range.begin, range.end]);
                    }
                }
            }
            if let Some(program) = unit.line_program.clone() {
                let mut rows = program.rows();
                while let Ok(Some((_, row))) = rows.next_row() {
                    addresses.push(row.address());
                }
            }
        }
        let mut points: Vec<u64> = addresses
            .into_iter()
            .filter_map(|a| a.checked_sub(self.bias))
            .collect();
        self.symtab.boundaries(&mut points);
        Ok(points)
    }

    fn fresh(&self) -> Result<Box<dyn NativeSymbols>, String> {
        let context =
            addr2line::Context::from_arc_dwarf(self.sections.clone()).map_err(|e| e.to_string())?;
        Ok(Box::new(Dwarf {
            context: Guarded::new(context, "DWARF", self.context.file().to_string()),
            sections: self.sections.clone(),
            bias: self.bias,
            symtab: self.symtab.clone(),
        }))
    }
}
