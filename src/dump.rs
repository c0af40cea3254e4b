//! Minidump -> symbolized [`Report`]: the only module that talks to
//! minidump-processor.
//!
//! A dump is memory-mapped, never read whole into memory, and every failure —
//! unreadable file, wrong format, truncation, corruption, even a panic deep in
//! a parser — becomes a one-line error on that dump's report, so one bad file
//! never stops a batch.

use std::fmt;
use std::path::Path;

use minidump::{Minidump, MinidumpException, MinidumpModule, Module as _};
use minidump_processor::{ProcessError, ProcessState, ProcessorOptions};
use minidump_unwind::{CallStack, CallStackInfo, FrameTrust, StackFrame};

use crate::model::{
    file_name, Exception, Frame, InlineFrame, Module, ModuleSymbols, Process, Report, Status,
    SymbolSource, System, Thread, Trust, UnloadedModule, Walk,
};
use crate::symbols::provider::UnloadedName;
use crate::symbols::{DumpSymbols, Sources};

/// Size of MINIDUMP_HEADER: anything shorter cannot be a minidump.
const HEADER_SIZE: u64 = 32;

/// Why a dump could not be analysed. Each variant has a stable short name
/// ([`DumpError::name`]) for tools that group errors.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    #[error("cannot read file: {0}")]
    Unreadable(std::io::Error),
    #[error("empty file (0 bytes): not a minidump")]
    Empty,
    #[error("not a regular file ({0}): not a minidump")]
    NotAFile(&'static str),
    #[error("not a minidump: file starts with {0} instead of the MDMP signature")]
    NotMinidump(String),
    #[error("truncated minidump: {0}")]
    Truncated(String),
    #[error("unsupported minidump version")]
    UnsupportedVersion,
    #[error("corrupt minidump: {0}")]
    Corrupt(String),
    #[error("internal error while analysing this dump: {0} (please report it with the dump)")]
    Internal(String),
}

