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
    bare_name, offset, Frame, Kind, Report, Status, Summary, SummaryError, SummaryGroup, Trust,
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
        .is_some_and(|f| functions.iter().any(|p| p.matches(signature_name(f))));
    module_noise || function_noise
}

/// Functions that start a process or a thread: the bottom of every stack,
/// never the failure.
const START_FUNCTIONS: &[&str] = &[
    "_start",
    "__libc_start_main",
    "__libc_start_call_main",
    "start_thread",
    "clone",
    "clone3",
    "__clone*",
    "BaseThreadInitThunk",
    "RtlUserThreadStart",
    "__scrt_common_main_seh",
    "__tmainCRTStartup",
    "mainCRTStartup",
    "wmainCRTStartup",
    "thread_start*",
];

/// A function's name as crash signatures spell it, so one failure keeps one
/// signature whichever build or debug file named it: no parameters,
/// glibc's internal aliases under their public name (`__GI_exit` ->
/// `exit`), no symbol version (`__libc_start_main@@GLIBC_2.34`), and no
/// compiler clone suffix (`.constprop.0`, `.isra.0`, `.part.0`, `.cold`,
/// `.lto_priv.0`, `.llvm.123`).
pub fn signature_name(function: &str) -> &str {
    let mut name = bare_name(function);
    if let Some(at) = name.find('@') {
        name = &name[..at];
    }
    for clone in [
        ".constprop.",
        ".isra.",
        ".part.",
        ".cold",
        ".lto_priv.",
        ".llvm.",
    ] {
        if let Some(at) = name.find(clone) {
            name = &name[..at];
        }
    }
    name.strip_prefix("__GI_").unwrap_or(name)
}

/// Whether a frame starts the process or a thread: it and everything below
/// it are the same in every stack, never the failure.
fn is_start_frame(frame: &Frame) -> bool {
    frame.function.as_deref().is_some_and(|f| {
        let name = signature_name(f);
        START.iter().any(|p| p.matches(name))
    })
}

/// Whether a frame can stand in a crash signature: found by unwinding (not
/// by scanning the stack), named for sure when named, and not the start of
/// the process or thread.
fn is_signature_frame(frame: &Frame) -> bool {
    let scanned = matches!(frame.trust, Trust::Scan | Trust::CfiScan);
    let start = is_start_frame(frame);
    // The kernel's vDSO with no name: a walk that ran off the stack's end.
    let vdso = frame.function.is_none()
        && frame
            .module
            .as_deref()
            .is_some_and(|m| m.starts_with("linux-vdso") || m.starts_with("linux-gate"));
    !scanned && !frame.function_guessed && !start && !vdso
}

static START: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    START_FUNCTIONS
        .iter()
        .map(|p| Pattern::new(p, Case::Sensitive).expect("built-in pattern"))
        .collect()
});

fn frame_label(frame: &Frame) -> String {
    match (&frame.function, &frame.module, &frame.unloaded_module) {
        (Some(function), _, _) => signature_name(function).to_string(),
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
    // A call into code no loaded module holds (a library already
    // unloaded): the caller, the nearest frame in a loaded module, is the
    // code that made it, even when only the stack scan found it (issue 39).
    let caller = thread
        .frames
        .first()
        .filter(|top| top.module.is_none())
        .and_then(|_| thread.frames.iter().position(|f| f.module.is_some()));
    let labels: Vec<String> = thread
        .frames
        .iter()
        .enumerate()
        .skip(first_meaningful)
        .take_while(|(_, f)| !is_start_frame(f))
        .filter(|(i, f)| is_signature_frame(f) || Some(*i) == caller)
        .take(CRASH_SIGNATURE_FRAMES)
        .map(|(_, f)| frame_label(f))
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
        possible: false,
        title,
        fix: None,
        count: 0,
        dumps: Vec::new(),
    };
    match report.diagnoses.first() {
        Some(d) if !d.generic => SummaryGroup {
            key: d.name(),
            signature: Some(d.signature.clone()),
            kind: Some(d.kind),
            known: d.possible.is_none(),
            possible: d.possible.is_some(),
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
            possible: false,
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

#[cfg(test)]
mod signature_tests {
    use super::*;

    #[test]
    fn names_are_spelled_the_same_whichever_build_named_them() {
        for (name, want) in [
            ("__GI_exit", "exit"),
            ("__GI___libc_write", "__libc_write"),
            ("__libc_start_main@@GLIBC_2.34", "__libc_start_main"),
            ("memcpy@GLIBC_2.2.5", "memcpy"),
            ("parse_header.constprop.0", "parse_header"),
            ("scan_block.isra.0.cold", "scan_block"),
            ("encode.part.3", "encode"),
            ("helper.lto_priv.0", "helper"),
            ("ns::Engine::run(int)", "ns::Engine::run"),
            (
                "`anonymous namespace'::CrashFunction",
                "`anonymous namespace'::CrashFunction",
            ),
        ] {
            assert_eq!(signature_name(name), want, "{name}");
        }
    }

    #[test]
    fn scanned_guessed_and_start_frames_stay_out() {
        let frame = |function: Option<&str>, module: &str, trust: Trust, guessed: bool| Frame {
            index: 0,
            instruction: 0x1000,
            module: Some(module.to_string()),
            function: function.map(str::to_string),
            function_guessed: guessed,
            module_offset: Some(0x10),
            function_offset: None,
            file: None,
            line: None,
            trust,
            symbol_source: crate::model::SymbolSource::Sym,
            unloaded_module: None,
            unloaded_module_offset: None,
            inlines: Vec::new(),
            kind: Default::default(),
        };
        assert!(is_signature_frame(&frame(
            Some("engine_step"),
            "app",
            Trust::Cfi,
            false
        )));
        assert!(!is_signature_frame(&frame(
            Some("engine_step"),
            "app",
            Trust::Scan,
            false
        )));
        assert!(!is_signature_frame(&frame(
            Some("engine_step"),
            "app",
            Trust::CfiScan,
            false
        )));
        assert!(!is_signature_frame(&frame(
            Some("DllExport7"),
            "x.dll",
            Trust::Cfi,
            true
        )));
        assert!(!is_signature_frame(&frame(
            Some("_start"),
            "app",
            Trust::Cfi,
            false
        )));
        assert!(!is_signature_frame(&frame(
            Some("__libc_start_main@@GLIBC_2.34"),
            "libc.so.6",
            Trust::Cfi,
            false
        )));
        assert!(!is_signature_frame(&frame(
            None,
            "linux-vdso.so.1",
            Trust::Cfi,
            false
        )));
        assert!(is_signature_frame(&frame(
            None,
            "libfoo.so",
            Trust::Cfi,
            false
        )));
    }
}
