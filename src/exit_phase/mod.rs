//! Is the process exiting or starting, is a thread blocked, which thread is
//! to blame.
//!
//! Decided from the stacks alone, so it works on a hand-written stack as well
//! as on a dump. Which frames mean what is data, in `frames.toml` beside this
//! file: frames that run only at exit, only at start-up, or at both times
//! (decided by their callers), the program's entry functions, and waits.
//!
//! Windows system DLLs are often unsymbolized (always, in dumps written under
//! Wine), so besides named exit functions a thread also counts as exiting
//! when its C runtime start-up frame has visibly handed over to an unnamed C
//! runtime function with no `main` above it: main has returned and `exit` is
//! running. When nothing proves exit and nothing rules it out, the report
//! says so (`exit_not_proven`), so rules can still answer with less
//! confidence.

use std::collections::BTreeSet;

use crate::model::{
    offset, BlockKind, Blocked, ExitMarker, ExitStage, Frame, FrameKind, Report, StartupMarker,
    SymbolSource, Thread, ThreadEnd, Trust,
};

mod culprit;
mod exception;
mod quitting;
mod tables;

pub(crate) use culprit::waits_for;
pub(crate) use exception::fast_fail_name;

use exception::*;
use tables::*;

/// A report whose threads have been classified: the only kind of report the
/// signature matcher accepts, so matching one that skipped this stage does
/// not compile (analysed `Report` -> `Classified` -> diagnosed `Report`).
#[derive(Debug)]
pub struct Classified(Report);

impl Classified {
    /// The report, to attach the diagnoses to.
    pub fn into_report(self) -> Report {
        self.0
    }
}

impl std::ops::Deref for Classified {
    type Target = Report;

    fn deref(&self) -> &Report {
        &self.0
    }
}

/// Fills each thread's `exiting`, `starting` and `blocked`, the exception's
/// `crash` flag, and the report's exit phase; puts the blamed thread first.
pub(crate) fn classify(mut report: Report) -> Classified {
    classify_in_place(&mut report);
    Classified(report)
}

fn classify_in_place(report: &mut Report) {
    let tables = &*TABLES;
    // First decide whether the exception is a crash at all: a thread that
    // only requested the dump or broke in is not "crashing", and may well be
    // the blocked one.
    if let Some(exception) = &mut report.exception {
        let code = exception.code;
        let thread = report.threads.iter().find(|t| t.id == exception.thread_id);
        let reason = DUMP_REQUESTED_CODES
            .iter()
            .find(|(c, _)| *c == code)
            .map(|(_, why)| why.to_string())
            .or_else(|| {
                (code == BREAKPOINT && thread.is_some_and(|t| is_break_in_thread(t, tables))).then(
                    || {
                        "debugger break-in (0x80000003 on the debugger's break-in thread)"
                            .to_string()
                    },
                )
            });
        if let Some(reason) = reason {
            exception.crash = false;
            exception.not_a_crash = Some(reason);
        }
    }
    let crash = report
        .exception
        .as_ref()
        .filter(|e| e.crash)
        .map(|e| e.thread_id);
    let windows = report
        .system
        .as_ref()
        .is_some_and(|s| s.os.starts_with("Windows"));
    if let Some(exception) = report.exception.as_mut().filter(|e| e.crash) {
        let thread = report.threads.iter().find(|t| t.id == exception.thread_id);
        exception.abort = abort_reason(exception, windows, thread, tables);
    }
    let debug_info = modules_with_debug_info(report);
    for thread in &mut report.threads {
        thread.crashing = crash == Some(thread.id);
        let (exiting, starting) = thread_phase(thread, tables, &debug_info);
        thread.exiting_in_stack = match exiting {
            Some(_) => None,
            None => exit_in_stack(thread, tables),
        };
        thread.ending = match (&exiting, &starting) {
            (None, None) => thread_ending(thread, tables),
            _ => None,
        };
        thread.exiting = exiting;
        thread.starting = starting;
        // A wait the frames show; else what the source itself knew (a
        // sampling profiler's thread that never left its frame).
        let known = thread.blocked.take().filter(|_| !thread.crashing);
        thread.blocked = blocked_in(thread, tables).or(known);
    }
    // A text trace's log may say so itself (a runtime's own message).
    report.exit_phase.process_exiting =
        report.threads.iter().any(|t| t.exiting.is_some()) || report.source.exit_evidence.is_some();
    report.exit_phase.process_starting = report.threads.iter().any(|t| t.starting.is_some());
    report.exit_phase.exit_not_proven = exit_not_proven(report, tables, &debug_info);
    quit_path(report, crash, tables);
    report.exit_phase.deadlock = deadlock(report);
    report.exit_phase.blamed_thread = crash.or_else(|| {
        let exiting = || report.threads.iter().filter(|t| t.exiting.is_some());
        exiting()
            .find(|t| t.blocked.as_ref().is_some_and(|b| b.certain))
            .or_else(|| exiting().find(|t| t.blocked.is_some()))
            .or_else(|| exiting().next())
            .map(|t| t.id)
            .or_else(|| blocked_when_words_say_exit(report))
    });
    let blamed = report.exit_phase.blamed_thread;
    // The blamed thread first, then the threads its wait leads to (the
    // holder, the holder's holder: the ones to look at next), the others
    // in dump order (a stable sort).
    let chain = blamed.map(|id| report.wait_chain(id)).unwrap_or_default();
    report.threads.sort_by_key(|t| {
        chain
            .iter()
            .position(|&id| id == t.id)
            .unwrap_or(usize::MAX)
    });
}

