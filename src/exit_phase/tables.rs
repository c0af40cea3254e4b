//! `frames.toml`, compiled: which frames mean exit, start-up, either, a
//! program's entry, a wait, an abort or a debugger's break-in.

use crate::functions;
use crate::model::{
    bare_name, msvc_enclosing_function, BlockKind, ExitStage, Frame, FrameKind, StartupStage,
};
use crate::pattern::{Case, Pattern};
use serde::Deserialize;
use std::sync::LazyLock;

/// `frames.toml` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TableFile {
    exit: Vec<ExitGroup>,
    python_exit: Vec<PythonExitGroup>,
    startup: Vec<StartupGroup>,
    either: Vec<EitherGroup>,
    program: ProgramFile,
    waits: WaitsFile,
    abort: AbortFile,
    thread_exit: ThreadExitFile,
    break_in: BreakInFile,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ThreadExitFile {
    functions: Vec<String>,
    under_start: Vec<String>,
    starts: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AbortFile {
    depth: usize,
    functions: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ExitGroup {
    stage: ExitStage,
    functions: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PythonExitGroup {
    stage: ExitStage,
    file: String,
    functions: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StartupGroup {
    stage: StartupStage,
    functions: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EitherGroup {
    exit: ExitStage,
    startup: StartupStage,
    functions: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ProgramFile {
    crt_startup: Vec<String>,
    main: Vec<String>,
    main_loops: Vec<String>,
    runtime_modules: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WaitsFile {
    depth: usize,
    groups: Vec<WaitGroup>,
    system_call_modules: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WaitGroup {
    #[serde(default)]
    kind: Option<BlockKind>,
    functions: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BreakInFile {
    functions: Vec<String>,
    modules: Vec<String>,
}

/// What a frame says about its thread's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FramePhase {
    Exit(ExitStage),
    Startup(StartupStage),
    /// Runs at both times: its callers decide.
    Either(ExitStage, StartupStage),
}

/// The compiled table.
pub(super) struct Tables {
    pub(super) phases: Vec<(FramePhase, Vec<Pattern>)>,
    /// Python functions that run only at exit: (stage, file, functions).
    pub(super) python_exit: Vec<(ExitStage, Pattern, Vec<Pattern>)>,
    pub(super) crt_startup: Vec<Pattern>,
    pub(super) main: Vec<Pattern>,
    pub(super) main_loops: Vec<Pattern>,
    pub(super) runtime_modules: Vec<Pattern>,
    pub(super) wait_depth: usize,
    /// The blocking calls, by the kind of wait they show.
    pub(super) waits: Vec<(Option<BlockKind>, Vec<Pattern>)>,
    pub(super) syscall_modules: Vec<Pattern>,
    pub(super) abort_depth: usize,
    pub(super) abort_functions: Vec<Pattern>,
    pub(super) thread_exit: Vec<Pattern>,
    pub(super) thread_exit_under_start: Vec<Pattern>,
    pub(super) thread_starts: Vec<Pattern>,
    pub(super) break_in_functions: Vec<Pattern>,
    pub(super) break_in_modules: Vec<Pattern>,
}

impl Tables {
    pub(super) fn parse(text: &str) -> Result<Tables, String> {
        let file: TableFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        // `functions:NAME` entries are the named groups of functions.toml.
        let list = |items: &[String], case: Case| -> Result<Vec<Pattern>, String> {
            functions::expand(items)?
                .iter()
                .map(|p| Pattern::new(p, case))
                .collect()
        };
        let mut phases = Vec::new();
        for group in &file.exit {
            phases.push((
                FramePhase::Exit(group.stage),
                list(&group.functions, Case::Sensitive)?,
            ));
        }
        for group in &file.startup {
            phases.push((
                FramePhase::Startup(group.stage),
                list(&group.functions, Case::Sensitive)?,
            ));
        }
        for group in &file.either {
            phases.push((
                FramePhase::Either(group.exit, group.startup),
                list(&group.functions, Case::Sensitive)?,
            ));
        }
        let mut python_exit = Vec::new();
        for group in &file.python_exit {
            python_exit.push((
                group.stage,
                Pattern::new(&group.file, Case::Insensitive)?,
                list(&group.functions, Case::Sensitive)?,
            ));
        }
        Ok(Tables {
            phases,
            python_exit,
            crt_startup: list(&file.program.crt_startup, Case::Sensitive)?,
            main: list(&file.program.main, Case::Sensitive)?,
            main_loops: list(&file.program.main_loops, Case::Sensitive)?,
            runtime_modules: list(&file.program.runtime_modules, Case::Insensitive)?,
            wait_depth: file.waits.depth,
            waits: file
                .waits
                .groups
                .iter()
                .map(|g| Ok((g.kind, list(&g.functions, Case::Sensitive)?)))
                .collect::<Result<_, String>>()?,
            syscall_modules: list(&file.waits.system_call_modules, Case::Insensitive)?,
            abort_depth: file.abort.depth,
            abort_functions: list(&file.abort.functions, Case::Sensitive)?,
            thread_exit: list(&file.thread_exit.functions, Case::Sensitive)?,
            thread_exit_under_start: list(&file.thread_exit.under_start, Case::Sensitive)?,
            thread_starts: list(&file.thread_exit.starts, Case::Sensitive)?,
            break_in_functions: list(&file.break_in.functions, Case::Sensitive)?,
            break_in_modules: list(&file.break_in.modules, Case::Insensitive)?,
        })
    }
}

/// frames.toml as JSON (build.rs: read faster at every start).
pub(super) const FRAMES_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/frames.json"));

pub(super) static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    // Compiled into the binary and checked by a unit test: a broken table
    // is a build defect, not an input error.
    Tables::parse(FRAMES_JSON).expect("src/exit_phase/frames.toml is valid")
});

pub(super) fn any_match(patterns: &[Pattern], name: &str) -> bool {
    // The bare name once, not once per pattern: C++ names run long.
    let bare = Some(bare_name(name)).filter(|bare| bare.len() != name.len());
    // An MSVC lambda or local class runs as part of its function.
    let enclosing = msvc_enclosing_function(bare.unwrap_or(name));
    patterns.iter().any(|p| {
        p.matches(name)
            || bare.is_some_and(|bare| p.matches(bare))
            || enclosing.is_some_and(|f| p.matches(f))
    })
}

/// The phase a frame's names show, with the name that showed it.
pub(super) fn frame_phase<'f>(frame: &'f Frame, tables: &Tables) -> Option<(FramePhase, &'f str)> {
    // A Python frame answers to the Python table only: its function names
    // are Python's, qualified by the file they are in.
    if frame.kind == FrameKind::Python {
        let file = frame.file.as_deref()?;
        let function = frame.function.as_deref()?;
        return tables
            .python_exit
            .iter()
            .find_map(|(stage, in_file, functions)| {
                (in_file.matches(file) && functions.iter().any(|f| f.matches(function)))
                    .then_some((FramePhase::Exit(*stage), function))
            });
    }
    frame.names().find_map(|name| {
        tables
            .phases
            .iter()
            .find(|(_, patterns)| any_match(patterns, name))
            .map(|(phase, _)| (*phase, name))
    })
}
