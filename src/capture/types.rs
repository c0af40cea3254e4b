//! The types the capture steps and the OS back ends share: why a capture
//! failed, what `run` was asked to do, how it ended, and what `attach`
//! wrote. A leaf, so no back end imports the module that picks it.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::model::Report;

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
    /// The process ended by itself before it was stopped: `how` says how
    /// ("exited by itself with status 3", "was ended by SIGTERM").
    #[error("process {pid} {how} before it was stopped for the dump: there is nothing to dump")]
    Exited { pid: u32, how: String },
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
            CaptureError::Exited { .. } => "exited",
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

/// A dump written by `attach`, with its analysis.
#[derive(Debug)]
pub struct Captured {
    pub path: PathBuf,
    pub report: Report,
    /// The thread the dump's exception stream names after the analysis
    /// (the blamed thread when one was found).
    pub recorded_thread: Option<u32>,
}

/// Most processes of a hung command's tree dumped at one hang timeout: the
/// deepest that are not just waiting for a child come first.
pub const MAX_TREE_DUMPS: usize = 8;

/// What `run` was asked to do.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub command: Vec<OsString>,
    /// Capture and stop the command when it is still running after this long.
    pub hang_timeout: Option<Duration>,
    pub dump_dir: PathBuf,
    /// Leave a hung command running (untraced) instead of killing it.
    pub no_kill: bool,
    /// How long the processes of a hung command's tree get between SIGTERM
    /// and SIGKILL.
    pub kill_after: Duration,
    /// How the command's processes are stopped for a capture.
    pub stop: StopOptions,
}

/// How a process is stopped for its dump, and what is kept of it beside
/// the dump's own streams: what `attach` and `run` share.
#[derive(Debug, Clone, Copy)]
pub struct StopOptions {
    /// How long every thread gets to stop; one that does not (a thread in
    /// uninterruptible sleep) aborts the capture.
    pub limit: Duration,
    /// Keep the memory CPython's stacks need: off only to measure what
    /// keeping costs (`scripts/bench-python.sh`).
    pub python_memory: bool,
}

impl Default for StopOptions {
    fn default() -> Self {
        StopOptions {
            limit: DEFAULT_STOP_LIMIT,
            python_memory: true,
        }
    }
}

/// How long every thread of a process gets to stop for a dump, by default.
/// A thread that does not stop in time (uninterruptible sleep in a driver)
/// aborts the capture instead of blocking it.
pub const DEFAULT_STOP_LIMIT: Duration = Duration::from_secs(2);

/// What `run` has to say while the command runs, handed to the caller as it
/// happens (a warning printed only at the end would come too late to act
/// on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// Something that makes the capture less than asked for.
    Warning(String),
    /// What happened, for the record.
    Note(String),
}

/// How the command ended, as its parent would have seen it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    Code(i32),
    Signal(i32),
}

/// The end of a `run`.
#[derive(Debug)]
pub enum RunEnd<D = Result<Captured, CaptureError>> {
    /// The command ended by itself without a crash: nothing was written.
    Exited(ExitStatus),
    /// The command died of a crash signal; the dump was taken at the crash.
    Crashed {
        pid: u32,
        signal: i32,
        status: ExitStatus,
        dump: D,
    },
    /// The command was still running at the hang timeout. `dumps` has one
    /// entry per process of its tree found stuck (the deepest that are not
    /// just waiting for a child, at most MAX_TREE_DUMPS), with its pid.
    Hung {
        pid: u32,
        after: Duration,
        killed: bool,
        dumps: Vec<(u32, D)>,
    },
}

/// A core file a process of the command's tree left when it crashed (not
/// the command itself, which is dumped by the tracer): pid, signal, the
/// file (moved into the dump folder), the command's pid.
pub(super) type DescendantCore = (u32, i32, PathBuf, u32);

/// A dump the supervisor wrote, before it is analysed.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(super) struct Written {
    pub path: PathBuf,
    /// The dumped process's own command line, read before it was stopped.
    pub command: Vec<String>,
}

/// How the supervised command ended, before its dump is analysed: what the
/// OS-specific supervisor returns.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(super) type Supervised = RunEnd<Result<Written, CaptureError>>;
