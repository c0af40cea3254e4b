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

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use libc::{c_int, pid_t};
use minidump_writer::minidump_writer::MinidumpWriterConfig;

use super::{CaptureError, ExitStatus, LocalTime, RunOptions, Supervised};

/// Signals whose default action is a crash dump worth catching.
const CRASH_SIGNALS: [c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGABRT,
];
/// Signals sent to the wrapper that are passed on to the command.
const FORWARDED: [c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];
/// A signal the command itself received this recently (or still has
/// pending) is not forwarded again: it was sent to the whole process group.
const SAME_SIGNAL_WINDOW: Duration = Duration::from_millis(200);
/// How long the other threads get to stop at PTRACE_INTERRUPT.
const STOP_THREADS_TIMEOUT: Duration = Duration::from_secs(2);
/// si_code of a signal the kernel sent, such as the terminal's Ctrl-C to the
/// foreground process group (which the command received too).
const SI_KERNEL: i32 = 0x80;

/// The fields of /proc/PID/status (or /proc/PID/task/TID/status) we use.
#[derive(Debug, Default)]
struct ProcStatus {
    tgid: u32,
    state: char,
    tracer: u32,
    pending: u64,
    shared_pending: u64,
    ignored: u64,
    caught: u64,
}

fn read_status(path: &str) -> io::Result<ProcStatus> {
    let text = std::fs::read_to_string(path)?;
    let mut status = ProcStatus::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let mask = || u64::from_str_radix(value, 16).unwrap_or(0);
        match key {
            "Tgid" => status.tgid = value.parse().unwrap_or(0),
            "State" => status.state = value.chars().next().unwrap_or('?'),
            "TracerPid" => status.tracer = value.parse().unwrap_or(0),
            "SigPnd" => status.pending = mask(),
            "ShdPnd" => status.shared_pending = mask(),
            "SigIgn" => status.ignored = mask(),
            "SigCgt" => status.caught = mask(),
            _ => {}
        }
    }
    Ok(status)
}

fn signal_bit(signal: c_int) -> u64 {
    1u64 << ((signal - 1) & 63)
}

/// The executable's file name (`python3.11`), else the kernel's short name.
pub(super) fn process_name(pid: u32) -> String {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .and_then(|exe| {
            let name = exe.file_name()?.to_string_lossy().into_owned();
            Some(name.trim_end_matches(" (deleted)").to_string())
        })
        .or_else(|| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .ok()
                .map(|comm| comm.trim_end().to_string())
        })
        .unwrap_or_default()
}

pub(super) fn local_time() -> LocalTime {
    // SAFETY: time and localtime_r only write into the values given.
    let tm = unsafe {
        let now = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&now, &mut tm);
        tm
    };
    LocalTime {
        year: tm.tm_year + 1900,
        month: (tm.tm_mon + 1) as u32,
        day: tm.tm_mday as u32,
        hour: tm.tm_hour as u32,
        minute: tm.tm_min as u32,
        second: tm.tm_sec as u32,
    }
}

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
pub(super) fn write_live_dump(pid: u32, file: &mut File, _path: &Path) -> Result<(), CaptureError> {
    let was_stopped = read_status(&format!("/proc/{pid}/status")).is_ok_and(|s| s.state == 'T');
    // The main thread stands in as the blamed thread until the analysis
    // names the right one (capture::record_blamed_thread).
    let written = MinidumpWriterConfig::new(pid as pid_t, pid as pid_t).write(file);
    if was_stopped {
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(pid as pid_t, libc::SIGSTOP) };
    }
    written.map(drop).map_err(|e| CaptureError::Writer {
        pid,
        why: error_chain(&e),
    })
}

fn error_chain(error: &dyn std::error::Error) -> String {
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
        libc::SIGCHLD,
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
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
            if FORWARDED.contains(&signal) && tracer.should_forward(signal, info.ssi_code) {
                // SAFETY: kill has no memory effects.
                unsafe { libc::kill(pid, signal) };
            }
        }
    }
}

