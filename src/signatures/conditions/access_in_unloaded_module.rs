//! `access_in_unloaded_module`: the data address of an access fault lies in
//! an unloaded module.

use super::access_in_module::{access, inside};
use super::condition::{Compiler, Condition, OnDump, Scene, UnloadedChoice};
use super::found::Found;
use crate::pattern::Pattern;

pub(super) struct AccessInUnloadedModule;

impl Condition for AccessInUnloadedModule {
    type Spec = Option<UnloadedChoice>;
    /// Any unloaded module, or one matching the pattern.
    type Compiled = Option<Pattern>;
    const DOC: &'static str = "`true`, or a module pattern: the data address of an access fault (not an execute fault) lies in the range of a module of the unloaded-module list. A call through a released COM object faults reading its vtable: the instruction pointer is in the caller, only the data address is in the unloaded DLL";
    const LABEL_RANK: u8 = 12;

    fn compile(spec: &Option<UnloadedChoice>, cx: &mut Compiler<'_>) -> Option<Option<Pattern>> {
        UnloadedChoice::compile(spec, cx)
    }

    fn label(spec: &Option<UnloadedChoice>) -> Option<String> {
        spec.is_some()
            .then(|| "access in an unloaded module".to_string())
    }
}

impl OnDump for AccessInUnloadedModule {
    fn holds(wanted: &Option<Pattern>, scene: &Scene<'_>, found: &mut Found) -> bool {
        let Some((thread, address)) = access(scene.report) else {
            return false;
        };
        let Some(module) = scene.report.unloaded_modules.iter().find(|m| {
            inside(address, m.base, m.size) && wanted.as_ref().is_none_or(|p| p.matches(&m.name))
        }) else {
            return false;
        };
        found.fact(
            Some(thread),
            None,
            format!(
                "the faulting access {address:#x} lies in unloaded {} + {:#x}",
                module.name,
                address - module.base
            ),
        );
        true
    }
}
