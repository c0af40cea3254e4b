//! What stopped the process a trace shows: the crash a line names (a
//! signal, an exception code, an exit status near the trace), the crash
//! its frames show (abort, a Rust panic, a null top frame, a signal
//! handler frame), what the log's messages say (a terminate, a heap check,
//! an exit status, a WER record), or, when none says, what the top frame
//! of the stopped thread suggests: a wait or a sleep is a hang, anything
//! else most likely a crash, said as an inference.

use crate::model::{Message, MessageKind};

use super::formats::{Format, TextFrame, SIGNAL_SAID};
use super::trace::Trace;

/// How a trace's stop is known: named by the text, or inferred.
pub(super) struct Stop {
    /// What crashed, in words `code` reads (`SIGSEGV`, `c0000005`, ...).
    pub what: String,
    /// The thread it names (the debugger's number or the thread's id).
    pub thread: Option<u64>,
    /// Not named anywhere: inferred from the top frame (said as such).
    pub inferred: Option<String>,
    /// The exception's parameters the text gives (a fail-fast's code).
    pub parameters: Vec<u64>,
}

impl Stop {
    fn named(what: impl Into<String>, thread: Option<u64>) -> Stop {
        Stop {
            what: what.into(),
            thread,
            inferred: None,
            parameters: Vec::new(),
        }
    }

    /// A crash no line names, inferred (`how`: `from the top frame`), with
    /// why, for the report's warning. `code` reads any `crash (inferred...`
    /// as a crash of no known signal.
    fn inferred_crash(how: &str, thread: Option<u64>, why: String) -> Stop {
        Stop {
            what: format!("crash (inferred {how})"),
            thread,
            inferred: Some(why),
            parameters: Vec::new(),
        }
    }
}

/// The crash a line near the trace names, outside it (faulthandler's
/// "Fatal Python error" a few lines up, a handler's `signal 11` line).
pub(super) fn crash_near(lines: &[Option<String>], (from, to): (usize, usize)) -> Option<Stop> {
    lines[from..to].iter().flatten().find_map(|line| {
        if let Some(super::formats::Line::Crash { what, thread }) =
            super::formats::classify(line, None)
        {
            return Some(Stop::named(what, thread));
        }
        let c = SIGNAL_SAID.captures(line)?;
        let name = match c.get(1).map(|n| n.as_str()) {
            Some("4") => "SIGILL".to_string(),
            Some("6") => "SIGABRT".to_string(),
            Some("7") => "SIGBUS".to_string(),
            Some("8") => "SIGFPE".to_string(),
            Some(_) => "SIGSEGV".to_string(),
            None => c[2].to_ascii_uppercase(),
        };
        Some(Stop::named(name, None))
    })
}

/// Lines just above a trace searched for a hang dumper's words.
const HANG_DUMP_BEFORE: usize = 3;

static HANG_DUMP_BANNER: std::sync::LazyLock<regex_lite::Regex> = std::sync::LazyLock::new(|| {
    regex_lite::Regex::new(r"^(?:Timeout \(\d+:\d\d:\d\d(?:\.\d+)?\)!|\+{3,} Timeout \+{3,})")
        .expect("hang dump banner")
});
static HANG_WORD: std::sync::LazyLock<regex_lite::Regex> = std::sync::LazyLock::new(|| {
    regex_lite::Regex::new(
        r"(?i)\b(?:time ?out|timed out|hung|hang|hanging|watchdog|deadlock|deadlocked|stuck)\b",
    )
    .expect("hang word")
});
static DUMP_WORD: std::sync::LazyLock<regex_lite::Regex> = std::sync::LazyLock::new(|| {
    regex_lite::Regex::new(r"(?i)\b(?:stacks?|backtraces?|tracebacks?|dump|dumping|dumped)\b")
        .expect("dump word")
});

/// The line that says the trace was dumped because the process hung or
/// timed out, when one does (faulthandler's `dump_traceback_later`
/// `Timeout (0:00:05)!`, pytest-timeout's `+++ Timeout +++`, a watchdog's
/// "timeout ... dumping stack"), at the trace's first line or just above
/// it. Such a dump is taken by a signal handler or a watchdog: its own
/// frames on top (the handler, `raise`, `abort`) and the abort that ends
/// it are the dumper's, not a crash of the program.
pub(super) fn hang_dump(trace: &Trace, lines: &[Option<String>]) -> Option<String> {
    let first = trace.first_line.saturating_sub(1);
    let from = first.saturating_sub(HANG_DUMP_BEFORE).max(trace.around.0);
    let to = (first + 1).min(lines.len());
    lines.get(from..to)?.iter().flatten().find_map(|line| {
        let line = line.trim();
        (HANG_DUMP_BANNER.is_match(line) || (HANG_WORD.is_match(line) && DUMP_WORD.is_match(line)))
            .then(|| line.chars().take(120).collect())
    })
}

