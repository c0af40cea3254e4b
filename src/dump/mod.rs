//! Minidump -> symbolized [`Report`]: the only module that talks to
//! minidump-processor.
//!
//! A dump is memory-mapped, never read whole into memory, and every failure —
//! unreadable file, wrong format, truncation, corruption, even a panic deep in
//! a parser — becomes a one-line error on that dump's report, so one bad file
//! never stops a batch.

use std::path::Path;

use minidump::{Minidump, MinidumpException, Module as _};
use minidump_processor::ProcessorOptions;

use crate::model::Report;
use crate::symbols::{DumpSymbols, Sources};

mod build;
mod cpp;
mod error;
mod package_note;
mod repair;
mod stack_search;
mod waits;

use build::*;
use cpp::*;
pub use error::DumpError;
use error::*;
use stack_search::*;

/// Analyses dumps with one shared set of symbol sources, so a symbol file
/// needed by many dumps of a run is found and parsed once. `Analyzer` is
/// `Sync`: dumps may be analysed from several threads at once.
pub struct Analyzer {
    sources: Sources,
}

impl Analyzer {
    pub fn new(sources: Sources) -> Self {
        Analyzer { sources }
    }

    /// Ends the run's use of its symbols: its private folders are removed
    /// now; the parsed symbol files (GBs, in millions of allocations, for
    /// big modules) are freed on another thread, which the caller need not
    /// wait for (at exit, the process ends with it).
    pub fn finish(self) {
        self.sources.remove_private_folders();
        std::thread::spawn(move || drop(self));
    }

    /// The symbol files and binaries the analyses so far used (`pack`).
    pub fn used_files(&self) -> Vec<crate::symbols::UsedFile> {
        self.sources.used_files()
    }

    /// Analyses one dump. Never panics: a failure is a report with status
    /// `error` and a one-line message.
    pub fn analyze(&self, path: &Path) -> Report {
        let shown = path.display().to_string();
        let result = crate::guard::catching(path, || self.analyze_inner(path))
            .unwrap_or_else(|panic| Err(DumpError::Internal(panic)));
        match result {
            Ok(report) => Report {
                path: shown,
                ..report
            },
            Err(error) => error.report(shown),
        }
    }

    fn analyze_inner(&self, path: &Path) -> Result<Report, DumpError> {
        let meta = std::fs::metadata(path).map_err(DumpError::Unreadable)?;
        // Opening a FIFO would block until a writer appears, and a device
        // has no size: only regular files are read.
        if !meta.is_file() {
            return Err(DumpError::NotAFile(file_kind(&meta.file_type())));
        }
        let size = meta.len();
        if size == 0 {
            return Err(DumpError::Empty);
        }
        if crate::elfcore::looks_like_core(&file_start(path)) {
            return self.analyze_core(path, size);
        }
        // A dump cut short is read from a patched copy: what is in the
        // file is reported, with a warning naming what is not (repair.rs).
        let repaired = repair::repair_if_truncated(path, size).ok().flatten();
        let (read_from, size) = match &repaired {
            Some(r) => (
                r.file.path(),
                std::fs::metadata(r.file.path()).map_or(size, |m| m.len()),
            ),
            None => (path, size),
        };
        let dump = Minidump::read_path(read_from).map_err(|e| read_error(e, path, size))?;
        let mut report = self.analyze_dump(&dump, size, None)?;
        if let Some(repaired) = &repaired {
            report.warnings.insert(0, repaired.warning.clone());
        }
        Ok(report)
    }

    /// A Linux core file, read as the minidump it is turned into.
    fn analyze_core(&self, path: &Path, size: u64) -> Result<Report, DumpError> {
        self.analyze_core_reading(path, size, None)
            .map(|(report, _)| report)
    }

    /// A core analysed for `convert`, with every range of memory the wait
    /// and Python readers read in it (what a small minidump must keep to
    /// give the same report).
    pub(crate) fn analyze_core_recorded(&self, path: &Path) -> Result<RecordedCore, DumpError> {
        let size = std::fs::metadata(path)
            .map_err(DumpError::Unreadable)?
            .len();
        let reads = Reads::default();
        let (report, core) = self.analyze_core_reading(path, size, Some(&reads))?;
        Ok(RecordedCore {
            report,
            core,
            reads: reads.into_inner(),
        })
    }

    fn analyze_core_reading(
        &self,
        path: &Path,
        size: u64,
        reads: Option<&Reads>,
    ) -> Result<(Report, crate::elfcore::OpenedCore), DumpError> {
        let core = crate::elfcore::open(path).map_err(DumpError::Core)?;
        let len = core.view.len() as u64;
        let mut report = {
            let dump = Minidump::read(&core.view[..]).map_err(|e| {
                DumpError::Core(format!("the core could not be read ({e}, {size} bytes)"))
            })?;
            let mut report = self.analyze_dump(&dump, len, reads)?;
            as_core_recorded_it(&mut report, &dump);
            report
        };
        report.warnings.splice(0..0, core.warnings.iter().cloned());
        report.source = crate::model::Source {
            kind: crate::model::SourceKind::Core,
            format: Some(core.format.clone()),
            ..crate::model::Source::default()
        };
        Ok((report, core))
    }

