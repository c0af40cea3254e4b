//! Linux capture: minidump-writer for the dump itself, ptrace to watch a
//! command under `run`.
//!
//! How `run` catches a crash without changing the command's behaviour:
//!
//! 1. The child asks to be traced (PTRACE_TRACEME) just before exec, so the
//!    kernel stops it with SIGTRAP right after exec, before any of its code
//!    runs. We turn that into a PTRACE_SEIZE (detach with SIGSTOP, seize the
//!    stopped process, SIGCONT), because only a seized tracee can be
//!    interrupted (PTRACE_INTERRUPT) and group-stopped properly
//!    (PTRACE_LISTEN: Ctrl-Z still stops it).
//! 2. New threads are traced automatically (PTRACE_O_TRACECLONE); processes
//!    it forks are not traced. Every signal is passed on untouched, except a
//!    fatal crash signal: SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT whose
//!    disposition is the default one (a handler, such as a JVM's or Python's
//!    faulthandler, gets the signal as usual; when it re-raises it with the
//!    default disposition, that second delivery is the fatal one).
//! 3. At a fatal delivery the faulting thread is held in its
//!    signal-delivery-stop: we read its siginfo and registers, interrupt the
//!    other threads, queue the same signal again on the faulting thread,
//!    and detach everything into a group stop (the faulting thread is
//!    detached with SIGSTOP in place of the crash signal). minidump-writer
//!    can then attach (it needs to: a thread has one tracer) and write the
//!    dump with the crash context. When it resumes the process with SIGCONT,
//!    the faulting thread takes the queued signal and the process dies of
//!    it, as it would have.
//!
//! Stopping a process for a dump (SIGSTOP, ptrace attach, SIGCONT) makes a
//! thread blocked in epoll_wait (and the other calls signal(7) lists under
//! "interruption ... by stop signals") return EINTR once, exactly as gcore
//! does: see README, "attach".

mod crash_context;
mod procfs;
mod signals;
mod trace;

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use libc::{c_int, pid_t};
use minidump_writer::minidump_writer::MinidumpWriterConfig;
use nix::sys::ptrace;
use nix::sys::signal::{kill, pthread_sigmask, SigSet, SigmaskHow, Signal};
use nix::unistd::Pid;

use super::{CaptureError, RunOptions, Supervised};
pub(super) use procfs::process_name;
use procfs::{describe_threads, read_status, thread_states};
use signals::Signals;
pub(super) use signals::{exit_like, signal_name};
use trace::{wait_any, Tracer};

/// Signals whose default action is a crash dump worth catching.
pub(super) const CRASH_SIGNALS: [c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGABRT,
];
/// Signals sent to the wrapper that are passed on to the command.
const FORWARDED: [Signal; 4] = [
    Signal::SIGINT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];
/// A signal the command itself received this recently (or still has
/// pending) is not forwarded again: it was sent to the whole process group.
pub(super) const SAME_SIGNAL_WINDOW: Duration = Duration::from_millis(200);
/// How long the command may take to reach its first instruction after
/// exec, and to end once it was killed or let die of its crash signal: the
/// waits that have no other deadline.
pub(super) const PROCESS_END_TIMEOUT: Duration = Duration::from_secs(30);
/// si_code of a signal the kernel sent, such as the terminal's Ctrl-C to the
/// foreground process group (which the command received too).
pub(super) const SI_KERNEL: i32 = 0x80;

/// The checks that turn a doomed attach into a clear error before anything
/// touches the process.
pub(super) fn check_attachable(pid: u32) -> Result<(), CaptureError> {
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
pub(super) fn why_no_threads(pid: u32) -> CaptureError {
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
pub(super) fn write_live_dump(
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

pub(super) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

pub(super) fn supervise(options: &RunOptions) -> Result<Supervised, CaptureError> {
    let mut signals = Signals::block(&[
        Signal::SIGCHLD,
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
    ])
    .map_err(|e| CaptureError::Trace(format!("cannot watch signals: {e}")))?;
    let started = Instant::now();
    let child = spawn(options, signals.old_mask)?;
    let pid = child.id() as pid_t;
    let mut tracer = Tracer {
        pid,
        threads: BTreeSet::from([pid]),
        traced: false,
        delivered: HashMap::new(),
        dump_dir: options.dump_dir.clone(),
        stop_limit: options.stop_limit,
    };
    match tracer.start() {
        Ok(None) => {}
        Ok(Some(status)) => return Ok(Supervised::Exited(status)),
        Err(e) => eprintln!(
            "dumptriage: warning: cannot trace the command ({e}): a crash will not be captured"
        ),
    }
    let deadline = options.hang_timeout.map(|t| started + t);
    loop {
        while let Some((tid, status)) = wait_any(libc::WNOHANG)? {
            if let Some(end) = tracer.on_wait(tid, status)? {
                return Ok(end);
            }
        }
        let timeout = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if timeout == Some(Duration::ZERO) {
            return tracer.hang(started.elapsed(), options.no_kill);
        }
        signals.wait(timeout)?;
        for info in signals.read() {
            let signal = info.ssi_signo as c_int;
            let forward = FORWARDED.iter().find(|s| **s as c_int == signal);
            if let Some(&forward) = forward {
                if tracer.should_forward(signal, info.ssi_code) {
                    let _ = kill(Pid::from_raw(pid), forward);
                }
            }
        }
    }
}

fn spawn(options: &RunOptions, old_mask: SigSet) -> Result<std::process::Child, CaptureError> {
    let Some((program, args)) = options.command.split_first() else {
        return Err(CaptureError::Trace("no command to run".to_string()));
    };
    let mut command = Command::new(program);
    command.args(args);
    // SAFETY: the closure runs in the forked child before exec and only
    // makes two system calls, both async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            // The command gets the signal mask we were given, not the one
            // the wrapper uses to watch signals.
            let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old_mask), None);
            // Stop right after exec, before the program's first instruction
            // (see the module comment). A refusal (a ptrace policy) leaves
            // the command untraced; `start` notices.
            let _ = ptrace::traceme();
            Ok(())
        });
    }
    command.spawn().map_err(|source| CaptureError::Spawn {
        command: program.to_string_lossy().into_owned(),
        source,
    })
}
