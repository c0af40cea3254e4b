//! gdb: `bt`, `where`, `thread apply all bt`, `bt full`; thread headers,
//! the signal it stopped on, the thread it stopped in, and the one-line
//! stop location it prints before a prompt (`0x... in f () from LIB`).

use super::common::*;
use regex_lite::Captures;

pub(super) struct Gdb;

re!(
    GDB_FRAME,
    r"^#?(\d+)\s+(?:(0x[0-9a-fA-F]+) in )?(.*?)(?: ?\((.*)\))?(?: at (.+?)(?::(\d+))?| from (\S+))?\s*$"
);
re!(
    GDB_STOP,
    r"^()(0x[0-9a-fA-F]+) in (\S.*?) \((.*)\)(?: at (.+?)(?::(\d+))?| from (\S+))?\s*$"
);
re!(
    GDB_THREAD,
    r#"^Thread (\d+) \((?:Thread (0x[0-9a-fA-F]+|\d+\.0x[0-9a-fA-F]+) )?\(?(?:LWP|process) (\d+)\)?(?: "([^"]*)")?\)?(?: "([^"]*)")?(?: \(Exiting\))?\)?:?\s*$"#
);
// gdb on Windows names threads `Thread 25840.0x5818`: the id after the dot.
re!(
    GDB_WINDOWS_THREAD,
    r"^Thread (\d+) \(Thread \d+\.(0x[0-9a-fA-F]+)\):?\s*$"
);
re!(BREAKPOINT_HIT, r"^Breakpoint \d+(?:\.\d+)?, ");
re!(
    GDB_CURRENT,
    r"^\[Current thread is (\d+) \((?:Thread 0x[0-9a-fA-F]+ \()?(?:LWP|process) (\d+)\)"
);
re!(
    GDB_SIGNAL,
    r#"^(?:Thread (\d+) "[^"]*" received|Program received|Program terminated with|Thread (\d+) received) signal (SIG\w+)"#
);

impl TraceFormat for Gdb {
    fn format(&self) -> Format {
        Format::Gdb
    }

    fn read(&self, t: &Text<'_>, _inside: Option<Format>) -> Option<Line> {
        let line = t.line;
        match t.first {
            b'T' if line.starts_with("Thread ") => {
                if let Some(c) = GDB_THREAD.captures(line) {
                    return Some(Line::Thread {
                        format: Format::Gdb,
                        number: number(&c, 1),
                        id: number(&c, 3),
                        name: text(&c, 4).or_else(|| text(&c, 5)),
                        current: false,
                        event: false,
                    });
                }
                if let Some(c) = GDB_WINDOWS_THREAD.captures(line) {
                    return Some(Line::Thread {
                        format: Format::Gdb,
                        number: number(&c, 1),
                        id: text(&c, 2).and_then(|t| hex(&t)),
                        name: None,
                        current: false,
                        event: false,
                    });
                }
                if line.contains("received signal") {
                    if let Some(c) = GDB_SIGNAL.captures(line) {
                        return Some(signal(&c));
                    }
                }
                return None;
            }
            b'P' if line.starts_with("Program ") => {
                return GDB_SIGNAL.captures(line).map(|c| signal(&c));
            }
            // A breakpoint gdb stopped at: a live process, no crash.
            b'B' if line.starts_with("Breakpoint ") && BREAKPOINT_HIT.is_match(line) => {
                return Some(Line::Interrupted);
            }
            b'[' if t.trimmed.starts_with("[Current thread is ") => {
                let c = GDB_CURRENT.captures(t.trimmed)?;
                return Some(Line::Stopped {
                    number: number(&c, 1),
                    id: number(&c, 2),
                });
            }
            _ => {}
        }
        frame(t)
    }
}

