//! The messages of a log, as typed facts with their lines: what a runtime,
//! the C library, a shell or a test runner printed about the failure
//! (model/message.rs). Read from every line of the log, traces or not: a CI
//! log often says all there is in them.
//!
//! A 50 MB log is searched in one pass for forty-odd anchor words (one of
//! which every message holds, in any case), and only the lines an anchor
//! is on are read further; each reading there tests a line's words before
//! any regular expression.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, Input};
use regex_lite::Regex;

use crate::model::{Message, MessageKind};

mod runners;
mod status;

use runners::{test_summary, Summary};
pub(super) use status::windows_status;
use status::{debugger_analysis, exit_status, windows_error_report};

/// Longest message text kept.
const TEXT: usize = 200;

/// Words one of which every message line holds (ASCII case ignored): the
/// lines to read.
const ANCHORS: &[&str] = &[
    "fatal python error",
    "finaliz",
    // Windows Error Reporting's exception code line in other languages
    // (status.rs, WER_CODE_WORDS; the German and French ones hold "code").
    "digo de exce",
    "од исключения",
    "异常代码",
    "例外コード",
    "codice eccezione",
    "kod wyj",
    "uitzonderingscode",
    "예외 코드",
    "interpreter shutdown",
    "atexit",
    "sys.exitfunc",
    "terminat",
    "what():",
    "shutting down",
    "cudartunloading",
    "cuda_error_deinitialized",
    "cuda error",
    "cuda failure",
    "ure virtual",
    "garbage-collecting",
    "free(",
    "corrupt",
    "malloc(",
    "munmap_chunk",
    "forbiddenbyte",
    "debug memory block",
    "check failed",
    "assertion",
    "fault",
    "abort",
    "bus error",
    "illegal",
    "floating point",
    "code",
    "status",
    "exited with",
    "exit value",
    "<signals.",
    "received signal",
    "caught signal",
    "got signal",
    "signal received",
    " caught",
    "interrupted by signal",
    "exit successfully",
    "] error ",
    "return",
    "failure_bucket_id",
    // Visual Studio's access violation, in its languages (status.rs).
    "access violation",
    "нарушение доступа",
    "zugriffsverletzung",
    "访问权限冲突",
    "violation d'acc",
    "passed",
    "passing",
    "ran ",
    "# fail",
    "failed",
    "failing",
    "[ run",
    "result = pass",
    "pass \u{2014} ",
    "pass \u{2013} ",
    "pass - ",
    "value during or after",
    "cancel",
    "running ",
    "timeout",
    "timed out",
    "took longer than",
    "maximum execution time",
    "escalating to",
    "stop-sigterm",
    "stop-final-sigterm",
    "apphang",
    "stopped interacting with windows",
];

static FINDER: LazyLock<AhoCorasick> = LazyLock::new(|| {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(ANCHORS)
        .expect("the anchor words")
});

/// Every message of the log, in line order. `raw` are the log's lines as
/// read, `lines` the same lines cleaned of CI noise.
pub(super) fn read(text: &str, raw: &[&str], lines: &[Option<String>]) -> Vec<Message> {
    let starts: Vec<usize> = raw
        .iter()
        .map(|r| (r.as_ptr() as usize).saturating_sub(text.as_ptr() as usize))
        .collect();
    let mut marked = Vec::new();
    let bytes = text.as_bytes();
    let mut from = 0;
    // One search per line that holds an anchor: after a match, on from the
    // next line.
    while let Some(found) = FINDER.find(Input::new(bytes).range(from..)) {
        let line = starts
            .partition_point(|&s| s <= found.start())
            .saturating_sub(1);
        marked.push(line);
        match starts.get(line + 1) {
            Some(&next) if next > found.start() => from = next,
            _ => break,
        }
    }
    let mut messages = Vec::new();
    for i in marked {
        let Some(line) = lines.get(i).and_then(|l| l.as_deref()) else {
            continue;
        };
        read_line(line, i, lines, &mut messages);
    }
    messages
}

