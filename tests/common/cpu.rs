//! CPU time, for the tests that check how a cost grows. No test asserts
//! wall-clock time: on a machine busy with other work it measures the
//! load, not the code. A cost is compared with another measured in the
//! same test (the 50 MB log against the 5 MB one, a corrupt dump against
//! the intact one), in CPU time, which other processes barely change.
#![allow(dead_code)]

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::Duration;

fn total(usage: &libc::rusage) -> Duration {
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

fn clock(id: libc::clockid_t) -> Duration {
    // SAFETY: clock_gettime writes the struct it is given, nothing else.
    let mut now: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `id` is one of the CPU-time clocks.
    let status = unsafe { libc::clock_gettime(id, &mut now) };
    assert_eq!(
        status,
        0,
        "clock_gettime: {}",
        std::io::Error::last_os_error()
    );
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// CPU time of this process (all its threads) so far.
pub fn process() -> Duration {
    clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// CPU time of the calling thread so far.
pub fn thread() -> Duration {
    clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// User and system time of the thread `tid` of this process so far, from
/// /proc (for a watchdog on another thread); `None` once it has ended.
pub fn thread_of(tid: i32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(") ")?.1.split_whitespace().collect();
    // utime and stime: fields 14 and 15 of stat(5), counted from the state
    // (field 3).
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no memory effects.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(Duration::from_millis(ticks * 1000 / per_second))
}

/// The calling thread's id, for [`thread_of`].
pub fn thread_id() -> i32 {
    // SAFETY: gettid has no memory effects.
    unsafe { libc::gettid() }
}

/// Runs `command` to its end with its output collected, like
/// `Command::output`, and says how much CPU time it used (its own and that
/// of the children it waited for).
// The child is waited for with wait4, which gives its CPU time.
#[allow(clippy::zombie_processes)]
pub fn run(command: &mut Command) -> (Output, Duration) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        stderr.read_to_end(&mut bytes).unwrap();
        bytes
    });
    let mut out = Vec::new();
    stdout.read_to_end(&mut out).unwrap();
    let err = err.join().unwrap();
    let mut status = 0;
    // SAFETY: wait4 writes the status and the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above, for our own child, which nothing else waits for.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(
        pid,
        child.id() as i32,
        "wait4: {}",
        std::io::Error::last_os_error()
    );
    let output = Output {
        status: ExitStatus::from_raw(status),
        stdout: out,
        stderr: err,
    };
    (output, total(&usage))
}