fn spawn(
    options: &RunOptions,
    old_mask: libc::sigset_t,
) -> Result<std::process::Child, CaptureError> {
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
            libc::pthread_sigmask(libc::SIG_SETMASK, &old_mask, std::ptr::null_mut());
            // Stop right after exec, before the program's first instruction
            // (see the module comment). A refusal (a ptrace policy) leaves
            // the command untraced; `start` notices.
            libc::ptrace(
                libc::PTRACE_TRACEME,
                0,
                std::ptr::null_mut::<libc::c_void>(),
                std::ptr::null_mut::<libc::c_void>(),
            );
            Ok(())
        });
    }
    command.spawn().map_err(|source| CaptureError::Spawn {
        command: program.to_string_lossy().into_owned(),
        source,
    })
}

struct Tracer {
    pid: pid_t,
    /// The command's threads we trace.
    threads: BTreeSet<pid_t>,
    traced: bool,
    /// When each signal was last delivered to the command.
    delivered: HashMap<c_int, Instant>,
    dump_dir: PathBuf,
}

/// How a thread that was stopped for a capture is to be let go: the signal
/// it was about to receive goes with it.
type Stopped = BTreeMap<pid_t, c_int>;

impl Tracer {
    /// Turns the post-exec SIGTRAP stop of a PTRACE_TRACEME child into a
    /// PTRACE_SEIZE. Returns the exit status if the command ended at once.
    fn start(&mut self) -> Result<Option<ExitStatus>, CaptureError> {
        let pid = self.pid;
        let ours = std::process::id();
        let tracer = read_status(&format!("/proc/{pid}/status")).map(|s| s.tracer);
        if tracer.ok() != Some(ours) {
            return Err(CaptureError::Trace(
                "ptrace is not permitted here".to_string(),
            ));
        }
        let status = wait_for(pid, libc::__WALL)?;
        if !libc::WIFSTOPPED(status) {
            return Ok(exit_status(status));
        }
        ptrace(libc::PTRACE_DETACH, pid, 0, libc::SIGSTOP as usize)?;
        let status = wait_for(pid, libc::WUNTRACED)?;
        if !libc::WIFSTOPPED(status) {
            return Ok(exit_status(status));
        }
        let options =
            libc::PTRACE_O_TRACECLONE | libc::PTRACE_O_TRACEEXEC | libc::PTRACE_O_EXITKILL;
        let seized = ptrace(libc::PTRACE_SEIZE, pid, 0, options as usize);
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(pid, libc::SIGCONT) };
        seized?;
        self.traced = true;
        Ok(None)
    }

    /// Handles one wait status. Returns the end of the run when the command
    /// ended or crashed.
    fn on_wait(&mut self, tid: pid_t, status: c_int) -> Result<Option<Supervised>, CaptureError> {
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            self.threads.remove(&tid);
            if tid == self.pid {
                return Ok(exit_status(status).map(Supervised::Exited));
            }
            return Ok(None);
        }
        if !libc::WIFSTOPPED(status) {
            return Ok(None);
        }
        self.threads.insert(tid);
        let signal = libc::WSTOPSIG(status);
        match status >> 16 {
            0 => {
                self.delivered.insert(signal, Instant::now());
                if CRASH_SIGNALS.contains(&signal) && self.is_fatal(signal) {
                    return self.crash(tid, signal).map(Some);
                }
                resume(libc::PTRACE_CONT, tid, signal);
            }
            libc::PTRACE_EVENT_STOP if is_stop_signal(signal) => {
                // A group stop (Ctrl-Z, SIGSTOP): stay stopped, but let the
                // kernel tell us about SIGCONT.
                resume(libc::PTRACE_LISTEN, tid, 0);
            }
            libc::PTRACE_EVENT_CLONE => {
                if let Ok(new) = event_message(tid) {
                    self.threads.insert(new as pid_t);
                }
                resume(libc::PTRACE_CONT, tid, 0);
            }
            libc::PTRACE_EVENT_EXEC => {
                // Every other thread is gone; the exec'ing one took the pid.
                self.threads = BTreeSet::from([self.pid]);
                resume(libc::PTRACE_CONT, tid, 0);
            }
            _ => resume(libc::PTRACE_CONT, tid, 0),
        }
        Ok(None)
    }

    /// Whether delivering `signal` will kill the process: neither caught
    /// by a handler nor ignored. (A synchronous fault that was blocked or
    /// ignored has already been reset to the default action by the kernel
    /// when we see it, and a blocked signal is not delivered at all.)
    fn is_fatal(&self, signal: c_int) -> bool {
        let Ok(process) = read_status(&format!("/proc/{}/status", self.pid)) else {
            return true;
        };
        let bit = signal_bit(signal);
        process.caught & bit == 0 && process.ignored & bit == 0
    }

    /// Whether a signal sent to the wrapper should be passed on: not when
    /// the terminal sent it to the whole foreground group, nor when the
    /// command already got the same signal (a `kill -TERM -PGID`).
    fn should_forward(&self, signal: c_int, code: i32) -> bool {
        if code == SI_KERNEL {
            return false;
        }
        if self
            .delivered
            .get(&signal)
            .is_some_and(|at| at.elapsed() < SAME_SIGNAL_WINDOW)
        {
            return false;
        }
        !self.has_pending(signal)
    }

    fn has_pending(&self, signal: c_int) -> bool {
        let bit = signal_bit(signal);
        let process = read_status(&format!("/proc/{}/status", self.pid));
        if process.is_ok_and(|s| s.shared_pending & bit != 0) {
            return true;
        }
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{}/task", self.pid)) else {
            return false;
        };
        tasks.filter_map(Result::ok).any(|task| {
            read_status(&format!("{}/status", task.path().display()))
                .is_ok_and(|s| s.pending & bit != 0)
        })
    }

    /// Interrupts every traced thread but `except` and waits until each is
    /// stopped. Returns the stopped threads with the signal each was about
    /// to receive, or the exit status when the process ended meanwhile.
    fn stop_threads(
        &mut self,
        except: Option<pid_t>,
    ) -> Result<Result<Stopped, ExitStatus>, CaptureError> {
        let mut waiting: BTreeSet<pid_t> = self.threads.clone();
        if let Some(tid) = except {
            waiting.remove(&tid);
        }
        waiting.retain(|&tid| ptrace(libc::PTRACE_INTERRUPT, tid, 0, 0).is_ok());
        let mut stopped = Stopped::new();
        let give_up = Instant::now() + STOP_THREADS_TIMEOUT;
        while !waiting.is_empty() && Instant::now() < give_up {
            let Some((tid, status)) = wait_any(libc::WNOHANG)? else {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            };
            if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
                self.threads.remove(&tid);
                waiting.remove(&tid);
                stopped.remove(&tid);
                if tid == self.pid {
                    return Ok(Err(exit_status(status).unwrap_or(ExitStatus::Code(0))));
                }
                continue;
            }
            if !libc::WIFSTOPPED(status) {
                continue;
            }
            let event = status >> 16;
            if event == libc::PTRACE_EVENT_CLONE {
                if let Ok(new) = event_message(tid) {
                    let new = new as pid_t;
                    self.threads.insert(new);
                    if !stopped.contains_key(&new) {
                        waiting.insert(new);
                    }
                }
            }
            self.threads.insert(tid);
            waiting.remove(&tid);
            let signal = if event == 0 {
                libc::WSTOPSIG(status)
            } else {
                0
            };
            stopped.insert(tid, signal);
        }
        Ok(Ok(stopped))
    }

    /// Lets go of stopped threads, each with the signal it was about to get.
    fn detach(&mut self, stopped: &Stopped) {
        for (&tid, &signal) in stopped {
            let _ = ptrace(libc::PTRACE_DETACH, tid, 0, signal as usize);
        }
        self.threads.clear();
        self.traced = false;
    }

    /// A fatal crash signal is about to be delivered to `tid`: write the
    /// dump with the crash context, then let the process die of it.
    fn crash(&mut self, tid: pid_t, signal: c_int) -> Result<Supervised, CaptureError> {
        let pid = self.pid;
        let file = super::new_dump_file(&self.dump_dir, pid as u32);
        let (mut file, path) = match file {
            Ok(created) => created,
            Err(error) => {
                resume(libc::PTRACE_CONT, tid, signal);
                let status = self.wait_for_end(signal)?;
                return Ok(Supervised::Crashed {
                    pid: pid as u32,
                    signal,
                    status,
                    dump: Err(error),
                });
            }
        };
        let context = crash_context(pid, tid);
        let stopped = match self.stop_threads(Some(tid))? {
            Ok(stopped) => stopped,
            Err(status) => {
                // The process ended while we stopped it (another thread
                // called exit_group): nothing is left to dump.
                drop(file);
                let _ = std::fs::remove_file(&path);
                return Ok(Supervised::Exited(status));
            }
        };
        // SAFETY: syscall(2) with the documented tgkill arguments.
        unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, signal) };
        let _ = ptrace(libc::PTRACE_DETACH, tid, 0, libc::SIGSTOP as usize);
        self.detach(&stopped);
        let mut config = MinidumpWriterConfig::new(pid, tid);
        if let Some(context) = context {
            config.set_crash_context(minidump_writer::CrashContextExt { inner: context });
        }
        let written = config
            .write(&mut file)
            .map(drop)
            .map_err(|e| CaptureError::Writer {
                pid: pid as u32,
                why: error_chain(&e),
            });
        drop(file);
        let dump = written
            .and_then(|()| super::check_has_threads(pid as u32, &path))
            .map(|()| path.clone());
        if dump.is_err() {
            let _ = std::fs::remove_file(&path);
        }
        // minidump-writer resumed the process already; this is in case it
        // failed before it stopped it.
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(pid, libc::SIGCONT) };
        let status = self.wait_for_end(signal)?;
        Ok(Supervised::Crashed {
            pid: pid as u32,
            signal,
            status,
            dump,
        })
    }

    /// Still running at the timeout: let go of it, dump it like `attach`
    /// does, and kill it unless asked not to.
    fn hang(&mut self, after: Duration, no_kill: bool) -> Result<Supervised, CaptureError> {
        let pid = self.pid;
        if self.traced {
            match self.stop_threads(None)? {
                Ok(stopped) => self.detach(&stopped),
                Err(status) => return Ok(Supervised::Exited(status)),
            }
        }
        let dump = super::new_dump_file(&self.dump_dir, pid as u32).and_then(|(mut file, path)| {
            let written = write_live_dump(pid as u32, &mut file, &path);
            drop(file);
            match written.and_then(|()| super::check_has_threads(pid as u32, &path)) {
                Ok(()) => Ok(path),
                Err(error) => {
                    let _ = std::fs::remove_file(&path);
                    Err(error)
                }
            }
        });
        if !no_kill {
            // SAFETY: kill has no memory effects.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            self.wait_for_end(libc::SIGKILL)?;
        }
        Ok(Supervised::Hung {
            pid: pid as u32,
            after,
            killed: !no_kill,
            dump,
        })
    }

    /// Reaps the command once it is no longer traced. `expected` stands in
    /// if its status was reaped by someone else (minidump-writer waits on
    /// the threads it attaches to).
    fn wait_for_end(&mut self, expected: c_int) -> Result<ExitStatus, CaptureError> {
        loop {
            match wait_for(self.pid, libc::__WALL) {
                Ok(status) => {
                    if let Some(status) = exit_status(status) {
                        return Ok(status);
                    }
                    if libc::WIFSTOPPED(status) && self.traced {
                        resume(libc::PTRACE_CONT, self.pid, libc::WSTOPSIG(status));
                    }
                }
                Err(CaptureError::Trace(_)) => return Ok(ExitStatus::Signal(expected)),
                Err(other) => return Err(other),
            }
        }
    }
}