/// How many frames from the top a wait may sit and still be the thread's
/// wait (frames.toml's `waits.depth`).
pub(crate) fn wait_depth() -> usize {
    TABLES.wait_depth
}

/// Whether a function is one a blocked thread waits in (frames.toml's
/// waits: the system's and the C library's waits, sleeps and blocking
/// calls), as the exit phase decides a thread is blocked. Text traces ask
/// it to tell a hang's stack from a crash's when the text names no signal.
pub(crate) fn is_wait_function(name: &str) -> bool {
    TABLES
        .waits
        .iter()
        .any(|(_, patterns)| any_match(patterns, name))
}

/// Whether a module is one whose unnamed top frame means "inside a system
/// call" (frames.toml's `waits.system_call_modules`): on a thread that was
/// not running, a wait.
pub(crate) fn is_system_call_module(module: &str) -> bool {
    TABLES.syscall_modules.iter().any(|p| p.matches(module))
}

/// Modules whose names come from debug information (not exports): in
/// those, an unnamed frame is code without debug information, such as the
/// C runtime's start-up linked in from a library.
fn modules_with_debug_info(report: &Report) -> BTreeSet<String> {
    report
        .modules
        .iter()
        .filter(|m| {
            matches!(
                m.symbol_source,
                SymbolSource::Sym | SymbolSource::Pdb | SymbolSource::Dwarf
            )
        })
        .map(|m| m.name.to_ascii_lowercase())
        .collect()
}

/// The thread's innermost exit-time and start-up frames. Frames that run
/// at both times take the phase of the nearest decided frame below them
/// (their callers); with none, exit when main has visibly returned.
fn thread_phase(
    thread: &Thread,
    tables: &Tables,
    debug_info: &BTreeSet<String>,
) -> (Option<ExitMarker>, Option<StartupMarker>) {
    let main_returned = main_has_returned(thread, tables, debug_info);
    let mut exiting: Option<ExitMarker> = None;
    let mut starting: Option<StartupMarker> = None;
    // From the outermost frame up, remembering what the callers decided.
    let mut below: Option<FramePhase> = None;
    for (index, frame) in thread.frames.iter().enumerate().rev() {
        let Some((phase, function)) = frame_phase(frame, tables) else {
            continue;
        };
        let decided = match phase {
            FramePhase::Either(exit, startup) => match below {
                Some(FramePhase::Exit(_)) => FramePhase::Exit(exit),
                Some(FramePhase::Startup(_)) => FramePhase::Startup(startup),
                _ if main_returned.as_ref().is_some_and(|(at, _)| *at > index) => {
                    FramePhase::Exit(exit)
                }
                _ => continue,
            },
            decided => decided,
        };
        below = Some(decided);
        match decided {
            FramePhase::Exit(stage) => {
                exiting = Some(ExitMarker {
                    frame_index: index,
                    stage,
                    function: function.to_string(),
                })
            }
            FramePhase::Startup(stage) => {
                starting = Some(StartupMarker {
                    frame_index: index,
                    stage,
                    function: function.to_string(),
                })
            }
            FramePhase::Either(..) => {}
        }
    }
    // An unnamed runtime frame under the CRT's start-up routine is exit's
    // atexit walk only when nothing above it is start-up work: the same
    // shape is `_initterm` running static constructors.
    if exiting.is_none() && starting.is_none() {
        exiting = main_returned.map(|(index, function)| ExitMarker {
            frame_index: index,
            stage: ExitStage::MainReturned,
            function,
        });
    }
    (exiting, starting)
}

