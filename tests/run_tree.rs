//! `dumptriage run` owns the command's process tree (issue 30, parts 1
//! and 2): behind a wrapper (`sh -c`), the hung grandchild is dumped and
//! diagnosed, nothing is left running, and a pipe after `run` closes; a
//! hang during normal work is a failure for `--fail-on any` and JUnit.
#![cfg(target_os = "linux")]

use crate::common;
use crate::common::programs;

use std::io::Read;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::capture::Capture;
use common::{bin, dumps_in};
use programs::programs;
use serde_json::Value;

/// The one dump `run --hang-timeout 2` writes of a program of
/// tests/programs/ that hangs (status 124), in a folder kept as long as
/// the returned guard.
fn hang_dump(program: &str) -> (tempfile::TempDir, PathBuf) {
    hang_dump_with(program, &[])
}

fn hang_dump_with(program: &str, args: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let status = Capture::run(programs().join(program))
        .args(args)
        .hang_timeout(2)
        .quiet()
        .dump_dir(dir.path())
        .command()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(124));
    let dumps = dumps_in(dir.path());
    assert_eq!(dumps.len(), 1, "{dumps:?}");
    let dump = dumps[0].clone();
    (dir, dump)
}

/// The JSON report of one dump.
fn report_of(dump: &std::path::Path) -> Value {
    let out = bin()
        .args(["analyze", "--format", "json"])
        .arg(dump)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["reports"][0].clone()
}

/// Processes whose command line mentions `needle`, other than the test.
fn running(needle: &str) -> Vec<u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = state
                .rfind(')')
                .is_some_and(|i| state[i + 1..].trim_start().starts_with('Z'));
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            !zombie && String::from_utf8_lossy(&cmdline).contains(needle)
        })
        .collect()
}

/// `sh -c './hip_exit_hang; echo after'` behind a pipe, as a CI step runs
/// it: the shell only waits, the program below it hangs at exit.
#[test]
fn a_hung_grandchild_is_dumped_and_the_whole_tree_ends() {
    let dir = tempfile::tempdir().unwrap();
    let report_file = dir.path().join("report.json");
    let program = programs().join("hip_exit_hang");
    let script = format!("'{}'; echo after", program.display());
    let mut child = Capture::shell(&script)
        .hang_timeout(2)
        .json()
        .report_to(&report_file)
        .dump_dir(dir.path())
        .command()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The pipe closes when every process holding it has ended: reading to
    // its end is the `| tee log` of a CI step, which would wait for ever
    // on a process left behind.
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(124), "{stderr}");
    assert!(!stdout.contains("after"), "{stdout}");
    assert!(
        stderr.contains("ended it and every process it started"),
        "{stderr}"
    );
    assert!(
        running(&program.display().to_string()).is_empty(),
        "nothing of the tree is left running"
    );

    // One dump: the hung program, not the shell that waits for it.
    let dumps = dumps_in(dir.path());
    assert_eq!(dumps.len(), 1, "{dumps:?} {stderr}");
    let name = dumps[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("hip_exit_hang_"), "{name}");
    assert!(
        stderr.contains("(started by the command): minidump "),
        "{stderr}"
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&report_file).unwrap()).unwrap();
    let report = &doc["reports"][0];
    assert_eq!(
        report["diagnoses"][0]["signature"], "hip-unregister-fatbinary-hang",
        "{:#}",
        report["diagnoses"]
    );
    // Why it was taken is in the dump itself: read back by a later analyze.
    let again = bin()
        .args(["analyze", "--format", "json"])
        .arg(&dumps[0])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&again.stdout).unwrap();
    let capture = &doc["reports"][0]["capture"];
    assert_eq!(capture["reason"], "hang-timeout", "{capture:#}");
    // The dumped process's own command line; the command `run` ran is the
    // root's (issue 39).
    assert_eq!(
        capture["command"],
        serde_json::json!([program.display().to_string()]),
        "{capture:#}"
    );
    assert_eq!(
        capture["root_command"],
        serde_json::json!(["sh", "-c", script]),
        "{capture:#}"
    );
    assert!(capture["root_pid"].as_u64().is_some(), "{capture:#}");
    assert!(capture["after_seconds"].as_f64().unwrap() >= 2.0);
}

