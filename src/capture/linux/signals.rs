//! The wrapper's own signals while it supervises a command: blocked and read
//! from a signalfd, the names used in messages, and ending the way the
//! command ended.

use std::os::fd::AsFd;
use std::time::Duration;

use libc::c_int;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::resource::{setrlimit, Resource};
use nix::sys::signal::{pthread_sigmask, SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};

use crate::capture::types::{CaptureError, ExitStatus};

/// Signals are blocked and read from a signalfd, so a SIGCHLD or a SIGTERM
/// wakes the supervision loop instead of running a handler. The mask is
/// restored on drop.
pub(super) struct Signals {
    fd: SignalFd,
    /// The mask the wrapper was started with: what the command gets.
    pub old_mask: SigSet,
}

impl Signals {
    pub(super) fn block(list: &[Signal]) -> nix::Result<Signals> {
        let mut set = SigSet::empty();
        for &signal in list {
            set.add(signal);
        }
        let mut old_mask = SigSet::empty();
        pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), Some(&mut old_mask))?;
        match SignalFd::with_flags(&set, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK) {
            Ok(fd) => Ok(Signals { fd, old_mask }),
            Err(error) => {
                let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old_mask), None);
                Err(error)
            }
        }
    }

    /// Waits until a signal is ready or `timeout` passes.
    pub(super) fn wait(&mut self, timeout: Option<Duration>) -> Result<(), CaptureError> {
        // Round up, so the loop never spins on a sub-millisecond rest.
        let timeout = match timeout {
            None => PollTimeout::NONE,
            Some(t) => {
                let ms = t.as_micros().div_ceil(1000);
                PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX)
            }
        };
        let mut fds = [PollFd::new(self.fd.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => Ok(()),
            Err(error) => Err(CaptureError::Trace(format!("poll: {error}"))),
        }
    }

    /// Every signal received since the last call.
    pub(super) fn read(&mut self) -> Vec<libc::signalfd_siginfo> {
        let mut out = Vec::new();
        while let Ok(Some(info)) = self.fd.read_signal() {
            out.push(info);
        }
        out
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&self.old_mask), None);
    }
}

/// Ends this process the way `status` ended the command.
pub(in crate::capture) fn exit_like(status: ExitStatus) -> ! {
    match status {
        ExitStatus::Code(code) => std::process::exit(code),
        ExitStatus::Signal(signal) => {
            // RLIMIT_CORE 0: the command may have left a core file; the
            // wrapper must not.
            let _ = setrlimit(Resource::RLIMIT_CORE, 0, 0);
            // SAFETY: plain system calls on our own process. The signal may
            // be a real-time one, which nix's Signal cannot hold, so the
            // raw number goes to libc. The Rust runtime's own SIGSEGV and
            // SIGBUS handlers are replaced by the default action first.
            unsafe {
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

/// How a process ended, from a status in waitpid's form; `None` for a
/// stop.
pub(super) fn exit_status(status: c_int) -> Option<ExitStatus> {
    if libc::WIFEXITED(status) {
        Some(ExitStatus::Code(libc::WEXITSTATUS(status)))
    } else if libc::WIFSIGNALED(status) {
        Some(ExitStatus::Signal(libc::WTERMSIG(status)))
    } else {
        None
    }
}

/// "exited by itself with status 3", "was ended by SIGTERM": how a process
/// that was not stopped in time ended, for [`CaptureError::Exited`].
/// `None`: it is gone and its status was collected by its parent.
pub(super) fn how_it_ended(status: Option<ExitStatus>) -> String {
    match status {
        Some(ExitStatus::Code(code)) => format!("exited by itself with status {code}"),
        Some(ExitStatus::Signal(signal)) => format!("was ended by {}", signal_name(signal)),
        None => "ended by itself (its parent collected its exit status)".to_string(),
    }
}

/// The name of a signal (`SIGSEGV`), for messages.
pub(in crate::capture) fn signal_name(signal: c_int) -> String {
    match Signal::try_from(signal) {
        Ok(known) => known.as_str().to_string(),
        Err(_) => format!("signal {signal}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_end_is_said_with_its_status() {
        // waitpid's forms: exit(3), and death by SIGTERM.
        let exited = exit_status(3 << 8);
        assert_eq!(exited, Some(ExitStatus::Code(3)));
        assert_eq!(how_it_ended(exited), "exited by itself with status 3");
        let killed = exit_status(libc::SIGTERM);
        assert_eq!(how_it_ended(killed), "was ended by SIGTERM");
        // A stop is no end.
        assert_eq!(exit_status(0x137f), None);
        assert!(how_it_ended(None).starts_with("ended by itself"));
    }
}