/// The messages one line holds (most hold none).
fn read_line(line: &str, i: usize, lines: &[Option<String>], out: &mut Vec<Message>) {
    let number = i + 1;
    let mut say = |kind: MessageKind, text: &str, meaning: Option<String>| {
        out.push(Message {
            kind,
            line: number,
            text: text.trim().chars().take(TEXT).collect(),
            meaning,
        });
    };
    python_messages(line, &mut say);
    if let Some(meaning) = terminate(line) {
        let what = lines.iter().skip(i + 1).take(4).flatten().find_map(|l| {
            l.trim()
                .strip_prefix("what():")
                .map(|w| w.trim().to_string())
        });
        let meaning = match what {
            Some(what) => Some(format!("{meaning}: {what}")),
            None => Some(meaning),
        };
        say(MessageKind::Terminate, line, meaning);
    }
    if let Some(what) = line.trim().strip_prefix("what():") {
        say(MessageKind::ExceptionWhat, what, None);
    }
    if let Some(meaning) = cuda_unloading(line) {
        say(MessageKind::CudaRuntimeUnloading, line, Some(meaning));
    }
    if line.contains("pure virtual method called")
        || line.contains("Pure virtual function called")
        || line.contains("pure virtual function call")
    {
        say(MessageKind::PureVirtualCall, line, None);
    }
    if line.trim() == "Garbage-collecting" && next_is_no_python_frame(i, lines) {
        say(
            MessageKind::PythonGcWithoutFrame,
            line,
            Some(
                "the garbage collector ran with no Python frame on the thread's stack".to_string(),
            ),
        );
    }
    if let Some(what) = heap_check(line) {
        say(MessageKind::HeapCorruption, line, Some(what.to_string()));
    }
    if let Some(meaning) = rust_tls_destroyed(line, i, lines) {
        say(MessageKind::RustTlsDestroyed, line, Some(meaning));
    }
    if let Some(at) = line.find("Check failed: ") {
        say(MessageKind::CheckFailed, &line[at..], None);
    }
    if let Some(at) = assertion_failed(line) {
        say(MessageKind::AssertionFailed, &line[at..], None);
    }
    if let Some(meaning) = timed_out(line) {
        say(MessageKind::TimedOut, line, Some(meaning));
    }
    if let Some(meaning) = exit_status(line) {
        say(MessageKind::ExitStatus, line, Some(meaning));
    }
    if let Some(meaning) = windows_error_report(line, i, lines) {
        say(MessageKind::WindowsErrorReport, line, Some(meaning));
    }
    if let Some(meaning) = debugger_analysis(line, i, lines) {
        say(MessageKind::DebuggerAnalysis, line, meaning);
    }
    match test_summary(line, i, lines) {
        Some(Summary::Passed(meaning)) => say(MessageKind::TestsPassed, line, Some(meaning)),
        Some(Summary::Failed) => say(MessageKind::TestsFailed, line, None),
        Some(Summary::Ended(meaning)) => say(MessageKind::TestRunEnded, line, Some(meaning)),
        Some(Summary::Running(what)) => say(MessageKind::TestRunning, line, Some(what)),
        None => {}
    }
}

/// What a launcher's or a service manager's escalation means: the
/// process was asked to end, so it was exiting (evidence.rs reads it so).
pub(super) const ESCALATED: &str =
    "the process did not end in time after it was asked to, and was sent a harder signal";

/// The words of a CI system or a test driver that stopped the process for
/// taking too long, and what they mean. A user's cancel reads the same as
/// the time limit's on GitHub: either way the process had not ended.
fn timed_out(line: &str) -> Option<String> {
    static BAZEL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\S+\s+TIMEOUT in (?:\d+ out of \d+ in )?[\d.]+s").expect("Bazel timeout")
    });
    // A launcher or a service manager that asked the process to end and
    // found it still running: ROS's `failed to terminate '5' seconds after
    // receiving 'SIGINT', escalating to 'SIGTERM'`, ROS 1's `escalating to
    // SIGKILL`, systemd's `State 'stop-sigterm' timed out. Killing.`
    static ESCALATION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)escalating to '?SIG(?:TERM|KILL)\b|State 'stop-(?:final-)?sigterm' timed out",
        )
        .expect("escalation pattern")
    });
    // A WER hang report's event name, in any language of its label:
    // `Problem Event Name: AppHangB1`, `MoAppHang`, `AppHangXProcB1`.
    static APP_HANG: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r":\s*(?:Mo)?AppHang\w*\s*$").expect("hang report pattern"));
    let t = line.trim();
    let said = if t.starts_with("The operation was canceled.") {
        "the CI job was canceled before the process ended (GitHub Actions)"
    } else if t.contains("has exceeded the maximum execution time of") {
        "the CI job ran past its time limit (GitHub Actions)"
    } else if t.contains("Job failed: execution took longer than") {
        "the CI job ran past its time limit (GitLab)"
    } else if t.starts_with("Build timed out (after") {
        "the build ran past its time limit (Jenkins)"
    } else if t.contains("***Timeout") && t.contains("Test") {
        "ctest stopped the test at its time limit"
    } else if ESCALATION.is_match(t) {
        ESCALATED
    } else if t.contains("stopped interacting with Windows and was closed") {
        "Windows closed the program as not responding (Application Hang, Event 1002)"
    } else if APP_HANG.is_match(t) {
        "Windows Error Reporting recorded the program as not responding (a hang report)"
    } else if t.starts_with("timeout: sending signal") {
        "coreutils' timeout stopped the command at its time limit"
    } else if t.contains("TIMEOUT in ") && BAZEL.is_match(t) {
        "Bazel stopped the test at its time limit"
    } else {
        return None;
    };
    Some(said.to_string())
}

