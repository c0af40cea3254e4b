//! The crash signature: a failure's identity across runs, builds and input
//! kinds, made from function names only, so a CI team can group, track and
//! baseline failures by it.
//!
//! Version 2 (docs/ci.md, "Crash signatures"): the blamed thread's frames
//! (the crashing thread of a crash; without either, the thread of the
//! first diagnosis), top down, without the frames of
//! runtime machinery (`signature.toml`: the C and C++ runtimes, the system,
//! the dynamic loader, language runtimes; one table for dumps, cores and
//! text traces, applied wherever such a frame is in the stack), up to the
//! start of the process or thread, at most `frames` of them. A hang's
//! signature starts with what its thread waits for (`[mutex wait]`), read
//! from the names of the skipped frames at the top. A crash into code that
//! is no longer mapped keeps the frame that called it, even when only a
//! stack scan found it (nothing else can). Frames without a name are
//! `module+offset` (the report then says so: a rebuild changes them);
//! unnamed frames of runtime modules are skipped. When every frame is
//! machinery, the deepest machinery frames are the signature.
//!
//! Socorro's signature generation has the same idea (skip the frames that
//! say nothing about the failure, keep the next few); skipping machinery
//! anywhere in the stack, not only at its top, is what makes the dump, the
//! core and the gdb trace of one failure agree (each names a different set
//! of glibc's internal frames).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;

use crate::functions;
use crate::model::signature_name;
use crate::model::{file_name, offset, Frame, FrameKind, Report, Trust};
use crate::pattern::{Case, Pattern};

/// The version of the signature computed here, written in the JSON and in
/// baselines. Raised whenever the same stack would get another signature
/// (signature.toml's `version`, checked by a unit test).
pub(crate) const VERSION: u32 = 2;

/// A report's crash signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signature {
    pub text: String,
    /// Some frame had no name and is written as `module+offset`: a rebuild
    /// of that module changes the signature.
    pub offsets: bool,
}

