//! Whether the exit a rule asks for is there: in the thread's stack, as a
//! thread's own exit, or not established (a possible finding).

use super::condition::Scene;
use super::evidence::describe_hit;
use super::found::{Found, EXIT_NOT_PROVEN, STACK_SEARCH};
use crate::model::Thread;

/// An exit condition met by a thread's stack memory instead of its walked
/// frames, for rules that allow stack-search evidence.
pub(super) fn exit_in_stack(scene: &Scene<'_>, thread: &Thread, found: &mut Found) -> bool {
    if !scene.stack_search {
        return false;
    }
    let Some(marker) = &thread.exiting_in_stack else {
        return false;
    };
    let Some(hit) = thread.stack_search.get(marker.frame_index) else {
        return false;
    };
    found.fact(
        Some(thread.id),
        None,
        format!(
            "{}; it runs only at exit ({})",
            describe_hit(thread, hit),
            marker.stage
        ),
    );
    found.confidence *= STACK_SEARCH;
    true
}

/// A specific rule's exit condition that does not hold may still be met
/// softly: when the stacks neither prove exit nor rule it out, the rule's
/// other evidence stands, at lower confidence, as a *possible* finding
/// with the missing fact said. Only evidence that itself happens only at
/// exit or unload establishes exit: the exit-only function groups
/// (functions.toml), which the exit-phase tables hold, and unloaded
/// modules. Generic rules are about exit itself and are never met this way.
pub(super) fn exit_unproven(scene: &Scene<'_>, found: &mut Found) -> bool {
    let Some(why) = scene.report.exit_phase.exit_not_proven.as_deref() else {
        return false;
    };
    if scene.generic {
        return false;
    }
    found.fact(None, None, format!("exit not established: {why}"));
    found.confidence *= EXIT_NOT_PROVEN;
    found.possible = Some(why.to_string());
    true
}

/// An exit condition met by the text's own words (the reporter's "crashes
/// on exit", the program's "Shutting down..."): when the stacks neither
/// show exit nor rule it out, any rule, the generic ones too, stands as a
/// possible finding that says which words suggested exit. Words are a
/// person's reading, not a runtime's record: never an established answer.
pub(super) fn exit_in_words(scene: &Scene<'_>, found: &mut Found) -> bool {
    let report = scene.report;
    let (Some(said), Some(_)) = (
        report.source.exit_suggested.as_deref(),
        report.exit_phase.exit_not_proven.as_deref(),
    ) else {
        return false;
    };
    // Said once, when a rule asks for the process's exit and the thread's.
    if found.possible.is_some() {
        return true;
    }
    found.fact(None, None, format!("exit not shown by the trace: {said}"));
    found.confidence *= EXIT_NOT_PROVEN;
    found.possible = Some(format!("the trace does not show exit; {said}"));
    true
}

/// A specific rule's exit met by a thread's own exit: the crashing thread
/// (or, without a crash, a blocked one) is running its teardown under its
/// start function (a worker's thread-local destructors) while nothing
/// shows the process exiting. The same failure as at process exit, torn
/// down by one thread; the diagnosis says so. Generic rules are about the
/// process's exit and are never met this way.
pub(super) fn thread_ending(scene: &Scene<'_>, found: &mut Found) -> bool {
    if scene.generic {
        return false;
    }
    let report = scene.report;
    let thread = match report.crashing_thread() {
        Some(t) => t.ending.as_ref().map(|e| (t, e)),
        None => report
            .threads
            .iter()
            .filter(|t| t.blocked.is_some())
            .find_map(|t| t.ending.as_ref().map(|e| (t, e))),
    };
    let Some((thread, end)) = thread else {
        return false;
    };
    let under = end
        .start
        .as_deref()
        .map(|s| format!(" under {s}"))
        .unwrap_or_default();
    found.fact(
        Some(thread.id),
        Some(end.frame_index),
        format!(
            "thread {} is ending: {}{under}, its own teardown (a thread's exit, not the process's)",
            thread.id, end.function
        ),
    );
    found.thread_exit = true;
    true
}
