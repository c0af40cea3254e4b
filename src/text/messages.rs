//! The messages of a log, as typed facts with their lines: what a runtime,
//! the C library, a shell or a test runner printed about the failure
//! (model/message.rs). Read from every line of the log, traces or not: a CI
//! log often says all there is in them.
//!
//! A 50 MB log is searched once per anchor word (memchr's SIMD search over
//! the whole text), and only the lines an anchor is on are read further.

use std::sync::LazyLock;

use memchr::memmem;
use regex_lite::Regex;

use crate::model::{Message, MessageKind};

/// Longest message text kept.
const TEXT: usize = 200;

/// Words one of which every message line holds: the lines to read.
const ANCHORS: &[&str] = &[
    "Fatal Python error",
    "finaliz",
    "interpreter shutdown",
    "atexit",
    "terminat",
    "what():",
    "shutting down",
    "CudartUnloading",
    "CUDA error",
    "CUDA failure",
    "ure virtual",
    "free(",
    "corrupt",
    "malloc(",
    "munmap_chunk",
    "Check failed",
    "fault",
    "Abort",
    "abort",
    "Bus error",
    "Illegal instruction",
    "Floating point exception",
    "code",
    "status",
    "xited with",
    "eturn",
    "Exception Code",
    "ExceptionCode",
    "FAILURE_BUCKET_ID",
    "EXCEPTION_CODE_STR",
    "Faulting application",
    "passed",
    "PASSED",
    "passing",
    "Ran ",
    "# fail",
    "# pass",
    "FAILED",
    "failed",
    "failing",
    "[ RUN",
];

/// Every message of the log, in line order. `raw` are the log's lines as
/// read, `lines` the same lines cleaned of CI noise.
pub(super) fn read(text: &str, raw: &[&str], lines: &[Option<String>]) -> Vec<Message> {
    let starts: Vec<usize> = raw
        .iter()
        .map(|r| (r.as_ptr() as usize).saturating_sub(text.as_ptr() as usize))
        .collect();
    let mut marked = vec![false; lines.len()];
    let bytes = text.as_bytes();
    for anchor in ANCHORS {
        for at in memmem::find_iter(bytes, anchor.as_bytes()) {
            let line = starts.partition_point(|&s| s <= at).saturating_sub(1);
            if let Some(m) = marked.get_mut(line) {
                *m = true;
            }
        }
    }
    let mut messages = Vec::new();
    for (i, _) in marked.iter().enumerate().filter(|(_, m)| **m) {
        let Some(line) = lines[i].as_deref() else {
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
    if line.contains("Error in atexit._run_exitfuncs") || line.contains("Error in sys.exitfunc") {
        say(MessageKind::PythonAtexitError, line, None);
    }
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
    if let Some(what) = heap_check(line) {
        say(MessageKind::HeapCorruption, line, Some(what.to_string()));
    }
    if let Some(at) = line.find("Check failed: ") {
        say(MessageKind::CheckFailed, &line[at..], None);
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
        Some(Summary::Running(name)) => {
            say(MessageKind::TestRunning, line, Some(format!("test {name}")))
        }
        None => {}
    }
}

/// The C++ runtime's words when it terminates the process, and what they
/// mean.
fn terminate(line: &str) -> Option<String> {
    static THROWN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"terminate called after throwing an instance of '?([^']+?)'?\s*$")
            .expect("terminate pattern")
    });
    let line = line.trim();
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
    if ERROR_4.is_match(line) {
        return Some("CUDA error 4 (cudaErrorCudartUnloading, or the driver API's CUDA_ERROR_DEINITIALIZED): CUDA was shutting down".to_string());
    }
    None
}

/// glibc's malloc checks, which print their finding and abort: the finding.
fn heap_check(line: &str) -> Option<&'static str> {
    const CHECKS: [(&str, &str); 12] = [
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
    ];
    CHECKS
        .iter()
        .find(|(words, _)| line.contains(words))
        .map(|(_, what)| *what)
}

/// Signals that end a process by crashing, by number (Linux numbering:
/// signal(7)); SIGKILL (9) is not among them, it is a kill.
const CRASH_SIGNALS: [(i64, &str); 6] = [
    (4, "SIGILL"),
    (5, "SIGTRAP"),
    (6, "SIGABRT"),
    (7, "SIGBUS"),
    (8, "SIGFPE"),
    (11, "SIGSEGV"),
];

