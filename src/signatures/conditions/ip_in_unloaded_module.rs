//! `ip_in_unloaded_module`: the chosen thread's instruction pointer lies in
//! an unloaded module.

use super::condition::{Compiler, Condition, OnThread, Scene, UnloadedChoice};
use super::found::Found;
use crate::model::{offset, Thread};
use crate::pattern::Pattern;

pub(super) struct IpInUnloadedModule;

impl Condition for IpInUnloadedModule {
    type Spec = Option<UnloadedChoice>;
    /// Any unloaded module, or one matching the pattern.
    type Compiled = Option<Pattern>;
    const DOC: &'static str = "`true`, or a module pattern: the chosen thread's instruction pointer lies in the range of a module from the unloaded-module list";
    const LABEL_RANK: u8 = 11;

    fn compile(spec: &Option<UnloadedChoice>, cx: &mut Compiler<'_>) -> Option<Option<Pattern>> {
        UnloadedChoice::compile(spec, cx)
    }

    fn label(spec: &Option<UnloadedChoice>) -> Option<String> {
        spec.is_some()
            .then(|| "instruction in an unloaded module".to_string())
    }
}

impl OnThread for IpInUnloadedModule {
    fn holds(wanted: &Option<Pattern>, _: &Scene<'_>, thread: &Thread, found: &mut Found) -> bool {
        let Some(top) = thread.frames.first() else {
            return false;
        };
        let Some(name) = top.unloaded_module.as_deref() else {
            return false;
        };
        if wanted.as_ref().is_some_and(|p| !p.matches(name)) {
            return false;
        }
        found.fact(
            Some(thread.id),
            Some(0),
            format!(
                "the instruction pointer {:#x} lies in unloaded {} + {}",
                top.instruction,
                name,
                offset(top.unloaded_module_offset)
            ),
        );
        true
    }
}
