//! Stack traces in text: CI logs and bug reports, where most failures are
//! (issues 24 and 37). A log is cleaned of CI noise line by line
//! (clean.rs), split into its pieces (split.rs), and read by the trace
//! formats (formats/, one file each); runs of frames and thread headers
//! become traces (reader.rs), each its own report (report.rs), named by the
//! file and the line it starts at. Nothing the text does not say is
//! invented: a frame without an address has address 0 and `trust` "text
//! trace", a Python frame is its own kind, elided frames are said.

mod clean;
mod evidence;
mod formats;
mod messages;
mod reader;
mod report;
mod split;
mod stop;
mod thread_list;
mod trace;
mod words;

use crate::model::{Message, MessageKind, Report};

use clean::{clean_line, dedent_blocks};
use trace::Trace;

/// Most traces read from one input: a log with more is cut with a warning.
const MAX_TRACES: usize = 1000;
/// How far before a trace (or a failure message) the log is searched for
/// the messages that go with it: a test run's summary, a runtime's
/// warning.
const MESSAGES_BEFORE: usize = 200;
/// How far after.
const MESSAGES_AFTER: usize = 40;
/// Failure messages this many lines apart or closer are one failure.
const MESSAGE_GAP: usize = 30;

/// Whether `bytes` look like text worth searching for traces: valid UTF-8
/// (or nearly), and no NUL bytes in its first 64 KiB.
pub fn looks_like_text(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64 * 1024)];
    !head.contains(&0)
        && std::str::from_utf8(head).map_or_else(|e| e.valid_up_to() + 4 >= head.len(), |_| true)
}

