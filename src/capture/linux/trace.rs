//! Watching a command under `run`: the tracer's state machine (seize after
//! exec, pass signals on, stop every thread at a crash or a hang, detach),
//! and the few raw ptrace and waitpid calls it needs.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use libc::{c_int, pid_t};
use minidump_writer::minidump_writer::MinidumpWriterConfig;
use nix::sys::ptrace::{self, Options};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::crash_context::crash_context;
use super::hold::Held;
use super::live::{
    append_kept, error_chain, python_memory, wait_objects, why_no_threads, write_live_dump_keeping,
    CRASH_SIGNALS, PROCESS_END_TIMEOUT, SAME_SIGNAL_WINDOW, SI_KERNEL,
};
use super::procfs::{
    command_line, describe_threads, process_name, read_status, signal_bit, thread_states,
};
use super::signals::{exit_status, how_it_ended, signal_name};
use super::tree;
use crate::capture::naming::new_dump_file;
use crate::capture::postprocess::check_has_threads;
use crate::capture::types::{
    CaptureError, ExitStatus, Notice, StopOptions, Supervised, Written, MAX_TREE_DUMPS,
};

pub(super) struct Tracer {
    pub pid: pid_t,
    /// The command's threads we trace.
    pub threads: BTreeSet<pid_t>,
    pub traced: bool,
    /// When each signal was last delivered to the command.
    pub delivered: HashMap<c_int, Instant>,
    pub dump_dir: PathBuf,
    /// How threads are stopped for a capture.
    pub stop: StopOptions,
    /// The command is in a group stop (Ctrl-Z, SIGSTOP) it was not
    /// continued from: a capture leaves it stopped.
    pub group_stopped: bool,
    /// The core size limit the command had before `run` raised it for its
    /// descendants (cores.rs): given back before the command dies of a
    /// crash the tracer dumped.
    pub core_limit: Option<libc::rlimit>,
}

/// How a thread that was stopped for a capture is to be let go: the signal
/// it was about to receive goes with it.
pub(super) type Stopped = BTreeMap<pid_t, c_int>;

/// What stopping the threads for a capture gave: the stopped ones, and the
/// ones still running at the limit (each still has a PTRACE_INTERRUPT
/// pending, so it stops, and can be let go, when it wakes).
type StopOutcome = (Stopped, BTreeSet<pid_t>);

impl Tracer {
    /// Turns the post-exec SIGTRAP stop of a PTRACE_TRACEME child into a
    /// PTRACE_SEIZE. Returns the exit status if the command ended at once.
    pub(super) fn start(&mut self) -> Result<Option<ExitStatus>, CaptureError> {
        let pid = self.pid;
        let ours = std::process::id();
        let tracer = read_status(&format!("/proc/{pid}/status")).map(|s| s.tracer);
        if tracer.ok() != Some(ours) {
            return Err(CaptureError::Trace(
                "ptrace is not permitted here".to_string(),
            ));
        }
        let deadline = Instant::now() + PROCESS_END_TIMEOUT;
        let (_, status) = wait_for(pid, libc::__WALL, deadline)?;
        if !libc::WIFSTOPPED(status) {
            return Ok(exit_status(status));
        }
        resume_with(Resume::Detach, pid, libc::SIGSTOP)?;
        let (_, status) = wait_for(pid, libc::WUNTRACED, deadline)?;
        if !libc::WIFSTOPPED(status) {
            return Ok(exit_status(status));
        }
        let options =
            Options::PTRACE_O_TRACECLONE | Options::PTRACE_O_TRACEEXEC | Options::PTRACE_O_EXITKILL;
        let seized = ptrace::seize(Pid::from_raw(pid), options);
        let _ = kill(Pid::from_raw(pid), Signal::SIGCONT);
        seized.map_err(|e| trace_error("PTRACE_SEIZE", pid, e))?;
        self.traced = true;
        Ok(None)
    }

