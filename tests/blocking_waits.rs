//! Every blocking call is a wait, with its kind, from one table (issue 39):
//! tests/programs/exit_waits.c joins at exit threads blocked in poll, ppoll,
//! select, pselect, epoll_wait, nanosleep, clock_nanosleep, read, recv,
//! accept, waitpid, sigwait, sigtimedwait, pause, a mutex and a condition
//! variable. Its dump (`run --hang-timeout`), its core (gdb's gcore) and
//! gdb's `thread apply all bt` of that core, each through the real binary:
//! every such thread is blocked, with the kind of wait its call shows. The
//! must-not: a thread that spins reading a non-blocking descriptor is not
//! blocked where the registers tell (dump, core).
#![cfg(target_os = "linux")]

use crate::common;
use crate::common::capture::Capture;
use crate::common::programs;

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// (thread, the function it runs, the wait kind its call shows).
const THREADS: [(&str, &str, &str); 16] = [
    ("poll", "in_poll", "io"),
    ("ppoll", "in_ppoll", "io"),
    ("select", "in_select", "io"),
    ("pselect", "in_pselect", "io"),
    ("epoll_wait", "in_epoll_wait", "io"),
    ("nanosleep", "in_nanosleep", "sleep"),
    ("clock_nanosleep", "in_clock_nanosleep", "sleep"),
    ("read", "in_read", "io"),
    ("recv", "in_recv", "io"),
    ("accept", "in_accept", "io"),
    ("waitpid", "in_waitpid", "child"),
    ("sigwait", "in_sigwait", "signal"),
    ("sigtimedwait", "in_sigtimedwait", "signal"),
    ("pause", "in_pause", "signal"),
    ("mutex", "in_mutex", "lock"),
    ("condition", "in_condition", "condition"),
];

fn has_gdb() -> bool {
    Command::new("gdb").arg("--version").output().is_ok()
}

fn program() -> PathBuf {
    programs::programs().join("exit_waits")
}

/// The thread whose stack runs `function` (cores and gdb's text name no
/// threads; the dump does, and is checked by name too).
fn thread_running<'a>(report: &'a Value, function: &str) -> &'a Value {
    report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| {
            t["frames"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["function"] == function)
        })
        .unwrap_or_else(|| panic!("no thread runs {function} in {}", report["path"]))
}

/// Every waiting thread is blocked with its kind; the exiting main thread
/// joins (and is blamed).
fn check_waits(report: &Value, what: &str) {
    let mut wrong = Vec::new();
    for (name, function, kind) in THREADS {
        let thread = thread_running(report, function);
        if thread["blocked"]["kind"] != kind {
            wrong.push(format!("{name}: {}", thread["blocked"]));
        }
    }
    assert!(wrong.is_empty(), "{what}: {wrong:#?}");
    let main = thread_running(report, "join_all");
    assert_eq!(main["blocked"]["kind"], "join", "{what}: {main}");
    assert_eq!(
        report["exit_phase"]["blamed_thread"], main["id"],
        "{what}: the main thread, joining at exit, is blamed"
    );
}

/// Starts the program and returns once its exit handler runs, and a
/// little later (its threads block).
fn start(dir: &Path) -> std::process::Child {
    let mut child = Command::new(program())
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("joining at exit"), "{line}");
    std::thread::sleep(std::time::Duration::from_millis(500));
    child
}

