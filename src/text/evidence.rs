//! Whether the log says the process was exiting, and which fact decided
//! it: a runtime's own words (CPython finalizing, CUDA unloading, a Rust
//! panic on the main thread's destroyed thread-locals, the other phrases
//! runtimes print), or the shape of the log (every test had passed before
//! the failure). And whether it rules exit out: a test still running when
//! the process failed.

use crate::model::{exit_said, Message, MessageKind};

/// A runtime's own words that the process was exiting, beyond the typed
/// messages: phrases of runtimes and libraries, matched in lower case.
const SAID: [&str; 7] = [
    "interpreter is finalizing",
    "likely shutting down",
    "during python finalization",
    "_py_finalize",
    "cuda driver is shutting down",
    "is in the process of shutting down",
    "python is finalizing",
];

/// How close before the failure a test run's summary must be to say the
/// failure came after the run: the summary a runner prints last, then the
/// crash at exit, with a few lines of output between at most.
const SHAPE_REACH: usize = 40;

/// The exit evidence of a trace (or of a report built from messages):
/// which fact decided it, in words. `failure` is the line of the failure.
pub(super) fn exit_evidence(
    messages: &[Message],
    lines: &[Option<String>],
    (from, to): (usize, usize),
    failure: usize,
) -> Option<String> {
    exit_said(messages)
        .or_else(|| all_passed(messages, failure))
        .or_else(|| phrase(&lines[from..to]))
        .or_else(|| rust_main_tls_destroyed(&lines[from..to]))
}

/// Why the log rules exit out, if it does: a test runner says a test was
/// running when the process failed.
pub(super) fn exit_ruled_out(messages: &[Message], failure: usize) -> Option<String> {
    let last = messages
        .iter()
        .rev()
        .find(|m| m.line <= failure && is_test(m.kind))?;
    (last.kind == MessageKind::TestRunning).then(|| {
        format!(
            "the process failed while a test ran: {} started on line {} and did not end",
            last.meaning.as_deref().unwrap_or("a test"),
            last.line
        )
    })
}

fn is_test(kind: MessageKind) -> bool {
    matches!(
        kind,
        MessageKind::TestsPassed | MessageKind::TestsFailed | MessageKind::TestRunning
    )
}

/// The shape of a test log: the runner's summary that every test passed,
/// the last test message before the failure and close to it (SHAPE_REACH
/// lines). The work was done; the process failed afterwards, on its way
/// out.
fn all_passed(messages: &[Message], failure: usize) -> Option<String> {
    let last = messages
        .iter()
        .rev()
        .find(|m| m.line < failure && is_test(m.kind))?;
    (last.kind == MessageKind::TestsPassed && failure - last.line <= SHAPE_REACH).then(|| {
        format!(
            "the test run had ended: {} (line {}: `{}`) before the failure",
            last.meaning.as_deref().unwrap_or("every test passed"),
            last.line,
            last.text
        )
    })
}

fn phrase(lines: &[Option<String>]) -> Option<String> {
    lines.iter().flatten().find_map(|line| {
        let lower = line.to_ascii_lowercase();
        SAID.iter().any(|said| lower.contains(said)).then(|| {
            format!(
                "the log says `{}`",
                line.trim().chars().take(200).collect::<String>()
            )
        })
    })
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
        panicked.then(|| {
            format!(
                "the main thread's thread-locals were destroyed, which only process exit does (`{}`)",
                said.trim().chars().take(200).collect::<String>()
            )
        })
    })
}
