//! The persistent index of a big .sym file.
//!
//! A later run opens the index (memory-mapped) and the .sym file, and for
//! each address reads only the records that can matter: the function that
//! holds it (else the function before it and the nearest PUBLIC), the CFI
//! and STACK WIN records that hold it, the FILE and INLINE_ORIGIN names the
//! function uses. breakpad-symbols parses those few records and answers as
//! it would from the whole file: the index holds no interpretation of its
//! own, only which record text the whole-file parse kept for each range
//! (its overlap rules and STACK WIN fix-ups included), and where that text
//! is.
//!
//! Why our own format rather than Sentry's SymCache (symbolic-symcache): a
//! SymCache holds no CFI (symbolic-cfi's CfiCache is yet another format),
//! and answers with its own line and inline interpretation of the records,
//! so "identical frames with and without the index" could not be promised;
//! it would also bring symbolic-debuginfo's tree for one format. This index
//! stores no interpretation, only which text breakpad-symbols' parse kept.
//!
//! Nothing read is trusted unchecked: the header has a checksum and names
//! the source's size, mtime and debug id; every 4 KiB page of the index and
//! of the source has a CRC-32 checked on first use; a record's text must
//! parse to a record at the address the index gave it. A failed check
//! makes the index unusable for the rest of the run (the caller then parses
//! the whole file) and it is rebuilt by the next run.
//!
//! Layout (little-endian): a 512-byte header, then sections, each 8-byte
//! aligned: range records of functions, CFI, STACK WIN frame data and
//! STACK WIN FPO (`start u64, size u32, len u32, offset u64`: the kept
//! range and the text's place in the source), publics in the parse's order
//! (`address u64, parameter size u32, name len u32, name offset u64`),
//! FILE and INLINE_ORIGIN names by id (`id u32, len u32, offset u64`), the
//! strings, the source's page checksums, and last the index's own page
//! checksums (of everything after the header).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use memmap2::Mmap;
use minidump_unwind::SymbolFile;
use range_map::{Range, RangeMap};

use crate::symbols::indexfile::{u32_at, u64_at, Mapped, PageBits, PAGE};
pub(crate) use crate::symbols::indexfile::{Broken, SourceStamp};

mod layout;
mod write;

use layout::{
    CFI, FILES, FUNCS, KIND, NAME_ENTRY, ORIGINS, PUBLICS, PUBLIC_ENTRY, RANGE_ENTRY, SOURCE_CRCS,
    STRINGS, WIN_FPO, WIN_FRAMEDATA,
};
pub(crate) use write::build;

/// The index of one .sym file, open for look-ups.
pub(crate) struct Index {
    file: Mapped,
    source: Mmap,
    source_checked: PageBits,
    /// Symbol files assembled for an address, by the records they hold.
    assembled: Mutex<HashMap<[u32; 5], Arc<SymbolFile>>>,
    /// Parsed empty records whose fields are overwritten, so no type of
    /// breakpad-symbols' private module needs naming.
    templates: SymbolFile,
}

const NONE: u32 = u32::MAX;

/// A range entry that holds an address: its number, its range, and where
/// its text is.
type Held = (u32, Range<u64>, u64, u32);

