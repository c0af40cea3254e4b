//! `access_in_module`: the data address of an access fault lies in a loaded
//! module.

use super::condition::{Compiler, Condition, OnDump, Scene};
use super::found::Found;
use crate::model::Report;
use crate::pattern::{Case, Pattern};

pub(super) struct AccessInModule;

impl Condition for AccessInModule {
    type Spec = Option<String>;
    type Compiled = Pattern;
    const DOC: &'static str =
        "module pattern: the data address of an access fault lies in a loaded module's range";

    fn compile(spec: &Option<String>, cx: &mut Compiler<'_>) -> Option<Pattern> {
        spec.as_deref()
            .and_then(|name| cx.pattern("", name, Case::Insensitive))
    }
}

impl OnDump for AccessInModule {
    fn holds(wanted: &Pattern, scene: &Scene<'_>, found: &mut Found) -> bool {
        let Some((thread, address)) = access(scene.report) else {
            return false;
        };
        let Some(module) = scene
            .report
            .modules
            .iter()
            .find(|m| inside(address, m.base, m.size) && wanted.matches(&m.name))
        else {
            return false;
        };
        found.fact(
            Some(thread),
            None,
            format!(
                "the faulting access {address:#x} lies in {} + {:#x}",
                module.name,
                address - module.base
            ),
        );
        true
    }
}

/// The crash's thread and the data address its access fault touched: a
/// COM call on a released object faults reading its vtable, so the
/// instruction pointer is in the caller and only the data address tells
/// whose memory it was.
pub(super) fn access(report: &Report) -> Option<(u32, u64)> {
    let exception = report.exception.as_ref().filter(|e| e.crash)?;
    Some((exception.thread_id, exception.access_address?))
}

/// `address` lies in the module at `base` of `size` bytes.
pub(super) fn inside(address: u64, base: u64, size: u64) -> bool {
    address >= base && address - base < size
}
