//! The batch summary: dumps grouped by diagnosis, and the dumps no specific
//! signature explains grouped by a crash signature made from the top frames
//! of the crashing or blamed thread, so identical unknown failures group
//! together.
//!
//! The crash signature follows the idea of Mozilla Socorro's signature
//! generation: skip the frames at the top of the stack that say nothing
//! about the failure (system, C runtime and exception-raising frames), then
//! take the next few frames, by function name or `module+offset` when
//! unsymbolized.

use std::sync::LazyLock;

use crate::model::{
    bare_name, offset, Frame, Kind, Report, Status, Summary, SummaryError, SummaryGroup,
};
use crate::pattern::{Case, Pattern};

/// Frames that make up a crash signature.
const CRASH_SIGNATURE_FRAMES: usize = 3;

/// Modules whose frames at the top of a stack say nothing about the failure.
const NOISE_MODULES: &[&str] = &[
    "ntdll.dll",
    "kernel32.dll",
    "kernelbase.dll",
    "win32u.dll",
    "user32.dll",
    "ucrtbase.dll",
    "msvcrt.dll",
    "vcruntime*.dll",
    "msvcp*.dll",
    "libc.so*",
    "libc-*.so",
    "libpthread*.so*",
    "ld-linux*.so*",
    "libstdc++.so*",
    "libgcc_s.so*",
    "libc++*.dylib",
    "libsystem_*.dylib",
    "libdyld.dylib",
];

/// Functions that only raise, abort, copy or wait, wherever they live.
const NOISE_FUNCTIONS: &[&str] = &[
    "RaiseException",
    "_CxxThrowException",
    "RtlRaiseException",
    "KiUserExceptionDispatcher",
    "abort",
    "raise",
    "__GI_raise",
    "__GI_abort",
    "__pthread_kill*",
    "pthread_kill*",
    "std::terminate*",
    "__cxa_throw",
    "__fortify_fail",
    "__stack_chk_fail",
    "__chk_fail",
    "memcpy*",
    "memmove*",
    "memset*",
    "memcmp*",
    "strlen*",
    "__memcpy*",
    "__memmove*",
    "__memset*",
    "_purecall",
    "__fastfail",
];

static NOISE: LazyLock<(Vec<Pattern>, Vec<Pattern>)> = LazyLock::new(|| {
    let build = |list: &[&str], case| {
        list.iter()
            .map(|p| Pattern::new(p, case).expect("built-in pattern"))
            .collect()
    };
    (
        build(NOISE_MODULES, Case::Insensitive),
        build(NOISE_FUNCTIONS, Case::Sensitive),
    )
});

fn is_noise(frame: &Frame) -> bool {
    let (modules, functions) = &*NOISE;
    let module_noise = frame
        .module
        .as_deref()
        .is_some_and(|m| modules.iter().any(|p| p.matches(m)));
    let function_noise = frame
        .function
        .as_deref()
        .is_some_and(|f| functions.iter().any(|p| p.matches(bare_name(f))));
    module_noise || function_noise
}

fn frame_label(frame: &Frame) -> String {
    match (&frame.function, &frame.module, &frame.unloaded_module) {
        (Some(function), _, _) => bare_name(function).to_string(),
        (None, Some(module), _) => {
            format!("{module}+{}", offset(frame.module_offset))
        }
        (None, None, Some(module)) => {
            format!("unloaded {module}+{}", offset(frame.unloaded_module_offset))
        }
        (None, None, None) => "???".to_string(),
    }
}

/// The crash signature of a report: the top meaningful frames of its
/// crashing or blamed thread, joined by ` | `.
pub fn crash_signature(report: &Report) -> Option<String> {
    let thread = report
        .crashing_thread()
        .or_else(|| report.blamed_thread())?;
    let first_meaningful = thread.frames.iter().position(|f| !is_noise(f)).unwrap_or(0);
    let labels: Vec<String> = thread.frames[first_meaningful.min(thread.frames.len())..]
        .iter()
        .take(CRASH_SIGNATURE_FRAMES)
        .map(frame_label)
        .collect();
    (!labels.is_empty()).then(|| labels.join(" | "))
}

/// The group a report belongs to: its specific signature; else its generic
/// diagnosis or unexplained crash, refined by the crash signature; else a
/// dump in which nothing failed.
fn group_of(report: &Report) -> SummaryGroup {
    let crash_signature = report.crash_signature.as_deref().unwrap_or("no stack");
    let empty = |key: String, title: String| SummaryGroup {
        key,
        signature: None,
        kind: None,
        known: false,
        title,
        fix: None,
        count: 0,
        dumps: Vec::new(),
    };
    match report.diagnoses.first() {
        Some(d) if !d.generic => SummaryGroup {
            key: d.signature.clone(),
            signature: Some(d.signature.clone()),
            kind: Some(d.kind),
            known: true,
            title: d.title.clone(),
            fix: Some(d.fix.clone()),
            count: 0,
            dumps: Vec::new(),
        },
        Some(d) => SummaryGroup {
            key: format!("{}: {crash_signature}", d.signature),
            signature: Some(d.signature.clone()),
            kind: Some(d.kind),
            known: false,
            title: d.title.clone(),
            fix: Some(d.fix.clone()),
            count: 0,
            dumps: Vec::new(),
        },
        None if report.crashed() => SummaryGroup {
            kind: Some(Kind::Crash),
            ..empty(
                format!("unknown crash: {crash_signature}"),
                "Crash matching no known signature".to_string(),
            )
        },
        None => empty(
            "no failure found".to_string(),
            "No crash, and no thread blocked at exit".to_string(),
        ),
    }
}

/// Groups the reports of a run, known failures first, then by count.
pub(crate) fn summarize(reports: &[Report]) -> Summary {
    let mut groups: Vec<SummaryGroup> = Vec::new();
    let mut errors = Vec::new();
    for report in reports {
        if report.status == Status::Error {
            errors.push(SummaryError {
                path: report.path.clone(),
                error: report.error.clone().unwrap_or_default(),
                error_kind: report.error_kind,
            });
            continue;
        }
        let group = group_of(report);
        let slot = match groups.iter().position(|g| g.key == group.key) {
            Some(i) => &mut groups[i],
            None => {
                groups.push(group);
                groups.last_mut().expect("just pushed")
            }
        };
        slot.count += 1;
        slot.dumps.push(report.path.clone());
    }
    groups.sort_by(|a, b| {
        let rank =
            |g: &SummaryGroup| match (g.known, g.kind.is_some() || g.key.starts_with("unknown")) {
                (true, _) => 0,
                (false, true) => 1,
                (false, false) => 2,
            };
        rank(a)
            .cmp(&rank(b))
            .then(b.count.cmp(&a.count))
            .then(a.key.cmp(&b.key))
    });
    Summary {
        dumps: reports.len(),
        analysed: reports.len() - errors.len(),
        failed: errors.len(),
        groups,
        errors,
    }
}
