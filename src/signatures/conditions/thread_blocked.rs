//! `thread_blocked`: the chosen thread is blocked in a wait.

use super::condition::{flag_label, Compiler, Condition, OnThread, Scene};
use super::found::{Found, INFERRED_WAIT};
use crate::model::{Thread, Wait, WaitKind};

pub(super) struct ThreadBlocked;

impl Condition for ThreadBlocked {
    type Spec = Option<bool>;
    type Compiled = bool;
    const DOC: &'static str = "the chosen thread is blocked in a wait";
    const LABEL_RANK: u8 = 6;

    fn compile(spec: &Option<bool>, _: &mut Compiler<'_>) -> Option<bool> {
        *spec
    }

    fn weight(want: &bool) -> u32 {
        u32::from(*want)
    }

    fn label(spec: &Option<bool>) -> Option<String> {
        flag_label(*spec, "thread blocked")
    }
}

impl OnThread for ThreadBlocked {
    fn holds(want: &bool, _: &Scene<'_>, thread: &Thread, found: &mut Found) -> bool {
        if thread.blocked.is_some() != *want {
            return false;
        }
        if let Some(blocked) = &thread.blocked {
            let how = if blocked.certain {
                ""
            } else {
                " (inferred: unsymbolized system call)"
            };
            // What it waits for and who holds it, where the dump tells.
            let holder = thread.wait.as_ref().map_or(String::new(), holder_phrase);
            found.fact(
                Some(thread.id),
                Some(blocked.frame_index),
                format!(
                    "thread {} is blocked in {}{how}{holder}",
                    thread.id,
                    blocked.describe()
                ),
            );
            if !blocked.certain {
                found.confidence *= INFERRED_WAIT;
            }
        }
        true
    }
}

/// `, waiting for a mutex held by thread 2`: who holds what a blocked
/// thread waits for, for its evidence line.
fn holder_phrase(wait: &Wait) -> String {
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
