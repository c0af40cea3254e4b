//! Whether the log says the process was exiting, and which fact decided
//! it: a runtime's own words (CPython finalizing, CUDA unloading, a Rust
//! panic on the main thread's destroyed thread-locals, the other phrases
//! runtimes print), or the shape of the log (every test had passed before
//! the failure), or a DLL entry point's own arguments (DLL_PROCESS_DETACH).
//! And whether it rules exit out: a test still running when the process
//! failed.

use std::sync::LazyLock;

use regex_lite::Regex;

use super::messages::ESCALATED;
use crate::model::{exit_said, Message, MessageKind};

/// A runtime's own words that the process was exiting, beyond the typed
/// messages: phrases of runtimes and libraries, matched in lower case.
/// PyTorch's ProcessGroupNCCL destructor says it runs at program exit;
/// HIP's hipErrorDeinitialized is its runtime already torn down.
const SAID: [&str; 10] = [
    "interpreter is finalizing",
    "likely shutting down",
    "during python finalization",
    "_py_finalize",
    "cuda driver is shutting down",
    "is in the process of shutting down",
    "python is finalizing",
    "destroy_process_group() was not called before program exit",
    "has not been destroyed before we destruct processgroupnccl",
    "hiperrordeinitialized",
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
        .or_else(|| escalated(messages))
        .or_else(|| all_passed(messages, failure))
        .or_else(|| passed_in_own_output(messages, lines, failure))
        .or_else(|| phrase(&lines[from..to]))
        .or_else(|| rust_main_tls_destroyed(&lines[from..to]))
        .or_else(|| static_object_destroyed(&lines[from..to]))
        .or_else(|| dll_detach(&lines[from..to]))
}

/// A launcher or a service manager that asked the process to end and found
/// it still running, escalating to a harder signal (messages.rs,
/// `timed-out`): the process was on its way out.
fn escalated(messages: &[Message]) -> Option<String> {
    messages
        .iter()
        .find(|m| m.kind == MessageKind::TimedOut && m.meaning.as_deref() == Some(ESCALATED))
        .map(|m| {
            format!(
                "the log says, on line {}: `{}` ({ESCALATED})",
                m.line, m.text
            )
        })
}

/// Why the log rules exit out, if it does: a test runner says a test was
/// running when the process failed.
pub(super) fn exit_ruled_out(messages: &[Message], failure: usize) -> Option<String> {
    let last = messages
        .iter()
        .rev()
        .find(|m| m.line <= failure && m.kind.is_test())?;
    (last.kind == MessageKind::TestRunning).then(|| {
        format!(
            "the process failed while a test ran: {} started on line {} and did not end",
            last.meaning.as_deref().unwrap_or("a test"),
            last.line
        )
    })
}

/// The shape of a test log: the runner's summary that every test passed,
/// the last test message before the failure and close to it (SHAPE_REACH
/// lines). The work was done; the process failed afterwards, on its way
/// out.
fn all_passed(messages: &[Message], failure: usize) -> Option<String> {
    let last = messages
        .iter()
        .rev()
        .find(|m| m.line < failure && m.kind.is_test())?;
    let ended = matches!(
        last.kind,
        MessageKind::TestsPassed | MessageKind::TestRunEnded
    );
    (ended && failure - last.line <= SHAPE_REACH).then(|| {
        format!(
            "the test run had ended: {} (line {}: `{}`) before the failure",
            last.meaning.as_deref().unwrap_or("every test passed"),
            last.line,
            last.text
        )
    })
}

