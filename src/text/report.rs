//! A trace as read, and the report made of it: threads and frames as the
//! text gave them, the crash it names (or its frames show), the exit the
//! log states, and what the text left out.

use crate::model::{
    Exception, Frame, FrameKind, Module, ModuleSymbols, Process, Report, Source, SourceKind,
    Status, SymbolSource, System, Thread, Walk,
};

use super::formats::{classify, Format, Line, TextFrame};

/// Lines before a trace searched for what the runtime said (the crash, the
/// exit), and after it.
const CONTEXT_BEFORE: usize = 40;
const CONTEXT_AFTER: usize = 20;

/// The lines around a trace searched for what the runtime said: up to
/// CONTEXT_BEFORE before it and CONTEXT_AFTER after, never into the traces
/// before and after it (`trace.around`).
fn context(trace: &Trace, lines: &[Option<String>]) -> (usize, usize) {
    let (after_previous, before_next) = trace.around;
    let from = trace
        .first_line
        .saturating_sub(CONTEXT_BEFORE + 1)
        .max(after_previous);
    let to = (trace.last_line + CONTEXT_AFTER)
        .min(lines.len())
        .min(before_next.saturating_sub(1).max(trace.last_line));
    (from, to.max(from))
}

/// One trace as read.
#[derive(Debug, Default)]
pub(super) struct Trace {
    /// The last line of the trace before this one and the first of the
    /// one after (0 and `usize::MAX` when there are none).
    pub(super) around: (usize, usize),
    pub(super) format: Option<Format>,
    /// 1-based line numbers.
    pub(super) first_line: usize,
    pub(super) last_line: usize,
    pub(super) threads: Vec<TextThread>,
    pub(super) crash: Option<(String, Option<u64>)>,
    /// The line the crash was named on.
    pub(super) crash_line: usize,
    pub(super) elided: bool,
}

#[derive(Debug, Default)]
pub(super) struct TextThread {
    /// The debugger's own number for it (gdb's `Thread 2`).
    pub(super) number: Option<u64>,
    pub(super) id: Option<u64>,
    pub(super) name: Option<String>,
    pub(super) current: bool,
    /// WinDbg's `#` mark: the thread of the last event.
    pub(super) event: bool,
    pub(super) frames: Vec<TextFrame>,
    pub(super) format: Option<Format>,
    /// The line of its header, or of its first frame.
    pub(super) line: usize,
}

impl Trace {
    pub(super) fn has_frames(&self) -> bool {
        self.threads.iter().any(|t| !t.frames.is_empty())
    }

    /// The thread frames go to; a new one at `line` when there is none.
    pub(super) fn thread(&mut self, line: usize) -> &mut TextThread {
        if self.threads.is_empty() {
            self.threads.push(TextThread {
                line,
                ..TextThread::default()
            });
        }
        self.threads.last_mut().expect("a thread")
    }
}

