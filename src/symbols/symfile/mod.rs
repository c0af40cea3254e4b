//! Breakpad symbol files for the stack walker: parsed whole, or, when big,
//! read through a persistent index kept in the symbols cache.
//!
//! breakpad-symbols parses a whole .sym file before answering anything:
//! about half a second and 200 MB per 64 MB of text, on every run. The
//! first run that needs a big file parses it as before and, on the other
//! core meanwhile, scans its text for where each record is; from the two it
//! writes an index ([`index`]). Later runs open the index and the file
//! (memory-mapped) and parse only the few records each address needs, with
//! the same parser: the answers are the whole file's.

mod index;
mod scan;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use memmap2::Mmap;
use minidump::Module;
use minidump_unwind::{FrameSymbolizer, FrameWalker, SymbolError, SymbolFile};

use super::identity::DebugId;
use super::log::Log;
use super::paths;

pub(crate) use super::indexfile::IndexSettings;

/// The default smallest file indexed: parsing 16 MiB of .sym text takes
/// about a tenth of a second.
pub const DEFAULT_MIN_SIZE: u64 = 16 << 20;

/// A .sym file, ready for look-ups.
pub enum SymFile {
    Parsed(Box<SymbolFile>),
    Indexed(Box<Indexed>),
}

/// A .sym file read through its index.
pub struct Indexed {
    index: index::Index,
    source: PathBuf,
    index_path: PathBuf,
    /// The whole file, parsed if the index turns out corrupt mid-run.
    whole: OnceLock<Option<SymbolFile>>,
}

/// What named a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Named {
    Nothing,
    /// A FUNC record holding the address.
    Function,
    /// The nearest PUBLIC record below it, with no CFI record telling the
    /// function's extent: PUBLIC records have no size, so the address may
    /// lie past that function's end.
    Public,
}

/// Where the index of the .sym file at `path` lives, when it should
/// have one: below the module's debug file and id, named after the file's
/// path (one index per copy of the file).
fn index_path(
    settings: &IndexSettings,
    path: &Path,
    id: &DebugId,
    debug_file: &str,
) -> Option<PathBuf> {
    let (dir, key) = settings.wants(path)?;
    Some(paths::sym_index(debug_file, id, key)?.under(dir))
}

impl SymFile {
    /// Opens the .sym file at `path` (MODULE id `id`, debug file
    /// `debug_file`): through its index when it has a valid one; else
    /// parsed whole, and indexed for later runs when big enough.
    pub(in crate::symbols) fn open(
        path: &Path,
        id: &DebugId,
        debug_file: &str,
        settings: &IndexSettings,
        log: &mut Log,
    ) -> Result<SymFile, SymbolError> {
        let Some(index_path) = index_path(settings, path, id, debug_file) else {
            return SymbolFile::from_file(path).map(|file| SymFile::Parsed(Box::new(file)));
        };
        let id_text = id.breakpad().to_string();
        match index::Index::open(&index_path, path, &id_text) {
            Ok(index) => {
                log.tried(format!(
                    "{}: read through its index {}",
                    path.display(),
                    index_path.display()
                ));
                return Ok(SymFile::Indexed(Box::new(Indexed {
                    index,
                    source: path.to_path_buf(),
                    index_path,
                    whole: OnceLock::new(),
                })));
            }
            Err(index::Broken(why)) if index_path.exists() => log.tried(format!(
                "{}: not used ({why}), made again",
                index_path.display()
            )),
            Err(_) => {}
        }
        let file = std::fs::File::open(path)?;
        let stamp = file
            .metadata()
            .ok()
            .as_ref()
            .and_then(index::SourceStamp::of);
        // SAFETY: sound while nobody truncates or writes the .sym file
        // during the map's life: we never write a file we map (downloads
        // are renamed into place, see `paths::map_file`); another program
        // rewriting it in place is the condition left, as for every
        // memory-mapped reader.
        let text = unsafe { Mmap::map(&file) }?;
        let (parsed, scan) = std::thread::scope(|threads| {
            let scanner = threads.spawn(|| scan::scan(&text));
            let parsed = SymbolFile::from_bytes(&text);
            (parsed, scanner.join())
        });
        let parsed = parsed?;
        let written = match (stamp, scan) {
            (Some(stamp), Ok(scan)) => {
                index::build(&index_path, &text, stamp, &id_text, &scan, &parsed)
            }
            _ => Err("the file's size and time are unknown".to_string()),
        };
        match written {
            Ok(()) => log.tried(format!(
                "{}: indexed for later runs in {}",
                path.display(),
                index_path.display()
            )),
            Err(why) => log.warnings.push(format!(
                "{}: no symbol index written ({why}); later runs parse it whole",
                path.display()
            )),
        }
        Ok(SymFile::Parsed(Box::new(parsed)))
    }

