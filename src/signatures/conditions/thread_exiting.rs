//! `thread_exiting`: the chosen thread is running process exit.

use super::condition::{flag_label, Compiler, Condition, OnThread, Scene};
use super::exit::{exit_in_stack, exit_in_words, exit_unproven};
use super::found::{Found, INFERRED_EXIT};
use crate::model::{ExitStage, Thread};

pub(super) struct ThreadExiting;

impl Condition for ThreadExiting {
    type Spec = Option<bool>;
    type Compiled = bool;
    const DOC: &'static str = "the chosen thread is running process exit";
    const LABEL_RANK: u8 = 5;

    fn compile(spec: &Option<bool>, _: &mut Compiler<'_>) -> Option<bool> {
        *spec
    }

    fn weight(want: &bool) -> u32 {
        u32::from(*want)
    }

    fn label(spec: &Option<bool>) -> Option<String> {
        flag_label(*spec, "thread exiting")
    }
}

impl OnThread for ThreadExiting {
    fn holds(want: &bool, scene: &Scene<'_>, thread: &Thread, found: &mut Found) -> bool {
        let want = *want;
        if thread.exiting.is_some() != want
            && !(want
                && (exit_in_stack(scene, thread, found)
                    || exit_in_words(scene, found)
                    || exit_unproven(scene, found)))
        {
            return false;
        }
        if let Some(marker) = &thread.exiting {
            found.fact(
                Some(thread.id),
                Some(marker.frame_index),
                format!(
                    "thread {} is exiting: {} ({})",
                    thread.id, marker.stage, marker.function
                ),
            );
            if marker.stage == ExitStage::MainReturned {
                found.confidence *= INFERRED_EXIT;
            }
        }
        true
    }
}
