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

use super::procfs::{describe_threads, ended, read_status, thread_states};
use super::signals::how_it_ended;
use crate::capture::types::{CaptureError, StopOptions};

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
        return Err(exited(pid));
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

/// The error for a process that ended before it was stopped: how it
/// ended, from its zombie where it is still there (issue 36: "exited by
/// itself with status 3", not "it is a zombie").
pub(in crate::capture) fn exited(pid: u32) -> CaptureError {
    CaptureError::Exited {
        pid,
        how: how_it_ended(ended(pid).flatten()),
    }
}

/// The reason minidump-writer could suspend no thread: it still writes a
/// dump, of zero threads, when every ptrace attach fails.
pub(in crate::capture) fn why_no_threads(pid: u32) -> CaptureError {
    match read_status(&format!("/proc/{pid}/status")) {
        Err(_) => exited(pid),
        Ok(status) if matches!(status.state, 'Z' | 'X') => exited(pid),
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
/// a thread still running after `stop.limit` aborts the capture, with the
/// process continued as it was.
pub(in crate::capture) fn write_live_dump(
    pid: u32,
    file: &mut File,
    path: &Path,
    stop: StopOptions,
) -> Result<(), CaptureError> {
    // Read while the threads still sit in their waits (a stop interrupts
    // them): the futex words they wait on, for the analysis to name who
    // holds them (the dump's memory lists do not hold a program's data).
    let objects = wait_objects(pid);
    let was_stopped = read_status(&format!("/proc/{pid}/status")).is_ok_and(|s| s.state == 'T');
    write_live_dump_keeping(pid, file, path, stop, &objects, was_stopped)
}

/// As [`write_live_dump`], with the wait objects read earlier (by `run`,
/// before it stopped the process). With `leave_stopped`, the process is
/// stopped again once the writer has continued it (it was stopped before,
/// or is let go later); otherwise the writer's SIGCONT lets it go on, or
/// take the SIGTERM `run` queued while it was stopped.
pub(in crate::capture) fn write_live_dump_keeping(
    pid: u32,
    file: &mut File,
    path: &Path,
    stop: StopOptions,
    objects: &[u8],
    leave_stopped: bool,
) -> Result<(), CaptureError> {
    group_stop(pid, stop.limit, leave_stopped)?;
    // What the Python stacks need, read while the process is stopped.
    let python = python_memory(pid, stop);
    // The main thread stands in as the blamed thread until the analysis
    // names the right one (capture::record_blamed_thread).
    let written = MinidumpWriterConfig::new(pid as pid_t, pid as pid_t).write(file);
    if leave_stopped {
        let _ = kill(Pid::from_raw(pid as pid_t), Signal::SIGSTOP);
    }
    written.map(drop).map_err(|e| CaptureError::Writer {
        pid,
        why: error_chain(&e),
    })?;
    append_kept(path, &[objects, &python].concat());
    Ok(())
}

/// The memory the Python stacks of `pid` need, unless `stop` says not to
/// keep it.
pub(in crate::capture) fn python_memory(pid: u32, stop: StopOptions) -> Vec<u8> {
    if stop.python_memory {
        crate::python::live::keep(pid)
    } else {
        Vec::new()
    }
}

/// Adds the memory a capture kept (wait objects, Python state) to the dump
/// as its stream. A dump without it is still a dump: the analysis then
/// says a holder is unknown, and shows no Python frames.
pub(in crate::capture) fn append_kept(path: &Path, kept: &[u8]) {
    if !kept.is_empty() {
        let _ = crate::capture::postprocess::append_stream(path, WAIT_OBJECTS_STREAM, kept);
    }
}

/// The capture's stream of kept memory: the wait objects (read by
/// src/dump/waits.rs) and what the Python stacks need (src/python/).
const WAIT_OBJECTS_STREAM: u32 = 0x4454_0002;
/// Bytes kept from each futex word on: a glibc pthread_mutex_t is 40.
const WAIT_OBJECT_BYTES: usize = 48;
/// At most this many wait objects are kept.
const MAX_WAIT_OBJECTS: usize = 256;

/// For each thread of `pid` in a futex system call, the bytes at the futex
/// word, as the stream stores them: address (u64), length (u32), bytes.
pub(in crate::capture) fn wait_objects(pid: u32) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let futex = if cfg!(target_arch = "x86_64") {
        202
    } else {
        98
    };
    let mut addresses: Vec<u64> = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            let text = std::fs::read_to_string(task.path().join("syscall")).unwrap_or_default();
            let mut fields = text.split_whitespace();
            if fields.next().and_then(|n| n.parse::<u64>().ok()) != Some(futex) {
                continue;
            }
            if let Some(address) = fields
                .next()
                .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
            {
                if !addresses.contains(&address) && addresses.len() < MAX_WAIT_OBJECTS {
                    addresses.push(address);
                }
            }
        }
    }
    let mut out = Vec::new();
    let Ok(mut mem) = File::open(format!("/proc/{pid}/mem")) else {
        return out;
    };
    for address in addresses {
        let mut bytes = vec![0u8; WAIT_OBJECT_BYTES];
        if mem.seek(SeekFrom::Start(address)).is_ok() && mem.read_exact(&mut bytes).is_ok() {
            out.extend_from_slice(&address.to_le_bytes());
            out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            out.extend_from_slice(&bytes);
        }
    }
    out
}

/// Sends SIGSTOP to the process and waits, up to `limit`, until every
/// thread is stopped. Otherwise the process is continued (unless
/// `keep_stopped`: it was stopped before, or is let go later) and the
/// threads that did not stop are named.
pub(in crate::capture) fn group_stop(
    pid: u32,
    limit: Duration,
    keep_stopped: bool,
) -> Result<(), CaptureError> {
    if ended(pid).is_some() {
        return Err(exited(pid));
    }
    let process = Pid::from_raw(pid as pid_t);
    kill(process, Signal::SIGSTOP).map_err(|e| match e {
        nix::errno::Errno::ESRCH => exited(pid),
        e => CaptureError::Refused {
            pid,
            why: format!("cannot stop it: {e}"),
        },
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
            if !keep_stopped {
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
