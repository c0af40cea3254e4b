//! The persistent index of a big PDB or DWARF file.
//!
//! The readers open such a file quickly but answer its first address in a
//! module slowly: pdb-addr2line reads the type streams to name functions,
//! addr2line parses a whole compilation unit's lines and functions, and
//! both read pages scattered over a file of hundreds of MB. The index
//! holds the reader's own answer (function, start, file, line, inlined
//! frames, guess flag) for every range of addresses over which that
//! answer stays the same; a later run reads one range entry and one
//! answer per address, from a few pages.
//!
//! The index holds no reading of the file of its own: it is made by asking
//! the reader at every address where its answer can change (a boundary:
//! the start or end of a procedure, public symbol, line record, inline
//! site or section contribution of a PDB; of a compilation unit, DIE
//! range, line row or ELF symbol of a DWARF file), and is checked before
//! it is written by asking the reader again at the last address of every
//! range (of a sample of them in a big file): a range whose answer changes
//! inside it means a boundary was missed, and no index is written.
//!
//! Layout: the checked container of `indexfile`, with five sections:
//! ranges (`start u64, answer u32, 0 u32`, sorted; a range runs to the
//! next one's start; answer `NONE`: no name), answers (`function start
//! u64, name u32, file u32, line u32, flags u32, first inline u32, inline
//! count u32`), inlined frames (`name u32, file u32, line u32, flags
//! u32`), the string table and the strings (numbers name strings, `NONE`
//! for none). Flags: 1 the name is a guess, 2 a line is known.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::{NativeSymbols, Symbol};
use crate::model::SymbolSource;
use crate::symbols::indexfile::{
    self, u32_at, u64_at, Broken, Kind, Mapped, SourceStamp, Strings, NONE, STRING_ENTRY,
};
use crate::symbols::log::Log;

/// A reader that can say where its answers may change.
pub trait Boundaries: NativeSymbols {
    /// Addresses (RVAs, any order, repeats allowed) such that the reader
    /// answers alike for every address from one of them up to the next.
    fn boundaries(&self) -> Result<Vec<u64>, String>;
}

const RANGES: usize = 0;
const ANSWERS: usize = 1;
const INLINES: usize = 2;
const STRING_TABLE: usize = 3;
const STRING_BYTES: usize = 4;
const SECTIONS: usize = 5;

const RANGE_ENTRY: usize = 16;
const ANSWER_ENTRY: usize = 32;
const INLINE_ENTRY: usize = 16;

const GUESSED: u32 = 1;
const HAS_LINE: u32 = 2;

/// Ranges checked again before writing, at most (all of them in a file
/// with fewer).
const CHECKED: usize = 100_000;

/// The index kind of a reader's files: a PDB's index is never read as a
/// DWARF file's. Bumped whenever the layout or what is stored changes (or
/// the reader whose answers it records).
fn kind(source: SymbolSource) -> Kind<'static> {
    let magic = match source {
        SymbolSource::Pdb => b"DTPDBIDX",
        _ => b"DTDWFIDX",
    };
    Kind {
        magic,
        version: 1,
        sections: SECTIONS,
    }
}

/// Loads the reader of a file, when its index cannot serve.
pub type Loader = Box<dyn Fn() -> Option<Arc<dyn NativeSymbols>> + Send + Sync>;

/// A file read through its index.
pub struct Indexed {
    file: Mapped,
    source: SymbolSource,
    index_path: PathBuf,
    load: Loader,
    /// The reader, loaded if the index fails a check mid-run.
    fallback: OnceLock<Option<Arc<dyn NativeSymbols>>>,
}

impl NativeSymbols for Indexed {
    fn lookup(&self, rva: u64) -> Option<Symbol> {
        match self.answer(rva) {
            Ok(answer) => answer,
            Err(_) => self.fallback().and_then(|reader| reader.lookup(rva)),
        }
    }

    fn source(&self) -> SymbolSource {
        self.source
    }
}

impl Indexed {
    /// The reader itself, loaded once; the broken index is removed so that
    /// the next run makes it again.
    fn fallback(&self) -> Option<&Arc<dyn NativeSymbols>> {
        self.fallback
            .get_or_init(|| {
                let _ = std::fs::remove_file(&self.index_path);
                (self.load)()
            })
            .as_ref()
    }