impl Index {
    /// Opens the index at `path` of the .sym file `source_path`, whose
    /// MODULE id is `id` (Breakpad spelling). `Err` says why it cannot be
    /// used (stale, truncated, corrupt, another version).
    pub(super) fn open(path: &Path, source_path: &Path, id: &str) -> Result<Index, Broken> {
        let broken = |why: &str| Broken(why.to_string());
        let source_file = std::fs::File::open(source_path).map_err(|e| Broken(e.to_string()))?;
        let stamp = source_file
            .metadata()
            .ok()
            .as_ref()
            .and_then(SourceStamp::of)
            .ok_or_else(|| broken("the symbol file's size and time are unknown"))?;
        let file = Mapped::open(path, KIND, stamp, id)?;
        // SAFETY: sound while nobody truncates or writes the .sym file
        // during the map's life: we never write a file we map (downloads
        // are renamed into place, see `paths::map_file`); another program
        // rewriting it in place is the condition left, as for every
        // memory-mapped reader. (The page checksums below catch a file
        // changed since the index was made, not a concurrent writer.)
        let source = unsafe { Mmap::map(&source_file) }.map_err(|e| Broken(e.to_string()))?;
        if source.len() as u64 != stamp.size
            || file.section(SOURCE_CRCS).1 != source.len().div_ceil(PAGE) * 4
        {
            return Err(broken("the symbol file changed since"));
        }
        let entry_sizes = [
            (FUNCS, RANGE_ENTRY),
            (CFI, RANGE_ENTRY),
            (WIN_FRAMEDATA, RANGE_ENTRY),
            (WIN_FPO, RANGE_ENTRY),
            (PUBLICS, PUBLIC_ENTRY),
            (FILES, NAME_ENTRY),
            (ORIGINS, NAME_ENTRY),
        ];
        if entry_sizes
            .iter()
            .any(|&(section, size)| file.section(section).1 % size != 0)
        {
            return Err(broken("a table has a partial entry"));
        }
        let templates = SymbolFile::from_bytes(b"FUNC 0 1 0 f\nPUBLIC 0 0 p\n")
            .map_err(|e| Broken(e.to_string()))?;
        Ok(Index {
            source_checked: PageBits::new(source.len().div_ceil(PAGE)),
            file,
            source,
            assembled: Mutex::new(HashMap::new()),
            templates,
        })
    }

    fn fail(&self, why: String) -> Broken {
        self.file.fail(why)
    }

    /// `len` bytes at `offset` of the .sym file, their pages checked
    /// against the checksums taken when the index was made.
    fn source_bytes(&self, offset: u64, len: u32) -> Result<&[u8], Broken> {
        let offset = usize::try_from(offset).map_err(|_| self.fail("offset too big".into()))?;
        let end = offset
            .checked_add(len as usize)
            .filter(|&end| end <= self.source.len() && len > 0)
            .ok_or_else(|| self.fail(format!("read outside the symbol file at {offset:#x}")))?;
        for page in offset / PAGE..=(end - 1) / PAGE {
            let crc = u32_at(self.file.within(SOURCE_CRCS, page as u64 * 4, 4)?, 0);
            if !self.source_checked.page_ok(&self.source, 0, page, crc) {
                return Err(self.fail(format!(
                    "the symbol file's page {page} differs from when it was indexed"
                )));
            }
        }
        Ok(&self.source[offset..end])
    }

    fn count(&self, section: usize, entry: usize) -> usize {
        self.file.count(section, entry)
    }

    fn entry(&self, section: usize, size: usize, n: usize) -> Result<&[u8], Broken> {
        self.file.entry(section, size, n)
    }

    /// The range entry holding `address`: its number, range and text.
    fn holding(&self, section: usize, address: u64) -> Result<Option<Held>, Broken> {
        let n = self.file.partition(section, RANGE_ENTRY, address, false)?;
        let Some(n) = n.checked_sub(1) else {
            return Ok(None);
        };
        let (range, offset, len) = self.range_entry(section, n)?;
        Ok((range.contains(address)).then_some((n as u32, range, offset, len)))
    }

    fn range_entry(&self, section: usize, n: usize) -> Result<(Range<u64>, u64, u32), Broken> {
        let e = self.entry(section, RANGE_ENTRY, n)?;
        let (start, size) = (u64_at(e, 0), u64::from(u32_at(e, 8)));
        let end = start
            .checked_add(size)
            .and_then(|e| e.checked_sub(1))
            .filter(|_| size > 0)
            .ok_or_else(|| self.fail(format!("bad range at entry {n}")))?;
        Ok((Range::new(start, end), u64_at(e, 16), u32_at(e, 12)))
    }

    /// Parses the record text at `offset`: a file of that one record.
    fn parse(&self, offset: u64, len: u32) -> Result<SymbolFile, Broken> {
        let text = self.source_bytes(offset, len)?;
        let parsed = if text.ends_with(b"\n") {
            SymbolFile::from_bytes(text)
        } else {
            SymbolFile::from_bytes(&[text, b"\n"].concat())
        };
        parsed.map_err(|e| self.fail(format!("record at {offset:#x} does not parse: {e}")))
    }