/// A thread's own teardown under its start function: the innermost frame
/// of it, and the start below.
fn thread_ending(thread: &Thread, tables: &Tables) -> Option<ThreadEnd> {
    let (index, function, needs_start) = thread.frames.iter().enumerate().find_map(|(i, f)| {
        f.names().find_map(|n| {
            if any_match(&tables.thread_exit, n) {
                Some((i, n.to_string(), false))
            } else if any_match(&tables.thread_exit_under_start, n) {
                Some((i, n.to_string(), true))
            } else {
                None
            }
        })
    })?;
    let start = thread.frames[index + 1..].iter().find_map(|f| {
        f.names()
            .find(|n| any_match(&tables.thread_starts, n))
            .map(str::to_string)
    });
    if needs_start && start.is_none() {
        return None;
    }
    Some(ThreadEnd {
        frame_index: index,
        function,
        start,
    })
}

/// The first stack-search hit in a function that runs only at exit.
fn exit_in_stack(thread: &Thread, tables: &Tables) -> Option<ExitMarker> {
    thread
        .stack_search
        .iter()
        .enumerate()
        .find_map(|(index, hit)| {
            tables
                .phases
                .iter()
                .find_map(|(phase, patterns)| match phase {
                    FramePhase::Exit(stage) if any_match(patterns, &hit.function) => {
                        Some(ExitMarker {
                            frame_index: index,
                            stage: *stage,
                            function: hit.function.clone(),
                        })
                    }
                    _ => None,
                })
        })
}

/// What the C runtime's start-up frame shows about `main`.
enum Entry {
    /// Its callee is an unnamed C runtime or system function and no entry
    /// function is above it: main has returned, `exit` is running.
    Returned { startup_index: usize, name: String },
    /// A program entry function (named, or the start-up's callee in the
    /// program's own code) is on the stack at this index.
    Running(usize),
    /// The stack does not say.
    Unknown,
}

fn main_has_returned(
    thread: &Thread,
    tables: &Tables,
    debug_info: &BTreeSet<String>,
) -> Option<(usize, String)> {
    match program_entry(thread, tables, debug_info) {
        Entry::Returned {
            startup_index,
            name,
        } => Some((startup_index, name)),
        _ => None,
    }
}

