//! What /proc says about a process or thread: the fields of `status` the
//! capture uses, and the process's name.

use std::io;

use libc::c_int;

/// The fields of /proc/PID/status (or /proc/PID/task/TID/status) we use.
#[derive(Debug, Default)]
pub(super) struct ProcStatus {
    pub tgid: u32,
    pub state: char,
    pub tracer: u32,
    pub pending: u64,
    pub shared_pending: u64,
    pub ignored: u64,
    pub caught: u64,
}

pub(super) fn read_status(path: &str) -> io::Result<ProcStatus> {
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

pub(super) fn signal_bit(signal: c_int) -> u64 {
    1u64 << ((signal - 1) & 63)
}

/// The executable's file name (`python3.11`), else the kernel's short name.
pub(in crate::capture) fn process_name(pid: u32) -> String {
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

/// Each thread of process `pid` with its state letter (`R`, `S`, `D`, `T`,
/// `t`, ...) from /proc/PID/task/TID/stat. Threads that end while this
/// reads are left out.
pub(super) fn thread_states(pid: u32) -> Vec<(u32, char)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut states: Vec<(u32, char)> = tasks
        .filter_map(Result::ok)
        .filter_map(|task| {
            let tid = task.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
            // The command name, in parentheses, may hold anything: the
            // state follows the last `) `.
            let state = stat.rsplit_once(") ")?.1.chars().next()?;
            Some((tid, state))
        })
        .collect();
    states.sort_unstable();
    states
}

/// `thread 123 (state D, in kernel_clone), thread 124 (...)`: what a
/// message about threads that would not stop says about them.
pub(super) fn describe_threads(pid: u32, tids: &[u32]) -> String {
    let states = thread_states(pid);
    tids.iter()
        .map(|&tid| {
            let state = states
                .iter()
                .find(|(t, _)| *t == tid)
                .map_or('?', |(_, s)| *s);
            let wchan = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/wchan"))
                .ok()
                .map(|w| w.trim().to_string())
                .filter(|w| !w.is_empty() && w != "0");
            match wchan {
                Some(wchan) => format!("thread {tid} (state {state}, in {wchan})"),
                None => format!("thread {tid} (state {state})"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A process's command line (/proc/PID/cmdline), empty when unreadable.
pub(in crate::capture) fn command_line(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| {
            bytes
                .split(|b| *b == 0)
                .filter(|arg| !arg.is_empty())
                .map(|arg| String::from_utf8_lossy(arg).into_owned())
                .collect()
        })
        .unwrap_or_default()
}
