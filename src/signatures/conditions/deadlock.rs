//! `deadlock`: some threads wait for each other in a cycle.

use super::condition::{Compiler, Condition, OnDump, Scene};
use super::found::Found;

pub(super) struct Deadlock;

impl Condition for Deadlock {
    type Spec = Option<bool>;
    type Compiled = bool;
    const DOC: &'static str = "`true`: some threads wait for each other in a cycle (each waits for a mutex the next holds, or joins it; see the report's `exit_phase.deadlock`)";
    const LABEL_RANK: u8 = 8;

    fn compile(spec: &Option<bool>, _: &mut Compiler<'_>) -> Option<bool> {
        *spec
    }

    fn weight(want: &bool) -> u32 {
        u32::from(*want)
    }

    fn label(spec: &Option<bool>) -> Option<String> {
        (*spec == Some(true)).then(|| "deadlock".to_string())
    }
}

impl OnDump for Deadlock {
    fn holds(want: &bool, scene: &Scene<'_>, found: &mut Found) -> bool {
        let cycle = scene.report.exit_phase.deadlock.as_ref();
        if cycle.is_some() != *want {
            return false;
        }
        if let Some(cycle) = cycle {
            found.fact(
                None,
                None,
                format!(
                    "the threads wait for each other: {}",
                    crate::model::describe_cycle(cycle)
                ),
            );
        }
        true
    }
}