    fn analyze_dump<'a, T>(
        &self,
        dump: &Minidump<'a, T>,
        size: u64,
        reads: Option<&Reads>,
    ) -> Result<Report, DumpError>
    where
        T: std::ops::Deref<Target = [u8]> + 'a,
    {
        // The memory streams, for export tables of images a full-memory
        // dump holds.
        let memory = dump.get_memory();
        let symbols = DumpSymbols::new(&self.sources, memory.as_ref())
            .with_context_instructions(context_instructions(dump));
        let state = futures_executor::block_on(minidump_processor::process_minidump_with_options(
            dump,
            &symbols,
            ProcessorOptions::default(),
        ))
        .map_err(|e| process_error(e, dump, size))?;
        let exception = dump.get_stream::<MinidumpException>().ok();
        let unloaded = futures_executor::block_on(name_unloaded_frames(&state, &symbols));
        let searched =
            futures_executor::block_on(search_stacks(dump, memory.as_ref(), &state, &symbols));
        let mut report = build_report(&state, exception.as_ref(), &symbols, &unloaded);
        if let Some(e) = report.exception.as_mut() {
            e.cpp_type =
                futures_executor::block_on(thrown_type(e.code, &e.parameters, &state, &symbols));
            if e.code != crate::cpp_exception::CPP_EXCEPTION {
                e.cpp_in_flight = futures_executor::block_on(cpp_in_flight(
                    dump,
                    memory.as_ref(),
                    &state,
                    &symbols,
                    e.thread_id,
                ));
            }
        }
        for thread in &mut report.threads {
            if let Some(hits) = searched.get(&thread.id) {
                thread.stack_search = hits.clone();
            }
            caller_from_search(thread, &state.modules);
        }
        // What blocked threads wait for, and who holds it.
        let mut kept = waits::kept_objects(dump.get_raw_stream(waits::WAIT_OBJECTS_STREAM).ok());
        // By address, for the Python reader's thousands of look-ups.
        kept.sort_by_key(|(address, _)| *address);
        let threads: Vec<waits::DumpThread> = dump
            .get_stream::<minidump::MinidumpThreadList>()
            .map(|list| {
                list.threads
                    .iter()
                    .map(|t| {
                        let stack = &t.raw.stack;
                        let start = stack.start_of_memory_range;
                        waits::DumpThread {
                            teb: t.raw.teb,
                            stack: start..start.saturating_add(u64::from(stack.memory.data_size)),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        let dump_memory = DumpMemory {
            list: memory.as_ref(),
            kept: &kept,
            reads,
        };
        waits::find_waits(&state, &dump_memory, &threads, &mut report);
        // Which Python code each thread ran, when the process is CPython.
        let modules: Vec<crate::python::LoadedModule> = state
            .modules
            .iter()
            .map(|m| crate::python::LoadedModule {
                path: m.code_file().into_owned(),
                base: m.base_address(),
                code_id: m.code_identifier().map(|id| id.to_string()),
            })
            .collect();
        crate::python::annotate(&mut report, &modules, &dump_memory);
        // The command line, where the writer kept it (Breakpad's and
        // minidump-writer's Linux dumps: /proc/PID/cmdline, NUL-separated),
        // quoted as a shell would take it back.
        if let (Some(process), Ok(raw)) =
            (report.process.as_mut(), dump.get_raw_stream(LINUX_CMD_LINE))
        {
            let words = crate::model::command_words(raw);
            if !words.is_empty() {
                process.command_line = Some(crate::printable::shell_words(&words));
            }
        }
        // Why `run` or `attach` took the dump, when one of them did.
        if let Ok(bytes) = dump.get_raw_stream(crate::model::CAPTURE_STREAM) {
            match crate::model::Capture::from_bytes(bytes) {
                Ok(capture) => {
                    let kept = (!kept.is_empty()).then(|| crate::model::KeptMemory {
                        ranges: kept.len(),
                        bytes: kept.iter().map(|(_, b)| b.len() as u64).sum(),
                    });
                    report.capture = Some(crate::model::Capture { kept, ..capture });
                }
                Err(why) => report.warnings.push(why),
            }
        }
        // What the dump was converted from, when `dumptriage convert`
        // wrote it: the core's own warnings, so the small file says what
        // the core said.
        if let Ok(bytes) = dump.get_raw_stream(crate::model::CONVERTED_STREAM) {
            match crate::model::Converted::from_bytes(bytes) {
                Ok(converted) => {
                    as_core_recorded_it(&mut report, dump);
                    report.source.format = Some(converted.describe());
                    report.warnings.splice(0..0, converted.warnings);
                }
                Err(why) => report.warnings.push(why),
            }
        }
        Ok(report)
    }
}

/// What a Linux core records, said as it records it (for a core, and for
/// the minidump `convert` made of one). A core keeps only the first 80
/// bytes of the command line, with spaces between the words
/// (NT_PRPSINFO): where one word ends is lost, so the text is shown as the
/// kernel wrote it, not quoted. It records neither the kernel's version
/// nor the CPUs (the minidump it is read as has zeros there): unknown, not
/// zero.
fn as_core_recorded_it<'a, T>(report: &mut Report, dump: &Minidump<'a, T>)
where
    T: std::ops::Deref<Target = [u8]> + 'a,
{
    if let (Some(process), Ok(raw)) = (report.process.as_mut(), dump.get_raw_stream(LINUX_CMD_LINE))
    {
        let text = String::from_utf8_lossy(raw)
            .trim_end_matches('\0')
            .to_string();
        process.command_line = (!text.is_empty()).then_some(text);
    }
    if let Some(system) = report.system.as_mut() {
        system.os_version = None;
        system.cpu_info = None;
        system.cpu_count = 0;
    }
}

/// A core analysed for `convert`.
pub(crate) struct RecordedCore {
    /// Its report, not yet diagnosed.
    pub report: Report,
    /// The core, as the minidump view the analysis read.
    pub core: crate::elfcore::OpenedCore,
    /// The ranges of memory (address, length) the wait and Python readers
    /// read, in the order read.
    pub reads: Vec<(u64, u64)>,
}

/// The ranges of memory (address, length) the wait and Python readers read,
/// in the order read.
type Reads = std::cell::RefCell<Vec<(u64, u64)>>;

/// A dump's memory for the Python reader: the ranges a capture kept, then
/// the dump's memory lists. With `reads`, every read that succeeds is
/// recorded there.
struct DumpMemory<'a, 'm> {
    list: Option<&'a minidump::UnifiedMemoryList<'m>>,
    kept: &'a [(u64, Vec<u8>)],
    reads: Option<&'a Reads>,
}

impl crate::python::Memory for DumpMemory<'_, '_> {
    fn read(&self, address: u64, len: usize) -> Option<Vec<u8>> {
        let bytes = self.read_unrecorded(address, len)?;
        if let Some(reads) = self.reads {
            reads.borrow_mut().push((address, len as u64));
        }
        Some(bytes)
    }
}

impl DumpMemory<'_, '_> {
    fn read_unrecorded(&self, address: u64, len: usize) -> Option<Vec<u8>> {
        let end = address.checked_add(len as u64)?;
        // The last kept range starting at or before `address` (sorted).
        let after = self.kept.partition_point(|(base, _)| *base <= address);
        if let Some((base, bytes)) = after.checked_sub(1).map(|i| &self.kept[i]) {
            // The kept ranges' addresses come from the dump: any value.
            if end <= base.saturating_add(bytes.len() as u64) {
                let at = (address - base) as usize;
                return Some(bytes[at..at + len].to_vec());
            }
        }
        let region = self.list?.memory_at_address(address)?;
        let at = usize::try_from(address - region.base_address()).ok()?;
        region
            .bytes()
            .get(at..at.checked_add(len)?)
            .map(<[u8]>::to_vec)
    }
}

/// The first bytes of a file (fewer when it is shorter or unreadable).
fn file_start(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut head = Vec::with_capacity(18);
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(18).read_to_end(&mut head);
    }
    head
}

/// Breakpad's MD_LINUX_CMD_LINE stream.
const LINUX_CMD_LINE: u32 = 0x4767_0006;

/// The instruction pointers of the threads' contexts and of the
/// exception's: where the walks' first frames are.
fn context_instructions<'a, T>(dump: &Minidump<'a, T>) -> Vec<u64>
where
    T: std::ops::Deref<Target = [u8]> + 'a,
{
    use minidump::{MinidumpMiscInfo, MinidumpSystemInfo, MinidumpThreadList};
    let Ok(system) = dump.get_stream::<MinidumpSystemInfo>() else {
        return Vec::new();
    };
    let misc = dump.get_stream::<MinidumpMiscInfo>().ok();
    let mut out = Vec::new();
    if let Ok(threads) = dump.get_stream::<MinidumpThreadList>() {
        for thread in &threads.threads {
            if let Some(context) = thread.context(&system, misc.as_ref()) {
                out.push(context.get_instruction_pointer());
            }
        }
    }
    if let Ok(exception) = dump.get_stream::<MinidumpException>() {
        if let Some(context) = exception.context(&system, misc.as_ref()) {
            out.push(context.get_instruction_pointer());
        }
    }
    out
}
