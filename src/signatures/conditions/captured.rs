//! `captured`: why the dump was taken, as `run` or `attach` recorded it.

use super::condition::{Compiler, Condition, OnDump, Scene};
use super::found::Found;
use crate::model::CaptureReason;

pub(super) struct Captured;

impl Condition for Captured {
    type Spec = Option<CaptureReason>;
    type Compiled = CaptureReason;
    const DOC: &'static str = "why the dump was taken, as `dumptriage run` or `attach` recorded it in the dump: `\"hang-timeout\"` (still running at `--hang-timeout`), `\"crash\"` or `\"attach\"`; dumps from other writers have no record and never match";
    const LABEL_RANK: u8 = 10;

    fn compile(spec: &Option<CaptureReason>, _: &mut Compiler<'_>) -> Option<CaptureReason> {
        *spec
    }

    fn label(spec: &Option<CaptureReason>) -> Option<String> {
        spec.map(|reason| format!("captured at {}", reason.as_str()))
    }
}

impl OnDump for Captured {
    fn holds(want: &CaptureReason, scene: &Scene<'_>, found: &mut Found) -> bool {
        let Some(capture) = scene.report.capture.as_ref().filter(|c| c.reason == *want) else {
            return false;
        };
        found.fact(None, None, format!("the dump was {}", capture.describe()));
        true
    }
}