/// A crash the frames themselves show when no line names one: a thread
/// in `abort`/`raise` near its top (the process aborting), Rust's panic
/// entry points (a panic), a top frame at address 0 (a call through a null
/// pointer), or gdb's `<signal handler called>` frame.
pub(super) fn crash_in_frames(trace: &Trace, lines: &[Option<String>]) -> Option<Stop> {
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
            return Some(Stop::named(
                "abort (the trace shows the process aborting)",
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
            return Some(Stop::named(
                "panic (the trace shows a Rust panic)",
                thread.id,
            ));
        }
    }
    if let Some(thread) = trace.threads.iter().find(|t| {
        t.frames
            .first()
            .is_some_and(|f| f.address == Some(0) && f.function.is_none())
    }) {
        return Some(Stop::named(
            "segmentation fault (the top frame is at address 0)",
            thread.id,
        ));
    }
    if let Some((thread, name)) = trace.threads.iter().find_map(|t| {
        t.frames
            .iter()
            .take(3)
            .find_map(|f| f.function.as_deref().filter(|n| crash_handler(n)))
            .map(|name| (t, name))
    }) {
        return Some(Stop::named(
            format!("crash (the program's own crash handler `{name}` is on top of the stack)"),
            thread.id,
        ));
    }
    let from = trace.first_line.saturating_sub(1);
    let to = trace.last_line.min(lines.len());
    lines[from..to]
        .iter()
        .flatten()
        .any(|l| l.contains("<signal handler called>"))
        .then(|| Stop::named("signal (a signal handler frame in the trace)", None))
}

/// A program's own handler of a crash signal, which prints the stack it
/// is on (`CRT_handleSIGSEGV`, `segv_handler`, `CrashHandler::OnSignal`):
/// named for a crash signal or for crashing. A handler of SIGINT or SIGTERM
/// is not one.
fn crash_handler(name: &str) -> bool {
    const CRASH: [&str; 7] = [
        "sigsegv", "segv", "sigbus", "sigill", "sigfpe", "segfault", "crash",
    ];
    let lower = crate::model::bare_name(name).to_ascii_lowercase();
    let handler = lower.contains("handle") || lower.contains("handler");
    handler && CRASH.iter().any(|w| lower.contains(w))
}

/// The failure the log's messages say, when no line names a crash: the
/// runtime's reason to abort first (terminate, a pure virtual call, a heap
/// check, a failed CHECK, a fatal Python error), then how the process
/// ended (an exit status, a WER record), then a CUDA teardown error (which
/// is a failure without a crash).
pub(super) fn from_messages(messages: &[Message]) -> Option<Stop> {
    let first = |kinds: &[MessageKind]| messages.iter().find(|m| kinds.contains(&m.kind));
    // (CPython's fatal error ends in abort().)
    if first(&[
        MessageKind::PythonFatalError,
        MessageKind::Terminate,
        MessageKind::PureVirtualCall,
        MessageKind::HeapCorruption,
        MessageKind::CheckFailed,
        MessageKind::AssertionFailed,
    ])
    .is_some()
    {
        return Some(Stop::named("SIGABRT", None));
    }
    if let Some(m) = first(&[
        MessageKind::DebuggerAnalysis,
        MessageKind::ExitStatus,
        MessageKind::WindowsErrorReport,
    ])
    .filter(|m| m.meaning.is_some())
    {
        let meaning = m.meaning.as_deref().unwrap_or("");
        // A Windows status: its code, which says more than a word.
        let code = meaning
            .split("(0x")
            .nth(1)
            .and_then(|rest| rest.get(..8))
            .filter(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()));
        return Some(match code {
            Some(hex) => Stop::named(hex.to_ascii_lowercase(), None),
            None => Stop::named(meaning, None),
        });
    }
    first(&[MessageKind::CudaRuntimeUnloading])
        .map(|_| Stop::named("CUDA API error cudaErrorCudartUnloading", None))
}