#[test]
fn every_blocking_call_is_a_wait_with_its_kind_in_the_dump() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("blocking-waits-dump");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = Capture::run(program())
        .hang_timeout(2)
        .json()
        .dump_dir(&dir)
        .report_to(&dir.join("report.json"))
        .output();
    assert_eq!(out.status.code(), Some(124), "{out:?}");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    // The command's dump (the forked child of "waitpid" has its own).
    let report = doc["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["capture"]["root_pid"].is_null())
        .unwrap();
    check_waits(report, "dump");
    for (name, function, _) in THREADS {
        assert_eq!(thread_running(report, function)["name"], name);
    }
    let spinner = thread_running(report, "spinner");
    assert!(
        spinner["blocked"].is_null(),
        "a thread spinning on a non-blocking read is not blocked: {spinner}"
    );
    // The text report says the kind.
    let dump = common::dumps_in(&dir)
        .into_iter()
        .find(|d| {
            d.to_string_lossy()
                .contains(&report["process"]["pid"].to_string())
        })
        .unwrap();
    let text = String::from_utf8(common::run(&["analyze", dump.to_str().unwrap()]).stdout).unwrap();
    assert!(
        text.contains("Thread ") && text.contains(" \"poll\" [blocked in __GI___poll (I/O wait)]"),
        "{text}"
    );
    assert!(
        text.contains("\"waitpid\" [blocked in __GI___wait4 (wait for a child process)]"),
        "{text}"
    );
}

#[test]
fn every_blocking_call_is_a_wait_with_its_kind_in_the_core_and_in_gdb_text() {
    if !has_gdb() {
        common::skip::skip(
            "blocking_waits::core",
            "gdb is not installed (scripts/ci-setup-linux.sh installs it)",
        );
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("blocking-waits-core");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = start(&dir);
    let core = dir.join("core.exit_waits");
    common::gcore(child.id(), &core);
    let _ = child.kill();
    let _ = child.wait();
    let (doc, _) = common::analyze_json(&[&core]);
    let report = &doc["reports"][0];
    assert_eq!(report["source"]["kind"], "core");
    check_waits(report, "core");
    let spinner = thread_running(report, "spinner");
    assert!(
        spinner["blocked"].is_null(),
        "a thread spinning on a non-blocking read is not blocked: {spinner}"
    );

    // gdb's own backtraces of the same core, as a CI log would hold them:
    // the same waits, from the names alone. (Text has no registers: a
    // thread caught in a non-blocking read would count as blocked.)
    let gdb = Command::new("gdb")
        .args(["-batch", "-nx", "-ex", "thread apply all bt"])
        .arg(program())
        .arg(&core)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let trace = dir.join("gdb.txt");
    std::fs::write(&trace, &gdb.stdout).unwrap();
    let (doc, _) = common::analyze_json(&[&trace]);
    let report = &doc["reports"][0];
    assert_eq!(report["source"]["format"], "gdb", "{report}");
    check_waits(report, "gdb text");
}

/// What a core does not record is said to be unknown, and names are shown
/// without their symbol versions (issue 39); a minidump keeps what it
/// records.
#[test]
fn a_core_says_what_it_does_not_record_and_names_drop_symbol_versions() {
    if !has_gdb() {
        common::skip::skip(
            "blocking_waits::core",
            "gdb is not installed (scripts/ci-setup-linux.sh installs it)",
        );
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("blocking-waits-system");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = start(&dir);
    let core = dir.join("core.exit_waits");
    common::gcore(child.id(), &core);
    let _ = child.kill();
    let _ = child.wait();
    let text = String::from_utf8(common::run(&["analyze", core.to_str().unwrap()]).stdout).unwrap();
    let system = text.lines().find(|l| l.starts_with("System:")).unwrap();
    assert!(
        system.starts_with("System:    Linux (version unknown), ")
            && system.ends_with(" (CPU count unknown)"),
        "{text}"
    );
    assert!(
        !text.contains("@@GLIBC") && !text.contains("@GLIBC"),
        "{text}"
    );
    assert!(text.contains("libc.so.6!__libc_start_main + "), "{text}");
    let (doc, _) = common::analyze_json(&[&core]);
    let system = &doc["reports"][0]["system"];
    assert!(system["os_version"].is_null() && system["cpu_info"].is_null());
    assert_eq!(system["cpu_count"], 0);

    // A minidump records them: they are shown.
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-dumps/linux/mutex-held-by-worker-at-exit-linux.dmp");
    let text =
        String::from_utf8(common::run(&["analyze", sample.to_str().unwrap()]).stdout).unwrap();
    let system = text.lines().find(|l| l.starts_with("System:")).unwrap();
    assert!(
        system.starts_with("System:    Linux 6.") && system.contains("(2 CPUs) family "),
        "{system}"
    );
}