/// How a shell, a CI runner or a test driver says the process ended, when
/// it ended by a crash: the signal or Windows status it stands for. The
/// shells' words count where the shells put them (bash: `./run.sh: line 1:
/// 4242 Segmentation fault (core dumped) ./app`, or alone on a line; zsh:
/// `[1] 4242 segmentation fault ./app`, `zsh: abort ./app`), not in a
/// sentence.
fn exit_status(line: &str) -> Option<String> {
    static BASH: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(?:.*: line \d+:\s+\d+\s+|\d+\s+)?(Segmentation fault|Aborted|Bus error|Illegal instruction|Floating point exception)(?:\s*\(core dumped\)|: \d+)?(?:\s+\S.*)?$",
        )
        .expect("bash status pattern")
    });
    static ZSH: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(?:zsh: |\[\d+\]\s+(?:\d+\s+)?)(segmentation fault|abort|bus error|illegal hardware instruction|floating point exception)\b",
        )
        .expect("zsh status pattern")
    });
    static CODE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)(?:exit(?:ed)?(?: with)?(?: code| status| value)|exit_code|exitcode|return(?:ed)?(?: with)? code|returncode|return code)\s*(?:[:=]\s*|of\s+)?(-?0x[0-9a-f]+|-?\d+)",
        )
        .expect("exit code pattern")
    });
    let trimmed = line.trim();
    if trimmed.contains("Fatal Python error") || trimmed.contains(" signal ") {
        return None;
    }
    let words = BASH
        .captures(trimmed)
        .or_else(|| ZSH.captures(trimmed))
        .map(|c| c[1].to_ascii_lowercase());
    if let Some(words) = words {
        return Some(
            match words.as_str() {
                "segmentation fault" => "SIGSEGV",
                "aborted" | "abort" => "SIGABRT",
                "bus error" => "SIGBUS",
                "floating point exception" => "SIGFPE",
                _ => "SIGILL",
            }
            .to_string(),
        );
    }
    let code = CODE.captures(trimmed)?;
    crash_code(&code[1])
}

/// What an exit code says about a crash: a signal (128 + N from a shell,
/// -N from Python's subprocess and Node), or a Windows status (NTSTATUS in
/// hex, or as an unsigned or signed 32-bit decimal).
pub(super) fn crash_code(code: &str) -> Option<String> {
    let negative = code.starts_with('-');
    let digits = code.trim_start_matches('-');
    let value: i64 = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => i64::from_str_radix(hex, 16).ok()?,
        None => digits.parse().ok()?,
    };
    let value = if negative { -value } else { value };
    let signal = |n: i64| {
        CRASH_SIGNALS
            .iter()
            .find(|(s, _)| *s == n)
            .map(|(_, name)| name)
    };
    if (128..=159).contains(&value) {
        if let Some(name) = signal(value - 128) {
            return Some(format!(
                "{name} (exit status {value} = 128 + {})",
                value - 128
            ));
        }
    }
    if (-31..0).contains(&value) {
        if let Some(name) = signal(-value) {
            return Some(format!("{name} (killed by signal {})", -value));
        }
    }
    // The status as Windows reports it: its 32 bits, however printed.
    let bits = u32::try_from(value)
        .ok()
        .or_else(|| i32::try_from(value).ok().map(|v| v as u32))?;
    windows_status(bits).map(|name| format!("{name} ({bits:#010X})"))
}

/// Windows statuses (ntstatus.h) that end a process by a crash or a
/// fail-fast, by the name a developer looks up. Statuses of start-up
/// failures (a DLL not found) and of Ctrl-C are not crashes.
pub(super) fn windows_status(code: u32) -> Option<&'static str> {
    const STATUSES: [(u32, &str); 16] = [
        (0xC000_0005, "STATUS_ACCESS_VIOLATION"),
        (0xC000_0006, "STATUS_IN_PAGE_ERROR"),
        (0xC000_001D, "STATUS_ILLEGAL_INSTRUCTION"),
        (0xC000_008C, "STATUS_ARRAY_BOUNDS_EXCEEDED"),
        (0xC000_008E, "STATUS_FLOAT_DIVIDE_BY_ZERO"),
        (0xC000_0094, "STATUS_INTEGER_DIVIDE_BY_ZERO"),
        (0xC000_0096, "STATUS_PRIVILEGED_INSTRUCTION"),
        (0xC000_00FD, "STATUS_STACK_OVERFLOW"),
        (0xC000_027B, "STATUS_STOWED_EXCEPTION"),
        (0xC000_0374, "STATUS_HEAP_CORRUPTION"),
        (0xC000_0409, "STATUS_STACK_BUFFER_OVERRUN (fail-fast)"),
        (0xC000_0417, "STATUS_INVALID_CRUNTIME_PARAMETER"),
        (0xC000_0420, "STATUS_ASSERTION_FAILURE"),
        (0xC000_0602, "STATUS_FAIL_FAST_EXCEPTION"),
        (0x8000_0003, "STATUS_BREAKPOINT"),
        (0x4000_0015, "STATUS_FATAL_APP_EXIT"),
    ];
    STATUSES.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// A Windows Error Reporting record's exception code line (Event 1000's