/// Where the C runtime's report of a failed `assert` starts on `line`:
/// MSVC's `Assertion failed: EXPR, file FILE, line N` (the file may wrap
/// onto the next line), glibc's `PROG: FILE:N: FUNC: Assertion `EXPR'
/// failed.`, and Node.js's own CHECK. Python's `AssertionError` is an
/// exception, not these.
fn assertion_failed(line: &str) -> Option<usize> {
    if let Some(at) = line.find("Assertion failed: ") {
        // Node.js's CHECK since v20: `#  Assertion failed: (env) != nullptr`
        // under its `#  node[PID]: FUNCTION at FILE:LINE` line.
        let node = line[..at].trim() == "#";
        return (node || line[at..].contains(", file ")).then_some(at);
    }
    let trimmed = line.trim_end();
    (trimmed.ends_with("' failed.") || trimmed.ends_with("' failed"))
        .then(|| line.find(": Assertion `").map(|_| 0))
        .flatten()
}

/// CPython's own messages on `line`: its fatal error, its finalization,
/// a failed exit handler.
fn python_messages(line: &str, say: &mut impl FnMut(MessageKind, &str, Option<String>)) {
    // (faulthandler's report of a signal, `Fatal Python error:
    // Segmentation fault`, is a crash line of its trace, not CPython's own
    // fatal error.)
    if let Some(at) = line.find("Fatal Python error: ") {
        let what = &line[at + "Fatal Python error: ".len()..];
        let signal = [
            "Segmentation fault",
            "Aborted",
            "Bus error",
            "Floating point exception",
            "Illegal instruction",
        ]
        .iter()
        .any(|s| what.trim() == *s);
        if !signal {
            say(MessageKind::PythonFatalError, &line[at..], None);
        }
    }
    if line.contains("Python runtime state: finaliz")
        || line.contains("at interpreter shutdown")
        || line.contains("Python is finalizing")
        || line.contains("interpreter is finalizing")
    {
        let at = ["Python runtime state: finaliz", "Python is finalizing"]
            .iter()
            .find_map(|w| line.find(w))
            .unwrap_or(0);
        say(MessageKind::PythonFinalizing, &line[at..], None);
    }
    // (CPython 3.12 and later: `Exception ignored in atexit callback: <function f at 0x...>`.)
    if line.contains("Error in atexit._run_exitfuncs")
        || line.contains("Error in sys.exitfunc")
        || line.contains("Exception ignored in atexit callback")
    {
        say(MessageKind::PythonAtexitError, line, None);
    }
}

/// Whether faulthandler's next line in the thread's section says the
/// thread had no Python frame.
fn next_is_no_python_frame(i: usize, lines: &[Option<String>]) -> bool {
    lines
        .iter()
        .skip(i + 1)
        .flatten()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.trim() == "<no Python frame>")
}

/// The C++ runtime's words when it terminates the process, and what they
/// mean.
fn terminate(line: &str) -> Option<String> {
    static THROWN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"terminate called after throwing an instance of '?([^']+?)'?\s*$")
            .expect("terminate pattern")
    });
    let line = line.trim();
    if !(line.contains("terminat") || line.contains("requested the Runtime")) {
        return None;
    }
    if let Some(c) = THROWN.captures(line) {
        return Some(format!("std::terminate: an uncaught {}", &c[1]));
    }
    if line.contains("terminate called after throwing an instance of") {
        return Some("std::terminate: an uncaught exception".to_string());
    }
    if line.contains("terminate called without an active exception") {
        return Some("std::terminate without an exception (a joinable std::thread destroyed, a pure virtual call, a noexcept violation)".to_string());
    }
    if line.contains("terminate called recursively") {
        return Some("std::terminate called again while terminating".to_string());
    }
    if let Some(rest) = line.strip_prefix("libc++abi: terminating") {
        return Some(format!(
            "std::terminate (libc++abi){}",
            rest.trim_end_matches('!')
        ));
    }
    // libcxxrt (FreeBSD): `Terminating due to uncaught exception 0x... 'WHAT'
    // of type T`.
    if let Some(rest) = line.strip_prefix("Terminating due to uncaught exception") {
        return Some(format!("std::terminate (libcxxrt){rest}"));
    }
    if line.contains("libc++abi.dylib: terminating") {
        return Some("std::terminate (libc++abi)".to_string());
    }
    if line.contains("This application has requested the Runtime to terminate it in an unusual way")
    {
        return Some("abort() in the MSVC runtime".to_string());
    }
    None
}