fn is_stop_signal(signal: c_int) -> bool {
    matches!(
        signal,
        libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
    )
}

fn exit_status(status: c_int) -> Option<ExitStatus> {
    if libc::WIFEXITED(status) {
        Some(ExitStatus::Code(libc::WEXITSTATUS(status)))
    } else if libc::WIFSIGNALED(status) {
        Some(ExitStatus::Signal(libc::WTERMSIG(status)))
    } else {
        None
    }
}

fn ptrace(request: libc::c_uint, tid: pid_t, addr: usize, data: usize) -> Result<(), CaptureError> {
    // SAFETY: the requests used here take integers, or (GETEVENTMSG,
    // GETSIGINFO, GETREGS, GETFPREGS, called elsewhere) a pointer to a value
    // of the right type.
    let result = unsafe { libc::ptrace(request, tid, addr, data) };
    if result == -1 {
        return Err(CaptureError::Trace(format!(
            "ptrace request {request:#x} on thread {tid}: {}",
            io::Error::last_os_error()
        )));
    }
    Ok(())
}

/// Restarts a stopped tracee. A thread that died meanwhile (ESRCH) will be
/// reported by waitpid; nothing else can fail here.
fn resume(request: libc::c_uint, tid: pid_t, signal: c_int) {
    let _ = ptrace(request, tid, 0, signal as usize);
}