    fn answer(&self, rva: u64) -> Result<Option<Symbol>, Broken> {
        let n = self.file.partition(RANGES, RANGE_ENTRY, rva, false)?;
        let Some(n) = n.checked_sub(1) else {
            return Ok(None);
        };
        let answer = u32_at(self.file.entry(RANGES, RANGE_ENTRY, n)?, 8);
        if answer == NONE {
            return Ok(None);
        }
        let a = self.file.entry(ANSWERS, ANSWER_ENTRY, answer as usize)?;
        let (function_rva, name, file) = (u64_at(a, 0), u32_at(a, 8), u32_at(a, 12));
        let (line, flags, first, count) = (u32_at(a, 16), u32_at(a, 20), u32_at(a, 24), u32_at(a, 28));
        let function = self
            .string(name)?
            .ok_or_else(|| self.file.fail(format!("answer {answer} has no name")))?;
        let mut inlines = Vec::with_capacity(count.min(64) as usize);
        for i in 0..count {
            let n = first
                .checked_add(i)
                .ok_or_else(|| self.file.fail(format!("answer {answer}: bad inlines")))?;
            let e = self.file.entry(INLINES, INLINE_ENTRY, n as usize)?;
            let name = self.string(u32_at(e, 0))?;
            let name = name.ok_or_else(|| self.file.fail(format!("inline {n} has no name")))?;
            let line = (u32_at(e, 12) & HAS_LINE != 0).then(|| u32_at(e, 8));
            inlines.push((name, self.string(u32_at(e, 4))?, line));
        }
        Ok(Some(Symbol {
            function,
            function_rva,
            file: self.string(file)?,
            line: (flags & HAS_LINE != 0).then_some(line),
            inlines,
            guessed: flags & GUESSED != 0,
        }))
    }

    fn string(&self, n: u32) -> Result<Option<String>, Broken> {
        if n == NONE {
            return Ok(None);
        }
        let e = self.file.entry(STRING_TABLE, STRING_ENTRY, n as usize)?;
        let len = usize::try_from(u64_at(e, 8)).map_err(|_| self.file.fail("bad string".into()))?;
        let bytes = self.file.within(STRING_BYTES, u64_at(e, 0), len)?;
        String::from_utf8(bytes.to_vec())
            .map(Some)
            .map_err(|_| self.file.fail("a string is not UTF-8".into()))
    }
}

/// An answer with its strings numbered: what tells answers apart.
#[derive(Hash, PartialEq, Eq)]
struct Key {
    function_rva: u64,
    name: u32,
    file: u32,
    line: Option<u32>,
    guessed: bool,
    inlines: Vec<(u32, u32, Option<u32>)>,
}

/// The tables of an index being made.
#[derive(Default)]
struct Tables {
    strings: Strings,
    numbers: HashMap<Key, u32>,
    answers: Vec<u8>,
    inlines: Vec<u8>,
    inline_count: u32,
}

impl Tables {
    fn key(&mut self, symbol: &Symbol) -> Key {
        let mut string = |s: Option<&String>| s.map_or(NONE, |s| self.strings.number(s));
        Key {
            function_rva: symbol.function_rva,
            name: string(Some(&symbol.function)),
            file: string(symbol.file.as_ref()),
            line: symbol.line,
            guessed: symbol.guessed,
            inlines: symbol
                .inlines
                .iter()
                .map(|(name, file, line)| (string(Some(name)), string(file.as_ref()), *line))
                .collect(),
        }
    }

    /// The number of the answer `symbol`, added if new.
    fn number(&mut self, symbol: Option<&Symbol>) -> Result<u32, String> {
        let Some(symbol) = symbol else {
            return Ok(NONE);
        };
        let key = self.key(symbol);
        if let Some(&n) = self.numbers.get(&key) {
            return Ok(n);
        }
        let n = u32::try_from(self.numbers.len())
            .ok()
            .filter(|&n| n != NONE)
            .ok_or("too many answers")?;
        let count = u32::try_from(key.inlines.len()).map_err(|_| "too many inlines")?;
        let flags = |line: Option<u32>| if line.is_some() { HAS_LINE } else { 0 };
        let out = &mut self.answers;
        out.extend_from_slice(&key.function_rva.to_le_bytes());
        for field in [
            key.name,
            key.file,
            key.line.unwrap_or(0),
            flags(key.line) | if key.guessed { GUESSED } else { 0 },
            self.inline_count,
            count,
        ] {
            out.extend_from_slice(&field.to_le_bytes());
        }
        for &(name, file, line) in &key.inlines {
            for field in [name, file, line.unwrap_or(0), flags(line)] {
                self.inlines.extend_from_slice(&field.to_le_bytes());
            }
        }
        self.inline_count = self
            .inline_count
            .checked_add(count)
            .ok_or("too many inlines")?;
        self.numbers.insert(key, n);
        Ok(n)
    }
}

