//! `abort`: whether the crash is an abort.

use super::condition::{flag_label, Compiler, Condition, OnDump, Scene};
use super::found::Found;

pub(super) struct Abort;

impl Condition for Abort {
    type Spec = Option<bool>;
    type Compiled = bool;
    const DOC: &'static str = "`true`: the crash is an abort (fail-fast 0xC0000409 or 0xC0000602, SIGABRT, or `abort`/`std::terminate`/`_purecall`/`__fastfail` near the top of the crashing thread); `false`: it is not";
    const LABEL_RANK: u8 = 3;

    fn compile(spec: &Option<bool>, _: &mut Compiler<'_>) -> Option<bool> {
        *spec
    }

    fn weight(want: &bool) -> u32 {
        u32::from(*want)
    }

    fn label(spec: &Option<bool>) -> Option<String> {
        flag_label(*spec, "abort")
    }
}

impl OnDump for Abort {
    fn holds(want: &bool, scene: &Scene<'_>, found: &mut Found) -> bool {
        let abort = scene
            .report
            .exception
            .as_ref()
            .filter(|e| e.crash)
            .and_then(|e| e.abort.as_deref().map(|why| (e.thread_id, why)));
        if abort.is_some() != *want {
            return false;
        }
        if let Some((thread, why)) = abort {
            found.fact(Some(thread), None, format!("the process aborted: {why}"));
        }
        true
    }
}
