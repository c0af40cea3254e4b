//! `process_exiting`: some thread is running process exit, or a text log
//! says so.

use super::condition::{flag_label, Compiler, Condition, OnDump, Scene};
use super::exit::{exit_in_stack, exit_in_words, exit_unproven, thread_ending};
use super::found::Found;

pub(super) struct ProcessExiting;

impl Condition for ProcessExiting {
    type Spec = Option<bool>;
    type Compiled = bool;
    const DOC: &'static str = "some thread is running process exit (see [Exit phase](../signatures.md#exit-phase)), or a text log says so (a runtime's message, every test passed before the failure: the report's `source.exit_evidence`). The text's own words alone (`source.exit_suggested`: `crashes on exit`, `Shutting down...`) meet it as a possible finding, for generic rules too, when the stacks neither show exit nor rule it out. For a specific rule, also met by the crashing (or a blocked) thread's own exit (its `ending`): the diagnosis then says it was a thread's exit (`thread_exit`)";
    const LABEL_RANK: u8 = 4;

    fn compile(spec: &Option<bool>, _: &mut Compiler<'_>) -> Option<bool> {
        *spec
    }

    fn weight(want: &bool) -> u32 {
        u32::from(*want)
    }

    fn label(spec: &Option<bool>) -> Option<String> {
        flag_label(*spec, "process exiting")
    }
}

impl OnDump for ProcessExiting {
    fn holds(want: &bool, scene: &Scene<'_>, found: &mut Found) -> bool {
        let report = scene.report;
        let want = *want;
        let in_stack = || report.threads.iter().find(|t| t.exiting_in_stack.is_some());
        if report.exit_phase.process_exiting != want
            && !(want
                && (in_stack().is_some_and(|t| exit_in_stack(scene, t, found))
                    || thread_ending(scene, found)
                    || exit_in_words(scene, found)
                    || exit_unproven(scene, found)))
        {
            return false;
        }
        if want {
            let exiting = report
                .threads
                .iter()
                .find_map(|t| t.exiting.as_ref().map(|m| (t, m)));
            if let Some((thread, marker)) = exiting {
                found.fact(
                    Some(thread.id),
                    Some(marker.frame_index),
                    format!(
                        "the process is exiting: thread {} is in {} ({})",
                        thread.id, marker.stage, marker.function
                    ),
                );
            } else if let Some(said) = &report.source.exit_evidence {
                found.fact(None, None, format!("the process is exiting: {said}"));
            }
        }
        true
    }
}
