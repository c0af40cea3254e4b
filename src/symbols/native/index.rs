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
//! Making the index reads the whole file, many times what one run's
//! reading costs: it is made on a file's second use, on another thread
//! while the analysis goes on ([`Planned::write`]).
//!
//! Why our own format rather than Sentry's SymCache (symbolic-symcache),
//! the usual answer: a SymCache is made by symbolic-debuginfo's own PDB and
//! DWARF parsers, so its answers would be symbolic's reading of the file,
//! not those of the readers a run without the index uses (names, inline
//! handling, our guess rules); "the same frames with and without the
//! index" could not hold by construction. It also stores 32-bit addresses
//! and names, lines and inlines only, and brings symbolic-debuginfo's
//! dependency tree. This index records our readers' own answers and checks
//! them. Unwind data needs no index here: PE `.pdata` and ELF
//! `.eh_frame_hdr` are already binary-searched in place.
//!
//! Layout: the checked container of `indexfile`, with five sections:
//! ranges (`start u64, answer u32, 0 u32`, sorted; a range runs to the
//! next one's start; answer `NONE`: no name), answers (`function start
//! u64, name u32, file u32, line u32, flags u32, first inline u32, inline
//! count u32`), inlined frames (`name u32, file u32, line u32, flags
//! u32`), the string table and the strings (numbers name strings, `NONE`
//! for none). Flags: 1 the name is a guess, 2 a line is known, 4 the
//! function start is the address asked about (its start field unused).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::{NativeSymbols, Symbol};
use crate::model::SymbolSource;
use crate::symbols::index_writes::IndexWrites;
use crate::symbols::indexfile::{
    self, u32_at, u64_at, Broken, IndexSettings, Kind, Mapped, SourceStamp, Strings, NONE,
    STRING_ENTRY,
};
use crate::symbols::log::Log;
use crate::symbols::paths;

/// A reader that can say where its answers may change.
pub trait Boundaries: NativeSymbols {
    /// Addresses (RVAs, any order, repeats allowed) such that the reader
    /// answers alike for every address from one of them up to the next;
    /// `Err` past about `limit` of them.
    fn boundaries(&self, limit: usize) -> Result<Vec<u64>, String>;

    /// Another reader of the same file with nothing read yet: the index is
    /// made with its own readers (the analysis keeps the first), each
    /// dropped after so many addresses, so that making it never holds the
    /// parse of the whole file.
    fn fresh(&self) -> Result<Box<dyn NativeSymbols>, String>;
}

/// Addresses asked of one reader while an index is made.
const PER_READER: usize = 100_000;

/// The most places where answers change that a file's index is made for:
/// past them (a file of several GB), making it would take minutes and
/// hold hundreds of MB at the end of a run, and the file is read itself.
const MAX_BOUNDARIES: usize = 32 << 20;

/// `Err` when `points` holds more than `limit`: the file is too big to
/// index.
pub(crate) fn within_limit(points: &[u64], limit: usize) -> Result<(), String> {
    if points.len() > limit {
        return Err(format!(
            "more than {limit} places where its answers change: too big to index"
        ));
    }
    Ok(())
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
/// The function is said to start at the address asked about (a DWARF
/// function the symbol table does not give a start for).
const STARTS_HERE: u32 = 4;

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
pub(crate) type Loader = Box<dyn Fn() -> Option<Arc<dyn NativeSymbols>> + Send + Sync>;

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

    fn failure(&self) -> Option<String> {
        self.fallback.get()?.as_ref()?.failure()
    }
}

