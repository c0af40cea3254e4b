//! What /proc says about a process or thread: the fields of `status` the
//! capture uses, and the process's name.

use std::io;

use libc::c_int;

use super::signals::exit_status;
use crate::capture::types::ExitStatus;

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

/// A process's command line (/proc/PID/cmdline), one word per argument;
/// empty when unreadable (a zombie has none).
pub(in crate::capture) fn command_line(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| crate::model::command_words(&bytes))
        .unwrap_or_default()
}

/// Whether process `pid` has ended, and how: `None` while it lives
/// (running or stopped); for a zombie, its status from /proc/PID/stat;
/// `Some(None)` when it is gone (its parent collected the status).
pub(super) fn ended(pid: u32) -> Option<Option<ExitStatus>> {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(text) => zombie_status(&text),
        Err(_) => Some(None),
    }
}

/// A zombie's status from its stat line: field 52, `exit_code`, in
/// waitpid's form (Linux 3.5 and later). The command name (field 2) may
/// hold spaces and parentheses: the fields after it start after the last
/// `)`, with the state (field 3).
fn zombie_status(stat: &str) -> Option<Option<ExitStatus>> {
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    if !matches!(fields.first()?.chars().next()?, 'Z' | 'X') {
        return None;
    }
    Some(
        fields
            .get(52 - 3)
            .and_then(|code| code.parse::<c_int>().ok())
            .and_then(exit_status),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stat line of state `state`, exit_code `code` and a command name
    /// that looks like the end of the name.
    fn stat_line(state: char, code: i32) -> String {
        let mut fields = vec!["0"; 52];
        fields[0] = "4242";
        fields[1] = "(a) Z (b)";
        let state = state.to_string();
        fields[2] = &state;
        let code = code.to_string();
        fields[51] = &code;
        fields.join(" ")
    }

    /// Issue 36: a process that ended before it was stopped is said to
    /// have exited by itself, with its status, not to "be a zombie".
    #[test]
    fn a_zombie_tells_how_it_ended() {
        assert_eq!(
            zombie_status(&stat_line('Z', 7 << 8)),
            Some(Some(ExitStatus::Code(7)))
        );
        assert_eq!(
            zombie_status(&stat_line('Z', libc::SIGKILL)),
            Some(Some(ExitStatus::Signal(libc::SIGKILL)))
        );
        assert_eq!(zombie_status(&stat_line('S', 0)), None);
        assert_eq!(zombie_status(&stat_line('T', 0)), None);
        // Before Linux 3.5 the field is missing: ended, status unknown.
        assert_eq!(zombie_status("1 (x) Z 0 0"), Some(None));
        assert_eq!(zombie_status("garbage"), None);
    }

    /// The real thing: a child that exited with status 7 and is not yet
    /// reaped.
    #[test]
    fn a_real_zombie_has_its_exit_status() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "exit 7"])
            .spawn()
            .unwrap();
        let pid = child.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while ended(pid).is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(ended(pid), Some(Some(ExitStatus::Code(7))));
        child.wait().unwrap();
        assert_eq!(ended(pid), Some(None));
    }
}
