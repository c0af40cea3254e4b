//! `crash`: whether the dump records a real crash.

use super::condition::{flag_label, Compiler, Condition, OnDump, Scene};
use super::found::Found;

pub(super) struct Crash;

impl Condition for Crash {
    type Spec = Option<bool>;
    type Compiled = bool;
    const DOC: &'static str = "`true`: the dump records a real crash; `false`: it does not (a hang or live dump, a debugger break-in, a requested dump)";
    const LABEL_RANK: u8 = 2;

    fn compile(spec: &Option<bool>, _: &mut Compiler<'_>) -> Option<bool> {
        *spec
    }

    /// Crash or not is what half of all dumps share: it adds nothing to a
    /// match's weight (yet a table with it alone is allowed).
    fn weight(_: &bool) -> u32 {
        0
    }

    fn label(spec: &Option<bool>) -> Option<String> {
        flag_label(*spec, "crash")
    }
}

impl OnDump for Crash {
    fn holds(want: &bool, scene: &Scene<'_>, _: &mut Found) -> bool {
        scene.report.crashed() == *want
    }
}