/// A gdb frame: `#N [0xADDR in] NAME (ARGS) [at FILE:LINE | from LIB]`, or
/// the stop line gdb prints before a prompt (`0xADDR in NAME () from LIB`).
fn frame(t: &Text<'_>) -> Option<Line> {
    let line = t.line;
    let numbered = t.first == b'#'
        || (t.first.is_ascii_digit() && line.contains(" 0x") && line.contains(" in "));
    if numbered && !line.starts_with(' ') {
        // (gdb names a function or an address on every frame: `#12 at
        // FILE` is another tool's line, Julia's closure `#12`.)
        let full = (line.contains(" in ") || line.contains(" (") || line.contains(" at "))
            .then(|| GDB_FRAME.captures(line))
            .flatten()
            .filter(|c| {
                c.get(2).is_some()
                    || !(c[3].trim().is_empty()
                        || c[3].starts_with("at ")
                        || c[3].starts_with("0x"))
            });
        if let Some(c) = full {
            return frame_line(Format::Gdb, captured(&c));
        }
        // A person's abridged gdb frame: `#11 __run_exit_handlers`, `#4
        // invoke_finalizer()   <-- re-locks it`, `#6  a -> b -> c`.
        if t.first == b'#' {
            return abridged(line).and_then(|frame| frame_line(Format::Gdb, frame));
        }
        return None;
    }
    // The location gdb prints where it stopped, before its prompt: the
    // innermost frame, unnumbered.
    if t.first == b'0' && line.starts_with("0x") && line.contains(" in ") && line.contains(" (") {
        let c = GDB_STOP.captures(line)?;
        let mut frame = captured(&c);
        frame.index = Some(0);
        return frame_line(Format::Gdb, frame);
    }
    None
}

re!(
    ABRIDGED,
    r"^#(\d{1,3})\s+([A-Za-z_~][^\s(]*(?:\([^)]*\))?)(.*)$"
);

fn abridged(line: &str) -> Option<TextFrame> {
    let c = ABRIDGED.captures(line)?;
    let name = &c[2];
    if !symbol_name(name) {
        return None;
    }
    let joined = abridged_tail(&c[3])?;
    Some(TextFrame {
        index: number(&c, 1),
        function: Some(name.to_string()),
        bare: true,
        joined,
        ..TextFrame::default()
    })
}

fn captured(c: &Captures) -> TextFrame {
    // A line cut inside the argument list keeps them in the name: the
    // name ends at ` (`.
    let function = text(c, 3)
        .filter(|f| !f.starts_with('<'))
        .map(|f| f.split(" (").next().unwrap_or(&f).trim().to_string())
        .map(|f| strip_module_prefix(&f));
    // `at FILE:LINE` is a source location; gdb also says `at LIBRARY` (no
    // line) for a library without debug info.
    let (file, library) = match (text(c, 5), number::<u32>(c, 6), text(c, 7)) {
        (Some(at), None, library) if is_library(&at) => (None, Some(at).or(library)),
        (file, _, library) => (file, library),
    };
    TextFrame {
        index: number(c, 1),
        address: text(c, 2).and_then(|a| hex(&a)),
        function: named(function),
        module: library.as_deref().map(base),
        file,
        line: number(c, 6),
        ..TextFrame::default()
    }
}

/// gdb on Windows prefixes a PE export's name with its module
/// (`ntdll!ZwWaitForMultipleObjects`): the module is the library's.
fn strip_module_prefix(name: &str) -> String {
    match name.split_once('!') {
        Some((module, function))
            if !module.is_empty()
                && module
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !function.is_empty() =>
        {
            function.to_string()
        }
        _ => name.to_string(),
    }
}

/// gdb's `received signal` / `terminated with signal` line: a crash,
/// except the signals of a debugger or a user stopping the program
/// (Ctrl-C in gdb on a hung program, a breakpoint, a stop) and a request
/// to end it (SIGTERM, a service manager stopping it: the program's own
/// shutdown follows when gdb lets it go on): what follows is the stack of
/// a live process. (A SIGTERM at the end of a core's session, `Program
/// terminated with signal SIGTERM`, is the same request: no crash.)
fn signal(c: &Captures) -> Line {
    let signal = &c[3];
    if matches!(
        signal,
        "SIGINT" | "SIGTRAP" | "SIGSTOP" | "SIGTSTP" | "SIGCONT" | "SIGTERM"
    ) {
        return Line::Interrupted;
    }
    Line::Crash {
        what: signal.to_string(),
        thread: number(c, 1).or_else(|| number(c, 2)),
    }
}