/// ctest's `--output-on-failure`: the status line of a test that crashed
/// or hung comes first (`2/2 Test #2: io ....Exit code 0xc0000005`,
/// `....***Exception: SegFault`, `....***Timeout 1500.0 sec`), the test
/// program's own output after it. When that output's
/// last test message is the program's summary that every test passed, the
/// work was done and the program failed on its way out.
fn passed_in_own_output(
    messages: &[Message],
    lines: &[Option<String>],
    failure: usize,
) -> Option<String> {
    static STATUS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*\d+/\d+ Test\s+#\d+: \S+ \.+.*(?:Exit code|\*\*\*Exception|\*\*\*Timeout)")
            .expect("ctest status pattern")
    });
    // The next test's lines, or ctest's own summary: the output ends there.
    static NEXT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:\d+/\d+ Test\s+#\d+: |Start\s+\d+: |\d+% tests passed, |The following tests FAILED)")
            .expect("ctest boundary pattern")
    });
    let status = lines.get(failure.checked_sub(1)?)?.as_deref()?;
    if !STATUS.is_match(status) {
        return None;
    }
    let end = lines
        .iter()
        .enumerate()
        .skip(failure)
        .find(|(_, l)| l.as_deref().is_some_and(|l| NEXT.is_match(l)))
        .map_or(lines.len(), |(i, _)| i);
    let own: Vec<&Message> = messages
        .iter()
        .filter(|m| m.line > failure && m.line <= end && m.kind.is_test())
        .collect();
    let last = own.last()?;
    (last.kind == MessageKind::TestsPassed
        && !own.iter().any(|m| m.kind == MessageKind::TestsFailed))
    .then(|| {
        format!(
            "the test program's own output says its run had ended: {} (line {}: `{}`) before ctest reported it failed (line {failure})",
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

/// A destructor gdb shows running on a static object: its `this` is the
/// address of a global (or a function's static) variable, which gdb names
/// (`File::~File (this=0x6c7020 <log_file>)`); a heap or stack object's
/// address has no name. Objects of static storage are destroyed only by
/// exit (their `__cxa_atexit` entries) or when their module is unloaded.
/// Names gdb gives addresses that are no object a destructor runs on
/// (a vtable, type info) do not count.
fn static_object_destroyed(lines: &[Option<String>]) -> Option<String> {
    lines.iter().flatten().find_map(|line| {
        let frame = line.trim_start();
        if !frame.starts_with('#') {
            return None;
        }
        let dtor = frame.find("::~")?;
        let at = frame.find("(this=")?;
        if at < dtor {
            return None;
        }
        let value = frame[at + "(this=".len()..].trim_start_matches("this@entry=");
        let hex = value.strip_prefix("0x")?;
        let digits = hex.bytes().take_while(u8::is_ascii_hexdigit).count();
        let name = hex[digits..].strip_prefix(" <")?;
        let name = &name[..name.find('>')?];
        let name = name.split('+').next().unwrap_or(name);
        let not_an_object = ["vtable for", "typeinfo", "VTT for", "construction vtable"];
        if digits == 0 || name.is_empty() || not_an_object.iter().any(|w| name.starts_with(w)) {
            return None;
        }
        Some(format!(
            "a destructor runs on the static object `{name}`, which only exit or its module's unload destroys (`{}`)",
            frame.chars().take(200).collect::<String>()
        ))
    })
}

/// A DLL entry point's arguments as the trace shows them: 32-bit WinDbg's
/// `kb`/`kv` columns (`ChildEBP RetAddr` and the first three arguments:
/// the module, the reason, lpReserved) or Visual Studio's parameter values
/// (`reason=0`). Reason 0 is DLL_PROCESS_DETACH, which the loader sends
/// only when the module is unloaded or the process exits (lpReserved not
/// NULL: the process is terminating); attach (1) and the thread
/// notifications (2, 3) say nothing of exit. 64-bit `kb` columns are the
/// stack's home space, not the arguments, and are not read.
fn dll_detach(lines: &[Option<String>]) -> Option<String> {
    let entry = crate::functions::resolve("functions:dll-entry").ok()??;
    lines.iter().flatten().find_map(|line| {
        // (A frame names its module: `module!function`; most lines do not.)
        if !line.contains('!') {
            return None;
        }
        let (function, reason, reserved) = kb_arguments(line).or_else(|| vs_arguments(line))?;
        let name = crate::model::bare_name(function.rsplit('!').next()?);
        (reason == 0 && entry.matches(name)).then(|| {
            let why = if reserved == 0 {
                "the module is being unloaded"
            } else {
                "the process is terminating"
            };
            format!(
                "a DLL entry point ran with DLL_PROCESS_DETACH: {why} (`{}`)",
                line.trim().chars().take(200).collect::<String>()
            )
        })
    })
}

static KB_X86: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:[0-9a-fA-F]{2,4}\s+)?[0-9a-fA-F]{8}\s+[0-9a-fA-F]{8}\s+[0-9a-fA-F]{8}\s+([0-9a-fA-F]{8})\s+([0-9a-fA-F]{8})\s+([\w.-]+![\w@?$]+)")
        .expect("kb pattern")
});

/// `ChildEBP RetAddr Arg1 Arg2 Arg3 module!function+0x..`: the function,
/// its second and third arguments.
fn kb_arguments(line: &str) -> Option<(String, u64, u64)> {
    if !line
        .trim_start()
        .starts_with(|c: char| c.is_ascii_hexdigit())
    {
        return None;
    }
    let c = KB_X86.captures(line)?;
    let word = |i: usize| u64::from_str_radix(&c[i], 16).ok();
    Some((c[3].to_string(), word(1)?, word(2)?))
}

/// `module.dll!Function(type a=1, unsigned long reason=0, void * r=0x0)
/// Line 12`: the function, its second and third parameters' values.
fn vs_arguments(line: &str) -> Option<(String, u64, u64)> {
    let line = line.trim_start_matches(['>', ' ', '\t']);
    let (function, rest) = line.split_once('(')?;
    if !function.contains('!') || function.contains(' ') {
        return None;
    }
    let parameters = rest.split(')').next()?;
    let mut values = parameters.split(',').map(|p| {
        let value = p.rsplit_once('=')?.1.trim();
        match value.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => value.parse().ok(),
        }
    });
    let _module = values.next()?;
    Some((function.to_string(), values.next()??, values.next()??))
}
