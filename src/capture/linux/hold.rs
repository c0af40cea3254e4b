//! The processes of a hung tree held stopped while their dumps are written
//! (issue 36): each is stopped, and waited for until every thread is,
//! before the first dump; what becomes of them afterwards (ended, or let go
//! with `--no-kill`) is decided here too.

use std::time::Duration;

use libc::pid_t;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::live::group_stop;
use super::procfs::{ended, read_status};
use super::tree::Member;
use crate::capture::types::CaptureError;

/// The processes held stopped for their dumps.
#[derive(Default)]
pub(super) struct Held {
    /// Every process held, the command first when it is one.
    pub held: Vec<u32>,
    /// Those that were stopped before (Ctrl-Z): `--no-kill` leaves them
    /// stopped.
    pub stopped_before: Vec<u32>,
    /// Those that would not stop within the limit, with why.
    pub unstoppable: Vec<(u32, CaptureError)>,
}

impl Held {
    /// Stops the stuck processes other than the traced command (which the
    /// tracer holds itself): with SIGSTOP, or as they are when they were
    /// stopped already.
    pub(super) fn stop_others(&mut self, stuck: &[Member], command: Option<u32>) {
        for member in stuck {
            if Some(member.pid) == command
                || ended(member.pid).is_some()
                || self.held.contains(&member.pid)
            {
                continue;
            }
            if is_stopped(member.pid) {
                self.stopped_before.push(member.pid);
                self.held.push(member.pid);
            } else if kill(Pid::from_raw(member.pid as pid_t), Signal::SIGSTOP).is_ok() {
                self.held.push(member.pid);
            }
        }
    }

    /// Waits until every thread of every held process is stopped; one that
    /// will not stop is let go at once, unless `no_kill` lets everything go
    /// at the end.
    pub(super) fn wait_all_stopped(&mut self, limit: Duration, no_kill: bool) {
        for &process in &self.held {
            if let Err(error) = group_stop(process, limit, no_kill) {
                self.unstoppable.push((process, error));
            }
        }
    }

    fn stoppable(&self) -> impl Iterator<Item = u32> + '_ {
        self.held
            .iter()
            .copied()
            .filter(|p| !self.unstoppable.iter().any(|(u, _)| u == p))
    }

    /// Queues SIGTERM to every held process that stopped: it waits while
    /// the process is stopped and is what it takes first when the writer
    /// continues it after its dump, so its interrupted calls never return
    /// to it. The processes it was sent to.
    pub(super) fn queue_terminate(&self) -> Vec<u32> {
        self.stoppable()
            .filter(|&p| kill(Pid::from_raw(p as pid_t), Signal::SIGTERM).is_ok())
            .collect()
    }

    /// Of the processes to dump in this order, the last that stopped: with
    /// `--no-kill` it goes on when its writer continues it, and the others
    /// stay stopped until then.
    pub(super) fn last_to_dump(&self, order: impl DoubleEndedIterator<Item = u32>) -> Option<u32> {
        let mut order = order;
        order.rfind(|member| !self.unstoppable.iter().any(|(u, _)| u == member))
    }

    /// The reason `member` could not be dumped, when it would not stop
    /// (taken out of the list: asked once per process).
    pub(super) fn take_unstoppable(&mut self, member: u32) -> Option<CaptureError> {
        let at = self.unstoppable.iter().position(|(p, _)| *p == member)?;
        Some(self.unstoppable.remove(at).1)
    }

    /// Whether `member` stays stopped after its dump: with `no_kill`, all
    /// but the last, and those stopped before.
    pub(super) fn leave_stopped(&self, member: u32, last: Option<u32>, no_kill: bool) -> bool {
        no_kill && (Some(member) != last || self.stopped_before.contains(&member))
    }

    /// With `--no-kill`, after the last dump: continues every held process
    /// but the last one dumped (its writer did) and those that were stopped
    /// before.
    pub(super) fn let_go(&self, last: Option<u32>) {
        let go_on = self
            .held
            .iter()
            .filter(|&&p| Some(p) != last && !self.stopped_before.contains(&p));
        for &process in go_on {
            let _ = kill(Pid::from_raw(process as pid_t), Signal::SIGCONT);
        }
    }
}

/// Whether process `pid` is stopped (Ctrl-Z, SIGSTOP), by its main thread.
fn is_stopped(pid: u32) -> bool {
    read_status(&format!("/proc/{pid}/status")).is_ok_and(|s| s.state == 'T')
}