    fn string(&self, offset: u64, len: u32) -> Result<String, Broken> {
        let bytes = self.file.within(STRINGS, offset, len as usize)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| self.fail("a string is not UTF-8".into()))
    }

    /// The name of `id` in a FILE or INLINE_ORIGIN table.
    fn name(&self, section: usize, id: u32) -> Result<Option<String>, Broken> {
        let (mut low, mut high) = (0, self.count(section, NAME_ENTRY));
        while low < high {
            let mid = low + (high - low) / 2;
            let e = self.entry(section, NAME_ENTRY, mid)?;
            match u32_at(e, 0).cmp(&id) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => {
                    let (len, offset) = (u32_at(e, 4), u64_at(e, 8));
                    return self.string(offset, len).map(Some);
                }
            }
        }
        Ok(None)
    }

    /// A symbol file with every record the whole file's parse would use
    /// for `rva`: its `fill_symbol` and `walk_frame` answer for `rva` as the
    /// whole file's would.
    pub(crate) fn symbols_at(&self, rva: u64) -> Result<Arc<SymbolFile>, Broken> {
        let function = self.holding(FUNCS, rva)?;
        // Without a function holding it, the parse names the address after
        // the nearest PUBLIC at or below it, unless the last function that
        // starts below it starts at or after that public.
        let (previous, public) = match function {
            Some(_) => (None, None),
            None => {
                let previous = self
                    .file
                    .partition(FUNCS, RANGE_ENTRY, rva, true)?
                    .checked_sub(1);
                let public = self
                    .file
                    .partition(PUBLICS, PUBLIC_ENTRY, rva, false)?
                    .checked_sub(1);
                (previous, public)
            }
        };
        let cfi = self.holding(CFI, rva)?;
        let framedata = self.holding(WIN_FRAMEDATA, rva)?;
        let fpo = self.holding(WIN_FPO, rva)?;
        let number = |entry: &Option<Held>| entry.as_ref().map_or(NONE, |e| e.0);
        let key = [
            function
                .as_ref()
                .map_or(previous.map_or(NONE, |p| p as u32 | 1 << 31), |f| f.0),
            public.map_or(NONE, |p| p as u32),
            number(&cfi),
            number(&framedata),
            number(&fpo),
        ];
        if let Some(done) = self
            .assembled
            .lock()
            .ok()
            .and_then(|m| m.get(&key).cloned())
        {
            return Ok(done);
        }
        let mut assembled = SymbolFile {
            module_id: String::new(),
            debug_file: String::new(),
            files: HashMap::new(),
            publics: Vec::new(),
            functions: RangeMap::new(),
            inline_origins: HashMap::new(),
            cfi_stack_info: RangeMap::new(),
            win_stack_framedata_info: RangeMap::new(),
            win_stack_fpo_info: RangeMap::new(),
            url: None,
            ambiguities_repaired: 0,
            ambiguities_discarded: 0,
            corruptions_discarded: 0,
            cfi_eval_corruptions: 0,
        };
        self.add_function(&mut assembled, function, previous)?;
        self.add_public(&mut assembled, public)?;
        self.add_cfi(&mut assembled, cfi)?;
        self.add_win(&mut assembled, framedata, false)?;
        self.add_win(&mut assembled, fpo, true)?;
        let assembled = Arc::new(assembled);
        if let Ok(mut map) = self.assembled.lock() {
            map.insert(key, assembled.clone());
        }
        Ok(assembled)
    }

    /// The FUNC holding the address, with the names of its files and
    /// inline origins; else only the start of the last one before it.
    fn add_function(
        &self,
        into: &mut SymbolFile,
        function: Option<Held>,
        previous: Option<usize>,
    ) -> Result<(), Broken> {
        let mut functions = Vec::new();
        if let Some((_, range, offset, len)) = function {
            let parsed = self.parse(offset, len)?;
            let (_, function) = parsed
                .functions
                .ranges_values()
                .next()
                .cloned()
                .filter(|(r, _)| r.start == range.start)
                .ok_or_else(|| {
                    self.fail(format!("FUNC at {offset:#x} is not at {:#x}", range.start))
                })?;
            for line in function.lines.ranges_values().map(|(_, l)| l) {
                self.add_name(FILES, line.file, &mut into.files)?;
            }
            for inlinee in &function.inlinees {
                self.add_name(FILES, inlinee.call_file, &mut into.files)?;
                self.add_name(ORIGINS, inlinee.origin_id, &mut into.inline_origins)?;
            }
            functions.push((range, function));
        } else if let Some(n) = previous {
            // Only its start is read.
            let (range, _, _) = self.range_entry(FUNCS, n)?;
            if let Some((_, template)) = self.templates.functions.ranges_values().next() {
                let mut function = template.clone();
                function.address = range.start;
                functions.push((range, function));
            }
        }
        into.functions = range_map(functions);
        Ok(())
    }

    /// The PUBLIC the parse names the address after, if any.
    fn add_public(&self, into: &mut SymbolFile, public: Option<usize>) -> Result<(), Broken> {
        if let Some(n) = public {
            let e = self.entry(PUBLICS, PUBLIC_ENTRY, n)?;
            let (address, parameter_size) = (u64_at(e, 0), u32_at(e, 8));
            let name = self.string(u64_at(e, 16), u32_at(e, 12))?;
            if let Some(mut symbol) = self.templates.publics.first().cloned() {
                symbol.address = address;
                symbol.parameter_size = parameter_size;
                symbol.name = name;
                into.publics.push(symbol);
            }
        }
        Ok(())
    }

    /// The STACK CFI record holding the address, if any.
    fn add_cfi(&self, into: &mut SymbolFile, cfi: Option<Held>) -> Result<(), Broken> {
        let Some((_, range, offset, len)) = cfi else {
            return Ok(());
        };
        let parsed = self.parse(offset, len)?;
        let info = parsed
            .cfi_stack_info
            .ranges_values()
            .next()
            .map(|(_, v)| v.clone())
            .filter(|v| v.init.address == range.start)
            .ok_or_else(|| self.fail(format!("CFI at {offset:#x} is not at {:#x}", range.start)))?;
        into.cfi_stack_info = range_map(vec![(range, info)]);
        Ok(())
    }

    /// The STACK WIN record (FPO or frame data) holding the address, if any.
    fn add_win(&self, into: &mut SymbolFile, entry: Option<Held>, fpo: bool) -> Result<(), Broken> {
        let Some((_, range, offset, len)) = entry else {
            return Ok(());
        };
        let parsed = self.parse(offset, len)?;
        let table = if fpo {
            &parsed.win_stack_fpo_info
        } else {
            &parsed.win_stack_framedata_info
        };
        let mut info = table
            .ranges_values()
            .next()
            .map(|(_, v)| v.clone())
            .filter(|v| v.address == range.start)
            .ok_or_else(|| {
                self.fail(format!(
                    "STACK WIN at {offset:#x} is not at {:#x}",
                    range.start
                ))
            })?;
        // The parse shortens a record that the next one overlaps.
        info.size = range
            .end
            .saturating_sub(range.start)
            .saturating_add(1)
            .try_into()
            .unwrap_or(u32::MAX);
        let records = range_map(vec![(range, info)]);
        if fpo {
            into.win_stack_fpo_info = records;
        } else {
            into.win_stack_framedata_info = records;
        }
        Ok(())
    }

    fn add_name(
        &self,
        section: usize,
        id: u32,
        into: &mut HashMap<u32, String>,
    ) -> Result<(), Broken> {
        if let std::collections::hash_map::Entry::Vacant(slot) = into.entry(id) {
            if let Some(name) = self.name(section, id)? {
                slot.insert(name);
            }
        }
        Ok(())
    }
}

fn range_map<V: Clone + Eq + std::fmt::Debug>(entries: Vec<(Range<u64>, V)>) -> RangeMap<u64, V> {
    RangeMap::try_from_iter(entries).unwrap_or_else(|_| RangeMap::new())
}