/// Looks at the program's entry on a thread. Going up from the C runtime's
/// start-up frame, past the start-up's own helpers (frames of its module
/// found only by scanning, named start-up functions, and unnamed frames in
/// a module whose other code has debug information: the C runtime linked
/// in without any), the first call is either `main` or `exit`. `main` is
/// never in a C runtime or system module, so an unnamed frame there is
/// `exit`; an unnamed frame anywhere else is `main` itself, stripped.
fn program_entry(thread: &Thread, tables: &Tables, debug_info: &BTreeSet<String>) -> Entry {
    // A Python function called `main` is not the program's entry.
    if let Some(index) = thread
        .frames
        .iter()
        .position(|f| f.kind == FrameKind::Native && f.names().any(|n| any_match(&tables.main, n)))
    {
        return Entry::Running(index);
    }
    let Some((index, startup)) = thread.frames.iter().enumerate().find_map(|(i, f)| {
        f.names()
            .find(|n| any_match(&tables.crt_startup, n))
            .map(|n| (i, n.to_string()))
    }) else {
        return Entry::Unknown;
    };
    let above = &thread.frames[..index];
    // A frame in no module above the start-up frame means a corrupt or
    // smashed stack: nothing is inferred from it.
    if !above.iter().all(|f| f.module.is_some()) {
        return Entry::Unknown;
    }
    let own = thread.frames[index].module.as_deref();
    if libc_into_loader(&thread.frames, index) {
        return Entry::Returned {
            startup_index: index,
            name: startup,
        };
    }
    let own_has_debug_info = own.is_some_and(|m| debug_info.contains(&m.to_ascii_lowercase()));
    let helper = |f: &&Frame| {
        f.module.as_deref() == own
            && (f.trust == Trust::Scan
                || f.names().any(|n| any_match(&tables.crt_startup, n))
                || (f.function.is_none() && own_has_debug_info))
    };
    let Some((callee_index, callee)) = above.iter().enumerate().rev().find(|(_, f)| !helper(f))
    else {
        return Entry::Unknown;
    };
    if callee.function.is_some() {
        // A named callee: the exit table or the entry table decides.
        return Entry::Unknown;
    }
    let runtime = callee
        .module
        .as_deref()
        .is_some_and(|m| any_match(&tables.runtime_modules, m));
    if runtime && callee.module.as_deref() != own {
        Entry::Returned {
            startup_index: index,
            name: startup,
        }
    } else if !runtime {
        Entry::Running(callee_index)
    } else {
        Entry::Unknown
    }
}

/// glibc's own unnamed frames right above its start-up function (a
/// backtrace_symbols walk of a C library without symbols), called into the
/// dynamic loader: under `__libc_start_main`, libc calls the loader only
/// from `exit`, to run the modules' destructors (`_dl_fini`). Main has
/// returned or called exit.
fn libc_into_loader(frames: &[Frame], startup: usize) -> bool {
    let own = frames[startup].module.as_deref();
    let mut top = startup;
    while top > 0 && frames[top - 1].function.is_none() && frames[top - 1].module.as_deref() == own
    {
        top -= 1;
    }
    let loader = |m: &str| {
        let m = m.to_ascii_lowercase();
        m.starts_with("ld-linux")
            || m.starts_with("ld.so")
            || m.starts_with("ld64.so")
            || m.starts_with("ld-musl")
    };
    own.is_some()
        && top < startup
        && top > 0
        && frames[top - 1].module.as_deref().is_some_and(loader)
}

/// Why exit is neither proven nor ruled out, when it is neither. Exit is
/// proven by an exiting thread; it is ruled out by a thread starting up, by
/// a runtime's main loop, or by `main` running with a known callee (its own
/// code, or a named function: not an unnamed C runtime function, which
/// could be `exit`).
fn exit_not_proven(
    report: &Report,
    tables: &Tables,
    debug_info: &BTreeSet<String>,
) -> Option<String> {
    if report.exit_phase.process_exiting || report.exit_phase.process_starting {
        return None;
    }
    // A text log that rules exit out (a test still running when the
    // process failed).
    if report.source.exit_ruled_out.is_some() {
        return None;
    }
    let main_running = report.threads.iter().any(|thread| {
        let Entry::Running(index) = program_entry(thread, tables, debug_info) else {
            return false;
        };
        match index.checked_sub(1).and_then(|i| thread.frames.get(i)) {
            // main at the top of its stack: running its own code.
            None => true,
            Some(callee) => {
                callee.function.is_some()
                    || callee
                        .module
                        .as_deref()
                        .is_some_and(|m| !any_match(&tables.runtime_modules, m))
            }
        }
    });
    let main_loop = report
        .threads
        .iter()
        .flat_map(|t| &t.frames)
        .filter(|f| f.kind == FrameKind::Native)
        .any(|f| f.names().any(|n| any_match(&tables.main_loops, n)));
    if main_running || main_loop {
        return None;
    }
    let unnamed: BTreeSet<&str> = report
        .threads
        .iter()
        .flat_map(|t| &t.frames)
        .filter(|f| f.function.is_none())
        .filter_map(|f| f.module.as_deref())
        .filter(|m| any_match(&tables.runtime_modules, m))
        .collect();
    Some(if unnamed.is_empty() {
        "no thread shows an exit frame, nor main running".to_string()
    } else {
        format!(
            "no thread shows an exit frame, and the C runtime and system frames are unnamed ({})",
            unnamed.into_iter().collect::<Vec<_>>().join(", ")
        )
    })
}