    /// Names the frame's address as breakpad-symbols does, and says what
    /// named it.
    pub(crate) fn fill_symbol(
        &self,
        module: &dyn Module,
        frame: &mut dyn FrameSymbolizer,
    ) -> Named {
        let Some(rva) = frame.get_instruction().checked_sub(module.base_address()) else {
            return Named::Nothing;
        };
        let Some(file) = self.symbols_at(rva) else {
            return Named::Nothing;
        };
        let holds = file.functions.get(rva).is_some();
        let mut watched = Watched {
            inner: frame,
            named: None,
        };
        file.fill_symbol(module, &mut watched);
        // A PUBLIC record has no size, but a CFI record starting at the
        // same address gives the function's extent (dump_syms writes one
        // per function from a PE's .pdata or an ELF's .eh_frame).
        let extent = |start: u64| {
            file.cfi_stack_info.get(rva).is_some_and(|cfi| {
                Some(cfi.init.address) == start.checked_sub(module.base_address())
            })
        };
        match (watched.named, holds) {
            (None, _) => Named::Nothing,
            (Some(_), true) => Named::Function,
            (Some(start), false) if extent(start) => Named::Function,
            (Some(_), false) => Named::Public,
        }
    }

    /// Unwinds with the file's STACK WIN and STACK CFI records.
    pub(crate) fn walk_frame(
        &self,
        module: &dyn Module,
        walker: &mut dyn FrameWalker,
    ) -> Option<()> {
        let rva = walker
            .get_instruction()
            .checked_sub(module.base_address())?;
        self.symbols_at(rva)?.walk_frame(module, walker)
    }

    /// The records that answer for `rva`: the whole file, or those the
    /// index gives (the whole file after all if the index fails a check).
    fn symbols_at(&self, rva: u64) -> Option<Symbols<'_>> {
        match self {
            SymFile::Parsed(file) => Some(Symbols::Whole(file)),
            SymFile::Indexed(indexed) => match indexed.index.symbols_at(rva) {
                Ok(file) => Some(Symbols::Part(file)),
                Err(_) => indexed.whole().map(Symbols::Whole),
            },
        }
    }
}

impl Indexed {
    /// The whole file, parsed once; the broken index is removed so that
    /// the next run makes it again.
    fn whole(&self) -> Option<&SymbolFile> {
        self.whole
            .get_or_init(|| {
                let _ = std::fs::remove_file(&self.index_path);
                SymbolFile::from_file(&self.source).ok()
            })
            .as_ref()
    }
}

enum Symbols<'a> {
    Whole(&'a SymbolFile),
    Part(std::sync::Arc<SymbolFile>),
}

impl std::ops::Deref for Symbols<'_> {
    type Target = SymbolFile;
    fn deref(&self) -> &SymbolFile {
        match self {
            Symbols::Whole(file) => file,
            Symbols::Part(file) => file,
        }
    }
}

/// Passes a frame through, noting the start of the function it was given.
struct Watched<'f> {
    inner: &'f mut dyn FrameSymbolizer,
    named: Option<u64>,
}

