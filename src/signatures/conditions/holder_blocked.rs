//! `holder_blocked`: the thread that holds what the chosen thread waits for
//! is itself blocked (`true`), or is not (`false`).

use super::condition::{flag_label, Compiler, Condition, OnThread, Scene};
use super::found::Found;
use crate::model::Thread;

pub(super) struct HolderBlocked;

impl Condition for HolderBlocked {
    type Spec = Option<bool>;
    type Compiled = bool;
    const DOC: &'static str = "`true`: the thread that holds what the chosen thread waits for is itself blocked in a wait (the evidence names it); `false`: it is not, or no holder is known";
    const LABEL_RANK: u8 = 7;

    fn compile(spec: &Option<bool>, _: &mut Compiler<'_>) -> Option<bool> {
        *spec
    }

    fn weight(want: &bool) -> u32 {
        u32::from(*want)
    }

    fn label(spec: &Option<bool>) -> Option<String> {
        flag_label(*spec, "holder blocked")
    }
}

impl OnThread for HolderBlocked {
    fn holds(want: &bool, scene: &Scene<'_>, thread: &Thread, found: &mut Found) -> bool {
        let holder = thread
            .wait
            .as_ref()
            .and_then(|w| w.holder)
            .and_then(|id| scene.report.threads.iter().find(|t| t.id == id));
        let blocked = holder.and_then(|h| h.blocked.as_ref().map(|b| (h.id, b)));
        if blocked.is_some() != *want {
            return false;
        }
        if let Some((id, blocked)) = blocked {
            found.fact(
                Some(id),
                Some(blocked.frame_index),
                format!(
                    "thread {id}, which holds what thread {} waits for, is itself blocked in {}",
                    thread.id,
                    blocked.describe()
                ),
            );
        }
        true
    }
}