pub(super) fn to_report(trace: &Trace, lines: &[Option<String>]) -> Report {
    let format = trace.format.unwrap_or(Format::Gdb);
    let mut threads = Vec::new();
    let mut modules: Vec<String> = Vec::new();
    let crash = trace
        .crash
        .clone()
        .or_else(|| crash_near(trace, lines))
        .or_else(|| crash_in_frames(trace, lines));
    // Which thread crashed: the one the crash line names (by the
    // debugger's number for it, or its id), else the one the format marks
    // as the last event's (WinDbg's `#`), else as current, else the first.
    let crashing = crash.as_ref().map(|(_, named)| {
        let threads = || trace.threads.iter();
        threads()
            .position(|t| named.is_some() && t.number == *named)
            .or_else(|| threads().position(|t| named.is_some() && t.id == *named))
            .or_else(|| trace.threads.iter().position(|t| t.event))
            .or_else(|| trace.threads.iter().position(|t| t.current))
            .unwrap_or(0)
    });
    for (i, text_thread) in trace.threads.iter().enumerate() {
        // A thread without frames is kept when it is the one that crashed
        // (faulthandler's "<no Python frame>").
        if text_thread.frames.is_empty() && Some(i) != crashing {
            continue;
        }
        let outermost_first = text_thread.format.unwrap_or(format).outermost_first();
        let mut frames: Vec<&TextFrame> = text_thread.frames.iter().collect();
        if outermost_first {
            frames.reverse();
        }
        let frames: Vec<Frame> = frames
            .into_iter()
            .enumerate()
            .map(|(index, f)| {
                if let Some(module) = &f.module {
                    if !modules.iter().any(|m| m.eq_ignore_ascii_case(module)) {
                        modules.push(module.clone());
                    }
                }
                to_frame(index, f)
            })
            .collect();
        threads.push(Thread {
            // Text gives thread ids only sometimes: otherwise their order.
            id: text_thread.id.map_or(i as u32 + 1, |id| id as u32),
            name: text_thread.name.clone(),
            crashing: Some(i) == crashing,
            exiting: None,
            exiting_in_stack: None,
            starting: None,
            blocked: None,
            wait: None,
            holds_gil: false,
            walk: Walk::Ok,
            frames,
            stack_search: Vec::new(),
            registers: Vec::new(),
        });
    }
    threads.sort_by_key(|t| !t.crashing);
    let windows = is_windows(trace, &modules, crash.as_ref().map(|(w, _)| w.as_str()));
    let exception = crash.as_ref().and_then(|(what, _)| {
        let thread = threads.iter().find(|t| t.crashing)?;
        let (code, name) = crash_code(what, windows);
        Some(Exception {
            code,
            name,
            address: 0,
            access_address: None,
            parameters: Vec::new(),
            abort: None,
            cpp_type: None,
            cpp_in_flight: None,
            thread_id: thread.id,
            crash: true,
            not_a_crash: None,
            ip_in_no_module: false,
        })
    });
    let mut warnings = Vec::new();
    if trace.elided {
        warnings.push("the trace leaves frames out ([External Code], `...` or a note): what is shown is not the whole stack".to_string());
    }
    if crash.is_none() {
        warnings.push("the text names no crash: read as a hang or a live stack".to_string());
    }
    if format == Format::WinDbg {
        warnings.push(
            "WinDbg names modules without their extension: each is taken as NAME.dll".to_string(),
        );
    }
    Report {
        path: String::new(),
        status: Status::Ok,
        error: None,
        error_kind: None,
        process: Some(Process::default()),
        system: Some(System {
            os: if windows {
                "Windows NT"
            } else if modules.iter().any(|m| m.ends_with(".dylib")) {
                "Mac OS X"
            } else {
                "Linux"
            }
            .to_string(),
            os_version: None,
            cpu: "unknown".to_string(),
            cpu_info: None,
            cpu_count: 0,
        }),
        exception,
        threads,
        modules: modules
            .into_iter()
            .map(|name| Module {
                path: name.clone(),
                name,
                base: 0,
                size: 0,
                version: None,
                debug_file: None,
                debug_id: None,
                code_id: None,
                symbols: ModuleSymbols::NotNeeded,
                symbol_source: SymbolSource::None,
                symbol_file: None,
                symbols_tried: Vec::new(),
                unwind_info: None,
            })
            .collect(),
        unloaded_modules: Vec::new(),
        warnings,
        exit_phase: Default::default(),
        diagnoses: Vec::new(),
        crash_signature: None,
        capture: None,
        source: Source {
            kind: SourceKind::Text,
            format: Some(format.name().to_string()),
            line: Some(trace.first_line),
            exit_evidence: exit_said(trace, lines),
        },
    }
}

fn to_frame(index: usize, f: &TextFrame) -> Frame {
    let mut frame = Frame::from_text(index);
    frame.instruction = f.address.unwrap_or(0);
    frame.module = f.module.clone();
    frame.function = f.function.clone();
    frame.function_offset = f.function_offset;
    frame.module_offset = f.module_offset;
    frame.file = f.file.clone();
    frame.line = f.line;
    if f.python {
        frame.kind = FrameKind::Python;
    }
    frame
}