/// Writes the index of `reader` (its file stamped `stamp`, identity `id`)
/// to `path`: every range over which its answer stays the same, checked
/// again before writing. Returns the number of ranges; `Err` says why no
/// index was written.
pub fn build(
    reader: &dyn Boundaries,
    path: &Path,
    stamp: SourceStamp,
    id: &str,
) -> Result<usize, String> {
    let mut points = reader.boundaries()?;
    points.push(0);
    points.sort_unstable();
    points.dedup();
    let mut tables = Tables::default();
    // (start, answer), each answer differing from the one before.
    let mut ranges: Vec<(u64, u32)> = Vec::new();
    for &point in &points {
        let answer = tables.number(reader.lookup(point).as_ref())?;
        if ranges.last().is_none_or(|&(_, last)| last != answer) {
            ranges.push((point, answer));
        }
    }
    let step = ranges.len().div_ceil(CHECKED).max(1);
    for (n, pair) in ranges.windows(2).enumerate() {
        let ((start, answer), (next, _)) = (pair[0], pair[1]);
        if n % step != 0 && n + 2 != ranges.len() {
            continue;
        }
        let last = next - 1;
        if tables.number(reader.lookup(last).as_ref())? != answer {
            return Err(format!(
                "the answer at {last:#x} differs from the one at {start:#x}: a boundary between them is unknown"
            ));
        }
    }
    let mut range_bytes = Vec::with_capacity(ranges.len() * RANGE_ENTRY);
    for (start, answer) in &ranges {
        range_bytes.extend_from_slice(&start.to_le_bytes());
        range_bytes.extend_from_slice(&answer.to_le_bytes());
        range_bytes.extend_from_slice(&0u32.to_le_bytes());
    }
    let Tables {
        strings,
        answers,
        inlines,
        ..
    } = tables;
    indexfile::write(
        path,
        kind(reader.source()),
        stamp,
        id,
        &[range_bytes, answers, inlines, strings.table, strings.bytes],
    )?;
    Ok(ranges.len())
}

/// The reader of the file at `source_path` (identity `id`, of kind
/// `source`), through its index at `index_path` when that one is valid;
/// else loaded by `load`, and indexed for later runs.
pub(in crate::symbols) fn open(
    source_path: &Path,
    index_path: PathBuf,
    source: SymbolSource,
    id: &str,
    load: impl Fn() -> Option<Arc<dyn Boundaries>> + Send + Sync + 'static,
    log: &mut Log,
) -> Option<Arc<dyn NativeSymbols>> {
    let shown = source_path.display();
    let Some(stamp) = SourceStamp::of_path(source_path) else {
        return load().map(|reader| reader as Arc<dyn NativeSymbols>);
    };
    match Mapped::open(&index_path, kind(source), stamp, id) {
        Ok(file) => {
            log.tried(format!(
                "{shown}: read through its index {}",
                index_path.display()
            ));
            return Some(Arc::new(Indexed {
                file,
                source,
                index_path,
                load: Box::new(move || load().map(|reader| reader as Arc<dyn NativeSymbols>)),
                fallback: OnceLock::new(),
            }));
        }
        Err(Broken(why)) if index_path.exists() => log.tried(format!(
            "{}: not used ({why}), made again",
            index_path.display()
        )),
        Err(_) => {}
    }
    let reader = load()?;
    match build(reader.as_ref(), &index_path, stamp, id) {
        Ok(ranges) => log.tried(format!(
            "{shown}: indexed for later runs in {} ({ranges} ranges)",
            index_path.display()
        )),
        Err(why) => log.warnings.push(format!(
            "{shown}: no symbol index written ({why}); later runs read it whole"
        )),
    }
    Some(reader as Arc<dyn NativeSymbols>)
}
