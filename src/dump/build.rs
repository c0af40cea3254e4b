//! The typed report built from minidump-processor's state: threads,
//! frames (with names of frames in unloaded modules), modules, the
//! exception and what the processor could not read.

use crate::model::without_symbol_version;
use crate::model::{
    file_name, Exception, Frame, InlineFrame, Module, ModuleSymbols, Process, Report, Source,
    SymbolSource, System, Thread, Trust, UnloadedModule, Walk,
};
use crate::symbols::provider::UnloadedName;
use crate::symbols::DumpSymbols;
use minidump::{MinidumpException, MinidumpModule, MinidumpUnloadedModule, Module as _};
use minidump_processor::ProcessState;
use minidump_unwind::{CallStack, CallStackInfo, FrameTrust, StackFrame};
use std::fmt;

/// Frames in no loaded module but in an unloaded module's old range, named
/// from that module's symbols or binary found by its code id. Keyed by
/// instruction address.
pub(super) type UnloadedNames = std::collections::HashMap<u64, UnloadedName>;

pub(super) async fn name_unloaded_frames(
    state: &ProcessState,
    symbols: &DumpSymbols<'_>,
) -> UnloadedNames {
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

pub(super) fn build_report(
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
    let exception = exception.map(|e| build_exception(e, state, crash_ip));

    let mut threads: Vec<Thread> = state
        .threads
        .iter()
        .enumerate()
        .map(|(i, stack)| build_thread(stack, Some(i) == crashing_index, symbols, unloaded_names))
        .collect();
    if os == minidump::system_info::Os::Linux {
        for (thread, stack) in threads.iter_mut().zip(&state.threads) {
            thread.in_system_call = stack
                .frames
                .first()
                .and_then(|f| in_system_call(&f.context));
        }
    }
    // The crashing thread first; the others keep the dump's order.
    threads.sort_by_key(|t| !t.crashing);
    let exception = exception.map(|mut e| {
        e.ip_in_no_module = threads
            .first()
            .filter(|t| t.crashing)
            .and_then(|t| t.frames.first())
            .is_some_and(|top| top.module.is_none() && top.unloaded_module.is_none());
        e
    });

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
        .map(|m| unloaded_module(m, unloaded_names))
        .collect();
    let mut warnings = soft_error_warnings(state);
    warnings.extend(symbols.warnings());

    Report {
        process: Some(process_of(state)),
        system: Some(system_of(&state.system_info)),
        exception,
        threads,
        modules,
        unloaded_modules,
        warnings,
        ..Report::new(String::new(), Source::default())
    }
}

/// The exception record as the report shows it.
fn build_exception(
    e: &MinidumpException,
    state: &ProcessState,
    crash_ip: Option<u64>,
) -> Exception {
    let os = state.system_info.os;
    Exception {
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
        ip_in_no_module: false,
    }
}

/// A module unloaded before the dump was written, and where the names of
/// the frames in it came from.
fn unloaded_module(m: &MinidumpUnloadedModule, unloaded_names: &UnloadedNames) -> UnloadedModule {
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
}

/// The process as the dump records it.
fn process_of(state: &ProcessState) -> Process {
    Process {
        name: state
            .modules
            .main_module()
            .map(|m| file_name(&m.code_file()).to_string()),
        pid: state.process_id,
        command_line: None,
        dump_time: utc(state.time),
        start_time: state.process_create_time.and_then(utc),
        uptime_seconds: state
            .process_create_time
            .and_then(|start| state.time.duration_since(start).ok())
            .map(|d| d.as_secs_f64()),
    }
}

/// The system as the dump records it.
fn system_of(sys: &minidump_unwind::SystemInfo) -> System {
    System {
        os: sys.os.long_name().to_string(),
        os_version: sys.format_os_version().map(|v| v.into_owned()),
        cpu: sys.cpu.to_string(),
        cpu_info: sys.cpu_info.clone(),
        cpu_count: sys.cpu_count,
    }
}

/// The data address of a memory access fault: ExceptionInformation[1] of
/// an access violation or in-page error on Windows; the fault address of
/// SIGSEGV or SIGBUS on Linux, of EXC_BAD_ACCESS on macOS. `None` for an
/// execute fault (DEP, a jump into unmapped code): what was touched there
/// is the instruction pointer itself, not data.
pub(super) fn access_address(
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

/// A time as RFC 3339 in UTC, second precision; `None` for the epoch
/// itself (a writer that recorded no time).
fn utc(time: std::time::SystemTime) -> Option<String> {
    let seconds = time.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
    if seconds == 0 {
        return None;
    }
    let stamp = jiff::Timestamp::from_second(i64::try_from(seconds).ok()?).ok()?;
    Some(stamp.to_string())
}

/// Whether a Linux thread was stopped inside a system call: a thread
/// stopped (by ptrace, a dump writer or the kernel writing a core) while it
/// sleeps in a system call has the kernel's restart code (-ERESTARTSYS and
/// its kin, -512 to -516) in its return register (x86-64 rax, arm64 x0),
/// or -EINTR for the calls a stop ends instead (epoll_wait and the others
/// signal(7) lists). `None` for other CPUs.
pub(super) fn in_system_call(context: &minidump::MinidumpContext) -> Option<bool> {
    const EINTR: i64 = -4;
    let value = context
        .get_register("rax")
        .or_else(|| context.get_register("x0"))? as i64;
    Some((-516..=-512).contains(&value) || value == EINTR)
}

pub(super) fn build_thread(
    stack: &CallStack,
    crashing: bool,
    symbols: &DumpSymbols<'_>,
    unloaded_names: &UnloadedNames,
) -> Thread {
    Thread {
        name: stack.thread_name.clone(),
        crashing,
        walk: match stack.info {
            CallStackInfo::Ok => Walk::Ok,
            CallStackInfo::MissingContext => Walk::MissingContext,
            CallStackInfo::MissingMemory => Walk::MissingMemory,
            CallStackInfo::UnsupportedCpu => Walk::UnsupportedCpu,
            CallStackInfo::DumpThreadSkipped => Walk::DumpThreadSkipped,
        },
        // The registers as the dump recorded them (frame 0's context), for
        // the crashing thread only: what people read first after the stack.
        registers: match stack.frames.first() {
            Some(top) if crashing => top
                .context
                .valid_registers()
                .map(|(name, value)| (name.to_string(), value))
                .collect(),
            _ => Vec::new(),
        },
        frames: stack
            .frames
            .iter()
            .enumerate()
            .map(|(i, f)| build_frame(i, f, symbols, unloaded_names))
            .collect(),
        ..Thread::new(stack.thread_id)
    }
}

pub(super) fn build_frame(
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
        // Shown without an ELF symbol version (`@@GLIBC_2.34`).
        function: frame
            .function_name
            .as_deref()
            .map(|f| without_symbol_version(f).to_string())
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
                function: without_symbol_version(&inline.function_name).to_string(),
                file: inline.source_file_name.clone(),
                line: inline.source_line,
            })
            .collect(),
        kind: Default::default(),
    }
}

pub(super) fn build_module(
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
        // The writer's (a PE's version resource, an ELF library's file
        // name); else an ELF file's package note, where this machine has
        // the same build.
        version: module.version().map(|v| v.into_owned()).or_else(|| {
            let code_id = module.code_identifier().map(|id| id.to_string());
            (path.starts_with('/'))
                .then(|| super::package_note::package_version(&path, code_id.as_deref()))
                .flatten()
        }),
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
pub(super) fn soft_error_warnings(state: &ProcessState) -> Vec<String> {
    let Some(serde_json::Value::Object(map)) = &state.soft_errors else {
        return Vec::new();
    };
    map.iter()
        .map(|(key, value)| format!("{key}: {}", Compact(value)))
        .collect()
}

/// A JSON value on one line, strings without their quotes.
pub(super) struct Compact<'a>(&'a serde_json::Value);

impl fmt::Display for Compact<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            serde_json::Value::String(s) => f.write_str(s),
            other => write!(f, "{other}"),
        }
    }
}