    /// Handles one wait status. Returns the end of the run when the command
    /// ended or crashed.
    pub(crate) fn on_wait(
        &mut self,
        tid: pid_t,
        status: c_int,
    ) -> Result<Option<Supervised>, CaptureError> {
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
        if !(status >> 16 == libc::PTRACE_EVENT_STOP && is_stop_signal(signal)) {
            // Any other stop is of a thread that ran: no group stop holds.
            self.group_stopped = false;
        }
        match status >> 16 {
            0 => {
                self.delivered.insert(signal, Instant::now());
                if CRASH_SIGNALS.contains(&signal) && self.is_fatal(signal) {
                    return self.crash(tid, signal).map(Some);
                }
                resume(Resume::Cont, tid, signal);
            }
            libc::PTRACE_EVENT_STOP if is_stop_signal(signal) => {
                // A group stop (Ctrl-Z, SIGSTOP): stay stopped, but let the
                // kernel tell us about SIGCONT.
                self.group_stopped = true;
                resume(Resume::Listen, tid, 0);
                return Ok(None);
            }
            libc::PTRACE_EVENT_CLONE => {
                if let Ok(new) = ptrace::getevent(Pid::from_raw(tid)) {
                    self.threads.insert(new as pid_t);
                }
                resume(Resume::Cont, tid, 0);
            }
            libc::PTRACE_EVENT_EXEC => {
                // Every other thread is gone; the exec'ing one took the pid.
                self.threads = BTreeSet::from([self.pid]);
                resume(Resume::Cont, tid, 0);
            }
            _ => resume(Resume::Cont, tid, 0),
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
    pub(crate) fn should_forward(&self, signal: c_int, code: i32) -> bool {
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

    /// Interrupts every traced thread but `except` and waits, up to the stop
    /// limit, until each is stopped. Returns the stopped threads with the
    /// signal each was about to receive and the threads that did not stop,
    /// or the exit status when the process ended meanwhile.
    fn stop_threads(
        &mut self,
        except: Option<pid_t>,
    ) -> Result<Result<StopOutcome, ExitStatus>, CaptureError> {
        let mut waiting: BTreeSet<pid_t> = self.threads.clone();
        if let Some(tid) = except {
            waiting.remove(&tid);
        }
        waiting.retain(|&tid| ptrace::interrupt(Pid::from_raw(tid)).is_ok());
        let mut stopped = Stopped::new();
        let give_up = Instant::now() + self.stop.limit;
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
                if let Ok(new) = ptrace::getevent(Pid::from_raw(tid)) {
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
        Ok(Ok((stopped, waiting)))
    }

    /// The error of a capture abandoned because `threads` would not stop.
    fn not_stopped(&self, threads: &BTreeSet<pid_t>) -> CaptureError {
        let tids: Vec<u32> = threads.iter().map(|&t| t as u32).collect();
        CaptureError::NotStopped {
            pid: self.pid as u32,
            threads: describe_threads(self.pid as u32, &tids),
            limit: self.stop.limit,
        }
    }

    /// Lets go of every thread, `stopped` at once and the others as each
    /// stops (a thread in uninterruptible sleep stops when it wakes, its
    /// PTRACE_INTERRUPT still pending), so none stays traced. Returns when
    /// all are let go or the process ended.
    fn release(&mut self, stopped: &Stopped) -> Result<(), CaptureError> {
        for (&tid, &signal) in stopped {
            resume(Resume::Detach, tid, signal);
            self.threads.remove(&tid);
        }
        while !self.threads.is_empty() {
            match self.stop_threads(None)? {
                Err(_) => break,
                Ok((stopped, _)) => {
                    for (&tid, &signal) in &stopped {
                        resume(Resume::Detach, tid, signal);
                        self.threads.remove(&tid);
                    }
                }
            }
        }
        self.traced = false;
        Ok(())
    }

    /// Lets go of every thread, `stopped` being all of them, and leaves the
    /// process group-stopped and untraced, without one of its threads
    /// having run: for minidump-writer, which must be the tracer itself.
    ///
    /// SIGSTOP is queued while every thread is held in a ptrace stop. A
    /// thread let go goes on in the kernel's signal handling, where it
    /// takes that SIGSTOP, or joins the group stop another thread began
    /// with it, before it could return to its program. Let go without it
    /// (issue 36), a thread interrupted in epoll_wait returns EINTR to its
    /// program at once, and one that treats that as the end exits the
    /// process before the dump is written. A thread held in a
    /// signal-delivery-stop goes last, with its signal: a handler's frame
    /// is set up, and runs only when the process is continued.
    fn detach_into_group_stop(&mut self, stopped: &Stopped) {
        let _ = kill(Pid::from_raw(self.pid), Signal::SIGSTOP);
        let (plain, signalled): (Vec<_>, Vec<_>) = stopped.iter().partition(|(_, &s)| s == 0);
        for (&tid, &signal) in plain.into_iter().chain(signalled) {
            resume(Resume::Detach, tid, signal);
        }
        self.threads.clear();
        self.traced = false;
    }

    /// The crash goes on without a dump: the faulting thread resumes with
    /// its signal, which ends the process as it would have without us.
    fn crash_undumped(
        &mut self,
        tid: pid_t,
        signal: c_int,
        error: CaptureError,
    ) -> Result<Supervised, CaptureError> {
        resume(Resume::Cont, tid, signal);
        let status = self.wait_for_end(signal)?;
        Ok(Supervised::Crashed {
            pid: self.pid as u32,
            signal,
            status,
            dump: Err(error),
        })
    }

    /// A fatal crash signal is about to be delivered to `tid`: write the
    /// dump with the crash context, then let the process die of it.
    fn crash(&mut self, tid: pid_t, signal: c_int) -> Result<Supervised, CaptureError> {
        let pid = self.pid;
        if let Some(limit) = &self.core_limit {
            super::cores::restore(pid, limit);
        }
        let file = new_dump_file(&self.dump_dir, pid as u32, &process_name(pid as u32));
        let (mut file, path) = match file {
            Ok(created) => created,
            Err(error) => return self.crash_undumped(tid, signal, error),
        };
        let context = crash_context(Pid::from_raw(pid), Pid::from_raw(tid));
        let command = command_line(pid as u32);
        let mut stopped = match self.stop_threads(Some(tid))? {
            Ok((stopped, missing)) if missing.is_empty() => stopped,
            Ok((stopped, missing)) => {
                // A thread would not stop: no dump. The crash goes on as it
                // would have: every thread resumes, the faulting one with
                // its signal, which kills the process.
                drop(file);
                let _ = std::fs::remove_file(&path);
                let error = self.not_stopped(&missing);
                for (&other, &other_signal) in &stopped {
                    resume(Resume::Cont, other, other_signal);
                }
                return self.crash_undumped(tid, signal, error);
            }
            Err(status) => {
                // The process ended while we stopped it (another thread
                // called exit_group): nothing is left to dump.
                drop(file);
                let _ = std::fs::remove_file(&path);
                return Ok(Supervised::Exited(status));
            }
        };
        // What the Python stacks need, while every thread is stopped.
        let python = python_memory(pid as u32, self.stop);
        // The crash signal waits, queued, until minidump-writer continues
        // the process; the faulting thread stops in its place.
        // SAFETY: syscall(2) with the documented tgkill arguments.
        unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, signal) };
        stopped.insert(tid, libc::SIGSTOP);
        self.detach_into_group_stop(&stopped);
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
            .and_then(|()| check_has_threads(&path, || why_no_threads(pid as u32)))
            .map(|()| {
                append_kept(&path, &python);
                Written {
                    path: path.clone(),
                    command,
                }
            });
        if dump.is_err() {
            let _ = std::fs::remove_file(&path);
        }
        // minidump-writer resumed the process already; this is in case it
        // failed before it stopped it.
        let _ = kill(Pid::from_raw(pid), Signal::SIGCONT);
        let status = self.wait_for_end(signal)?;
        Ok(Supervised::Crashed {
            pid: pid as u32,
            signal,
            status,
            dump,
        })
    }

    /// The hang timeout passed: dumps the stuck processes of the command's
    /// tree (tree.rs: the deepest that are not just waiting for a child,
    /// the command itself included when it is one), then, unless
    /// `no_kill`, ends the whole tree: SIGTERM, and SIGKILL for what is
    /// left after `kill_after`. Nothing of the tree is left running.
    ///
    /// No thread of a process to dump runs again before its dump is
    /// written (issue 36): the command and every process to dump are
    /// stopped first, all of them before the first dump, and each stays
    /// stopped until the tree is ended (or, with `no_kill`, let go).
    pub(super) fn hang(
        &mut self,
        after: Duration,
        no_kill: bool,
        kill_after: Duration,
        notice: &dyn Fn(Notice),
    ) -> Result<Supervised, CaptureError> {
        let pid = self.pid;
        let stuck = tree::stuck(&tree::tree(pid as u32), MAX_TREE_DUMPS);
        // Read while the threads still sit in their calls: the futex words
        // they wait on (an interrupted futex wait is restarted, and no
        // longer says which futex), and each process's command line.
        let kept: Vec<(u32, Vec<u8>, Vec<String>)> = stuck
            .iter()
            .map(|m| (m.pid, wait_objects(m.pid), command_line(m.pid)))
            .collect();
        let mut dumps = Vec::new();
        let mut held = Held::default();
        if self.traced {
            if let Some(status) = self.hold_command(&stuck, no_kill, &mut held, &mut dumps)? {
                notice(Notice::Note(format!(
                    "process {pid} {} at the hang timeout, before it was stopped: no minidump",
                    how_it_ended(Some(status))
                )));
                return Ok(Supervised::Exited(status));
            }
        }
        let root_ended = dumps.iter().any(|(p, _)| *p == pid as u32) && !no_kill;
        // The other processes to dump are stopped too, and every one is
        // waited for until all its threads are, before the first dump is
        // written: none goes on (and changes what another one waits for)
        // while another is written.
        held.stop_others(&stuck, self.traced.then_some(pid as u32));
        held.wait_all_stopped(self.stop.limit, no_kill);
        let terminated = if no_kill {
            Vec::new()
        } else {
            held.queue_terminate()
        };
        let to_dump: Vec<_> = kept
            .into_iter()
            .filter(|(member, _, _)| !dumps.iter().any(|(p, _)| p == member))
            .collect();
        let last = held.last_to_dump(to_dump.iter().map(|(member, _, _)| *member));
        for (member, objects, command) in to_dump {
            if let Some(error) = held.take_unstoppable(member) {
                dumps.push((member, Err(error)));
                continue;
            }
            let dump = self
                .dump_live(member, &objects, held.leave_stopped(member, last, no_kill))
                .map(|path| Written { path, command });
            dumps.push((member, dump));
        }
        if no_kill {
            held.let_go(last);
        } else {
            tree::end_all_below(std::process::id(), kill_after, &terminated);
            if !root_ended {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
                self.wait_for_end(libc::SIGKILL)?;
            }
            tree::reap_orphans();
        }
        Ok(Supervised::Hung {
            pid: pid as u32,
            after,
            killed: !no_kill,
            dumps,
        })
    }

    /// Holds the traced command for its dump at a hang: each of its threads
    /// is interrupted, then the process is left group-stopped for the
    /// writer. A thread that would not stop (uninterruptible sleep) means no
    /// dump of the command, and nothing may stay traced: the command is let
    /// go, or killed. The command's exit status when it ended before it was
    /// stopped.
    fn hold_command(
        &mut self,
        stuck: &[tree::Member],
        no_kill: bool,
        held: &mut Held,
        dumps: &mut Vec<(u32, Result<Written, CaptureError>)>,
    ) -> Result<Option<ExitStatus>, CaptureError> {
        let pid = self.pid;
        let was_stopped = self.group_stopped;
        match self.stop_threads(None)? {
            Ok((stopped, missing)) if missing.is_empty() => {
                self.detach_into_group_stop(&stopped);
                held.held.push(pid as u32);
                if was_stopped {
                    held.stopped_before.push(pid as u32);
                }
            }
            Ok((stopped, missing)) => {
                let error = self.not_stopped(&missing);
                if no_kill {
                    self.release(&stopped)?;
                } else {
                    // Released only when the thread wakes: killed now.
                    let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
                    self.wait_for_end(libc::SIGKILL)?;
                }
                if stuck.iter().any(|m| m.pid == pid as u32) {
                    dumps.push((pid as u32, Err(error)));
                }
            }
            Err(status) => return Ok(Some(status)),
        }
        Ok(None)
    }

    /// A dump of a live process of the tree, not traced by us; with
    /// `leave_stopped`, it is stopped again once it is written.
    fn dump_live(
        &self,
        pid: u32,
        objects: &[u8],
        leave_stopped: bool,
    ) -> Result<PathBuf, CaptureError> {
        let (mut file, path) = new_dump_file(&self.dump_dir, pid, &process_name(pid))?;
        let written =
            write_live_dump_keeping(pid, &mut file, &path, self.stop, objects, leave_stopped);
        drop(file);
        match written.and_then(|()| check_has_threads(&path, || why_no_threads(pid))) {
            Ok(()) => Ok(path),
            Err(error) => {
                let _ = std::fs::remove_file(&path);
                Err(error)
            }
        }
    }

    /// Reaps the command once it was killed or let die. `expected` stands
    /// in if its status was reaped by someone else (minidump-writer waits on
    /// the threads it attaches to). A process that does not end within
    /// PROCESS_END_TIMEOUT (a thread in uninterruptible sleep delays even
    /// SIGKILL) is an error, not an endless wait.
    fn wait_for_end(&mut self, expected: c_int) -> Result<ExitStatus, CaptureError> {
        let deadline = Instant::now() + PROCESS_END_TIMEOUT;
        // While threads are traced (by us, or left to us by the writer:
        // threads that ended while it held them), each one's exit must be
        // reaped too, or the process's own end is never reported. Other
        // children reaped here are orphans of the tree, which are ending.
        let target = -1;
        loop {
            match wait_for(target, libc::__WALL, deadline) {
                Ok((tid, status)) => {
                    if tid == self.pid {
                        if let Some(status) = exit_status(status) {
                            return Ok(status);
                        }
                    }
                    if libc::WIFSTOPPED(status) && self.traced {
                        let signal = if status >> 16 == 0 {
                            libc::WSTOPSIG(status)
                        } else {
                            0
                        };
                        resume(Resume::Cont, tid, signal);
                    }
                }
                Err(CaptureError::Trace(_)) => return Ok(ExitStatus::Signal(expected)),
                Err(CaptureError::Timeout(_)) => {
                    let pid = self.pid as u32;
                    let tids: Vec<u32> = thread_states(pid).iter().map(|(t, _)| *t).collect();
                    return Err(CaptureError::Timeout(format!(
                        "process {pid} did not end within {} s of {}: {}",
                        PROCESS_END_TIMEOUT.as_secs(),
                        signal_name(expected),
                        describe_threads(pid, &tids)
                    )));
                }
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

/// The ways a stopped tracee is restarted or let go.
#[derive(Debug, Clone, Copy)]
enum Resume {
    Cont,
    Listen,
    Detach,
}

/// Restarts or detaches a stopped thread, passing on `signal`. The signal
/// is any number, real-time ones included, which nix's `Signal` cannot
/// hold (glibc itself uses signals 32 and 33), so the raw request is made.
fn resume_with(how: Resume, tid: pid_t, signal: c_int) -> Result<(), CaptureError> {
    let request = match how {
        Resume::Cont => libc::PTRACE_CONT,
        Resume::Listen => libc::PTRACE_LISTEN,
        Resume::Detach => libc::PTRACE_DETACH,
    };
    // SAFETY: these requests take no pointer: `data` is the signal number.
    let result = unsafe { libc::ptrace(request, tid, 0usize, signal as usize) };
    if result == -1 {
        return Err(CaptureError::Trace(format!(
            "ptrace {how:?} on thread {tid}: {}",
            io::Error::last_os_error()
        )));
    }
    Ok(())
}

/// Restarts a stopped tracee. A thread that died meanwhile (ESRCH) will be
/// reported by waitpid; nothing else can fail here.
fn resume(how: Resume, tid: pid_t, signal: c_int) {
    let _ = resume_with(how, tid, signal);
}

fn trace_error(what: &str, tid: pid_t, error: nix::errno::Errno) -> CaptureError {
    CaptureError::Trace(format!("{what} on thread {tid}: {error}"))
}

/// waitpid, keeping the raw status: nix's `WaitStatus` cannot represent a
/// stop by a real-time signal (it fails with EINVAL after the status was
/// consumed, and the thread would stay stopped for ever).
fn waitpid(pid: pid_t, flags: c_int) -> io::Result<Option<(pid_t, c_int)>> {
    let mut status = 0;
    loop {
        // SAFETY: waitpid writes only `status`.
        let tid = unsafe { libc::waitpid(pid, &mut status, flags) };
        match tid {
            0 => return Ok(None),
            tid if tid > 0 => return Ok(Some((tid, status))),
            _ => {
                let error = io::Error::last_os_error();
                if error.raw_os_error() != Some(libc::EINTR) {
                    return Err(error);
                }
            }
        }
    }
}

/// waitpid for any child or traced thread; `None` when nothing is ready.
pub(super) fn wait_any(flags: c_int) -> Result<Option<(pid_t, c_int)>, CaptureError> {
    match waitpid(-1, flags | libc::__WALL) {
        Ok(found) => Ok(found),
        Err(error) if error.raw_os_error() == Some(libc::ECHILD) => Ok(None),
        Err(error) => Err(CaptureError::Trace(format!("waitpid: {error}"))),
    }
}

/// waitpid for one child or thread, until `deadline`: no wait of the
/// capture is without one. Polls, starting at 50 µs (a stop after exec
/// takes well under a millisecond) and backing off to 10 ms.
fn wait_for(pid: pid_t, flags: c_int, deadline: Instant) -> Result<(pid_t, c_int), CaptureError> {
    let mut pause = Duration::from_micros(50);
    loop {
        match waitpid(pid, flags | libc::WNOHANG) {
            Ok(Some(found)) => return Ok(found),
            Ok(None) => {}
            Err(error) => return Err(CaptureError::Trace(format!("waitpid {pid}: {error}"))),
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(CaptureError::Timeout(format!(
                "waited {} s for process {pid} in vain",
                PROCESS_END_TIMEOUT.as_secs()
            )));
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(10));
    }
}