/// `Exception code: 0xc0000005`, a problem signature's `Exception Code:
/// c0000005`), with the faulting module and offset from the lines around
/// it.
fn windows_error_report(line: &str, i: usize, lines: &[Option<String>]) -> Option<String> {
    static CODE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^Exception [Cc]ode:\s*(?:0x)?([0-9a-fA-F]{8})\s*$").expect("WER code pattern")
    });
    let trimmed = line.trim().trim_matches('`');
    let c = CODE.captures(trimmed)?;
    let code = u32::from_str_radix(&c[1], 16).ok()?;
    let near = |keys: &[&str]| {
        lines
            .iter()
            .skip(i.saturating_sub(12))
            .take(24)
            .flatten()
            .find_map(|l| {
                let l = l.trim().trim_matches('`');
                keys.iter()
                    .find_map(|k| l.strip_prefix(k))
                    .map(|v| v.trim().split(',').next().unwrap_or("").trim().to_string())
            })
            .filter(|v| !v.is_empty())
    };
    let module = near(&["Faulting module name:", "Fault Module Name:"]);
    let offset = near(&["Fault offset:", "Exception Offset:"]);
    let name = windows_status(code).unwrap_or("exception");
    let mut meaning = format!("{name} ({code:#010X})");
    if let Some(module) = module {
        meaning.push_str(&format!(" in {module}"));
        if let Some(offset) = offset {
            meaning.push_str(&format!(" at offset {offset}"));
        }
    }
    Some(meaning)
}

/// WinDbg's exception record and `!analyze -v` summary lines: the code,
/// named, with a fail-fast's subcode (its first parameter, or the `Subcode:`
/// line `!analyze` prints).
fn debugger_analysis(line: &str, i: usize, lines: &[Option<String>]) -> Option<Option<String>> {
    static RECORD: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:ExceptionCode|EXCEPTION_CODE_STR):\s*(?:0x)?([0-9a-fA-F]{8})\b")
            .expect("exception record pattern")
    });
    static SUBCODE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:Parameter\[0\]:\s*([0-9a-fA-F]+)|Subcode:\s*0x([0-9a-fA-F]+))")
            .expect("subcode pattern")
    });
    let t = line.trim();
    if let Some(bucket) = t.strip_prefix("FAILURE_BUCKET_ID:") {
        return (!bucket.trim().is_empty()).then_some(None);
    }
    let c = RECORD.captures(t)?;
    let code = u32::from_str_radix(&c[1], 16).ok()?;
    let name = windows_status(code).unwrap_or("exception");
    let mut meaning = format!("{name} ({code:#010X})");
    if code == 0xC000_0409 {
        let sub = lines.iter().skip(i + 1).take(8).flatten().find_map(|l| {
            let c = SUBCODE.captures(l.trim())?;
            let hex = c.get(1).or_else(|| c.get(2))?.as_str();
            u64::from_str_radix(hex, 16).ok()
        });
        if let Some(sub) = sub {
            let named = crate::exit_phase::fast_fail_name(sub)
                .map(|n| format!(" {n}"))
                .unwrap_or_default();
            meaning.push_str(&format!(", fast-fail code {sub}{named}"));
        }
    }
    Some(Some(meaning))
}

enum Summary {
    /// Every test passed: how many, as the runner says it.
    Passed(String),
    Failed,
    /// A test started: its name.
    Running(String),
}