/// CUDA saying its runtime is unloading, and how it said it. The runtime's
/// error cudaErrorCudartUnloading ("driver shutting down") is 4 since CUDA
/// 10 (29 before); the driver API's 4 is CUDA_ERROR_DEINITIALIZED, the
/// driver shutting down. A bare 29 is another error in current CUDA: only
/// the words count for it.
fn cuda_unloading(line: &str) -> Option<String> {
    static ERROR_4: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\bCUDA (?:error|failure)[ :]+(?:code[ :=]*)?4\b")
            .expect("CUDA error 4 pattern")
    });
    if line.contains("cudaErrorCudartUnloading") {
        return Some("cudaErrorCudartUnloading: the CUDA runtime was being unloaded".to_string());
    }
    if line.contains("driver shutting down") || line.contains("driver is shutting down") {
        return Some("\"driver shutting down\" (cudaErrorCudartUnloading): the CUDA runtime was being unloaded".to_string());
    }
    if line.contains("CUDA_ERROR_DEINITIALIZED") {
        return Some("CUDA_ERROR_DEINITIALIZED: the CUDA driver was shutting down".to_string());
    }
    if line.contains('4')
        && (line.contains("CUDA") || line.contains("cuda"))
        && ERROR_4.is_match(line)
    {
        return Some("CUDA error 4 (cudaErrorCudartUnloading, or the driver API's CUDA_ERROR_DEINITIALIZED): CUDA was shutting down".to_string());
    }
    None
}

/// Rust's panic on a thread-local used after its destructor ran, and on
/// which thread: the panic line (`thread 'NAME' panicked at ...`, the
/// same line or one of the two before) names it. A thread Rust named other
/// than `main` is a worker Rust started: its thread-locals die when it
/// ends, which says nothing of the process, and no message is made. The
/// main thread, and an unnamed one (`<unnamed>`: a C or C++ host's thread,
/// its main thread among them, since Rust knows only its own as `main`;
/// or a worker spawned without a name), are: a thread's teardown that may
/// be the process's.
fn rust_tls_destroyed(line: &str, i: usize, lines: &[Option<String>]) -> Option<String> {
    if !(line.contains("value during or after")
        && line.contains("destr")
        && (line.contains("Thread Local Storage") || line.contains("TLS value")))
    {
        return None;
    }
    let panicked = [Some(line)]
        .into_iter()
        .chain((1..=2).map(|back| {
            i.checked_sub(back)
                .and_then(|j| lines.get(j))
                .and_then(|l| l.as_deref())
        }))
        .flatten()
        .find_map(|l| {
            let rest = &l[l.find("thread '")? + "thread '".len()..];
            let (name, after) = rest.split_once('\'')?;
            after.contains("panicked").then_some(name)
        });
    let whose = match panicked {
        Some("main") => "the main thread",
        Some("<unnamed>") | None => {
            "an unnamed thread (a host's, its main thread at exit among them, or a worker spawned without a name as it ends)"
        }
        Some(_) => return None,
    };
    Some(format!(
        "a Rust thread-local was used after its destructor ran, on {whose}: its thread-locals were being torn down"
    ))
}

/// glibc's malloc checks, and CPython's debug allocator (`-X dev`,
/// PYTHONMALLOC=debug, a debug build), which print their finding and
/// abort: the finding.
fn heap_check(line: &str) -> Option<&'static str> {
    const CHECKS: [(&str, &str); 14] = [
        ("double free or corruption", "double free or corruption"),
        ("free(): double free detected", "double free"),
        ("free(): invalid pointer", "free() of an invalid pointer"),
        ("free(): invalid size", "free() of a corrupt chunk"),
        ("free(): invalid next size", "free() of a corrupt chunk"),
        ("free(): corrupted unsorted chunks", "corrupt heap"),
        (
            "munmap_chunk(): invalid pointer",
            "free() of an invalid pointer",
        ),
        ("corrupted size vs. prev_size", "corrupt heap"),
        ("corrupted double-linked list", "corrupt heap"),
        ("malloc(): corrupted", "corrupt heap"),
        ("malloc(): memory corruption", "corrupt heap"),
        ("realloc(): invalid", "realloc() of an invalid pointer"),
        (
            "are not all FORBIDDENBYTE",
            "a buffer overrun or a corrupt block (CPython's debug allocator)",
        ),
        (
            "Debug memory block at address p=",
            "a bad block (CPython's debug allocator)",
        ),
    ];
    CHECKS
        .iter()
        .find(|(words, _)| line.contains(words))
        .map(|(_, what)| *what)
}

#[cfg(test)]
mod tests;