/// A quit path on the failing thread (the crashing one, or a blocked one),
/// when nothing else shows or rules out exit: its name suggests exit
/// (`source.exit_suggested`). Main still running below the quit path, on
/// the same thread, is no proof against it: a program's quit path runs
/// under main, before `exit`. Main running on another thread, or a
/// runtime's main loop anywhere, is: the program is still at work.
fn quit_path(report: &mut Report, crash: Option<u32>, tables: &Tables) {
    let phase = &report.exit_phase;
    if phase.process_exiting || phase.process_starting || report.source.exit_ruled_out.is_some() {
        return;
    }
    let found = report
        .threads
        .iter()
        .filter(|t| match crash {
            Some(id) => t.id == id,
            None => t.blocked.is_some(),
        })
        .find_map(|t| {
            quitting::quit_frame(t, is_main_loop).map(|(i, name)| (t.id, i, name.to_string()))
        });
    let Some((id, index, name)) = found else {
        return;
    };
    if report.exit_phase.exit_not_proven.is_none() {
        let main_below = report.threads.iter().find(|t| t.id == id).is_some_and(|t| {
            t.frames[index + 1..]
                .iter()
                .any(|f| f.names().any(|n| any_match(&tables.main, n)))
        });
        let main_loop = report
            .threads
            .iter()
            .flat_map(|t| &t.frames)
            .any(|f| f.names().any(is_main_loop));
        if !main_below || main_loop {
            return;
        }
    }
    // The text's own words, when they said it, are kept: they say more.
    if report.source.exit_suggested.is_none() {
        report.source.exit_suggested = Some(format!(
            "thread {id} is in a quit path: its frame {index}, `{name}`, is named for quitting (a program's or a library's own way out, before the C runtime's exit)"
        ));
    }
    if report.exit_phase.exit_not_proven.is_none() {
        report.exit_phase.exit_not_proven = Some(format!(
            "main is still running, in a quit path (`{name}`), before any exit frame"
        ));
    }
}

/// The thread to blame for a hang that only the text's words put at exit
/// ("hangs on exit"), when the stacks neither show exit nor rule it out:
/// the blocked thread, the main one first (a debugger's thread 1, a
/// runtime's `MainThread`), else the first blocked.
fn blocked_when_words_say_exit(report: &Report) -> Option<u32> {
    if report.source.exit_suggested.is_none() || report.exit_phase.exit_not_proven.is_none() {
        return None;
    }
    let blocked = || report.threads.iter().filter(|t| t.blocked.is_some());
    let main = |t: &&Thread| {
        t.name
            .as_deref()
            .is_some_and(|n| n.eq_ignore_ascii_case("main") || n == "MainThread")
    };
    blocked()
        .find(|t| quitting::quit_frame(t, is_main_loop).is_some())
        .or_else(|| blocked().find(main))
        .or_else(|| blocked().min_by_key(|t| t.id))
        .map(|t| t.id)
}

fn is_main_loop(name: &str) -> bool {
    any_match(&TABLES.main_loops, name)
}

/// A cycle of waits: each thread's wait is held by the next. The first
/// cycle found, from the first thread in it.
fn deadlock(report: &Report) -> Option<Vec<u32>> {
    report.threads.iter().find_map(|start| {
        // A chain ends where a thread waits for nothing known, or where its
        // holder is already in it: a cycle.
        let chain = report.wait_chain(start.id);
        let next = report.holder_of(*chain.last()?)?;
        let from = chain.iter().position(|&id| id == next)?;
        let mut cycle = chain[from..].to_vec();
        // Each cycle once: started from its lowest id. A thread waiting
        // for a lock it holds itself is a cycle of one.
        let low = cycle.iter().enumerate().min_by_key(|(_, id)| **id)?.0;
        cycle.rotate_left(low);
        Some(cycle)
    })
}