impl FrameSymbolizer for Watched<'_> {
    fn get_instruction(&self) -> u64 {
        self.inner.get_instruction()
    }
    fn set_function(&mut self, name: &str, base: u64, parameter_size: u32) {
        self.named = Some(base);
        self.inner.set_function(name, base, parameter_size);
    }
    fn set_source_file(&mut self, file: &str, line: u32, base: u64) {
        self.inner.set_source_file(file, line, base);
    }
    fn add_inline_frame(&mut self, name: &str, file: Option<&str>, line: Option<u32>) {
        self.inner.add_inline_frame(name, file, line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::identity::Identity;

    /// A .sym file with what the parse resolves in its own way: overlapping
    /// and duplicate FUNCs, a FUNC of size 0, PUBLICs before, between and
    /// after functions, inlines, FILE and INLINE_ORIGIN records after the
    /// functions that use them (one inside a FUNC), STACK WIN records the
    /// parse shortens or drops, overlapping CFI, and CRLF line ends.
    const TRICKY: &str = "MODULE windows x86 0123456789ABCDEF0123456789ABCDEF1 tricky.pdb\r
INFO CODE_ID 5F000000A000 tricky.dll\r
FILE 1 a.c\r
PUBLIC 500 0 before_everything\r
FUNC 1000 100 8 first(int)\r
1000 10 10 1\r
1010 f0 11 2\r
INLINE 0 12 1 7 1020 20\r
INLINE 1 30 2 8 1024 8\r
INLINE_ORIGIN 7 inlined_outer\r
FUNC 1080 100 0 overlaps_first\r
1080 100 20 1\r
FUNC 1000 100 8 first(int)\r
1000 100 10 1\r
FUNC 1000 80 4 same_start_smaller\r
1000 80 5 1\r
FUNC 2000 0 0 empty\r
PUBLIC 1800 0 between_after_first\r
PUBLIC 2100 4 public_only\r
PUBLIC 2100 4 another_at_same_address\r
FUNC 3000 40 0 third\r
3000 40 1 3\r
FUNC 3000 40 0 third_again_differently\r
3000 40 9 1\r
PUBLIC 2f00 0 public_before_third\r
FILE 2 b.c\r
FILE 3 c.c\r
FILE 2 b_again.c\r
INLINE_ORIGIN 8 inlined_inner\r
STACK WIN 4 1000 100 10 0 8 0 10 0 1 $T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + =\r
STACK WIN 4 1010 f0 4 0 8 0 10 0 1 $T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + =\r
STACK WIN 4 1008 20 4 0 8 0 10 0 1 $T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + =\r
STACK WIN 0 3000 40 4 0 0 0 0 0 0 1\r
STACK WIN 0 3000 40 4 0 0 0 0 0 0 0\r
STACK CFI INIT 1000 100 .cfa: $esp 4 + .ra: .cfa -4 + ^\r
STACK CFI 1001 .cfa: $esp 8 +\r
STACK CFI 1003 .cfa: $ebp 8 +\r
STACK CFI INIT 1050 20 .cfa: $esp 12 + .ra: .cfa -4 + ^\r
STACK CFI INIT 3000 40 .cfa: $esp 4 + .ra: .cfa -4 + ^\r
STACK CFI INIT 2f00 40 .cfa: $esp 4 + .ra: .cfa -4 + ^\r
PUBLIC 4000 0 last_public\r
";

    /// What naming one address gave.
    #[derive(Debug, PartialEq, Default)]
    struct Seen {
        function: Option<(String, u64, u32)>,
        source: Option<(String, u32, u64)>,
        inlines: Vec<(String, Option<String>, Option<u32>)>,
    }

    struct Frame(u64, Seen);

    impl FrameSymbolizer for Frame {
        fn get_instruction(&self) -> u64 {
            self.0
        }
        fn set_function(&mut self, name: &str, base: u64, parameter_size: u32) {
            self.1.function = Some((name.into(), base, parameter_size));
        }
        fn set_source_file(&mut self, file: &str, line: u32, base: u64) {
            self.1.source = Some((file.into(), line, base));
        }
        fn add_inline_frame(&mut self, name: &str, file: Option<&str>, line: Option<u32>) {
            self.1
                .inlines
                .push((name.into(), file.map(Into::into), line));
        }
    }

    fn answers(file: &SymFile, module: &dyn Module, rva: u64) -> impl PartialEq + std::fmt::Debug {
        let mut frame = Frame(module.base_address() + rva, Seen::default());
        let named = file.fill_symbol(module, &mut frame);
        let part = file.symbols_at(rva).expect("records");
        // walk_frame reads exactly these three look-ups.
        let cfi = part.cfi_stack_info.get(rva).cloned();
        let framedata = part.win_stack_framedata_info.get(rva).cloned();
        let fpo = part.win_stack_fpo_info.get(rva).cloned();
        (named, frame.1, cfi, framedata, fpo)
    }

    #[test]
    fn indexed_answers_are_the_whole_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tricky.sym");
        std::fs::write(&path, TRICKY).unwrap();
        let id = DebugId::from_breakpad("0123456789ABCDEF0123456789ABCDEF1").unwrap();
        let settings = IndexSettings {
            dir: Some(dir.path().join("cache")),
            min_size: 0,
            ..IndexSettings::default()
        };
        let mut log = Log::default();
        let whole = SymFile::open(&path, &id, "tricky.pdb", &settings, &mut log).unwrap();
        assert!(matches!(whole, SymFile::Parsed(_)));
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
        let indexed = SymFile::open(&path, &id, "tricky.pdb", &settings, &mut log).unwrap();
        assert!(matches!(indexed, SymFile::Indexed(_)), "{:?}", log.tried);
        let identity = Identity {
            code_file: "tricky.dll".into(),
            code_id: None,
            debug_file: Some("tricky.pdb".into()),
            debug_id: Some(id),
        };
        let module = identity.at(0x1000_0000, 0x10000);
        let SymFile::Indexed(through) = &indexed else {
            unreachable!()
        };
        let mut named = 0;
        for rva in 0..0x4100 {
            let (a, b) = (
                answers(&whole, &module, rva),
                answers(&indexed, &module, rva),
            );
            assert_eq!(a, b, "at {rva:#x}");
            named += usize::from(format!("{a:?}").contains("Some((\""));
        }
        assert!(named > 0x1000, "the file names addresses: {named}");
        // Every answer came through the index: none from the whole file
        // parsed after a failed check.
        assert!(through.whole.get().is_none());
        // A PUBLIC name is certain where a CFI record starting at it holds
        // the address, a guess past it.
        for (rva, named) in [
            (0x2f10, Named::Function),
            (0x2f50, Named::Public),
            (0x2100, Named::Public),
            (0x3010, Named::Function),
        ] {
            for file in [&whole, &indexed] {
                let mut frame = Frame(0x1000_0000 + rva, Seen::default());
                assert_eq!(file.fill_symbol(&module, &mut frame), named, "at {rva:#x}");
            }
        }
        // Below the module: nothing, as the parse says.
        let below = Identity { ..identity.clone() };
        let module = below.at(0x1000_0000, 0x10000);
        let mut frame = Frame(0x0fff_ffff, Seen::default());
        assert_eq!(indexed.fill_symbol(&module, &mut frame), Named::Nothing);
    }
}