/// A test runner's summary or test line.
fn test_summary(line: &str, i: usize, lines: &[Option<String>]) -> Option<Summary> {
    static PYTEST: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^=*\s*(\d+) passed\b([^=]*?)(?: in [\d.]+m?s(?: \([^)]*\))?)?\s*=*\s*$")
            .expect("pytest summary pattern")
    });
    static CTEST: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(\d+)% tests passed, (\d+) tests? failed out of (\d+)")
            .expect("ctest pattern")
    });
    static GTEST: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\[  PASSED  \] (\d+) tests?\.").expect("gtest pattern"));
    static RUN: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\[ RUN      \] (\S+)").expect("gtest run pattern"));
    static CATCH: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^All tests passed \((\d+) assertions? in (\d+) test cases?\)")
            .expect("Catch2 pattern")
    });
    static UNITTEST: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^Ran (\d+) tests? in [\d.]+s").expect("unittest pattern"));
    static CARGO: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed")
            .expect("cargo pattern")
    });
    static JEST: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^Tests:\s+(?:(\d+) failed, )?(?:\d+ \w+, )*(\d+) passed, (\d+) total")
            .expect("jest pattern")
    });
    static MOCHA: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(\d+) (passing|failing)\b").expect("mocha pattern"));
    let t = line.trim();
    if let Some(c) = PYTEST.captures(t) {
        let rest = &c[2];
        if rest.contains("failed") || rest.contains("error") {
            return Some(Summary::Failed);
        }
        return Some(Summary::Passed(format!("{} tests passed", &c[1])));
    }
    if t.contains(" failed") && t.starts_with('=') && t.contains(" passed") {
        return Some(Summary::Failed);
    }
    if let Some(c) = CTEST.captures(t) {
        return Some(if &c[2] == "0" {
            Summary::Passed(format!("{} tests passed", &c[3]))
        } else {
            Summary::Failed
        });
    }
    if let Some(c) = GTEST.captures(t) {
        return Some(Summary::Passed(format!("{} tests passed", &c[1])));
    }
    if t.starts_with("[  FAILED  ]") {
        return Some(Summary::Failed);
    }
    if let Some(c) = RUN.captures(t) {
        // Running until the failure: no end of it in the log after it.
        let name = &c[1];
        let ended = lines.iter().skip(i + 1).take(2000).flatten().any(|l| {
            let l = l.trim();
            (l.starts_with("[       OK ]") || l.starts_with("[  FAILED  ]")) && l.contains(name)
        });
        return (!ended).then(|| Summary::Running(name.to_string()));
    }
    if let Some(c) = CATCH.captures(t) {
        return Some(Summary::Passed(format!("all {} test cases passed", &c[2])));
    }
    if let Some(c) = UNITTEST.captures(t) {
        let verdict = lines
            .iter()
            .skip(i + 1)
            .take(3)
            .flatten()
            .map(|l| l.trim())
            .find(|l| !l.is_empty())?;
        if verdict == "OK" || verdict.starts_with("OK (") {
            return Some(Summary::Passed(format!("{} tests passed", &c[1])));
        }
        return verdict.starts_with("FAILED").then_some(Summary::Failed);
    }
    if let Some(c) = CARGO.captures(t) {
        return Some(if &c[1] == "ok" && &c[3] == "0" {
            Summary::Passed(format!("{} tests passed", &c[2]))
        } else {
            Summary::Failed
        });
    }
    if let Some(c) = JEST.captures(t) {
        return Some(match c.get(1) {
            Some(_) => Summary::Failed,
            None => Summary::Passed(format!("{} tests passed", &c[2])),
        });
    }
    if let Some(c) = MOCHA.captures(t) {
        return Some(match &c[2] {
            "failing" => Summary::Failed,
            _ => Summary::Passed(format!("{} tests passed", &c[1])),
        });
    }
    // TAP (node --test, tape): `# pass 171` ... `# fail 0`.
    if let Some(n) = t.strip_prefix("# fail ") {
        return Some(match n.trim() {
            "0" => {
                let passed = lines.iter().take(i).rev().take(6).flatten().find_map(|l| {
                    l.trim()
                        .strip_prefix("# pass ")
                        .map(|n| n.trim().to_string())
                });
                Summary::Passed(format!(
                    "{} tests passed",
                    passed.unwrap_or_else(|| "all".into())
                ))
            }
            _ => Summary::Failed,
        });
    }
    match t {
        "End Result: TEST PASSED" | "TEST PASSED" | "Test passed" | "Result = PASS" => {
            Some(Summary::Passed("the test passed".to_string()))
        }
        _ if t.starts_with("FAILED (failures=") || t.starts_with("FAILED (errors=") => {
            Some(Summary::Failed)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