/// A crash named near the trace but outside it (faulthandler's "Fatal
/// Python error" a few lines up, an exit status after it).
fn crash_near(trace: &Trace, lines: &[Option<String>]) -> Option<(String, Option<u64>)> {
    let (from, to) = context(trace, lines);
    lines[from..to].iter().flatten().find_map(|line| {
        let lower = line.to_ascii_lowercase();
        if let Some(Line::Crash { what, thread }) = classify(line, None) {
            return Some((what, thread));
        }
        if let Some(c) = super::formats::SIGNAL_SAID.captures(line) {
            let name = match c.get(1).map(|n| n.as_str()) {
                Some("4") => "SIGILL".to_string(),
                Some("6") => "SIGABRT".to_string(),
                Some("7") => "SIGBUS".to_string(),
                Some("8") => "SIGFPE".to_string(),
                Some(_) => "SIGSEGV".to_string(),
                None => c[2].to_ascii_uppercase(),
            };
            return Some((name, None));
        }
        for (needle, what) in [
            ("0xc0000005", "access violation"),
            ("3221225477", "access violation"),
            ("-1073741819", "access violation"),
            ("0xc0000409", "stack buffer overrun"),
            ("0xc0000374", "heap corruption"),
            ("segmentation fault", "SIGSEGV"),
            ("exit code 139", "SIGSEGV"),
            ("exit code 134", "SIGABRT"),
        ] {
            if lower.contains(needle) {
                return Some((what.to_string(), None));
            }
        }
        None
    })
}

/// A crash the frames themselves show when no line names one: a thread
/// in `abort`/`raise` near its top (the process aborting), Rust's panic
/// entry points (a panic), or gdb's
/// `<signal handler called>` frame (a signal was being handled).
fn crash_in_frames(trace: &Trace, lines: &[Option<String>]) -> Option<(String, Option<u64>)> {
    const ABORTING: [&str; 9] = [
        "raise",
        "abort",
        "__GI_raise",
        "__GI_abort",
        "__pthread_kill",
        "__pthread_kill_implementation",
        "pthread_kill",
        "__abort_message",
        "std::terminate",
    ];
    for thread in &trace.threads {
        let aborting = thread.frames.iter().take(8).any(|f| {
            f.function
                .as_deref()
                .map(crate::model::bare_name)
                .is_some_and(|name| {
                    ABORTING.contains(&name.trim_start_matches('_').trim_start_matches("GI_"))
                        || ABORTING.contains(&name)
                })
        });
        if aborting {
            return Some((
                "abort (the trace shows the process aborting)".to_string(),
                thread.id,
            ));
        }
        // Rust's panic entry points: a backtrace pasted without its
        // `thread '...' panicked` line still shows the panic.
        let panicking = thread.frames.iter().take(16).any(|f| {
            f.function.as_deref().is_some_and(|name| {
                name == "rust_begin_unwind"
                    || name.ends_with("rust::rust_begin_unwind")
                    || name.starts_with("core::panicking::panic")
                    || name.starts_with("std::panicking::begin_panic")
            })
        });
        if panicking {
            return Some((
                "panic (the trace shows a Rust panic)".to_string(),
                thread.id,
            ));
        }
    }
    // A call through a null pointer: the top frame at address 0.
    if let Some(thread) = trace.threads.iter().find(|t| {
        t.frames
            .first()
            .is_some_and(|f| f.address == Some(0) && f.function.is_none())
    }) {
        return Some((
            "segmentation fault (the top frame is at address 0)".to_string(),
            thread.id,
        ));
    }
    let from = trace.first_line.saturating_sub(1);
    let to = trace.last_line.min(lines.len());
    lines[from..to]
        .iter()
        .flatten()
        .any(|l| l.contains("<signal handler called>"))
        .then(|| {
            (
                "signal (a signal handler frame in the trace)".to_string(),
                None,
            )
        })
}

/// A runtime's own words, near the trace, that the process was exiting.
fn exit_said(trace: &Trace, lines: &[Option<String>]) -> Option<String> {
    const SAID: [&str; 10] = [
        "python is finalizing",
        "at interpreter shutdown",
        "interpreter is finalizing",
        "likely shutting down",
        "during python finalization",
        "_py_finalize",
        "driver shutting down",
        "cudaerrorcudartunloading",
        "cuda driver is shutting down",
        "is in the process of shutting down",
    ];
    let (from, to) = context(trace, lines);
    let said = lines[from..to].iter().flatten().find_map(|line| {
        let lower = line.to_ascii_lowercase();
        SAID.iter()
            .any(|said| lower.contains(said))
            .then(|| line.trim().chars().take(200).collect())
    });
    said.or_else(|| rust_main_tls_destroyed(&lines[from..to]))
}

