//! Stopping and dumping a live process, and the facts the tracer and the
//! attach path share: which signals are crashes, how long to wait, and why
//! an attach failed.

use std::fs::File;
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use libc::{c_int, pid_t};
use minidump_writer::minidump_writer::MinidumpWriterConfig;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::procfs::{describe_threads, read_status, thread_states};
use crate::capture::types::CaptureError;

/// Signals whose default action is a crash dump worth catching.
pub(in crate::capture) const CRASH_SIGNALS: [c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGABRT,
];
/// A signal the command itself received this recently (or still has
/// pending) is not forwarded again: it was sent to the whole process group.
pub(in crate::capture) const SAME_SIGNAL_WINDOW: Duration = Duration::from_millis(200);
/// How long the command may take to reach its first instruction after
/// exec, and to end once it was killed or let die of its crash signal: the
/// waits that have no other deadline.
pub(in crate::capture) const PROCESS_END_TIMEOUT: Duration = Duration::from_secs(30);
/// si_code of a signal the kernel sent, such as the terminal's Ctrl-C to the
/// foreground process group (which the command received too).
pub(in crate::capture) const SI_KERNEL: i32 = 0x80;

/// The checks that turn a doomed attach into a clear error before anything
/// touches the process.
pub(in crate::capture) fn check_attachable(pid: u32) -> Result<(), CaptureError> {
    let own = std::process::id();
    if pid == own {
        return Err(CaptureError::OwnProcess(pid));
    }
    let status = match read_status(&format!("/proc/{pid}/status")) {
        Ok(status) => status,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(CaptureError::NoSuchProcess(pid))
        }
        Err(e) => {
            return Err(CaptureError::Refused {
                pid,
                why: e.to_string(),
            })
        }
    };
    if status.tgid == own {
        return Err(CaptureError::OwnProcess(pid));
    }
    if status.tgid != pid && status.tgid != 0 {
        return Err(CaptureError::NotAProcess {
            pid,
            process: status.tgid,
        });
    }
    if matches!(status.state, 'Z' | 'X') {
        return Err(CaptureError::Exited(pid));
    }
    if status.tracer != 0 {
        return Err(already_traced(pid, status.tracer));
    }
    Ok(())
}

/// TracerPid names the tracing *thread*; the message names its process.
fn already_traced(pid: u32, tracer_thread: u32) -> CaptureError {
    let tracer = read_status(&format!("/proc/{tracer_thread}/status"))
        .ok()
        .map(|s| s.tgid)
        .filter(|&tgid| tgid != 0)
        .unwrap_or(tracer_thread);
    CaptureError::AlreadyTraced {
        pid,
        tracer,
        tracer_name: std::fs::read_to_string(format!("/proc/{tracer}/comm"))
            .map(|comm| comm.trim_end().to_string())
            .unwrap_or_else(|_| "unknown".to_string()),
    }
}

/// The reason minidump-writer could suspend no thread: it still writes a
/// dump, of zero threads, when every ptrace attach fails.
pub(in crate::capture) fn why_no_threads(pid: u32) -> CaptureError {
    match read_status(&format!("/proc/{pid}/status")) {
        Err(_) => CaptureError::NoSuchProcess(pid),
        Ok(status) if matches!(status.state, 'Z' | 'X') => CaptureError::Exited(pid),
        Ok(status) if status.tracer != 0 => already_traced(pid, status.tracer),
        Ok(_) => {
            let scope = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
                .map(|s| format!(" (kernel.yama.ptrace_scope is {})", s.trim()))
                .unwrap_or_default();
            CaptureError::Refused {
                pid,
                why: format!(
                    "ptrace could not attach to any of its threads{scope}: run as the \
                     process's user with ptrace allowed, or as root"
                ),
            }
        }
    }
}

/// Writes a dump of a running, untraced process. minidump-writer stops it
/// (SIGSTOP), attaches to each thread, reads it, detaches and sends SIGCONT.
/// A process that was stopped before (Ctrl-Z) is stopped again afterwards.
///
/// minidump-writer waits for each thread it attaches to without a time
/// limit, and a thread in uninterruptible sleep (a driver call, a vfork)
/// does not stop until it wakes: so the process is group-stopped first, and
/// a thread still running after `stop_limit` aborts the capture, with the
/// process continued as it was.
pub(in crate::capture) fn write_live_dump(
    pid: u32,
    file: &mut File,
    _path: &Path,
    stop_limit: Duration,
) -> Result<(), CaptureError> {
    let was_stopped = read_status(&format!("/proc/{pid}/status")).is_ok_and(|s| s.state == 'T');
    group_stop(pid, stop_limit, was_stopped)?;
    // The main thread stands in as the blamed thread until the analysis
    // names the right one (capture::record_blamed_thread).
    let written = MinidumpWriterConfig::new(pid as pid_t, pid as pid_t).write(file);
    if was_stopped {
        let _ = kill(Pid::from_raw(pid as pid_t), Signal::SIGSTOP);
    }
    written.map(drop).map_err(|e| CaptureError::Writer {
        pid,
        why: error_chain(&e),
    })
}

/// Sends SIGSTOP to the process and waits, up to `limit`, until every
/// thread is stopped. Otherwise the process is continued (unless it was
/// stopped before) and the threads that did not stop are named.
fn group_stop(pid: u32, limit: Duration, was_stopped: bool) -> Result<(), CaptureError> {
    let process = Pid::from_raw(pid as pid_t);
    kill(process, Signal::SIGSTOP).map_err(|e| CaptureError::Refused {
        pid,
        why: format!("cannot stop it: {e}"),
    })?;
    let deadline = Instant::now() + limit;
    loop {
        let running: Vec<u32> = thread_states(pid)
            .into_iter()
            .filter(|(_, state)| !matches!(state, 'T' | 't' | 'Z' | 'X' | 'x'))
            .map(|(tid, _)| tid)
            .collect();
        if running.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            let threads = describe_threads(pid, &running);
            if !was_stopped {
                let _ = kill(process, Signal::SIGCONT);
            }
            return Err(CaptureError::NotStopped {
                pid,
                threads,
                limit,
            });
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

pub(in crate::capture) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
