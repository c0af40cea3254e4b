//! `exception`: the codes or names any of which must be the dump's crash.

use super::condition::{Compiler, Condition, OnDump, Scene};
use super::found::Found;
use crate::signatures::exception::ExceptionCode;

pub(super) struct Exception;

impl Condition for Exception {
    type Spec = Vec<String>;
    type Compiled = Vec<ExceptionCode>;
    const DOC: &'static str = "list of exception codes or names, any of which must be the dump's crash: `0xC0000005`, `EXCEPTION_ACCESS_VIOLATION`, `EXCEPTION_CPP` (0xE06D7363), `STATUS_STACK_BUFFER_OVERRUN`, `SIGSEGV`, `SIGABRT`, ... (signal names apply to Linux and macOS dumps only; `signatures lint` lists the known names)";
    const LABEL_RANK: u8 = 1;

    fn compile(spec: &Vec<String>, cx: &mut Compiler<'_>) -> Option<Vec<ExceptionCode>> {
        let mut codes = Vec::new();
        for (i, text) in spec.iter().enumerate() {
            match ExceptionCode::parse(text) {
                Ok(code) => codes.push(code),
                Err(e) => cx.error(&format!("[{i}]"), e),
            }
        }
        (!spec.is_empty()).then_some(codes)
    }

    fn label(spec: &Vec<String>) -> Option<String> {
        (!spec.is_empty()).then(|| format!("exception {}", spec.join("/")))
    }
}

impl OnDump for Exception {
    fn holds(codes: &Vec<ExceptionCode>, scene: &Scene<'_>, found: &mut Found) -> bool {
        let report = scene.report;
        let Some(exception) = report.exception.as_ref().filter(|e| e.crash) else {
            return false;
        };
        let windows = report
            .system
            .as_ref()
            .is_some_and(|s| s.os.starts_with("Windows"));
        let hit = codes
            .iter()
            .find(|want| exception.code == want.code && (!want.signal || !windows));
        let Some(hit) = hit else { return false };
        found.fact(
            Some(exception.thread_id),
            None,
            format!(
                "exception {:#x} {} ({})",
                exception.code, exception.name, hit.written
            ),
        );
        true
    }
}
