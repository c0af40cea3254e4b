//! Stack traces in text: CI logs and bug reports, where most failures are
//! (issue 24). A log is read line by line; each line is cleaned of CI noise
//! (clean.rs) and classified by the trace formats (lines.rs); runs of
//! frames and thread headers become traces, each its own report, named by
//! the file and the line it starts at. Nothing the text does not say is
//! invented: a frame without an address has address 0 and `trust` "text
//! trace", a Python frame is its own kind, elided frames are said.

mod clean;
mod frames;
mod lines;
mod parse;
mod report;

use crate::model::Report;

use clean::{clean_line, dedent_blocks};
use lines::{classify, Format, Line};
use report::{to_report, TextThread, Trace};

/// Unrecognised lines inside a trace before it is taken to have ended.
const GAP: usize = 12;
/// Most traces read from one input: a log with more is cut with a warning.
const MAX_TRACES: usize = 1000;
/// Most lines of locals (gdb's `bt full`) under one frame before the
/// trace is taken to have ended.
const MAX_LOCALS: usize = 400;
/// Most frames kept per thread.
const MAX_FRAMES: usize = 512;

/// Whether `bytes` look like text worth searching for traces: valid UTF-8
/// (or nearly), and no NUL bytes in its first 64 KiB.
pub fn looks_like_text(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64 * 1024)];
    !head.contains(&0)
        && std::str::from_utf8(head).map_or_else(|e| e.valid_up_to() + 4 >= head.len(), |_| true)
}

/// Every trace in `text`, a report each, named `label:LINE`. An error when
/// there is none.
pub fn read_traces(label: &str, text: &str) -> Result<Vec<Report>, String> {
    let mut lines: Vec<Option<String>> = text.lines().map(clean_line).collect();
    dedent_blocks(&mut lines);
    join_wrapped(&mut lines);
    let mut traces = find_traces(&lines);
    let bounds: Vec<(usize, usize)> = traces.iter().map(|t| (t.first_line, t.last_line)).collect();
    for (i, trace) in traces.iter_mut().enumerate() {
        let previous = i.checked_sub(1).map_or(0, |p| bounds[p].1);
        let next = bounds.get(i + 1).map_or(usize::MAX, |n| n.0);
        trace.around = (previous, next);
    }
    if traces.is_empty() {
        return Err(
            "not a minidump, and no stack trace found in it (looked for gdb, lldb, WinDbg, Visual Studio, faulthandler, \
             Python traceback, pytest-timeout, py-spy, pystack, eu-stack, backtrace_symbols, \
             sanitizer and Rust backtraces)"
                .to_string(),
        );
    }
    let many = traces.len() > 1;
    let cut = traces.len() > MAX_TRACES;
    Ok(traces
        .into_iter()
        .take(MAX_TRACES)
        .map(|trace| {
            let mut report = to_report(&trace, &lines);
            report.path = if many || trace.first_line > 1 {
                format!("{label}:{}", trace.first_line)
            } else {
                label.to_string()
            };
            if cut {
                report.warnings.push(format!(
                    "the log holds more than {MAX_TRACES} traces: the rest were not read"
                ));
            }
            report
        })
        .collect())
}

/// gdb wraps a frame whose argument list is long onto the next lines
/// (`#3 0x... in f (this=0x1,` / `    x=2) at f.cc:9`): those are joined
/// back, so each frame is one line. At most 4 lines are joined.
fn join_wrapped(lines: &mut [Option<String>]) {
    let open = |s: &str| s.matches('(').count() as isize - s.matches(')').count() as isize;
    for i in 0..lines.len() {
        let Some(line) = lines[i].as_deref() else {
            continue;
        };
        let gdb = line.starts_with('#') && line[1..].starts_with(|c: char| c.is_ascii_digit());
        // gdb also puts a long `from LIBRARY` or `at FILE:LINE` on a line
        // of its own.
        let tail = |next: Option<&Option<String>>| {
            next.and_then(|l| l.as_deref()).is_some_and(|l| {
                let t = l.trim_start();
                l.starts_with(' ') && (t.starts_with("from /") || t.starts_with("at "))
            })
        };
        if !gdb || (open(line) <= 0 && !tail(lines.get(i + 1))) {
            continue;
        }
        let mut joined = line.to_string();
        for next in i + 1..(i + 5).min(lines.len()) {
            let Some(more) = lines[next].as_deref() else {
                break;
            };
            if more.starts_with('#') || !more.starts_with(' ') {
                break;
            }
            joined.push(' ');
            joined.push_str(more.trim());
            lines[next] = None;
            if open(&joined) <= 0 && !tail(lines.get(next + 1)) {
                break;
            }
        }
        lines[i] = Some(joined);
    }
}