/// Every trace in `text`, a report each, named `label:LINE`; a failure the
/// log's messages tell with no trace near them is a report of its own. An
/// error when there is neither.
pub fn read_traces(label: &str, text: &str) -> Result<Vec<Report>, String> {
    let raw: Vec<&str> = text.lines().collect();
    let mut lines: Vec<Option<String>> = raw.iter().map(|r| clean_line(r)).collect();
    dedent_blocks(&mut lines);
    let thread_lists = thread_list::blank(&mut lines);
    formats::mark_call_trees(&mut lines);
    reader::join_wrapped(&mut lines);
    let starts = split::piece_starts(&raw, &lines);
    let mut traces = reader::find_traces(&lines, &starts);
    // macOS's JSON crash reports, read whole; what the line formats made of
    // their lines goes.
    let reports = formats::read_ips(&lines);
    if !reports.is_empty() {
        let inside = |t: &Trace| {
            reports
                .iter()
                .any(|r| (r.first_line..=r.last_line).contains(&t.first_line))
        };
        traces.retain(|t| !inside(t));
        traces.extend(reports);
        traces.sort_by_key(|t| t.first_line);
    }
    let bounds: Vec<(usize, usize)> = traces.iter().map(|t| (t.first_line, t.last_line)).collect();
    for (i, trace) in traces.iter_mut().enumerate() {
        let previous = i.checked_sub(1).map_or(0, |p| bounds[p].1);
        let next = bounds.get(i + 1).map_or(usize::MAX, |n| n.0);
        trace.around = (previous, next);
    }
    let messages = messages::read(text, &raw, &lines);
    let (of_traces, alone) = assign(&traces, &messages);
    let cut = traces.len() > MAX_TRACES;
    let mut reports: Vec<(usize, Report)> = traces
        .iter()
        .zip(of_traces)
        .take(MAX_TRACES)
        .map(|(trace, mine)| (trace.first_line, report::to_report(trace, &lines, &mine)))
        .collect();
    for (window, failure, mine) in failures(&alone, &traces, lines.len()) {
        let first = mine.first().map_or(failure, |m| m.line);
        reports.push((first, report::from_messages(&mine, &lines, window, failure)));
    }
    if reports.is_empty() && thread_lists > 0 {
        return Err(
            "a thread list (TID, CPU, Cycles Delta, Start Address, as Process Explorer or Process Hacker \
             show it) names where each thread started, not its stack: no stack trace found in it \
             (copy a thread's Stack instead, or write a dump of the process)"
                .to_string(),
        );
    }
    if reports.is_empty() {
        if let Some(tool) = leak_report(&raw) {
            return Err(format!(
                "not a minidump, and no crash or hang in it: the log holds only a {tool} report of \
                 memory never freed, which it lists at exit by design"
            ));
        }
        return Err(
            "not a minidump, and no stack trace found in it (looked for gdb, lldb, WinDbg, Visual Studio, faulthandler, \
             Python traceback, pytest-timeout, py-spy, pystack, eu-stack, backtrace_symbols, \
             sanitizer and Rust backtraces, and for failure messages: fatal errors, aborts, exit statuses)"
                .to_string(),
        );
    }
    reports.sort_by_key(|(line, _)| *line);
    let many = reports.len() > 1;
    Ok(reports
        .into_iter()
        .map(|(line, mut report)| {
            report.path = if many || line > 1 {
                format!("{label}:{line}")
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

/// The tool whose leak report the log holds, when it holds one: a log with
/// nothing else is answered with what it is rather than "no stack trace".
/// (Its stacks are where leaked blocks were allocated, read as asides.)
fn leak_report(raw: &[&str]) -> Option<&'static str> {
    raw.iter().find_map(|line| {
        if line.contains("ERROR: LeakSanitizer: detected memory leaks") {
            Some("LeakSanitizer")
        } else if line.starts_with("==")
            && [
                " definitely lost in loss record ",
                " possibly lost in loss record ",
                " indirectly lost in loss record ",
            ]
            .iter()
            .any(|l| line.contains(l))
        {
            Some("Valgrind")
        } else {
            None
        }
    })
}

/// The messages of each trace (those within MESSAGES_BEFORE lines before it
/// and MESSAGES_AFTER after, never past the traces next to it; a message
/// between two traces goes with the nearer), and the messages of none.
fn assign(traces: &[Trace], messages: &[Message]) -> (Vec<Vec<Message>>, Vec<Message>) {
    let mut of_traces = vec![Vec::new(); traces.len()];
    let mut alone = Vec::new();
    for m in messages {
        let distance = |t: &Trace| {
            if m.line < t.first_line {
                (t.first_line - m.line <= MESSAGES_BEFORE).then(|| t.first_line - m.line)
            } else if m.line > t.last_line {
                (m.line - t.last_line <= MESSAGES_AFTER).then(|| m.line - t.last_line)
            } else {
                Some(0)
            }
        };
        let nearest = traces
            .iter()
            .enumerate()
            .filter(|(_, t)| t.around.0 < m.line && m.line < t.around.1)
            .filter_map(|(i, t)| distance(t).map(|d| (d, i)))
            .min();
        match nearest {
            Some((_, i)) => of_traces[i].push(m.clone()),
            None => alone.push(m.clone()),
        }
    }
    (of_traces, alone)
}

/// The failures the messages of no trace tell: runs of failure messages
/// (a terminate, an abort, an exit status, a fatal error, a WER record, a
/// CUDA teardown error) each with the messages around it, the window of
/// the log they were read from, and the line of the failure.
fn failures(
    alone: &[Message],
    traces: &[Trace],
    lines: usize,
) -> Vec<((usize, usize), usize, Vec<Message>)> {
    let failure = |m: &Message| {
        matches!(
            m.kind,
            MessageKind::PythonFatalError
                | MessageKind::Terminate
                | MessageKind::PureVirtualCall
                | MessageKind::HeapCorruption
                | MessageKind::CheckFailed
                | MessageKind::AssertionFailed
                | MessageKind::ExitStatus
                | MessageKind::WindowsErrorReport
                | MessageKind::DebuggerAnalysis
                | MessageKind::CudaRuntimeUnloading
                | MessageKind::TimedOut
        )
    };
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for m in alone.iter().filter(|m| failure(m)) {
        match runs.last_mut() {
            Some((_, last)) if m.line - *last <= MESSAGE_GAP => *last = m.line,
            _ => runs.push((m.line, m.line)),
        }
    }
    let mut out = Vec::new();
    for (i, &(first, last)) in runs.iter().enumerate() {
        // Not into the runs or traces before and after.
        let before = i.checked_sub(1).map_or(0, |p| runs[p].1);
        let after = runs.get(i + 1).map_or(usize::MAX, |n| n.0);
        let before = traces
            .iter()
            .map(|t| t.last_line)
            .filter(|&l| l < first)
            .max()
            .map_or(before, |l| l.max(before));
        let after = traces
            .iter()
            .map(|t| t.first_line)
            .filter(|&l| l > last)
            .min()
            .map_or(after, |l| l.min(after));
        let from = first.saturating_sub(MESSAGES_BEFORE).max(before + 1);
        let to = (last + MESSAGES_AFTER).min(after.saturating_sub(1));
        let mine: Vec<Message> = alone
            .iter()
            .filter(|m| (from..=to).contains(&m.line))
            .cloned()
            .collect();
        let window = (from.saturating_sub(1), to.min(lines));
        out.push((window, first, mine));
    }
    out
}
