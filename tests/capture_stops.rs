//! No thread runs between the stop for a dump and the dump (issue 36,
//! part 2): `run` dumps threads blocked in epoll_wait, select, poll,
//! nanosleep, read, pause and a futex wait inside those calls, though none
//! retries on EINTR and the first to return would end the process; a
//! process that ended by itself before it was stopped is said to have, with
//! its status; `attach`, which lets the process go on, interrupts exactly
//! the calls docs/capture.md lists.
#![cfg(target_os = "linux")]

use crate::common;
use crate::common::programs;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::capture::Capture;
use common::dumps_in;
use programs::programs;
use serde_json::Value;

/// The threads of tests/programs/eintr_waits.c: its name, what frame 0's
/// function is named after (with or without libc's debug names:
/// `__GI___select` or `select`, `clock_nanosleep` under `nanosleep`), and
/// the program's function that made the call.
const WAITS: [(&str, &str, &str); 7] = [
    ("epoll", "epoll_wait", "wait_in_epoll"),
    ("select", "select", "wait_in_select"),
    ("poll", "poll", "wait_in_poll"),
    ("nanosleep", "nanosleep", "wait_in_nanosleep"),
    ("read", "read", "wait_in_read"),
    ("pause", "pause", "wait_in_pause"),
    ("futex", "syscall", "wait_in_futex"),
];

/// What a system call interrupted by a stop leaves in the return register
/// while the thread is still in the kernel: EINTR, or one of the kernel's
/// restart codes (ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND,
/// ERESTART_RESTARTBLOCK), which a thread never sees in user space.
const INTERRUPTED: [i64; 5] = [-4, -512, -513, -514, -516];

/// The return register of each thread of `dump`, by thread id.
fn return_registers(dump: &Path) -> Vec<(u32, i64)> {
    let dump = minidump::Minidump::read_path(dump).unwrap();
    let system = dump.get_stream::<minidump::MinidumpSystemInfo>().unwrap();
    let misc = dump.get_stream::<minidump::MinidumpMiscInfo>().ok();
    let threads = dump.get_stream::<minidump::MinidumpThreadList>().unwrap();
    let register = if cfg!(target_arch = "x86_64") {
        "rax"
    } else {
        "x0"
    };
    threads
        .threads
        .iter()
        .map(|thread| {
            let context = thread.context(&system, misc.as_ref()).unwrap();
            let value = context.get_register(register).unwrap();
            (thread.raw.thread_id, value as i64)
        })
        .collect()
}

fn functions(thread: &Value) -> Vec<String> {
    thread["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Every thread of eintr_waits is inside its call: frame 0 is the call,
/// the program's function right below it, and the return register still
/// holds what the interrupted call left in the kernel.
fn assert_inside_their_calls(report: &Value, dump: &Path) {
    let registers = return_registers(dump);
    for (name, call, caller) in WAITS {
        let thread = report["threads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no thread {name:?} in {:#}", report["threads"]));
        let frames = functions(thread);
        assert!(
            frames[0].contains(call),
            "thread {name:?} is not in {call}: {frames:?}"
        );
        assert!(
            frames.iter().take(3).any(|f| f == caller),
            "thread {name:?}: no {caller} below {call}: {frames:?}"
        );
        let id = thread["id"].as_u64().unwrap() as u32;
        let (_, value) = registers.iter().find(|(t, _)| *t == id).unwrap();
        assert!(
            INTERRUPTED.contains(value),
            "thread {name:?} ({call}) returned {value} to its program: it ran after the stop"
        );
    }
}

/// The case, a few times (a loop of twenty is
/// scripts/check-run-eintr.sh): `run --hang-timeout 2` writes the dump
/// every time, no thread's call returned to the program (which would have
/// printed it and exited with status 3 before the dump), and the report
/// shows each thread inside its call.
#[test]
fn run_dumps_threads_inside_the_calls_a_stop_interrupts() {
    for _ in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let report_file = dir.path().join("report.json");
        let out = Capture::run(programs().join("eintr_waits"))
            .hang_timeout(2)
            .json()
            .report_to(&report_file)
            .dump_dir(dir.path())
            .output();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(124), "{stderr}");
        assert!(stderr.contains("7 threads waiting"), "{stderr}");
        assert!(!stderr.contains(" returned "), "{stderr}");
        assert!(stderr.contains("(the command): minidump "), "{stderr}");
        let dumps = dumps_in(dir.path());
        assert_eq!(dumps.len(), 1, "{dumps:?} {stderr}");
        let doc: Value = serde_json::from_slice(&std::fs::read(&report_file).unwrap()).unwrap();
        assert_inside_their_calls(&doc["reports"][0], &dumps[0]);
    }
}