/// Rust's panic when the main thread uses a thread-local whose destructor
/// already ran (`thread 'main' panicked at ...` with "cannot access a
/// Thread Local Storage value during or after destruction", or the older
/// "a TLS value during or after it is destroyed", on the same line or the
/// next). The main thread's thread-locals are destroyed only by process
/// exit (glibc and macOS run them from exit(), Windows from the process
/// detach callback); another thread's die when that thread ends, which
/// says nothing of the process.
fn rust_main_tls_destroyed(lines: &[Option<String>]) -> Option<String> {
    let lines: Vec<&str> = lines.iter().flatten().map(String::as_str).collect();
    lines.iter().enumerate().find_map(|(i, line)| {
        let panicked = line.trim_start().starts_with("thread 'main' panicked");
        let tls = |l: &str| l.contains("value during or after") && l.contains("destr");
        let said = [Some(*line), lines.get(i + 1).copied()]
            .into_iter()
            .flatten()
            .find(|l| tls(l))?;
        panicked.then(|| said.trim().chars().take(200).collect())
    })
}

fn is_windows(trace: &Trace, modules: &[String], crash: Option<&str>) -> bool {
    matches!(trace.format, Some(Format::WinDbg | Format::VisualStudio))
        || modules.iter().any(|m| {
            let m = m.to_ascii_lowercase();
            m.ends_with(".dll")
                || m.ends_with(".exe")
                || m.ends_with(".pyd")
                || m == "ntdll"
                || m == "kernelbase"
                || m == "kernel32"
        })
        || crash.is_some_and(|c| {
            let c = c.to_ascii_lowercase();
            c.contains("access violation") || c.starts_with("c0000") || c.contains("0xc0000")
        })
}

/// The exception code and name for what the text says crashed.
fn crash_code(what: &str, windows: bool) -> (u32, String) {
    // An error compute-sanitizer reports is no signal and no abort: the
    // process goes on. It is the failure the trace is about, by its name.
    if what.starts_with("CUDA API error ") || what.starts_with("compute-sanitizer: ") {
        return (0, what.to_string());
    }
    let lower = what.to_ascii_lowercase();
    if let Ok(code) = u32::from_str_radix(lower.trim_start_matches("0x"), 16) {
        if lower.len() >= 8 {
            return (code, format!("exception {code:#010x}"));
        }
    }
    let pairs: [(&str, u32, u32, &str); 13] = [
        (
            "access violation",
            0xC000_0005,
            11,
            "EXCEPTION_ACCESS_VIOLATION",
        ),
        ("segmentation fault", 0xC000_0005, 11, "SIGSEGV"),
        ("segv", 0xC000_0005, 11, "SIGSEGV"),
        ("exc_bad_access", 0xC000_0005, 11, "EXC_BAD_ACCESS"),
        ("sigabrt", 0xC000_0409, 6, "SIGABRT"),
        ("sigsegv", 0xC000_0005, 11, "SIGSEGV"),
        (
            "stack overflow",
            0xC000_00FD,
            11,
            "EXCEPTION_STACK_OVERFLOW",
        ),
        (
            "stack buffer overrun",
            0xC000_0409,
            6,
            "STATUS_STACK_BUFFER_OVERRUN",
        ),
        ("heap corruption", 0xC000_0374, 6, "STATUS_HEAP_CORRUPTION"),
        ("abort", 0xC000_0409, 6, "SIGABRT"),
        ("sigbus", 0xC000_0005, 7, "SIGBUS"),
        ("floating", 0xC000_0094, 8, "SIGFPE"),
        ("sigfpe", 0xC000_0094, 8, "SIGFPE"),
    ];
    for (needle, win, sig, name) in pairs {
        if lower.contains(needle) {
            return if windows {
                (win, name.to_string())
            } else {
                (sig, name.to_string())
            };
        }
    }
    if lower.contains("sigill") || lower.contains("illegal instruction") {
        return if windows {
            (0xC000_001D, "EXCEPTION_ILLEGAL_INSTRUCTION".into())
        } else {
            (4, "SIGILL".into())
        };
    }
    // A crash named otherwise (a panic, a sanitizer report): an abort.
    if windows {
        (0xC000_0409, what.to_string())
    } else {
        (6, what.to_string())
    }
}