fn find_traces(lines: &[Option<String>]) -> Vec<Trace> {
    let mut traces = Vec::new();
    let mut current = Trace::default();
    let mut since = 0usize;
    // A crash line seen before any frame: it belongs to the next trace.
    let mut pending_crash: Option<(String, Option<u64>, usize)> = None;
    let mut pending_start: Option<usize> = None;
    // Where the next native frames of faulthandler's C stack go: that
    // many frames into the current thread (they are its innermost).
    let mut native_at: Option<usize> = None;
    // A line that is no part of any trace (a reporter's words) since the
    // last frame.
    let mut prose = false;
    // Lines of gdb's `bt full` locals since the last trace line.
    let mut locals = 0usize;
    let finish = |current: &mut Trace, traces: &mut Vec<Trace>| {
        let mut done = std::mem::take(current);
        drop_reprinted(&mut done);
        // A crash with its thread header but no frame (faulthandler's
        // "<no Python frame>") is a trace too: the crash is what it says.
        if done.has_frames() || (done.crash.is_some() && !done.threads.is_empty()) {
            traces.push(done);
        }
    };
    for (i, line) in lines.iter().enumerate() {
        let number = i + 1;
        let Some(line) = line else { continue };
        let inside = current.format;
        let Some(kind) = classify(line, inside) else {
            // gdb's `bt full` prints each frame's locals under it: part of
            // the trace (up to MAX_LOCALS lines under one frame).
            if inside == Some(Format::Gdb) && gdb_locals(line) && locals < MAX_LOCALS {
                locals += 1;
                continue;
            }
            since += 1;
            prose |= !line.trim().is_empty();
            if current.has_frames() && since > GAP {
                finish(&mut current, &mut traces);
            }
            continue;
        };
        since = 0;
        locals = 0;
        match kind {
            Line::Start(format) => {
                if current.has_frames() {
                    finish(&mut current, &mut traces);
                }
                current.format = Some(format);
                pending_start = Some(number);
            }
            Line::Crash { what, thread } => {
                if current.has_frames() && current.crash.is_some() {
                    // A second crash: another process's trace.
                    finish(&mut current, &mut traces);
                }
                if current.has_frames() {
                    current.crash = Some((what, thread));
                } else {
                    pending_crash = Some((what, thread, number));
                }
            }
            Line::Thread {
                format,
                number: thread_number,
                id,
                name,
                current: marked,
                event,
            } => {
                native_at = None;
                prose = false;
                if current.format.is_some_and(|f| !compatible(f, format)) && current.has_frames() {
                    finish(&mut current, &mut traces);
                }
                if let Some((what, thread, at)) = pending_crash.take() {
                    // systemd-coredump lists every module between its
                    // `Signal:` line and the first stack.
                    let reach = match format {
                        Format::SystemdCoredump => 1000,
                        _ => 40,
                    };
                    if number - at <= reach {
                        current.crash.get_or_insert((what, thread));
                        current.first_line = match current.first_line {
                            0 => at,
                            first => first.min(at),
                        };
                    }
                }
                if current.first_line == 0 {
                    current.first_line = pending_start.take().unwrap_or(number);
                }
                current.format.get_or_insert(format);
                // lldb says why a thread stopped on its header line.
                if let Some(reason) = line.split("stop reason = ").nth(1).filter(|r| crashed(r)) {
                    current.crash.get_or_insert((reason.trim().to_string(), id));
                }
                current.threads.push(TextThread {
                    number: thread_number,
                    id,
                    name,
                    current: marked,
                    event,
                    frames: Vec::new(),
                    format: Some(format),
                });
                current.last_line = number;
            }
            Line::Frame(format, frame) => {
                let after_prose = std::mem::take(&mut prose);
                if current.format.is_some_and(|f| !compatible(f, format)) && current.has_frames() {
                    finish(&mut current, &mut traces);
                    // A C stack being read belonged to the trace just ended.
                    native_at = None;
                }
                if current.first_line == 0 {
                    current.first_line = pending_start.take().unwrap_or(number);
                }
                if current.format.is_none() || current.threads.is_empty() {
                    current.format = Some(format);
                }
                // A crash named just before the frames is this trace's, and
                // the trace starts there.
                if let Some((what, thread, at)) = pending_crash.take() {
                    if number - at <= 40 {
                        current.crash.get_or_insert((what, thread));
                        current.first_line = current.first_line.min(at);
                    }
                }
                if let (Some(at), false) = (native_at, frame.python) {
                    let thread = current.thread();
                    if thread.frames.len() < MAX_FRAMES {
                        thread.frames.insert(at, frame);
                        native_at = Some(at + 1);
                    }
                    current.last_line = number;
                    continue;
                }
                native_at = None;
                // A frame numbered 0 again, with no header between: the
                // next thread (gdb's `bt` run twice, `k` per thread).
                // Visual Studio numbers no frame: a stack copied from its
                // Call Stack window is one run of lines, so frames after a
                // reporter's words are another stack.
                let again =
                    frame.index == Some(0) || (format == Format::VisualStudio && after_prose);
                let thread = current.thread();
                if again && !thread.frames.is_empty() {
                    current.threads.push(TextThread::default());
                }
                let thread = current.thread();
                thread.format.get_or_insert(format);
                if thread.frames.len() < MAX_FRAMES {
                    thread.frames.push(frame);
                }
                current.last_line = number;
            }
            // The thread the debugger stopped in is the crash's, when
            // the crash line did not say.
            Line::Stopped { number, id } => {
                let thread = number.or(id);
                match (&mut pending_crash, &mut current.crash) {
                    (Some((_, named @ None, _)), _) | (None, Some((_, named @ None))) => {
                        *named = thread;
                    }
                    _ => {}
                }
            }
            Line::Module(module) => {
                if let Some(frame) = current.threads.last_mut().and_then(|t| t.frames.last_mut()) {
                    frame.module.get_or_insert(module);
                }
            }
            Line::Location { file, line } => {
                if let Some(frame) = current.threads.last_mut().and_then(|t| t.frames.last_mut()) {
                    if frame.file.is_none() {
                        frame.file = Some(file);
                        frame.line = line;
                    }
                }
            }
            Line::Elided => {
                if current.has_frames() {
                    current.elided = true;
                }
            }
            Line::NativeStack => {
                if current.has_frames() {
                    native_at = Some(0);
                }
            }
        }
    }
    finish(&mut current, &mut traces);
    traces
}