/// A process of the tree that exited by itself before the hang timeout
/// (a zombie its parent never collects) is said to have, with its status,
/// where it used to be "a zombie"; its parent is dumped as usual.
#[test]
fn a_process_that_exited_by_itself_is_said_to_have() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "'{}' 7 </dev/null & exec sleep 30",
        programs().join("exit_status").display()
    );
    let out = Capture::shell(&script)
        .hang_timeout(2)
        .quiet()
        .dump_dir(dir.path())
        .output();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(124), "{stderr}");
    assert!(
        stderr.contains(
            "exited by itself with status 7 before it was stopped for the dump: there is nothing to dump"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("zombie"), "{stderr}");
    assert!(stderr.contains("(the command): minidump "), "{stderr}");
    assert_eq!(dumps_in(dir.path()).len(), 1, "{stderr}");
}

/// `attach` lets the process go on: any stop makes epoll_wait,
/// epoll_pwait, sigtimedwait and a recv with a receive timeout return
/// EINTR, and nothing else of the ten calls (select, poll, nanosleep, read,
/// pause and the futex wait are restarted by the kernel). This pins the
/// list docs/capture.md gives to the kernel the tests run on.
#[test]
fn attach_interrupts_exactly_the_documented_calls() {
    let mut child = Command::new(programs().join("eintr_waits"))
        .arg("keep-going")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let stderr = child.stderr.take().unwrap();
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = send.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let first = lines.recv_timeout(Duration::from_secs(20)).unwrap();
    assert!(first.contains("10 threads waiting"), "{first}");
    // Every thread asleep in its call.
    while !sleeping(pid) {
        assert!(Instant::now() < deadline, "threads never went to sleep");
        std::thread::sleep(Duration::from_millis(10));
    }
    let dir = tempfile::tempdir().unwrap();
    let out = Capture::attach(pid).quiet().dump_dir(dir.path()).output();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected: BTreeSet<&str> = ["epoll_wait", "epoll_pwait", "sigtimedwait", "recv"].into();
    let mut returned = BTreeSet::new();
    // The expected ones, then a while for any other to show.
    let mut quiet_until = None;
    loop {
        let now = Instant::now();
        if quiet_until.is_some_and(|until| now >= until) || now >= deadline {
            break;
        }
        let wait = quiet_until
            .unwrap_or(deadline)
            .saturating_duration_since(now);
        let Ok(line) = lines.recv_timeout(wait) else {
            continue;
        };
        let call = line
            .trim_start_matches("eintr_waits: ")
            .split([' ', '('])
            .next()
            .unwrap_or("")
            .to_string();
        assert!(line.contains("Interrupted system call"), "{line}");
        returned.insert(call);
        if quiet_until.is_none() && expected.iter().all(|c| returned.contains(*c)) {
            quiet_until = Some(Instant::now() + Duration::from_millis(500));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let returned: BTreeSet<&str> = returned.iter().map(String::as_str).collect();
    assert_eq!(returned, expected);
}

/// Every thread of `pid` is asleep (state S).
fn sleeping(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    let states: Vec<char> = tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("stat")).ok())
        .filter_map(|stat| stat.rsplit_once(") ")?.1.chars().next())
        .collect();
    states.len() == 11 && states.iter().all(|&s| s == 'S')
}