/// A word in single quotes, for a shell.
fn quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Issue 39: the report's command line is the dumped process's own, below
/// `sh -c` below another `sh` (as `make test` runs it), quoted as a shell
/// would take it back; the command `run` ran is said on the Captured line.
#[test]
fn the_report_shows_the_dumped_process_command_line_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let program = programs().join("eintr_waits").display().to_string();
    // `; true` keeps each shell from exec'ing its last command.
    let inner = format!("{} 'a b' \"it's\" ''; true", quoted(&program));
    let script = format!("sh -c {}; true", quoted(&inner));
    let report_file = dir.path().join("report.json");
    let out = Capture::shell(&script)
        .hang_timeout(2)
        .json()
        .report_to(&report_file)
        .dump_dir(dir.path())
        .output();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(124), "{stderr}");
    let dumps = dumps_in(dir.path());
    assert_eq!(dumps.len(), 1, "{dumps:?} {stderr}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&report_file).unwrap()).unwrap();
    let report = &doc["reports"][0];
    assert_eq!(
        report["capture"]["command"],
        serde_json::json!([program, "a b", "it's", ""])
    );
    assert_eq!(
        report["capture"]["root_command"],
        serde_json::json!(["sh", "-c", script])
    );
    // The dump's own copy of /proc/PID/cmdline says the same, quoted.
    let plain = program
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c));
    let shown = if plain {
        program.clone()
    } else {
        quoted(&program)
    };
    let words = format!("{shown} 'a b' 'it'\\''s' ''");
    assert_eq!(report["process"]["command_line"], words.as_str());
    let text = bin().arg("analyze").arg(&dumps[0]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains(&format!("\nCommand:   {words}\n")), "{text}");
    assert!(
        text.contains(&format!(
            "a descendant of the command `sh -c {}`",
            quoted(&script)
        )),
        "{text}"
    );
}