/// The stop inferred from the top frame of the stopped thread, when the
/// text names none: a debugger's stack (`bt`, `where`, a Call Stack window)
/// pasted without its signal line. A wait or sleep at the top (within the
/// exit phase's wait depth) is a hang, and no crash is inferred; anything
/// else is most likely a crash. Only for the thread the debugger marks, or
/// the one thread a stack shows: a debugger attached to a live process
/// prints every thread, most of them running or waiting. systemd-coredump
/// writes a stack only for a process that dumped core on a signal, and
/// lists first the thread the signal came to.
pub(super) fn inferred(trace: &Trace) -> Option<Stop> {
    // A macOS crash report pasted without its exception lines: its thread
    // header `Thread N Crashed::` says which thread crashed.
    if trace.format == Some(Format::AppleCrashReport) {
        if let Some(thread) = trace.threads.iter().find(|t| t.event) {
            return Some(Stop::inferred_crash(
                "from the crash report's Crashed thread",
                thread.number,
                format!(
                    "the crash report's exception lines are not in the text; its header marks thread {} Crashed",
                    thread.number.unwrap_or_default()
                ),
            ));
        }
    }
    // backward-cpp prints its trace from its handler of a fatal signal; a
    // paste cut before the signal's line still is a crash's.
    if trace.format == Some(Format::Backward) {
        return Some(Stop::inferred_crash(
            "from backward-cpp's trace",
            None,
            "the text names no signal; backward-cpp prints its stack trace from its handler of a fatal signal"
                .to_string(),
        ));
    }
    let coredump = trace.format == Some(Format::SystemdCoredump);
    if trace.interrupted || !(coredump || trace.format.is_some_and(|f| f.debugger())) {
        return None;
    }
    let with_frames: Vec<_> = trace
        .threads
        .iter()
        .filter(|t| !t.frames.is_empty())
        .collect();
    let thread = trace
        .threads
        .iter()
        .find(|t| (t.event || t.current) && !t.frames.is_empty())
        .or(match with_frames.as_slice() {
            [only] => Some(*only),
            [first, ..] if coredump => Some(*first),
            _ => None,
        })?;
    // Innermost first, whichever way the format lists them.
    let mut frames: Vec<_> = thread.frames.iter().collect();
    if thread
        .format
        .or(trace.format)
        .is_some_and(|f| f.outermost_first())
    {
        frames.reverse();
    }
    // A thread in the system's handling of an unhandled exception
    // (UnhandledExceptionFilter, Windows Error Reporting's report) waits
    // for the report to be written: the crash is below it.
    let reporting = frames.iter().any(|f| {
        f.function.as_deref().is_some_and(|n| {
            let n = crate::model::bare_name(n);
            n.ends_with("UnhandledExceptionFilter") || n.starts_with("WerpReportFault")
        })
    });
    if reporting {
        return Some(Stop::inferred_crash(
            "from the unhandled-exception handling",
            thread.id.or(thread.number),
            "the text names no exception; the stopped thread is in the system's handling of an unhandled exception (UnhandledExceptionFilter, WerpReportFault): a crash being reported".to_string(),
        ));
    }
    let depth = crate::exit_phase::wait_depth();
    let waiting = frames.iter().take(depth).any(|f| {
        f.function
            .as_deref()
            .is_some_and(crate::exit_phase::is_wait_function)
    });
    let top = frames.first()?;
    // An unnamed top frame in the system's call stubs: inside a system
    // call, as the exit phase reads a dump's (a wait, not known which).
    let in_system_call = top.function.is_none()
        && top
            .module
            .as_deref()
            .is_some_and(crate::exit_phase::is_system_call_module);
    if waiting || in_system_call || ending_itself(top) {
        return None;
    }
    let name = match (&top.function, &top.module, top.address) {
        (Some(f), _, _) => format!("`{f}`"),
        (None, Some(m), _) => format!("an unnamed frame in {m}"),
        (None, None, Some(a)) => format!("address {a:#x}"),
        (None, None, None) => "an unnamed frame".to_string(),
    };
    Some(Stop::inferred_crash(
        "from the top frame",
        thread.id.or(thread.number),
        format!(
            "the text names no signal or exception; the stopped thread's top frame, {name}, is no wait or sleep, so the stop is most likely a crash (an inference: a trace of a hang would stop in a wait)"
        ),
    ))
}

/// A top frame in the system call that ends the process: the process is
/// ending itself (exit, ExitProcess, a debugger stopping at the exit
/// event), which is no crash.
fn ending_itself(top: &TextFrame) -> bool {
    const ENDING: [&str; 6] = [
        "NtTerminateProcess",
        "ZwTerminateProcess",
        "_exit",
        "_Exit",
        "exit_group",
        "__GI__exit",
    ];
    top.function
        .as_deref()
        .map(crate::model::bare_name)
        .is_some_and(|name| ENDING.contains(&name))
}

/// A fail-fast's code the messages give (`fast-fail code 7`), for a stop
/// of 0xC0000409 that does not say it.
pub(super) fn fast_fail_code(messages: &[Message]) -> Option<u64> {
    messages.iter().find_map(|m| {
        let rest = m.meaning.as_deref()?.split("fast-fail code ").nth(1)?;
        rest.split(' ').next()?.parse().ok()
    })
}

/// Whether the trace is of a Windows process: its format, its modules, or
/// the crash it names.
pub(super) fn is_windows(trace: &Trace, modules: &[String], crash: Option<&str>) -> bool {
    use super::formats::Format;
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
pub(super) fn code(what: &str, windows: bool) -> (u32, String) {
    // An error compute-sanitizer, valgrind or ThreadSanitizer reports is
    // no signal and no abort: the process goes on. It is the failure the
    // trace is about, by its name. So is a crash only inferred: its signal
    // is not known.
    if what.starts_with("CUDA API error ")
        || what.starts_with("compute-sanitizer: ")
        || what.starts_with("valgrind: ")
        || what.starts_with("ThreadSanitizer: ")
        || what.starts_with("crash (inferred")
    {
        return (0, what.to_string());
    }
    let lower = what.to_ascii_lowercase();
    if let Ok(code) = u32::from_str_radix(lower.trim_start_matches("0x"), 16) {
        if lower.len() >= 8 {
            let name = super::messages::windows_status(code)
                .map(|n| n.split(' ').next().unwrap_or(n).to_string())
                .unwrap_or_else(|| format!("exception {code:#010x}"));
            return (code, name);
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