fn event_message(tid: pid_t) -> Result<libc::c_ulong, CaptureError> {
    let mut message: libc::c_ulong = 0;
    ptrace(
        libc::PTRACE_GETEVENTMSG,
        tid,
        0,
        &mut message as *mut libc::c_ulong as usize,
    )?;
    Ok(message)
}

/// waitpid for any child or traced thread; `None` when nothing is ready.
fn wait_any(flags: c_int) -> Result<Option<(pid_t, c_int)>, CaptureError> {
    let mut status = 0;
    loop {
        // SAFETY: waitpid writes only `status`.
        let tid = unsafe { libc::waitpid(-1, &mut status, flags | libc::__WALL) };
        if tid > 0 {
            return Ok(Some((tid, status)));
        }
        if tid == 0 {
            return Ok(None);
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::ECHILD) => return Ok(None),
            _ => return Err(CaptureError::Trace(format!("waitpid: {error}"))),
        }
    }
}

fn wait_for(pid: pid_t, flags: c_int) -> Result<c_int, CaptureError> {
    let mut status = 0;
    loop {
        // SAFETY: waitpid writes only `status`.
        let result = unsafe { libc::waitpid(pid, &mut status, flags) };
        if result == pid {
            return Ok(status);
        }
        let error = io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EINTR) {
            return Err(CaptureError::Trace(format!("waitpid {pid}: {error}")));
        }
    }
}

