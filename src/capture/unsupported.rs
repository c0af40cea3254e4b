//! Operating systems without a capture implementation: every entry point is
//! a clear error, so the rest of the tool still builds and runs there.

use std::fs::File;
use std::path::Path;

use super::types::{CaptureError, DescendantCore, ExitStatus, RunOptions, Supervised};

pub(super) fn process_name(_pid: u32) -> String {
    String::new()
}

pub(super) fn check_attachable(_pid: u32) -> Result<(), CaptureError> {
    Err(CaptureError::Unsupported("dumptriage attach"))
}

pub(super) fn write_live_dump(
    _pid: u32,
    _file: &mut File,
    _path: &Path,
    _stop: super::types::StopOptions,
) -> Result<(), CaptureError> {
    Err(CaptureError::Unsupported("dumptriage attach"))
}

pub(super) fn why_no_threads(_pid: u32) -> CaptureError {
    CaptureError::Unsupported("dumptriage attach")
}

pub(super) fn supervise(
    _options: &RunOptions,
    _notice: &dyn Fn(super::types::Notice),
) -> Result<(Supervised, Vec<DescendantCore>), CaptureError> {
    Err(CaptureError::Unsupported("dumptriage run"))
}

pub(super) fn exit_like(status: ExitStatus) -> ! {
    match status {
        ExitStatus::Code(code) => std::process::exit(code),
        ExitStatus::Signal(signal) => std::process::exit(128 + signal),
    }
}

pub(super) fn signal_name(signal: i32) -> String {
    format!("signal {signal}")
}

/// `attach --tree` finds process trees on Linux only.
pub(super) fn stuck_below(_pid: u32) -> Vec<u32> {
    Vec::new()
}

/// Attach by name is Linux only.
pub(super) fn processes_named(name: &str) -> Result<Vec<u32>, String> {
    Err(format!(
        "attach by name ({name:?}) works on Linux only: give the PID"
    ))
}

/// The command line of another process is not read here.
pub(super) fn command_line(_pid: u32) -> Vec<String> {
    Vec::new()
}
