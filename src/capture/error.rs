//! Why a capture failed: the one error type of attach and run, shared by
//! the OS-independent steps and the OS back ends.

use std::path::PathBuf;
use std::time::Duration;

/// Why a capture failed. Each variant has a stable short name
/// ([`CaptureError::name`]).
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("no process with PID {0}")]
    NoSuchProcess(u32),
    #[error("PID {0} is dumptriage itself: a process cannot dump itself")]
    OwnProcess(u32),
    #[error("PID {pid} is a thread of process {process}: attach to {process}")]
    NotAProcess { pid: u32, process: u32 },
    #[error("process {0} has already exited (it is a zombie): there is nothing to dump")]
    Exited(u32),
    #[error(
        "process {pid} is already being traced by process {tracer} ({tracer_name}): \
         detach that debugger first (only one tracer may attach)"
    )]
    AlreadyTraced {
        pid: u32,
        tracer: u32,
        tracer_name: String,
    },
    #[error("cannot read process {pid}: {why}")]
    Refused { pid: u32, why: String },
    #[error("cannot use {} as the dump folder: {why}", path.display())]
    DumpDir { path: PathBuf, why: String },
    #[error("cannot create {}: {source}", path.display())]
    CreateDump {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "process {pid} could not be stopped for the dump: {threads} did not stop within \
         {:.1} s (uninterruptible sleep: inside a driver call, or a vfork); no dump was \
         written, and no thread was left stopped or traced",
        limit.as_secs_f64()
    )]
    NotStopped {
        pid: u32,
        /// `thread 123 (state D, in kernel_clone)`, ...
        threads: String,
        limit: Duration,
    },
    #[error("writing the minidump of process {pid} failed: {why}")]
    Writer { pid: u32, why: String },
    #[error("cannot update the blamed thread in {}: {why}", path.display())]
    Patch { path: PathBuf, why: String },
    #[error("{0}")]
    Trace(String),
    #[error("{0}")]
    Timeout(String),
    #[error("cannot start {command}: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("{0} is not supported on this operating system")]
    Unsupported(&'static str),
}

impl CaptureError {
    /// A stable, machine-friendly name for the kind of failure.
    pub fn name(&self) -> &'static str {
        match self {
            CaptureError::NoSuchProcess(_) => "no_such_process",
            CaptureError::OwnProcess(_) => "own_process",
            CaptureError::NotAProcess { .. } => "not_a_process",
            CaptureError::Exited(_) => "exited",
            CaptureError::AlreadyTraced { .. } => "already_traced",
            CaptureError::Refused { .. } => "refused",
            CaptureError::DumpDir { .. } => "dump_dir",
            CaptureError::CreateDump { .. } => "create_dump",
            CaptureError::NotStopped { .. } => "not_stopped",
            CaptureError::Writer { .. } => "writer",
            CaptureError::Patch { .. } => "patch",
            CaptureError::Trace(_) => "trace",
            CaptureError::Timeout(_) => "timeout",
            CaptureError::Spawn { .. } => "spawn",
            CaptureError::Unsupported(_) => "unsupported",
        }
    }
}