/// The faulting thread's siginfo and registers, as minidump-writer's crash
/// context (what a signal handler would have received).
#[cfg(target_arch = "x86_64")]
fn crash_context(pid: pid_t, tid: pid_t) -> Option<minidump_writer::crash_context::CrashContext> {
    use libc::{
        REG_CR2, REG_CSGSFS, REG_EFL, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_R8,
        REG_R9, REG_RAX, REG_RBP, REG_RBX, REG_RCX, REG_RDI, REG_RDX, REG_RIP, REG_RSI, REG_RSP,
    };
    // SAFETY: all-zero bytes are a valid value of these plain C structs;
    // each ptrace request writes one value of the type it is given.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let mut regs: libc::user_regs_struct = std::mem::zeroed();
        let mut fp: libc::user_fpregs_struct = std::mem::zeroed();
        ptrace(
            libc::PTRACE_GETSIGINFO,
            tid,
            0,
            &mut info as *mut _ as usize,
        )
        .ok()?;
        ptrace(libc::PTRACE_GETREGS, tid, 0, &mut regs as *mut _ as usize).ok()?;
        ptrace(libc::PTRACE_GETFPREGS, tid, 0, &mut fp as *mut _ as usize).ok()?;
        let mut context: minidump_writer::crash_context::CrashContext = std::mem::zeroed();
        context.pid = pid;
        context.tid = tid;
        context.siginfo.ssi_signo = info.si_signo as u32;
        context.siginfo.ssi_errno = info.si_errno;
        context.siginfo.ssi_code = info.si_code;
        if info.si_code > 0 {
            // A fault the kernel raised: si_addr is the faulting address.
            context.siginfo.ssi_addr = info.si_addr() as u64;
        } else {
            context.siginfo.ssi_pid = info.si_pid() as u32;
            context.siginfo.ssi_uid = info.si_uid();
        }
        let gregs = &mut context.context.uc_mcontext.gregs;
        for (index, value) in [
            (REG_R8, regs.r8),
            (REG_R9, regs.r9),
            (REG_R10, regs.r10),
            (REG_R11, regs.r11),
            (REG_R12, regs.r12),
            (REG_R13, regs.r13),
            (REG_R14, regs.r14),
            (REG_R15, regs.r15),
            (REG_RDI, regs.rdi),
            (REG_RSI, regs.rsi),
            (REG_RBP, regs.rbp),
            (REG_RBX, regs.rbx),
            (REG_RDX, regs.rdx),
            (REG_RAX, regs.rax),
            (REG_RCX, regs.rcx),
            (REG_RSP, regs.rsp),
            (REG_RIP, regs.rip),
            (REG_EFL, regs.eflags),
            (REG_CSGSFS, regs.cs | (regs.gs << 16) | (regs.fs << 32)),
            (REG_CR2, context.siginfo.ssi_addr),
        ] {
            gregs[index as usize] = value as i64;
        }
        let float = &mut context.float_state;
        float.cwd = fp.cwd;
        float.swd = fp.swd;
        float.ftw = fp.ftw;
        float.fop = fp.fop;
        float.rip = fp.rip;
        float.rdp = fp.rdp;
        float.mxcsr = fp.mxcsr;
        float.mxcr_mask = fp.mxcr_mask;
        float.st_space = fp.st_space;
        float.xmm_space = fp.xmm_space;
        Some(context)
    }
}