fn blocked_in(thread: &Thread, tables: &Tables) -> Option<Blocked> {
    if thread.crashing {
        return None;
    }
    let top: Vec<&Frame> = thread.frames.iter().take(tables.wait_depth).collect();
    // The group of the first of a frame's names that is a blocking call.
    fn group_of<'f>(frame: &'f Frame, tables: &Tables) -> Option<(Option<BlockKind>, &'f str)> {
        frame.names().find_map(|name| {
            let spelled = crate::model::signature_name(name);
            tables
                .waits
                .iter()
                .find(|(_, patterns)| {
                    any_match(patterns, name) || (spelled != name && any_match(patterns, spelled))
                })
                .map(|(kind, _)| (*kind, name))
        })
    }
    if let Some((index, (kind, name))) = top
        .iter()
        .enumerate()
        .find_map(|(i, f)| group_of(f, tables).map(|g| (i, g)))
    {
        // The kind: the first frame that shows one, down the run of wait
        // (or unnamed) frames from the wait.
        let kind = kind.or_else(|| {
            top[index + 1..]
                .iter()
                .map_while(|f| match group_of(f, tables) {
                    Some((kind, _)) => Some(kind),
                    None if f.function.is_none() || f.function_guessed => Some(None),
                    None => None,
                })
                .flatten()
                .next()
        });
        // A read of a non-blocking descriptor returns at once: an I/O call
        // is a wait only while the thread sits in it, where the registers
        // tell.
        if kind == Some(BlockKind::Io) && thread.in_system_call == Some(false) {
            return None;
        }
        return Some(Blocked {
            frame_index: index,
            function: name.to_string(),
            certain: true,
            kind,
        });
    }
    let first = thread.frames.first()?;
    let module = first.module.as_deref()?;
    // Unnamed, or named only by the nearest export (system-call stubs are
    // leaf functions without unwind entries, so their extent is unknown).
    let unnamed = first.function.is_none() || first.function_guessed;
    (unnamed && tables.syscall_modules.iter().any(|p| p.matches(module))).then(|| Blocked {
        frame_index: 0,
        function: match (&first.function, first.function_guessed) {
            (Some(name), true) => format!("{module}!{name} (nearest export)"),
            _ => format!("{module} + {}", offset(first.module_offset)),
        },
        certain: false,
        kind: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_table_is_valid() {
        let tables = Tables::parse(FRAMES_JSON).unwrap();
        assert!(tables.phases.len() > 10);
    }

    /// Whether a frame is evidence of exit by itself is the function
    /// groups' `exit_only`, which rules and docs rely on: the exit frames
    /// of the table are exactly those groups' functions.
    #[test]
    fn exit_frames_are_the_exit_only_groups() {
        let tables = Tables::parse(FRAMES_JSON).unwrap();
        let table: BTreeSet<String> = tables
            .phases
            .iter()
            .filter(|(phase, _)| matches!(phase, FramePhase::Exit(_)))
            .flat_map(|(_, patterns)| patterns.iter().map(|p| p.source().to_string()))
            .collect();
        let groups: BTreeSet<String> = crate::functions::GROUPS
            .iter()
            .filter(|(_, g)| g.exit_only)
            .flat_map(|(name, _)| crate::functions::expand(&[format!("functions:{name}")]).unwrap())
            .collect();
        assert_eq!(table, groups);
        let either: BTreeSet<String> = tables
            .phases
            .iter()
            .filter(|(phase, _)| !matches!(phase, FramePhase::Exit(_)))
            .flat_map(|(_, patterns)| patterns.iter().map(|p| p.source().to_string()))
            .collect();
        assert!(
            either.is_disjoint(&groups),
            "{:?}",
            either.intersection(&groups)
        );
    }
}
