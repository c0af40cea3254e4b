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
//! 4. At the hang timeout every thread is interrupted (PTRACE_INTERRUPT),
//!    and the process is left group-stopped as it is detached, so that no
//!    thread runs before the dump is written (trace.rs, `hang`); the other
//!    processes to dump are stopped with SIGSTOP before the first dump.
//!    Each gets SIGTERM while it is stopped, and takes it when the writer
//!    continues it after its dump (with --no-kill, all are continued once
//!    the last dump is written).
//!
//! Any stop makes a thread blocked in epoll_wait (and the other calls
//! signal(7) lists under "interruption ... by stop signals") return EINTR:
//! under `run` the program sees that only once its dump is written; after
//! `attach` it goes on with it, exactly as after gcore (docs/capture.md).

mod cores;
mod crash_context;
mod hold;
mod live;
mod procfs;
mod signals;
mod trace;
mod tree;

use std::collections::{BTreeSet, HashMap};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use libc::{c_int, pid_t};
use nix::sys::ptrace;
use nix::sys::signal::{kill, pthread_sigmask, SigSet, SigmaskHow, Signal};
use nix::unistd::Pid;

use super::types::{CaptureError, DescendantCore, Notice, RunOptions, Supervised};
pub(super) use live::{check_attachable, why_no_threads, write_live_dump};
pub(super) use procfs::{command_line, process_name};

/// `attach --tree`'s processes below `pid`.
pub(super) fn stuck_below(pid: u32) -> Vec<u32> {
    tree::stuck(&tree::tree(pid), super::types::MAX_TREE_DUMPS)
        .into_iter()
        .map(|m| m.pid)
        .filter(|&p| p != pid)
        .collect()
}

/// Processes whose name (/proc/PID/comm) or program file name (the first
/// word of /proc/PID/cmdline) is `name`, this process excepted.
pub(super) fn processes_named(name: &str) -> Result<Vec<u32>, String> {
    let me = std::process::id();
    let entries = std::fs::read_dir("/proc").map_err(|e| format!("cannot list /proc: {e}"))?;
    let mut found: Vec<u32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            let program = command_line(*pid).into_iter().next().unwrap_or_default();
            let file = program.rsplit('/').next().unwrap_or_default();
            comm.trim_end() == name || (!file.is_empty() && file == name)
        })
        .collect();
    found.sort_unstable();
    Ok(found)
}
use signals::Signals;
pub(super) use signals::{exit_like, signal_name};
use trace::{wait_any, Tracer};

/// Signals sent to the wrapper that are passed on to the command.
const FORWARDED: [Signal; 4] = [
    Signal::SIGINT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];

pub(super) fn supervise(
    options: &RunOptions,
    notice: &dyn Fn(Notice),
) -> Result<(Supervised, Vec<DescendantCore>), CaptureError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    // Crashes of the processes the command starts: through the cores the
    // kernel writes (cores.rs); none where the pattern hides them.
    let cores = cores::CoreWatch::new(&cwd).ok();
    let own_group = !std::io::IsTerminal::is_terminal(&std::io::stdin());
    let (end, pid) = supervise_command(options, cores.as_ref(), own_group, notice)?;
    let group = if own_group {
        pid as u32
    } else {
        nix::unistd::getpgrp().as_raw() as u32
    };
    let descendants = cores
        .map(|watch| watch.collect(group, pid as u32, &options.dump_dir))
        .unwrap_or_default();
    Ok((end, descendants))
}

fn supervise_command(
    options: &RunOptions,
    cores: Option<&cores::CoreWatch>,
    own_group: bool,
    notice: &dyn Fn(Notice),
) -> Result<(Supervised, pid_t), CaptureError> {
    let mut signals = Signals::block(&[
        Signal::SIGCHLD,
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
    ])
    .map_err(|e| CaptureError::Trace(format!("cannot watch signals: {e}")))?;
    // Orphans of the command's tree become our children, not init's: a hang
    // finds and ends all of them (tree.rs).
    if let Err(e) = tree::become_subreaper() {
        notice(Notice::Warning(format!(
            "cannot keep the command's orphaned processes in its tree ({e}): a hang may leave \
             some of them running"
        )));
    }
    let started = Instant::now();
    let child = spawn(
        options,
        signals.old_mask,
        own_group,
        cores.map(|c| c.raised()),
    )?;
    let pid = child.id() as pid_t;
    let mut tracer = Tracer {
        pid,
        threads: BTreeSet::from([pid]),
        traced: false,
        group_stopped: false,
        delivered: HashMap::new(),
        dump_dir: options.dump_dir.clone(),
        stop: options.stop,
        core_limit: cores.map(|c| c.original()),
    };
    match tracer.start() {
        Ok(None) => {}
        Ok(Some(status)) => return Ok((Supervised::Exited(status), pid)),
        Err(e) => notice(Notice::Warning(format!(
            "cannot trace the command ({e}): a crash will not be captured"
        ))),
    }
    let deadline = options.hang_timeout.map(|t| started + t);
    loop {
        while let Some((tid, status)) = wait_any(libc::WNOHANG)? {
            if let Some(end) = tracer.on_wait(tid, status)? {
                return Ok((end, pid));
            }
        }
        let timeout = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if timeout == Some(Duration::ZERO) {
            return Ok((
                tracer.hang(
                    started.elapsed(),
                    options.no_kill,
                    options.kill_after,
                    notice,
                )?,
                pid,
            ));
        }
        signals.wait(timeout)?;
        for info in signals.read() {
            let signal = info.ssi_signo as c_int;
            let forward = FORWARDED.iter().find(|s| **s as c_int == signal);
            if let Some(&forward) = forward {
                if tracer.should_forward(signal, info.ssi_code) {
                    // To the command's whole process group when it has its
                    // own, as a terminal would.
                    let target = if own_group { -pid } else { pid };
                    let _ = kill(Pid::from_raw(target), forward);
                }
            }
        }
    }
}

/// Starts the command, traced from its first instruction. With `own_group`
/// (standard input is not a terminal: CI), it leads a process group of its
/// own, as timeout(1) makes it, so signals reach its whole tree; at a
/// terminal it stays in the foreground group, to read the terminal.
fn spawn(
    options: &RunOptions,
    old_mask: SigSet,
    own_group: bool,
    core_limit: Option<libc::rlimit>,
) -> Result<std::process::Child, CaptureError> {
    let Some((program, args)) = options.command.split_first() else {
        return Err(CaptureError::Trace("no command to run".to_string()));
    };
    let mut command = Command::new(program);
    command.args(args);
    // SAFETY: the closure runs in the forked child before exec and only
    // makes four system calls, all async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            // The command gets the signal mask we were given, not the one
            // the wrapper uses to watch signals.
            let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old_mask), None);
            if own_group {
                let _ = nix::unistd::setpgid(Pid::from_raw(0), Pid::from_raw(0));
            }
            if let Some(limit) = &core_limit {
                // Inherited by the command's descendants (cores.rs).
                libc::setrlimit(libc::RLIMIT_CORE, limit);
            }
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