/// Other CPUs: the dump names the faulting thread, without the signal's
/// context (the crash then reads as a requested dump).
#[cfg(not(target_arch = "x86_64"))]
fn crash_context(_pid: pid_t, _tid: pid_t) -> Option<minidump_writer::crash_context::CrashContext> {
    None
}

/// The wrapper's view of signals while it supervises: they are blocked and
/// read from a signalfd, so a SIGCHLD or a SIGTERM wakes the loop instead of
/// running a handler. The mask is restored on drop.
struct Signals {
    fd: OwnedFd,
    old_mask: libc::sigset_t,
}

impl Signals {
    fn block(list: &[c_int]) -> io::Result<Signals> {
        // SAFETY: sigset operations on local values; signalfd returns a new
        // descriptor that we own.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            let mut old_mask: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for &signal in list {
                libc::sigaddset(&mut set, signal);
            }
            if libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old_mask) != 0 {
                return Err(io::Error::last_os_error());
            }
            let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
            if fd < 0 {
                let error = io::Error::last_os_error();
                libc::pthread_sigmask(libc::SIG_SETMASK, &old_mask, std::ptr::null_mut());
                return Err(error);
            }
            Ok(Signals {
                fd: OwnedFd::from_raw_fd(fd),
                old_mask,
            })
        }
    }

    /// Waits until a signal is ready or `timeout` passes.
    fn wait(&mut self, timeout: Option<Duration>) -> Result<(), CaptureError> {
        let mut poll = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = timeout.map_or(-1, |t| {
            // Round up, so the loop never spins on a sub-millisecond rest.
            let ms = t.as_micros().div_ceil(1000);
            c_int::try_from(ms).unwrap_or(c_int::MAX)
        });
        // SAFETY: one valid pollfd.
        let result = unsafe { libc::poll(&mut poll, 1, millis) };
        if result < 0 {
            let error = io::Error::last_os_error();
            if error.raw_os_error() != Some(libc::EINTR) {
                return Err(CaptureError::Trace(format!("poll: {error}")));
            }
        }
        Ok(())
    }

    fn read(&mut self) -> Vec<libc::signalfd_siginfo> {
        let mut out = Vec::new();
        loop {
            // SAFETY: reads at most one signalfd_siginfo into a value of
            // that type.
            let (read, info) = unsafe {
                let mut info: libc::signalfd_siginfo = std::mem::zeroed();
                let size = std::mem::size_of::<libc::signalfd_siginfo>();
                let read = libc::read(
                    self.fd.as_raw_fd(),
                    &mut info as *mut _ as *mut libc::c_void,
                    size,
                );
                (read, info)
            };
            if read != std::mem::size_of::<libc::signalfd_siginfo>() as isize {
                return out;
            }
            out.push(info);
        }
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `block`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old_mask, std::ptr::null_mut()) };
    }
}

pub(super) fn exit_like(status: ExitStatus) -> ! {
    match status {
        ExitStatus::Code(code) => std::process::exit(code),
        ExitStatus::Signal(signal) => {
            // SAFETY: plain system calls on our own process. RLIMIT_CORE 0:
            // the command may have left a core file; the wrapper must not.
            unsafe {
                let none = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                libc::setrlimit(libc::RLIMIT_CORE, &none);
                libc::signal(signal, libc::SIG_DFL);
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, signal);
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                libc::kill(libc::getpid(), signal);
            }
            // A signal whose default action is not to terminate.
            std::process::exit(128 + signal)
        }
    }
}

pub(super) fn signal_name(signal: i32) -> String {
    const NAMES: [(c_int, &str); 16] = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGTRAP, "SIGTRAP"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGSYS, "SIGSYS"),
    ];
    NAMES
        .iter()
        .find(|(number, _)| *number == signal)
        .map_or_else(|| format!("signal {signal}"), |(_, name)| name.to_string())
}