impl DumpError {
    /// A stable, machine-friendly name for the kind of failure.
    pub fn name(&self) -> &'static str {
        match self {
            DumpError::Unreadable(_) => "unreadable",
            DumpError::Empty => "empty",
            DumpError::NotAFile(_) => "not_a_file",
            DumpError::NotMinidump(_) => "not_minidump",
            DumpError::Truncated(_) => "truncated",
            DumpError::UnsupportedVersion => "unsupported_version",
            DumpError::Corrupt(_) => "corrupt",
            DumpError::Internal(_) => "internal",
        }
    }

    /// The error report of the dump at `path`.
    pub fn report(&self, path: String) -> Report {
        Report::failed(path, self.name(), self.to_string())
    }
}

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
        let dump = Minidump::read_path(path).map_err(|e| read_error(e, path, size))?;
        // The memory streams, for export tables of images a full-memory
        // dump holds.
        let memory = dump.get_memory();
        let symbols = DumpSymbols::new(&self.sources, memory.as_ref())
            .with_context_instructions(context_instructions(&dump));
        let state = futures_executor::block_on(minidump_processor::process_minidump_with_options(
            &dump,
            &symbols,
            ProcessorOptions::default(),
        ))
        .map_err(|e| process_error(e, &dump, size))?;
        let exception = dump.get_stream::<MinidumpException>().ok();
        let unloaded = futures_executor::block_on(name_unloaded_frames(&state, &symbols));
        let searched =
            futures_executor::block_on(search_stacks(&dump, memory.as_ref(), &state, &symbols));
        let mut report = build_report(&state, exception.as_ref(), &symbols, &unloaded);
        if let Some(e) = report.exception.as_mut() {
            e.cpp_type =
                futures_executor::block_on(thrown_type(e.code, &e.parameters, &state, &symbols));
            if e.code != crate::cpp_exception::CPP_EXCEPTION {
                e.cpp_in_flight = futures_executor::block_on(cpp_in_flight(
                    &dump,
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
        }
        Ok(report)
    }
}

/// The type a C++ exception threw: its tables read from the throwing
/// module's image (the dump's memory, or the binary found for it).
async fn thrown_type(
    code: u32,
    parameters: &[u64],
    state: &ProcessState,
    symbols: &DumpSymbols<'_>,
) -> Option<String> {
    use crate::symbols::unwind::pe::ImageBytes;
    if code != crate::cpp_exception::CPP_EXCEPTION {
        return None;
    }
    // The module holding the ThrowInfo (parameter 2).
    let module = state.modules.module_at_address(*parameters.get(2)?)?;
    let base = module.base_address();
    let image = symbols.module_image(module).await;
    let read = |address: u64, len: usize| image.read(address.checked_sub(base)?, len);
    crate::cpp_exception::thrown_type(code, parameters, &read)
}

/// An MSVC C++ exception still being dispatched on the crashing thread: the
/// EXCEPTION_RECORD that RaiseException built for a `throw` lies in the live
/// part of the stack (from the crash's stack pointer up) while the handlers
/// run, so an abort from std::terminate, or a fault in a catch block, still
/// has it. A record is taken only when it reads as one whole: the C++ code,
/// sane flags, the parameter count of the C++ ABI, its magic, a ThrowInfo
/// inside a module and (64-bit) that module's base, and a type read from
/// the tables.
async fn cpp_in_flight<T>(
    dump: &Minidump<'_, T>,
    memory: Option<&minidump::UnifiedMemoryList<'_>>,
    state: &ProcessState,
    symbols: &DumpSymbols<'_>,
    thread_id: u32,
) -> Option<crate::model::CppInFlight>
where
    T: std::ops::Deref<Target = [u8]>,
{
    use minidump::MinidumpThreadList;
    let threads = dump.get_stream::<MinidumpThreadList>().ok()?;
    let region = threads.get_thread(thread_id)?.stack_memory(memory?)?;
    let stack = state.threads.iter().find(|s| s.thread_id == thread_id)?;
    let sp = stack.frames.first()?.context.get_stack_pointer();
    let wide = !matches!(
        state.system_info.cpu.pointer_width(),
        minidump::system_info::PointerWidth::Bits32
    );
    let (bytes, base) = (region.bytes(), region.base_address());
    let start = usize::try_from(sp.checked_sub(base)?).ok()?;
    let end = bytes
        .len()
        .min(start.saturating_add(STACK_SEARCH_BYTES as usize));
    let word = |at: usize, wide: bool| -> Option<u64> {
        if wide {
            Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
        } else {
            Some(u64::from(u32::from_le_bytes(
                bytes.get(at..at + 4)?.try_into().ok()?,
            )))
        }
    };
    let align = if wide { 8 } else { 4 };
    let mut at = start.next_multiple_of(align);
    while at + 4 <= end {
        let here = at;
        at += align;
        if word(here, false) != Some(u64::from(crate::cpp_exception::CPP_EXCEPTION)) {
            continue;
        }
        // EXCEPTION_RECORD: code, flags, record, address, count, information[]
        // (pointers 8 bytes wide and 8-aligned on 64-bit).
        let (count_at, info_at, width) = if wide { (24, 32, 8) } else { (16, 20, 4) };
        let flags = word(here + 4, false)?;
        let count = word(here + count_at, false)?;
        let wanted = if wide { 4 } else { 3 };
        if flags & !0xff != 0 || count != wanted {
            continue;
        }
        let parameters: Vec<u64> = (0..count as usize)
            .map_while(|i| word(here + info_at + i * width, wide))
            .collect();
        if parameters.len() != count as usize {
            continue;
        }
        let Some(module) = state.modules.module_at_address(parameters[2]) else {
            continue;
        };
        if wide && parameters[3] != module.base_address() {
            continue;
        }
        let code = crate::cpp_exception::CPP_EXCEPTION;
        if let Some(cpp_type) = thrown_type(code, &parameters, state, symbols).await {
            return Some(crate::model::CppInFlight {
                cpp_type,
                record_address: base + here as u64,
            });
        }
    }
    None
}

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

fn file_kind(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
    }
    if kind.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

/// Turns the reader's terse errors into a sentence naming what is wrong.
fn read_error(error: minidump::Error, path: &Path, size: u64) -> DumpError {
    use minidump::Error as E;
    match error {
        E::FileNotFound | E::IoError => match std::fs::File::open(path) {
            Err(io) => DumpError::Unreadable(io),
            Ok(_) => DumpError::Corrupt(format!("could not map the file ({size} bytes)")),
        },
        // Too short for a header: only a prefix of the signature can tell a
        // cut-off minidump from some other small file.
        E::MissingHeader if !starts_like_minidump(path) => {
            DumpError::NotMinidump(describe_magic(path))
        }
        E::MissingHeader => DumpError::Truncated(format!(
            "{size} bytes, shorter than the {HEADER_SIZE}-byte minidump header"
        )),
        E::HeaderMismatch => DumpError::NotMinidump(describe_magic(path)),
        E::VersionMismatch => DumpError::UnsupportedVersion,
        E::MissingDirectory => DumpError::Truncated(format!(
            "the stream directory lies outside the file ({size} bytes)"
        )),
        other => DumpError::Corrupt(other.to_string()),
    }
}

fn process_error<T>(error: ProcessError, dump: &Minidump<'_, T>, size: u64) -> DumpError
where
    T: std::ops::Deref<Target = [u8]>,
{
    // The processor only says a required stream is missing; asking the
    // reader again tells whether it is absent or present but damaged.
    let why = |stream: &str, stream_type: u32, found: Result<(), minidump::Error>| match found {
        Err(_) if extends_past_end(dump, stream_type, size) => DumpError::Truncated(format!(
            "the {stream} stream extends past the end of the file ({size} bytes)"
        )),
        Err(minidump::Error::StreamNotFound) | Ok(()) => {
            let damage = directory_damage(dump, size)
                .map(|d| format!("; {d}"))
                .unwrap_or_default();
            DumpError::Corrupt(format!(
                "the dump has no {stream} stream (file is {size} bytes{damage})"
            ))
        }
        Err(e) => DumpError::Corrupt(format!(
            "the {stream} stream is damaged: {e} (file is {size} bytes)"
        )),
    };
    match error {
        ProcessError::MissingThreadList => why(
            "thread list",
            minidump_common::format::MINIDUMP_STREAM_TYPE::ThreadListStream as u32,
            dump.get_stream::<minidump::MinidumpThreadList>().map(drop),
        ),
        ProcessError::MissingSystemInfo => why(
            "system info",
            minidump_common::format::MINIDUMP_STREAM_TYPE::SystemInfoStream as u32,
            dump.get_stream::<minidump::MinidumpSystemInfo>().map(drop),
        ),
        ProcessError::MinidumpReadError(e) => DumpError::Corrupt(e.to_string()),
        ProcessError::UnknownError => DumpError::Corrupt("unknown processing error".to_string()),
    }
}

fn extends_past_end<T>(dump: &Minidump<'_, T>, stream_type: u32, size: u64) -> bool
where
    T: std::ops::Deref<Target = [u8]>,
{
    dump.all_streams().any(|entry| {
        entry.stream_type == stream_type
            && u64::from(entry.location.rva) + u64::from(entry.location.data_size) > size
    })
}

/// Counts stream directory entries that point past the end of the file: the
/// usual sign of a damaged or fuzzed dump, worth saying in the error.
fn directory_damage<T>(dump: &Minidump<'_, T>, size: u64) -> Option<String>
where
    T: std::ops::Deref<Target = [u8]>,
{
    let (mut seen, mut outside) = (0usize, 0usize);
    for entry in dump.all_streams() {
        seen += 1;
        if u64::from(entry.location.rva) + u64::from(entry.location.data_size) > size {
            outside += 1;
        }
    }
    (outside > 0).then(|| format!("{outside} of {seen} stream directory entries point outside it"))
}

fn starts_like_minidump(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    n > 0 && b"MDMP".starts_with(&head[..n])
}

/// The first bytes of a file that is not a minidump, printable and short.
fn describe_magic(path: &Path) -> String {
    use std::io::Read;
    let mut head = [0u8; 4];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    let text: String = head[..n]
        .iter()
        .flat_map(|b| std::ascii::escape_default(*b))
        .map(char::from)
        .collect();
    format!("\"{text}\"")
}

/// Frames in no loaded module but in an unloaded module's old range, named
/// from that module's symbols or binary found by its code id. Keyed by
/// instruction address.
type UnloadedNames = std::collections::HashMap<u64, UnloadedName>;

async fn name_unloaded_frames(state: &ProcessState, symbols: &DumpSymbols<'_>) -> UnloadedNames {
    let mut names = UnloadedNames::new();
    let frames = state.threads.iter().flat_map(|t| t.frames.iter());
    for frame in frames.filter(|f| f.module.is_none()) {
        if names.contains_key(&frame.instruction) {
            continue;
        }
        let Some(module) = state
            .unloaded_modules
            .modules_at_address(frame.instruction)
            .next()
        else {
            continue;
        };
        if let Some(name) = symbols
            .symbolize_unloaded(
                &module.name,
                module.code_identifier().map(|id| id.to_string()),
                module.raw.base_of_image,
                u64::from(module.raw.size_of_image),
                frame.instruction,
            )
            .await
        {
            names.insert(frame.instruction, name);
        }
    }
    names
}

/// Bytes of stack memory searched below the walked frames, at most.
const STACK_SEARCH_BYTES: u64 = 512 * 1024;
/// Hits kept per thread, nearest first.
const STACK_SEARCH_HITS: usize = 64;
/// A name from an export table is taken for a hit only this close after the
/// export: farther, the address is more likely data than code of it.
const STACK_SEARCH_EXPORT_REACH: u64 = 0x2000;

/// Whether a thread's walk says too little to stand alone: it broke off
/// (fewer than three frames) or is mostly stack scanning.
fn walk_is_poor(stack: &CallStack) -> bool {
    let frames = &stack.frames;
    let scanned = frames
        .iter()
        .filter(|f| f.trust == FrameTrust::Scan)
        .count();
    frames.len() < 3 || scanned * 2 >= frames.len()
}

/// For threads whose walk is poor: every pointer-sized word of stack memory
/// below the walked frames that points into a loaded module and names a
/// function there (what `dps` shows a debugger user). Keyed by thread id.
async fn search_stacks<T>(
    dump: &Minidump<'_, T>,
    memory: Option<&minidump::UnifiedMemoryList<'_>>,
    state: &ProcessState,
    symbols: &DumpSymbols<'_>,
) -> std::collections::HashMap<u32, Vec<crate::model::StackHit>>
where
    T: std::ops::Deref<Target = [u8]>,
{
    use minidump::MinidumpThreadList;
    let mut found = std::collections::HashMap::new();
    let Ok(threads) = dump.get_stream::<MinidumpThreadList>() else {
        return found;
    };
    let width: u64 = match state.system_info.cpu.pointer_width() {
        minidump::system_info::PointerWidth::Bits32 => 4,
        _ => 8,
    };
    for stack in state.threads.iter().filter(|s| walk_is_poor(s)) {
        let (Some(top), Some(last)) = (stack.frames.first(), stack.frames.last()) else {
            continue;
        };
        let Some(thread) = threads.get_thread(stack.thread_id) else {
            continue;
        };
        let Some(region) = memory.and_then(|list| thread.stack_memory(list)) else {
            continue;
        };
        let sp = top.context.get_stack_pointer();
        let bottom = last.context.get_stack_pointer();
        let bytes = region.bytes();
        let base = region.base_address();
        // The whole stack from the top: a scanned walk covers it with stale
        // and real addresses alike, a broken one stops early. Addresses the
        // walk already shows are not repeated.
        let from = sp.max(base);
        let end = base
            .saturating_add(bytes.len() as u64)
            .min(from.saturating_add(STACK_SEARCH_BYTES));
        let walked: std::collections::HashSet<u64> =
            stack.frames.iter().map(|f| f.instruction).collect();
        let mut hits: Vec<crate::model::StackHit> = Vec::new();
        let mut at = from.next_multiple_of(width);
        while at.saturating_add(width) <= end && hits.len() < STACK_SEARCH_HITS {
            let offset = (at - base) as usize;
            let word = match width {
                4 => bytes
                    .get(offset..offset + 4)
                    .map(|b| u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
                _ => bytes
                    .get(offset..offset + 8)
                    .and_then(|b| b.try_into().ok())
                    .map(u64::from_le_bytes),
            };
            at += width;
            let Some(word) = word.filter(|w| *w > 1) else {
                continue;
            };
            let Some(module) = state.modules.module_at_address(word) else {
                continue;
            };
            // A walked caller frame records its return address minus one.
            if walked.contains(&word)
                || walked.contains(&(word - 1))
                || hits.iter().any(|h| h.address == word)
            {
                continue;
            }
            let Some((function, function_base, source)) =
                symbols.name_address(module, word - 1).await
            else {
                continue;
            };
            let function_offset = word.wrapping_sub(function_base);
            if source == SymbolSource::Exports && function_offset > STACK_SEARCH_EXPORT_REACH {
                continue;
            }
            hits.push(crate::model::StackHit {
                below_walk: at - width > bottom,
                stack_offset: (at - width).wrapping_sub(sp),
                address: word,
                module: file_name(&module.code_file()).to_string(),
                function,
                function_offset,
                symbol_source: source,
            });
        }
        if !hits.is_empty() {
            found.insert(stack.thread_id, hits);
        }
    }
    found
}

fn build_report(
    state: &ProcessState,
    exception: Option<&MinidumpException>,
    symbols: &DumpSymbols<'_>,
    unloaded_names: &UnloadedNames,
) -> Report {
    let crashing_index = exception.and(state.requesting_thread);
    let os = state.system_info.os;
    // The crashing thread's instruction pointer: an access fault at that
    // very address is an execute fault.
    let crash_ip = crashing_index
        .and_then(|i| state.threads.get(i))
        .and_then(|t| t.frames.first())
        .map(|f| f.instruction);
    let exception = exception.map(|e| Exception {
        code: e.raw.exception_record.exception_code,
        name: state
            .exception_info
            .as_ref()
            .map(|info| info.reason.to_string())
            .unwrap_or_default(),
        address: state
            .exception_info
            .as_ref()
            .map(|info| info.address.0)
            .unwrap_or(e.raw.exception_record.exception_address),
        access_address: access_address(e, os, crash_ip),
        parameters: {
            let record = &e.raw.exception_record;
            let count = (record.number_parameters as usize).min(record.exception_information.len());
            record.exception_information[..count].to_vec()
        },
        abort: None,
        cpp_type: None,
        cpp_in_flight: None,
        thread_id: e.get_crashing_thread_id(),
        crash: true,
        not_a_crash: None,
    });

    let mut threads: Vec<Thread> = state
        .threads
        .iter()
        .enumerate()
        .map(|(i, stack)| build_thread(stack, Some(i) == crashing_index, symbols, unloaded_names))
        .collect();
    // The crashing thread first; the others keep the dump's order.
    threads.sort_by_key(|t| !t.crashing);

    // Symbol statistics are shared by every dump of the run: only the
    // modules this dump's frames lie in say anything about this dump.
    let needed: std::collections::HashSet<&str> = threads
        .iter()
        .flat_map(|t| t.frames.iter().filter_map(|f| f.module.as_deref()))
        .collect();
    let modules = state
        .modules
        .by_addr()
        .map(|m| build_module(m, symbols, &needed))
        .collect();
    let unloaded_modules = state
        .unloaded_modules
        .by_addr()
        .map(|m| {
            let base = m.raw.base_of_image;
            let end = base.saturating_add(u64::from(m.raw.size_of_image));
            let symbol_source = unloaded_names
                .iter()
                .find(|(address, _)| (base..end).contains(*address))
                .map_or(SymbolSource::None, |(_, name)| name.source);
            UnloadedModule {
                name: file_name(&m.name).to_string(),
                path: m.name.clone(),
                base,
                size: u64::from(m.raw.size_of_image),
                code_id: m.code_identifier().map(|id| id.to_string()),
                symbol_source,
            }
        })
        .collect();
    let mut warnings = soft_error_warnings(state);
    warnings.extend(symbols.warnings());

    let sys = &state.system_info;
    Report {
        path: String::new(),
        status: Status::Ok,
        error: None,
        error_kind: None,
        process: Some(Process {
            name: state
                .modules
                .main_module()
                .map(|m| file_name(&m.code_file()).to_string()),
            pid: state.process_id,
        }),
        system: Some(System {
            os: sys.os.long_name().to_string(),
            os_version: sys.format_os_version().map(|v| v.into_owned()),
            cpu: sys.cpu.to_string(),
            cpu_info: sys.cpu_info.clone(),
            cpu_count: sys.cpu_count,
        }),
        exception,
        threads,
        modules,
        unloaded_modules,
        warnings,
        exit_phase: Default::default(),
        diagnoses: Vec::new(),
        crash_signature: None,
    }
}

/// The data address of a memory access fault: ExceptionInformation[1] of
/// an access violation or in-page error on Windows; the fault address of
/// SIGSEGV or SIGBUS on Linux, of EXC_BAD_ACCESS on macOS. `None` for an
/// execute fault (DEP, a jump into unmapped code): what was touched there
/// is the instruction pointer itself, not data.
fn access_address(
    exception: &MinidumpException,
    os: minidump::system_info::Os,
    instruction: Option<u64>,
) -> Option<u64> {
    use minidump::system_info::Os;
    /// ExceptionInformation[0] of an access violation: the access was an
    /// instruction fetch.
    const EXECUTE: u64 = 8;
    let record = &exception.raw.exception_record;
    let code = record.exception_code;
    let address = match os {
        Os::Windows => {
            let access = matches!(code, 0xc000_0005 | 0xc000_0006)
                && record.number_parameters >= 2
                && record.exception_information[0] != EXECUTE;
            access.then(|| record.exception_information[1])
        }
        Os::Linux | Os::Android => matches!(code, 7 | 11).then_some(record.exception_address),
        Os::MacOs | Os::Ios => (code == 1).then_some(record.exception_address),
        _ => None,
    }?;
    (Some(address) != instruction).then_some(address)
}

fn build_thread(
    stack: &CallStack,
    crashing: bool,
    symbols: &DumpSymbols<'_>,
    unloaded_names: &UnloadedNames,
) -> Thread {
    Thread {
        id: stack.thread_id,
        name: stack.thread_name.clone(),
        crashing,
        exiting: None,
        exiting_in_stack: None,
        starting: None,
        blocked: None,
        walk: match stack.info {
            CallStackInfo::Ok => Walk::Ok,
            CallStackInfo::MissingContext => Walk::MissingContext,
            CallStackInfo::MissingMemory => Walk::MissingMemory,
            CallStackInfo::UnsupportedCpu => Walk::UnsupportedCpu,
            CallStackInfo::DumpThreadSkipped => Walk::DumpThreadSkipped,
        },
        stack_search: Vec::new(),
        frames: stack
            .frames
            .iter()
            .enumerate()
            .map(|(i, f)| build_frame(i, f, symbols, unloaded_names))
            .collect(),
    }
}

fn build_frame(
    index: usize,
    frame: &StackFrame,
    symbols: &DumpSymbols<'_>,
    unloaded_names: &UnloadedNames,
) -> Frame {
    let module = frame.module.as_ref();
    // An address in no loaded module may lie where an unloaded one used to be.
    // When several unloaded modules overlapped, the first by name is shown.
    let unloaded = if module.is_none() {
        frame
            .unloaded_modules
            .iter()
            .next()
            .map(|(name, offsets)| (name.clone(), offsets.iter().next().copied()))
    } else {
        None
    };
    let unloaded_name = unloaded
        .as_ref()
        .and_then(|_| unloaded_names.get(&frame.instruction));
    let symbol_source = match (&frame.function_name, unloaded_name) {
        (Some(_), _) => match symbols.frame_source(frame.instruction) {
            // A name set by the walker itself, not by a source we asked.
            SymbolSource::None => SymbolSource::Sym,
            source => source,
        },
        (None, Some(name)) => name.source,
        (None, None) => SymbolSource::None,
    };
    let function_guessed = match (&frame.function_name, unloaded_name) {
        (Some(_), _) => symbols.frame_guessed(frame.instruction),
        (None, Some(name)) => name.guessed,
        (None, None) => false,
    };
    Frame {
        index,
        function_guessed,
        instruction: frame.instruction,
        module: module.map(|m| file_name(&m.code_file()).to_string()),
        function: frame
            .function_name
            .clone()
            .or_else(|| unloaded_name.map(|n| n.function.clone())),
        module_offset: module.map(|m| frame.instruction.wrapping_sub(m.base_address())),
        function_offset: frame
            .function_base
            .map(|base| frame.instruction.wrapping_sub(base))
            .or_else(|| unloaded_name.map(|n| n.function_offset)),
        file: frame
            .source_file_name
            .clone()
            .or_else(|| unloaded_name.and_then(|n| n.file.clone())),
        line: frame
            .source_line
            .or_else(|| unloaded_name.and_then(|n| n.line)),
        trust: match frame.trust {
            FrameTrust::Context => Trust::Context,
            FrameTrust::PreWalked => Trust::Prewalked,
            FrameTrust::CallFrameInfo => Trust::Cfi,
            FrameTrust::FramePointer => Trust::FramePointer,
            FrameTrust::CfiScan => Trust::CfiScan,
            FrameTrust::Scan => Trust::Scan,
            FrameTrust::None => Trust::None,
        },
        symbol_source,
        unloaded_module: unloaded
            .as_ref()
            .map(|(name, _)| file_name(name).to_string()),
        unloaded_module_offset: unloaded.and_then(|(_, offset)| offset),
        inlines: frame
            .inlines
            .iter()
            .rev()
            .map(|inline| InlineFrame {
                function: inline.function_name.clone(),
                file: inline.source_file_name.clone(),
                line: inline.source_line,
            })
            .collect(),
    }
}

fn build_module(
    module: &MinidumpModule,
    symbols: &DumpSymbols<'_>,
    needed: &std::collections::HashSet<&str>,
) -> Module {
    let path = module.code_file().into_owned();
    let name = file_name(&path).to_string();
    let outcome = symbols
        .module_outcome(module.base_address())
        .filter(|_| needed.contains(name.as_str()));
    Module {
        base: module.base_address(),
        size: module.size(),
        version: module.version().map(|v| v.into_owned()),
        debug_file: module.debug_file().map(|f| f.into_owned()),
        debug_id: module
            .debug_identifier()
            .map(|id| id.breakpad().to_string()),
        code_id: module.code_identifier().map(|id| id.to_string()),
        symbols: outcome
            .as_ref()
            .map_or(ModuleSymbols::NotNeeded, |o| o.status),
        symbol_source: outcome.as_ref().map_or(SymbolSource::None, |o| o.source),
        symbol_file: outcome.as_ref().and_then(|o| o.file.clone()),
        unwind_info: outcome.as_ref().and_then(|o| o.unwind.clone()),
        symbols_tried: outcome.map(|o| o.tried).unwrap_or_default(),
        name,
        path,
    }
}

/// Streams the processor could not read are worth a line each: they explain
/// a missing exception, module list or thread name.
fn soft_error_warnings(state: &ProcessState) -> Vec<String> {
    let Some(serde_json::Value::Object(map)) = &state.soft_errors else {
        return Vec::new();
    };
    map.iter()
        .map(|(key, value)| format!("{key}: {}", Compact(value)))
        .collect()
}

/// A JSON value on one line, strings without their quotes.
struct Compact<'a>(&'a serde_json::Value);

impl fmt::Display for Compact<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            serde_json::Value::String(s) => f.write_str(s),
            other => write!(f, "{other}"),
        }
    }
}
