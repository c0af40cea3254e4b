//! Rule conditions and evidence about what a thread waits for (the wait
//! analysis's facts: src/dump/waits).

use crate::model::{Report, Thread, Wait, WaitKind};
use crate::signatures::rule::Conditions;

/// `, waiting for a mutex held by thread 2`: who holds what a blocked
/// thread waits for, for its evidence line.
pub(super) fn holder_phrase(wait: &Wait) -> String {
    match (wait.holder, wait.gone_owner) {
        (Some(id), _) if wait.kind == WaitKind::Join => format!(", joining thread {id}"),
        (Some(id), _) => format!(", waiting for {} held by thread {id}", wait.kind.article()),
        (None, Some(id)) => format!(
            ", waiting for {} whose owner, thread {id}, ended without releasing it",
            wait.kind.article()
        ),
        (None, None) => String::new(),
    }
}

/// The `waits_for` and `holder_blocked` conditions on the chosen thread:
/// `None` when they do not hold, else the facts to add as evidence
/// (thread, frame, text).
pub(super) fn wait_facts(
    c: &Conditions,
    thread: &Thread,
    report: &Report,
) -> Option<Vec<(u32, usize, String)>> {
    let wait = thread.wait.as_ref();
    if let Some(kind) = c.waits_for {
        if wait.map(|w| w.kind) != Some(kind) {
            return None;
        }
    }
    let mut facts = Vec::new();
    if let Some(want) = c.holder_blocked {
        let holder = wait
            .and_then(|w| w.holder)
            .and_then(|id| report.threads.iter().find(|t| t.id == id));
        let blocked = holder.and_then(|h| h.blocked.as_ref().map(|b| (h.id, b)));
        if blocked.is_some() != want {
            return None;
        }
        if let Some((id, blocked)) = blocked {
            facts.push((
                id,
                blocked.frame_index,
                format!(
                    "thread {id}, which holds what thread {} waits for, is itself blocked in {}",
                    thread.id,
                    blocked.describe()
                ),
            ));
        }
    }
    Some(facts)
}
