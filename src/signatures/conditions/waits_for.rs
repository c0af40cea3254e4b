//! `waits_for`: the kind of object the chosen thread waits for, as the wait
//! analysis (src/dump/waits) found it.

use super::condition::{Compiler, Condition, OnThread, Scene};
use super::found::Found;
use crate::model::{Thread, WaitKind};

pub(super) struct WaitsFor;

impl Condition for WaitsFor {
    /// The thread's `wait.kind`.
    type Spec = Option<WaitKind>;
    type Compiled = WaitKind;
    const DOC: &'static str = "the kind of object the chosen thread waits for, as the wait analysis ([waits.md](../waits.md)) found it: `\"mutex\"`, `\"join\"`, `\"condition\"`, `\"semaphore\"`, `\"critical-section\"`, `\"loader-lock\"`, `\"srw-lock\"`, `\"handle\"`. Examples give it as `waits_for = { kind = \"...\", holder = ID }` on a thread";
    const LABEL_RANK: u8 = 9;

    fn compile(spec: &Option<WaitKind>, _: &mut Compiler<'_>) -> Option<WaitKind> {
        *spec
    }

    fn label(spec: &Option<WaitKind>) -> Option<String> {
        spec.map(|kind| format!("waits for {}", kind.article()))
    }
}

impl OnThread for WaitsFor {
    fn holds(kind: &WaitKind, _: &Scene<'_>, thread: &Thread, _: &mut Found) -> bool {
        thread.wait.as_ref().map(|w| w.kind) == Some(*kind)
    }
}