impl Indexed {
    /// The reader itself, loaded once; the broken index is removed so that
    /// the next run makes it again.
    fn fallback(&self) -> Option<&Arc<dyn NativeSymbols>> {
        self.fallback
            .get_or_init(|| {
                let _ = std::fs::remove_file(&self.index_path);
                make_mark(&self.index_path);
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
        let (line, flags, first, count) =
            (u32_at(a, 16), u32_at(a, 20), u32_at(a, 24), u32_at(a, 28));
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
            function_rva: if flags & STARTS_HERE != 0 {
                rva
            } else {
                function_rva
            },
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

/// The tables of an index being made. An answer is numbered by its
/// encoding: a hash of it leads to the first answer so encoded (checked
/// byte for byte; an answer whose hash another one has is kept again).
#[derive(Default)]
struct Tables {
    strings: Strings,
    numbers: foldhash::HashMap<u64, u32>,
    answers: Vec<u8>,
    inlines: Vec<u8>,
    inline_count: u32,
    /// The answer being numbered: its entry without the first inline's
    /// number, then its inline entries.
    scratch: Vec<u8>,
    hasher: foldhash::fast::FixedState,
}

impl Tables {
    /// Encodes `symbol`, the answer for `rva`, into `scratch`.
    fn encode(&mut self, symbol: &Symbol, rva: u64) -> Result<(), String> {
        let mut string = |s: Option<&String>| s.map_or(NONE, |s| self.strings.number(s));
        let flags = |line: Option<u32>| if line.is_some() { HAS_LINE } else { 0 };
        let starts_here = symbol.function_rva == rva;
        let count = u32::try_from(symbol.inlines.len()).map_err(|_| "too many inlines")?;
        let header = [
            string(Some(&symbol.function)),
            string(symbol.file.as_ref()),
            symbol.line.unwrap_or(0),
            flags(symbol.line)
                | if starts_here { STARTS_HERE } else { 0 }
                | if symbol.guessed { GUESSED } else { 0 },
            count,
        ];
        let mut inlines = Vec::with_capacity(symbol.inlines.len() * 4);
        for (name, file, line) in &symbol.inlines {
            inlines.extend([
                string(Some(name)),
                string(file.as_ref()),
                line.unwrap_or(0),
                flags(*line),
            ]);
        }
        let start = if starts_here { 0 } else { symbol.function_rva };
        self.scratch.clear();
        self.scratch.extend_from_slice(&start.to_le_bytes());
        for field in header.into_iter().chain(inlines) {
            self.scratch.extend_from_slice(&field.to_le_bytes());
        }
        Ok(())
    }

    /// Whether answer `n` is encoded as `scratch`.
    fn is(&self, n: u32) -> bool {
        let at = n as usize * ANSWER_ENTRY;
        let Some(entry) = self.answers.get(at..at + ANSWER_ENTRY) else {
            return false;
        };
        let (first, count) = (u32_at(entry, 24) as usize, u32_at(entry, 28) as usize);
        let inlines = self
            .inlines
            .get(first * INLINE_ENTRY..(first + count) * INLINE_ENTRY);
        let (head, rest) = self.scratch.split_at(24);
        entry[..24] == *head && rest[..4] == entry[28..] && inlines == Some(&rest[4..])
    }

    /// The number of the answer `symbol` for `rva`, added if new.
    fn number(&mut self, symbol: Option<&Symbol>, rva: u64) -> Result<u32, String> {
        let Some(symbol) = symbol else {
            return Ok(NONE);
        };
        self.encode(symbol, rva)?;
        let hash = std::hash::BuildHasher::hash_one(&self.hasher, &self.scratch);
        if let Some(&n) = self.numbers.get(&hash) {
            if self.is(n) {
                return Ok(n);
            }
        }
        let n = u32::try_from(self.answers.len() / ANSWER_ENTRY)
            .ok()
            .filter(|&n| n != NONE)
            .ok_or("too many answers")?;
        let (head, rest) = self.scratch.split_at(24);
        let count = u32_at(rest, 0);
        self.answers.extend_from_slice(head);
        self.answers
            .extend_from_slice(&self.inline_count.to_le_bytes());
        self.answers.extend_from_slice(&rest[..4]);
        self.inlines.extend_from_slice(&rest[4..]);
        self.inline_count = self
            .inline_count
            .checked_add(count)
            .ok_or("too many inlines")?;
        self.numbers.entry(hash).or_insert(n);
        Ok(n)
    }
}

/// Fresh readers of one file, each asked about so many addresses.
struct Asking<'r> {
    of: &'r dyn Boundaries,
    reader: Option<Box<dyn NativeSymbols>>,
    asked: usize,
    per_reader: usize,
}

impl<'r> Asking<'r> {
    fn new(of: &'r dyn Boundaries, per_reader: usize) -> Self {
        Asking {
            of,
            reader: None,
            asked: 0,
            per_reader,
        }
    }

    fn lookup(&mut self, rva: u64) -> Result<Option<Symbol>, String> {
        if self.asked == self.per_reader {
            self.reader = None;
            self.asked = 0;
        }
        self.asked += 1;
        let reader = match &mut self.reader {
            Some(reader) => reader,
            empty => empty.insert(self.of.fresh()?),
        };
        Ok(reader.lookup(rva))
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
    build_within(reader, path, stamp, id, MAX_BOUNDARIES)
}

/// [`build`], for a file with at most `limit` boundaries.
fn build_within(
    reader: &dyn Boundaries,
    path: &Path,
    stamp: SourceStamp,
    id: &str,
    limit: usize,
) -> Result<usize, String> {
    let mut points = reader.boundaries(limit)?;
    within_limit(&points, limit)?;
    points.push(0);
    points.sort_unstable();
    points.dedup();
    let mut tables = Tables::default();
    // (start, answer), each answer differing from the one before.
    let mut ranges: Vec<(u64, u32)> = Vec::new();
    let mut asking = Asking::new(reader, PER_READER);
    for (n, &point) in points.iter().enumerate() {
        let symbol = asking.lookup(point)?;
        let answer = tables.number(symbol.as_ref(), point)?;
        if ranges.last().is_none_or(|&(_, last)| last != answer) {
            ranges.push((point, answer));
        }
        // A function said to start at the address asked about: from the
        // next address on, its start is either that address (the start is
        // the function's) or each address itself (the reader knows no
        // start): the next address tells which.
        let next = point.wrapping_add(1);
        if symbol.is_some_and(|s| s.function_rva == point)
            && next != 0
            && points.get(n + 1) != Some(&next)
        {
            let answer = tables.number(asking.lookup(next)?.as_ref(), next)?;
            if ranges.last().is_none_or(|&(_, last)| last != answer) {
                ranges.push((next, answer));
            }
        }
    }
    let step = ranges.len().div_ceil(CHECKED).max(1);
    // Checks spread over the whole file: fewer per reader.
    let mut asking = Asking::new(reader, PER_READER / step.min(100));
    for (n, pair) in ranges.windows(2).enumerate() {
        let ((start, answer), (next, _)) = (pair[0], pair[1]);
        if n % step != 0 && n + 2 != ranges.len() {
            continue;
        }
        let last = next - 1;
        if tables.number(asking.lookup(last)?.as_ref(), last)? != answer {
            return Err(format!(
                "the answer at {last:#x} differs from the one at {start:#x}: \
                 a boundary between them is unknown"
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

/// The index a big PDB or DWARF file should have: where it lives, and
/// what it must have been made from.
pub(in crate::symbols) struct Planned {
    source_path: PathBuf,
    index_path: PathBuf,
    stamp: SourceStamp,
    id: String,
    source: SymbolSource,
    /// Where the write of the index goes when one is made.
    writes: IndexWrites,
}

impl Planned {
    /// The index of the file at `source_path` (a `source` file, named
    /// `name` in the dump, with identity `id`), when it should have one.
    pub(crate) fn new(
        settings: &IndexSettings,
        source_path: &Path,
        name: &str,
        id: &str,
        source: SymbolSource,
    ) -> Option<Planned> {
        let (dir, key) = settings.wants(source_path)?;
        let index_path = paths::native_index(name, id, key)?.under(dir);
        Some(Planned {
            source_path: source_path.to_path_buf(),
            index_path,
            stamp: SourceStamp::of_path(source_path)?,
            id: id.to_string(),
            source,
            writes: settings.writes.clone(),
        })
    }

    /// Whether an index is there (valid or not).
    pub(crate) fn has_index(&self) -> bool {
        self.index_path.exists()
    }

    /// The file read through its index, when that one is valid; `load`
    /// gives the reader itself if the index fails a check mid-run.
    pub(crate) fn read(&self, load: Loader, log: &mut Log) -> Option<Arc<dyn NativeSymbols>> {
        match Mapped::open(&self.index_path, kind(self.source), self.stamp, &self.id) {
            Ok(file) => {
                log.tried(format!(
                    "{}: read through its index {}",
                    self.source_path.display(),
                    self.index_path.display()
                ));
                Some(Arc::new(Indexed {
                    file,
                    source: self.source,
                    index_path: self.index_path.clone(),
                    load,
                    fallback: OnceLock::new(),
                }))
            }
            Err(Broken(why)) => {
                // A file indexed before is read again: its index is made
                // again at once.
                if self.index_path.exists() && make_mark(&self.index_path) {
                    log.tried(format!(
                        "{}: not used ({why}), made again",
                        self.index_path.display()
                    ));
                }
                None
            }
        }
    }

    /// Indexes `reader`, the file's own reader, for later runs, when this
    /// is the second run to read the file without an index (the first one
    /// leaves a mark beside where the index goes): making the index costs
    /// many times what one run's reading does, which a file read once
    /// (one CI job with an empty cache) should not pay. The index is made
    /// on another thread while the analysis goes on with the reader
    /// itself; the run's [`IndexWrites`] waits for it.
    pub(crate) fn write(self, reader: Arc<dyn Boundaries>, log: &mut Log) {
        let shown = self.source_path.display().to_string();
        let mark = mark_of(&self.index_path);
        if !mark.exists() {
            if make_mark(&self.index_path) {
                log.tried(format!(
                    "{shown}: to be indexed if read again ({})",
                    mark.display()
                ));
            }
            return;
        }
        log.tried(format!(
            "{shown}: being indexed for later runs in {}",
            self.index_path.display()
        ));
        let spawned = std::thread::Builder::new()
            .name("symbol-index".into())
            .spawn(move || {
                let built = build(reader.as_ref(), &self.index_path, self.stamp, &self.id);
                if built.is_ok() {
                    let _ = std::fs::remove_file(&mark);
                }
                built
            });
        match spawned {
            Ok(handle) => self.writes.push(shown, handle),
            Err(e) => log.warnings.push(format!(
                "{shown}: no symbol index written ({e}); later runs read it whole"
            )),
        }
    }
}

/// The mark of a file read once without its index at `index`.
fn mark_of(index: &Path) -> PathBuf {
    let mut mark = index.as_os_str().to_owned();
    mark.push(".wanted");
    PathBuf::from(mark)
}

/// Marks the file whose index goes at `index` as read: the next run that
/// reads it without an index makes one. Whether the mark is there.
fn make_mark(index: &Path) -> bool {
    index
        .parent()
        .is_some_and(|dir| std::fs::create_dir_all(dir).is_ok())
        && std::fs::write(mark_of(index), b"").is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::native::{elf, pdb};

    /// Builds the index of `reader` and asks it and the reader about every
    /// address up to just past the last boundary.
    fn same_everywhere(reader: &dyn Boundaries, what: &str) -> usize {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.dtnidx");
        let stamp = SourceStamp {
            size: 1,
            mtime_secs: 2,
            mtime_nanos: 3,
        };
        let ranges = build(reader, &path, stamp, "abc").unwrap_or_else(|e| panic!("{what}: {e}"));
        let file = Mapped::open(&path, kind(reader.source()), stamp, "abc").unwrap();
        let indexed = Indexed {
            file,
            source: reader.source(),
            index_path: path.clone(),
            load: Box::new(|| None),
            fallback: OnceLock::new(),
        };
        let end = reader
            .boundaries(usize::MAX)
            .unwrap()
            .into_iter()
            .filter(|&b| b < 1 << 32)
            .max()
            .unwrap();
        let mut named = 0;
        for rva in 0..end + 0x100 {
            let want = reader.lookup(rva);
            assert_eq!(indexed.answer(rva).unwrap(), want, "{what} at {rva:#x}");
            named += usize::from(want.is_some());
        }
        assert!(named > 0x100, "{what}: {named} addresses named");
        assert!(indexed.fallback.get().is_none());
        ranges
    }

    #[test]
    fn every_address_of_the_sample_pdbs_answers_as_the_reader() {
        let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps/store");
        let mut seen = 0;
        let mut todo = vec![store];
        while let Some(dir) = todo.pop() {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    todo.push(path);
                } else if path.extension().is_some_and(|e| e == "pdb") {
                    let id = pdb::identity(&path).unwrap();
                    let reader = pdb::Pdb::open(&path, id).unwrap();
                    same_everywhere(&reader, &path.display().to_string());
                    seen += 1;
                }
            }
        }
        assert!(seen >= 10, "{seen} PDBs");
    }

    /// C with functions inlined at -O2 into several callers, in two
    /// compilation units.
    const UNIT_A: &str = r#"
        static inline int leaf(int x) { return x * 3 + (x >> 2); }
        static inline int middle(int x) { return leaf(x) + leaf(x + 1); }
        __attribute__((noinline)) int outer(int x) {
            int sum = 0;
            for (int i = 0; i < x; i++) sum += middle(i);
            return sum;
        }
        __attribute__((noinline)) int other(int x) { return middle(x) * 2; }
    "#;
    const UNIT_B: &str = r#"
        int outer(int); int other(int);
        static int helper(int x) { return outer(x) - other(x); }
        int main(int argc, char **argv) { (void)argv; return helper(argc); }
    "#;

    #[test]
    fn every_address_of_a_gcc_binary_answers_as_its_dwarf() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, out) = (
            dir.path().join("a.c"),
            dir.path().join("b.c"),
            dir.path().join("prog"),
        );
        std::fs::write(&a, UNIT_A).unwrap();
        std::fs::write(&b, UNIT_B).unwrap();
        let status = std::process::Command::new("gcc")
            .args(["-O2", "-g", "-Wl,--build-id", "-o"])
            .args([&out, &a, &b])
            .status()
            .expect("gcc");
        assert!(status.success());
        let map = crate::symbols::paths::map_file(&out).unwrap();
        let info = elf::read_file(&map).unwrap();
        let reader = elf::Dwarf::load(map, info, "test").unwrap();
        let ranges = same_everywhere(&reader, "gcc -O2 binary");
        assert!(ranges > 20, "{ranges} ranges");
        // A file with more boundaries than the limit gets no index.
        let path = dir.path().join("none.dtnidx");
        let stamp = SourceStamp {
            size: 1,
            mtime_secs: 2,
            mtime_nanos: 3,
        };
        let refused = build_within(&reader, &path, stamp, "abc", 10).unwrap_err();
        assert!(refused.contains("too big to index"), "{refused}");
        assert!(!path.exists());
        let inlined = (0..0x4000).any(|rva| {
            reader
                .lookup(rva)
                .is_some_and(|s| s.inlines.iter().any(|(name, _, _)| name == "leaf"))
        });
        assert!(inlined, "the binary has inlined frames");
    }
}