/// `signature.toml` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableFile {
    /// Equal to [`VERSION`] (a unit test checks it).
    #[allow(dead_code)]
    version: u32,
    frames: usize,
    skip: BTreeMap<String, Group>,
    skip_modules: ModuleGroup,
    start: Group,
    wait: Vec<WaitGroup>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Group {
    #[allow(dead_code)]
    #[serde(default)]
    about: String,
    functions: Vec<String>,
    #[allow(dead_code)]
    names: Vec<String>,
    #[allow(dead_code)]
    not: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModuleGroup {
    modules: Vec<String>,
    #[allow(dead_code)]
    names: Vec<String>,
    #[allow(dead_code)]
    not: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WaitGroup {
    label: String,
    functions: Vec<String>,
    #[allow(dead_code)]
    names: Vec<String>,
    #[allow(dead_code)]
    not: Vec<String>,
}

/// The compiled table.
struct Table {
    frames: usize,
    skip: Vec<Pattern>,
    skip_modules: Vec<Pattern>,
    start: Vec<Pattern>,
    waits: Vec<(String, Vec<Pattern>)>,
}

const TABLE_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/signature.json"));

fn file() -> Result<TableFile, String> {
    serde_json::from_str(TABLE_JSON).map_err(|e| e.to_string())
}

fn patterns(items: &[String], case: Case) -> Result<Vec<Pattern>, String> {
    functions::expand(items)?
        .iter()
        .map(|p| Pattern::new(p, case))
        .collect()
}

fn compile(file: &TableFile) -> Result<Table, String> {
    let mut skip = Vec::new();
    for group in file.skip.values() {
        skip.extend(patterns(&group.functions, Case::Sensitive)?);
    }
    let mut waits = Vec::new();
    for wait in &file.wait {
        waits.push((
            wait.label.clone(),
            patterns(&wait.functions, Case::Sensitive)?,
        ));
    }
    Ok(Table {
        frames: file.frames,
        skip,
        skip_modules: patterns(&file.skip_modules.modules, Case::Insensitive)?,
        start: patterns(&file.start.functions, Case::Sensitive)?,
        waits,
    })
}

/// Compiled into the binary and checked by unit tests: a broken table is a
/// build defect, not an input error.
static TABLE: LazyLock<Table> = LazyLock::new(|| {
    file()
        .and_then(|f| compile(&f))
        .expect("src/signature.toml is valid")
});

fn any(patterns: &[Pattern], name: &str) -> bool {
    patterns.iter().any(|p| p.matches(name))
}

/// A function's name as it stands in a signature: [`signature_name`], with
/// template arguments spelled without spaces after commas (PDBs and DWARF
/// differ there), and MSVC's quoted names (`` `dynamic initializer for 'x'' ``)
/// without the parameter list a PDB may add after them, and no anonymous
/// namespace (DWARF names a function there without it when it has no
/// linkage name; gdb and symbol files qualify it).
fn label(name: &str) -> String {
    let name = signature_name(name);
    let name = match name.strip_prefix('`') {
        Some(quoted) if name.ends_with(')') => {
            quoted.rfind("'(").map_or(name, |at| &name[..at + 2])
        }
        _ => name,
    };
    name.replace(", ", ",")
        .replace("(anonymous namespace)::", "")
        .replace("`anonymous namespace'::", "")
}

/// A symbol dumper's stand-in for a function it has no name for
/// (`<unknown in app.pdb>`, `<.text ELF section in app>`): no name.
fn placeholder(name: &str) -> bool {
    name.starts_with('<') && name.ends_with('>') && name.contains(" in ")
}

/// What a frame stands for in a signature, innermost first: its inlined
/// functions and its function, or nothing when it has no name.
fn names(frame: &Frame) -> Vec<String> {
    if frame.kind == FrameKind::Python {
        // Python code is named by its function and its file's name (the
        // folder differs from one installation to the next).
        return frame
            .function
            .as_deref()
            .map(|f| match frame.file.as_deref() {
                Some(file) => format!("{f} ({})", file_name(file)),
                None => f.to_string(),
            })
            .into_iter()
            .collect();
    }
    frame
        .names()
        .filter(|n| !placeholder(n))
        .map(str::to_string)
        .collect()
}

/// The crash signature of a report: see the module's documentation.
pub(crate) fn crash_signature(report: &Report) -> Option<Signature> {
    let crashing = report.crashing_thread();
    // Without a crash or a blamed thread, a possible finding's thread (a
    // text trace whose exit the frames cannot establish).
    let diagnosed = || {
        let id = report.diagnoses.first()?.thread_id;
        report.threads.iter().find(|t| t.id == id)
    };
    let thread = crashing
        .or_else(|| report.blamed_thread())
        .or_else(diagnosed)?;
    of_stack(&thread.frames, crashing.is_some(), &TABLE)
}

/// The signature of one stack, top first; `crash` when it crashed (a hang
/// says what it waits for instead).
fn of_stack(frames: &[Frame], crash: bool, table: &Table) -> Option<Signature> {
    // A crash into unmapped code: the frame below is its caller, found by
    // scanning the stack because no unwind information covers the
    // unmapped address.
    let into_unmapped = crash
        && frames
            .first()
            .is_some_and(|f| f.function.is_none() && f.module.is_none());
    let mut kept: Vec<String> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    let mut wait = None;
    let mut offsets = false;
    let mut at_top = true;
    let push = |list: &mut Vec<String>, label: String| {
        if list.last() != Some(&label) {
            list.push(label);
        }
    };
    'frames: for (i, frame) in frames.iter().enumerate() {
        let names = names(frame);
        if names.iter().any(|n| any(&table.start, signature_name(n))) {
            break;
        }
        let scanned = matches!(frame.trust, Trust::Scan | Trust::CfiScan);
        if (scanned && !(into_unmapped && i == 1)) || frame.function_guessed {
            continue;
        }
        if names.is_empty() {
            let machinery = frame
                .module
                .as_deref()
                .is_some_and(|m| any(&table.skip_modules, m));
            if machinery {
                continue;
            }
            let text = match (&frame.module, &frame.unloaded_module) {
                (Some(module), _) => {
                    offsets = true;
                    format!("{module}+{}", offset(frame.module_offset))
                }
                (None, Some(module)) => format!("(unloaded {module})"),
                // Below the top, an address in no module is no call (code
                // cannot return into memory that is not mapped): a bad
                // unwind or a debugger's misread, left out.
                (None, None) if i > 0 => continue,
                (None, None) => "(no module)".to_string(),
            };
            at_top = false;
            push(&mut kept, text);
        }
        if frame.kind == FrameKind::Python {
            // Named by `names` already; the interpreter's own frames are
            // native ones.
            at_top = false;
            for name in names {
                push(&mut kept, name);
            }
            if kept.len() >= table.frames {
                break;
            }
            continue;
        }
        for name in &names {
            let bare = signature_name(name);
            if any(&table.skip, bare) {
                if at_top {
                    if let Some((label, _)) = table.waits.iter().find(|(_, p)| any(p, bare)) {
                        wait = Some(label.as_str());
                    }
                }
                push(&mut skipped, label(name));
                continue;
            }
            at_top = false;
            push(&mut kept, label(name));
            if kept.len() == table.frames {
                break 'frames;
            }
        }
    }
    if kept.is_empty() {
        // Machinery only: its deepest frames are all there is to tell.
        let from = skipped.len().saturating_sub(table.frames);
        kept = skipped.split_off(from);
    }
    let wait = wait.filter(|_| !crash).map(|w| format!("[{w}]"));
    let parts: Vec<String> = wait.into_iter().chain(kept).collect();
    (!parts.is_empty()).then(|| Signature {
        text: parts.join(" | "),
        offsets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SymbolSource;

    fn frame(function: Option<&str>, module: Option<&str>, trust: Trust) -> Frame {
        Frame {
            module: module.map(str::to_string),
            function: function.map(str::to_string),
            module_offset: Some(0x1a2b),
            trust,
            symbol_source: SymbolSource::Sym,
            ..Frame::from_text(0)
        }
    }

    fn named(names: &[&str]) -> Vec<Frame> {
        names
            .iter()
            .map(|n| frame(Some(n), None, Trust::Text))
            .collect()
    }

    fn sig(frames: &[Frame], crash: bool) -> String {
        of_stack(frames, crash, &TABLE)
            .map(|s| s.text)
            .unwrap_or_default()
    }

    #[test]
    fn the_table_is_valid_and_matches_what_it_lists() {
        let file = file().unwrap();
        assert_eq!(file.version, VERSION);
        let table = compile(&file).unwrap();
        let check = |what: &str, patterns: &[Pattern], names: &[String], not: &[String]| {
            for name in names {
                assert!(any(patterns, name), "{what} must match {name:?}");
            }
            for name in not {
                assert!(!any(patterns, name), "{what} must not match {name:?}");
            }
        };
        for (name, group) in &file.skip {
            check(
                &format!("skip.{name}"),
                &table.skip,
                &group.names,
                &group.not,
            );
        }
        check(
            "skip_modules",
            &table.skip_modules,
            &file.skip_modules.names,
            &file.skip_modules.not,
        );
        check("start", &table.start, &file.start.names, &file.start.not);
        for (wait, (_, patterns)) in file.wait.iter().zip(&table.waits) {
            check(&wait.label, patterns, &wait.names, &wait.not);
            // A wait is machinery: it is read from the skipped frames.
            for name in &wait.names {
                assert!(
                    any(&table.skip, name),
                    "{}: {name} is not skipped",
                    wait.label
                );
            }
        }
    }

    /// The issue 40 case: gdb names glibc's futex frames, the dump names
    /// others; both give the program's frames and the wait.
    #[test]
    fn one_hang_from_a_dump_and_from_gdb() {
        let dump = [
            frame(
                Some("__futex_abstimed_wait_common"),
                Some("libc.so.6"),
                Trust::Context,
            ),
            frame(
                Some("__GI___pthread_cond_wait"),
                Some("libc.so.6"),
                Trust::Cfi,
            ),
            frame(Some("SyncAllStreams"), Some("libamdhip64.so"), Trust::Cfi),
            frame(
                Some("__hipUnregisterFatBinary"),
                Some("libamdhip64.so"),
                Trust::Cfi,
            ),
            frame(Some("__run_exit_handlers"), Some("libc.so.6"), Trust::Cfi),
            frame(Some("__GI_exit"), Some("libc.so.6"), Trust::Cfi),
            frame(
                Some("__libc_start_call_main"),
                Some("libc.so.6"),
                Trust::Cfi,
            ),
            frame(None, Some("linux-vdso.so.1"), Trust::Scan),
        ];
        let gdb = named(&[
            "__futex_abstimed_wait_common64",
            "__futex_abstimed_wait_common",
            "__GI___futex_abstimed_wait_cancelable64",
            "__pthread_cond_wait_common",
            "___pthread_cond_wait",
            "SyncAllStreams",
            "__hipUnregisterFatBinary",
            "__run_exit_handlers",
            "__GI_exit",
            "__libc_start_call_main",
            "__libc_start_main_impl",
            "_start",
        ]);
        let want = "[condition wait] | SyncAllStreams | __hipUnregisterFatBinary";
        assert_eq!(sig(&dump, false), want);
        assert_eq!(sig(&gdb, false), want);
    }

    /// Two programs that hang in the same runtime frames with different
    /// code of their own never share a signature.
    #[test]
    fn runtime_frames_never_make_two_programs_one() {
        let a = named(&[
            "futex_wait",
            "__lll_lock_wait",
            "___pthread_mutex_lock",
            "flush_log",
            "__run_exit_handlers",
            "exit",
            "_start",
        ]);
        let b = named(&[
            "futex_wait",
            "__lll_lock_wait",
            "___pthread_mutex_lock",
            "Cache::drop",
            "__tcf_0",
            "__run_exit_handlers",
            "exit",
            "_start",
        ]);
        assert_eq!(sig(&a, false), "[mutex wait] | flush_log");
        assert_eq!(sig(&b, false), "[mutex wait] | Cache::drop");
    }

    #[test]
    fn a_crash_into_unloaded_code_keeps_its_caller() {
        let dump = [
            frame(None, None, Trust::Context),
            frame(Some("run_release_hook"), Some("app"), Trust::Scan),
            frame(Some("__run_exit_handlers"), Some("libc.so.6"), Trust::Scan),
            frame(Some("__GI_exit"), Some("libc.so.6"), Trust::Cfi),
            frame(Some("helper"), Some("app"), Trust::Scan),
        ];
        assert_eq!(sig(&dump, true), "(no module) | run_release_hook");
        let mut unloaded = dump.clone();
        unloaded[0].unloaded_module = Some("plugin.dll".to_string());
        assert_eq!(
            sig(&unloaded, true),
            "(unloaded plugin.dll) | run_release_hook"
        );
        // Anywhere else, a scanned frame stays out.
        let mut named_top = dump.clone();
        named_top[0].function = Some("crash_here".to_string());
        named_top[0].module = Some("app".to_string());
        assert_eq!(sig(&named_top, true), "crash_here");
    }

    #[test]
    fn offsets_only_without_a_name_and_then_said() {
        let frames = [
            frame(None, Some("libc.so.6"), Trust::Context),
            frame(None, Some("app"), Trust::Cfi),
            frame(Some("main"), Some("app"), Trust::Cfi),
        ];
        let s = of_stack(&frames, true, &TABLE).unwrap();
        assert_eq!(s.text, "app+0x1a2b | main");
        assert!(s.offsets);
        let s = of_stack(&frames[2..], true, &TABLE).unwrap();
        assert!(!s.offsets);
    }

    #[test]
    fn machinery_only_gives_its_deepest_frames() {
        let gdb = named(&[
            "futex_wait",
            "__GI___lll_lock_wait",
            "lll_mutex_lock_optimized",
            "___pthread_mutex_lock",
            "_dl_fini",
            "__run_exit_handlers",
            "__GI_exit",
            "__libc_start_call_main",
        ]);
        assert_eq!(
            sig(&gdb, false),
            "[mutex wait] | _dl_fini | __run_exit_handlers | exit"
        );
    }

    #[test]
    fn a_crash_names_no_wait_and_aborts_are_skipped() {
        let gdb = named(&[
            "__pthread_kill_implementation",
            "__pthread_kill_internal",
            "__GI_raise",
            "__GI_abort",
            "__gxx_personality_v0",
            "_Unwind_RaiseException",
            "__cxa_throw",
            "Journal::flush()",
            "Journal::~Journal()",
            "__run_exit_handlers",
        ]);
        assert_eq!(sig(&gdb, true), "Journal::flush | Journal::~Journal");
        let crash_in_lock = named(&["___pthread_mutex_lock", "registry_forget", "start_thread"]);
        assert_eq!(sig(&crash_in_lock, true), "registry_forget");
    }

    #[test]
    fn inlined_functions_count_as_gdb_lists_them() {
        let mut frames = named(&["outer", "main"]);
        frames[0].inlines.push(crate::model::InlineFrame {
            function: "inner".to_string(),
            file: None,
            line: None,
        });
        assert_eq!(sig(&frames, true), "inner | outer | main");
    }
}