/// A debugger prints the frame it stopped in, then the whole stack when
/// asked (`#0 ...`, `(gdb) bt` or `thread apply all bt`, `#0 ... #1 ...`):
/// a thread without a header whose frames all begin another thread's is
/// that same stack printed twice, not a thread of its own.
fn drop_reprinted(trace: &mut Trace) {
    let mut i = 0;
    while i < trace.threads.len() {
        let a = &trace.threads[i];
        let again = a.id.is_none()
            && a.name.is_none()
            && !a.frames.is_empty()
            && trace
                .threads
                .iter()
                .enumerate()
                .any(|(j, b)| j > i && b.frames.starts_with(&a.frames));
        if again {
            trace.threads.remove(i);
        } else {
            i += 1;
        }
    }
}

/// A line of the locals gdb's `bt full` prints under a frame: indented by
/// eight spaces (a struct's value goes on over several such lines), or its
/// notes that there are none.
fn gdb_locals(line: &str) -> bool {
    let trimmed = line.trim();
    line.starts_with("        ")
        || trimmed == "No locals."
        || trimmed.starts_with("No symbol table info available")
}

/// A stop reason that is a crash (not a breakpoint, a step or a Ctrl-C).
fn crashed(reason: &str) -> bool {
    [
        "EXC_BAD_ACCESS",
        "EXC_BAD_INSTRUCTION",
        "EXC_CRASH",
        "EXC_ARITHMETIC",
        "EXC_GUARD",
    ]
    .iter()
    .any(|e| reason.contains(e))
        || (reason.contains("signal SIG")
            && !reason.contains("SIGSTOP")
            && !reason.contains("SIGINT"))
}

/// Formats that make up one trace together: faulthandler's Python frames
/// with its C stack; a traceback inside pytest-timeout's dump; py-spy's
/// Python and native frames.
fn compatible(a: Format, b: Format) -> bool {
    a == b
        || matches!(
            (a, b),
            (Format::Faulthandler, Format::PythonTraceback)
                | (Format::PythonTraceback, Format::Faulthandler)
        )
}
