//! Which Python thread a blocked thread joins (issue 39): `Thread.join`
//! names it by its `self`, and `threading._shutdown` (the interpreter
//! joining every non-daemon thread at exit) waits on the native lock of
//! that thread's `_tstate_lock`, whose address the wait's registers give.
//! A join found so becomes the thread's wait (`join`, held by the joined
//! thread), so reports follow the wait to the thread that keeps the
//! process alive. Nothing is guessed: without one of these proofs the wait
//! stays as the dump showed it.

use super::walk::{PyFrame, PyState, PyThread};
use crate::model::{Report, Wait, WaitKind};

/// Python functions whose `self` is the Thread being joined.
const JOIN: [&str; 4] = [
    "join",
    "Thread.join",
    "_wait_for_tstate_lock",
    "Thread._wait_for_tstate_lock",
];

/// The function of `threading._shutdown` (3.10 names frames by `co_name`,
/// 3.11 and later by `co_qualname`: the same here).
const SHUTDOWN: &str = "_shutdown";

fn in_threading(frame: &PyFrame) -> bool {
    frame.file.ends_with("threading.py")
}

/// Turns the wait of each thread that joins a Python thread into a join of
/// that thread. `tids` gives each of `state.threads`' dump thread.
pub(super) fn resolve(report: &mut Report, state: &PyState, tids: &[Option<u32>]) {
    for (waiter, tid) in state.threads.iter().zip(tids) {
        let Some(tid) = *tid else { continue };
        let Some(thread) = report.threads.iter_mut().find(|t| t.id == tid) else {
            continue;
        };
        // Only a thread the dump shows waiting: what it waits for is what
        // is proven here.
        let Some(wait) = thread.wait.as_ref() else {
            continue;
        };
        let Some((joined, how)) = joined_by(waiter, wait, state) else {
            continue;
        };
        let Some(joined_tid) = tids[joined] else {
            continue;
        };
        thread.wait = Some(Wait {
            kind: WaitKind::Join,
            address: wait.address,
            holder: Some(joined_tid),
            gone_owner: None,
            found: Some(how),
            in_module: wait.in_module.clone(),
            note: None,
        });
    }
}

/// The thread (index in `state.threads`) `waiter` joins, and how that was
/// found.
fn joined_by(waiter: &PyThread, wait: &Wait, state: &PyState) -> Option<(usize, String)> {
    let others = || {
        state
            .threads
            .iter()
            .enumerate()
            .filter(move |(_, t)| !std::ptr::eq(*t, waiter))
    };
    let label = |t: &PyThread| match &t.name {
        Some(name) => format!("threading.Thread {name:?}"),
        None => "a threading.Thread".to_string(),
    };
    for frame in waiter.frames.iter().filter(|f| in_threading(f)) {
        if JOIN.contains(&frame.function.as_str()) {
            let this = frame.first_local?;
            let (index, joined) = others().find(|(_, t)| t.thread_object == Some(this))?;
            return Some((
                index,
                format!(
                    "the Python frame `{}` joins {} (its `self`)",
                    frame.function,
                    label(joined)
                ),
            ));
        }
        if frame.function == SHUTDOWN {
            if let Some((index, joined)) = wait
                .address
                .and_then(|a| others().find(|(_, t)| t.join_lock == Some(a)))
            {
                return Some((
                    index,
                    format!(
                        "the lock is the `_tstate_lock` of {}: `threading._shutdown` joins it",
                        label(joined)
                    ),
                ));
            }
            // 3.13 joins through thread handles the registers do not show:
            // `_shutdown` waits for every non-daemon thread, so when
            // exactly one is left (and every thread's daemon flag is
            // known), it is that one.
            let threads: Vec<(usize, &PyThread)> = others()
                .filter(|(_, t)| t.thread_object.is_some())
                .collect();
            if threads.iter().any(|(_, t)| t.daemon.is_none()) {
                return None;
            }
            let mut alive = threads.iter().filter(|(_, t)| t.daemon == Some(false));
            let (index, joined) = alive.next()?;
            if alive.next().is_some() {
                return None;
            }
            return Some((
                *index,
                format!(
                    "`threading._shutdown` joins every non-daemon thread, and {} is the only one left",
                    label(joined)
                ),
            ));
        }
    }
    None
}