/// A deadlock during normal work, dumped at the hang timeout: the report
/// says "hang during normal work", and CI formats count it as a failure.
#[test]
fn a_deadlock_during_work_is_a_failure() {
    let (_dir, dump) = hang_dump("deadlock");

    let analyze = |extra: &[&str]| {
        bin()
            .arg("analyze")
            .arg(&dump)
            .args(extra)
            .output()
            .unwrap()
    };
    let json = analyze(&["--format", "json"]);
    let doc: Value = serde_json::from_slice(&json.stdout).unwrap();
    let report = &doc["reports"][0];
    assert_eq!(report["exit_phase"]["process_exiting"], false);
    // The wait chains (issue 28): main joins worker a, a waits for the
    // mutex b holds, b for the one a holds: a deadlock, named as such.
    let diagnoses: Vec<&str> = report["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["signature"].as_str().unwrap())
        .collect();
    assert_eq!(diagnoses[0], "deadlock", "{diagnoses:?}");
    assert!(diagnoses.contains(&"hang-during-work"), "{diagnoses:?}");
    let cycle = report["exit_phase"]["deadlock"].as_array().unwrap();
    assert_eq!(cycle.len(), 2, "{cycle:?}");
    let threads = report["threads"].as_array().unwrap();
    let wait_of = |id: &Value| {
        threads
            .iter()
            .find(|t| &t["id"] == id)
            .map(|t| t["wait"].clone())
            .unwrap()
    };
    assert_eq!(wait_of(&cycle[0])["holder"], cycle[1]);
    assert_eq!(wait_of(&cycle[1])["holder"], cycle[0]);
    assert_eq!(wait_of(&cycle[0])["kind"], "mutex");
    let main = threads
        .iter()
        .find(|t| t["wait"]["kind"] == "join")
        .expect("main joins a worker");
    assert!(cycle.contains(&main["wait"]["holder"]), "{main:#}");

    assert_eq!(analyze(&["--fail-on", "any"]).status.code(), Some(1));
    assert_eq!(analyze(&["--fail-on", "known"]).status.code(), Some(0));
    let junit = analyze(&["--format", "junit"]);
    let xml = String::from_utf8_lossy(&junit.stdout);
    assert!(xml.contains("failures=\"1\""), "{xml}");
    assert!(xml.contains("hang-during-work"), "{xml}");
    let markdown = analyze(&["--format", "markdown"]);
    let md = String::from_utf8_lossy(&markdown.stdout);
    assert!(md.contains("hang-during-work"), "{md}");
    let text = analyze(&[]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Captured:  taken by `dumptriage run`: still running after"),
        "{text}"
    );
}

/// `attach --tree` on a wrapper (`sh -c`): the shell and the hung program
/// below it are dumped, and both keep running; `attach NAME` finds the
/// one process of that name, and several of the same name are an error
/// that lists them.
#[test]
fn attach_finds_processes_by_name_and_dumps_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    // A program of a name no other process has.
    let name = format!("dt_hang_{}", std::process::id());
    let program = dir.path().join(&name);
    std::fs::copy(programs().join("hip_exit_hang"), &program).unwrap();
    for lib in ["libamdhip64.so", "libpal.so"] {
        std::fs::copy(programs().join(lib), dir.path().join(lib)).unwrap();
    }
    let mut shell = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("'{}'; echo done", program.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The program has reached its hang when every thread of it sleeps.
    let hung = common::HANG_GUARD;
    let started = Instant::now();
    let program_pid = loop {
        let children = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", shell.id()))
            .unwrap_or_default();
        if let Some(pid) = children.split_whitespace().next() {
            break pid.parse::<u32>().unwrap();
        }
        assert!(
            started.elapsed() < hung,
            "the shell never started the program"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    common::wait_until_asleep(program_pid, 0);
    let dumps = dir.path().join("dumps");
    let out = Capture::attach(shell.id())
        .option("--tree")
        .json()
        .dump_dir(&dumps)
        .output();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reports = doc["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 2, "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        reports[1]["diagnoses"][0]["signature"], "hip-unregister-fatbinary-hang",
        "{:#}",
        reports[1]["diagnoses"]
    );
    let by_name = Capture::attach(&name).json().dump_dir(&dumps).output();
    let doc: Value = serde_json::from_slice(&by_name.stdout).unwrap();
    assert_eq!(
        doc["reports"][0]["diagnoses"][0]["signature"],
        "hip-unregister-fatbinary-hang",
        "{}",
        String::from_utf8_lossy(&by_name.stderr)
    );
    // Both are still running (the shell, whose command line names the
    // program too, and the program): attach kills nothing.
    let alive = running(&program.display().to_string());
    assert!(alive.contains(&shell.id()), "{alive:?}");
    assert_eq!(alive.len(), 2, "{alive:?}");
    let missing = Capture::attach("no_such_process_name_xyz").output();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no process named"));
    let _ = shell.kill();
    let _ = shell.wait();
    for pid in running(&program.display().to_string()) {
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
}

/// An exit handler waits for a mutex a worker holds (issue 28, done when):
/// the exiting thread's wait names the holder.
#[test]
fn the_exit_hang_names_the_mutex_holder() {
    let (_dir, dump) = hang_dump("exit_lock_hang");
    let report = report_of(&dump);
    let report = &report;
    assert_eq!(
        report["diagnoses"][0]["signature"], "hang-during-exit",
        "{:#}",
        report["diagnoses"]
    );
    let threads = report["threads"].as_array().unwrap();
    let exiting = threads.iter().find(|t| !t["exiting"].is_null()).unwrap();
    let holder = &exiting["wait"]["holder"];
    assert_eq!(exiting["wait"]["kind"], "mutex", "{exiting:#}");
    let writer = threads
        .iter()
        .find(|t| &t["id"] == holder)
        .expect("the holder is a thread of the dump");
    assert!(
        writer["frames"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["function"] == "writer"),
        "{writer:#}"
    );
    let evidence = report["diagnoses"][0]["evidence"].to_string();
    assert!(
        evidence.contains(&format!("held by thread {holder}")),
        "{evidence}"
    );
    // What the capture kept for it is said, and bounded.
    let kept = &report["capture"]["kept"];
    assert!(kept["ranges"].as_u64().unwrap() >= 1, "{kept}");
    assert!(
        kept["bytes"].as_u64().unwrap() <= 256 * 48 + (8 << 20),
        "{kept}"
    );
}

/// A crash of a process the command started (issue 30, part 1): behind a
/// wrapper that ignores it, the grandchild's crash at exit still gets its
/// diagnosis, from the core file the kernel wrote, which `run` moves into
/// the dump folder; the wrapper's own status is kept, and the command
/// itself leaves no core (its crashes are dumped by the tracer).
#[test]
fn a_descendants_crash_is_diagnosed_from_its_core() {
    let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap_or_default();
    if pattern.starts_with('|') {
        common::skip::skip(
            "run_tree::descendant_core",
            "kernel.core_pattern pipes cores to a program: run cannot collect them",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let program = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-dumps/linux/bin/tls_exit_crash");
    let report = dir.path().join("report.json");
    let out = Capture::shell(&format!("'{}'; echo wrapper goes on", program.display()))
        .json()
        .report_to(&report)
        .dump_dir("dumps")
        .command()
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("wrapper goes on"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "(started by the command) crashed with SIGSEGV; core file: dumps/tls_exit_crash_"
        ),
        "{stderr}"
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let report = &doc["reports"][0];
    assert_eq!(
        report["diagnoses"][0]["signature"], "tls-destructor-crash-at-exit",
        "{:#}",
        report["diagnoses"]
    );
    assert_eq!(report["source"]["kind"], "core");
    assert_eq!(report["capture"]["reason"], "descendant-core");
    assert!(report["capture"]["root_pid"].is_u64());
    let kept: Vec<String> = std::fs::read_dir(dir.path().join("dumps"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].ends_with(".core"), "{kept:?}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with("core"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // The command's own crash: a minidump, and no core beside it.
    let out = Capture::run(&program)
        .quiet()
        .dump_dir("own")
        .command()
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    // `run` dies of the command's own signal.
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(11));
    assert_eq!(dumps_in(&dir.path().join("own")).len(), 1);
    let cores: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with("core"))
        .collect();
    assert!(cores.is_empty(), "{cores:?}");
}

/// The holder is found for every glibc mutex type (a recursive one held
/// twice, a robust one), and a semaphore is said to have no owner.
#[test]
fn mutex_types_name_their_holder_and_a_semaphore_has_none() {
    for mode in ["recursive", "robust", "semaphore"] {
        let (_dir, dump) = hang_dump_with("exit_lock_hang", &[mode]);
        let report = report_of(&dump);
        let threads = report["threads"].as_array().unwrap();
        let exiting = threads.iter().find(|t| !t["exiting"].is_null()).unwrap();
        let wait = &exiting["wait"];
        if mode == "semaphore" {
            assert_eq!(wait["kind"], "semaphore", "{exiting:#}");
            assert!(wait["holder"].is_null());
            assert!(
                wait["note"].as_str().unwrap().contains("no owner"),
                "{wait}"
            );
            continue;
        }
        assert_eq!(wait["kind"], "mutex", "{mode}: {exiting:#}");
        let writer = threads
            .iter()
            .find(|t| t["id"] == wait["holder"])
            .unwrap_or_else(|| panic!("{mode}: the holder is a thread of the dump: {wait}"));
        assert!(
            writer["frames"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["function"] == "writer"),
            "{mode}: {writer:#}"
        );
    }
}

/// A lock-order deadlock at exit (issue 28, done when): the exit handler
/// and a worker each hold the mutex the other waits for; the report names
/// the cycle of both threads, each wait held by the other.
#[test]
fn a_lock_order_deadlock_at_exit_is_a_cycle_of_both_threads() {
    let (_dir, dump) = hang_dump("exit_deadlock");
    let report = report_of(&dump);
    assert_eq!(report["exit_phase"]["process_exiting"], true);
    let cycle: Vec<u64> = report["exit_phase"]["deadlock"]
        .as_array()
        .expect("a deadlock")
        .iter()
        .map(|id| id.as_u64().unwrap())
        .collect();
    let threads = report["threads"].as_array().unwrap();
    assert_eq!(cycle.len(), 2, "{cycle:?}");
    assert_eq!(threads.len(), 2);
    for (i, id) in cycle.iter().enumerate() {
        let thread = threads.iter().find(|t| t["id"] == *id).unwrap();
        assert_eq!(thread["wait"]["kind"], "mutex", "{thread:#}");
        assert_eq!(thread["wait"]["holder"], cycle[(i + 1) % 2], "{thread:#}");
    }
    let diagnoses: Vec<&str> = report["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["signature"].as_str().unwrap())
        .collect();
    assert!(diagnoses.contains(&"deadlock"), "{diagnoses:?}");
    assert!(diagnoses.contains(&"hang-during-exit"), "{diagnoses:?}");
    // The exiting thread's holder (the worker) comes right after it.
    assert!(!threads[0]["exiting"].is_null());
    assert_eq!(threads[1]["id"], threads[0]["wait"]["holder"]);
}
