//! `dumptriage attach` and `dumptriage run` on real processes: the C
//! programs of tests/programs/, built with gcc by the test (issue 6).
#![cfg(target_os = "linux")]

use crate::common;
use crate::common::programs;

// No `--symbols` anywhere: captured dumps must be symbolized out of the box
// from the binaries (built with -g) and whatever this machine has for libc.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::capture::Capture;
use common::{bin, dumps_in};
use programs::programs;
use serde_json::Value;

/// The command's pid, as `run` names it when it reports a hang.
fn out_pid(stderr: &str) -> String {
    stderr
        .split("dumptriage: process ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or("?")
        .to_string()
}

/// An environment variable every test program gets, which no dump may keep.
const SECRET_NAME: &str = "DUMPTRIAGE_TEST_TOKEN";
const SECRET_VALUE: &str = "s3cr3t-7f0c1d2e";

fn assert_no_secret(dump: &Path) {
    let bytes = std::fs::read(dump).unwrap();
    let found = |needle: &str| bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
    assert!(
        !found(SECRET_VALUE),
        "{} keeps the environment",
        dump.display()
    );
}

/// A process started by a test, killed and reaped when the test ends.
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Running {
    /// Starts `program` with its stderr read line by line.
    fn start(program: &str, args: &[&str]) -> Running {
        let mut child = Command::new(programs().join(program))
            .args(args)
            .env(SECRET_NAME, SECRET_VALUE)
            .current_dir(programs())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        Running { child, lines }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the line a program prints when it reaches the state under
    /// test, then for all its threads to be asleep in it.
    fn wait_for(&self, needle: &str) {
        let deadline = Instant::now() + common::HANG_GUARD;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => break,
                Ok(_) => {}
                Err(e) => panic!("no `{needle}` from the program: {e}"),
            }
        }
        while !all_threads_sleeping(self.pid()) {
            assert!(Instant::now() < deadline, "threads never went to sleep");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn proc_status(pid: u32, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .map(|v| v.trim().to_string())
}

fn all_threads_sleeping(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    let states: Vec<String> = tasks
        .filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("stat")).ok())
        .filter_map(|stat| Some(stat.rsplit_once(") ")?.1.chars().next()?.to_string()))
        .collect();
    states.len() >= 2 && states.iter().all(|s| s == "S")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn thread(report: &Value, id: u64) -> &Value {
    report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no thread {id} in {report:#}"))
}

/// `PROCESSNAME_PID_YYMMDD_HHMMSS.dmp`
fn assert_procdump_name(path: &Path, process: &str, pid: u32) {
    let name = path.file_name().unwrap().to_string_lossy();
    let rest = name
        .strip_prefix(&format!("{process}_{pid}_"))
        .and_then(|r| r.strip_suffix(".dmp"))
        .unwrap_or_else(|| panic!("unexpected dump name {name}"));
    let (date, time) = rest.split_once('_').unwrap();
    assert!(
        date.len() == 6 && time.len() == 6,
        "unexpected dump name {name}"
    );
    assert!(date.chars().chain(time.chars()).all(|c| c.is_ascii_digit()));
}

/// The HIP exit hang: attach writes a dump that is diagnosed, and the
/// process is left running, untraced, exactly as before.
#[test]
fn attach_diagnoses_the_hip_exit_hang_and_leaves_the_process_running() {
    let dir = tempfile::tempdir().unwrap();
    let hung = Running::start("hip_exit_hang", &[]);
    hung.wait_for("hanging in exit");
    let pid = hung.pid();
    let report_file = dir.path().join("report.json");

    let out = Capture::attach(pid)
        .json()
        .dump_dir(dir.path())
        .report_to(&report_file)
        .output();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Still running, not stopped, not traced.
    assert_eq!(proc_status(pid, "TracerPid").as_deref(), Some("0"));
    let state = proc_status(pid, "State").unwrap();
    assert!(state.starts_with('S'), "state after attach: {state}");
    assert!(hung.lines.try_recv().is_err(), "the program printed again");

    let dumps = dumps_in(dir.path());
    assert_eq!(dumps.len(), 1, "{dumps:?}");
    assert_procdump_name(&dumps[0], "hip_exit_hang", pid);
    assert_no_secret(&dumps[0]);

    let doc = read_json(&report_file);
    let report = &doc["reports"][0];
    assert_eq!(report["status"], "ok");
    assert_eq!(report["process"]["pid"], pid);
    assert_eq!(report["threads"].as_array().unwrap().len(), 2);
    // What native symbolization needs: module paths and build ids.
    let modules = report["modules"].as_array().unwrap();
    for name in ["hip_exit_hang", "libamdhip64.so", "libpal.so"] {
        let module = modules
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in the module list"));
        assert_eq!(module["path"], programs().join(name).display().to_string());
        assert!(module["code_id"].as_str().is_some_and(|id| id.len() == 40));
    }
    // The diagnosis, on the main thread blocked in the atexit handler.
    assert_eq!(
        report["diagnoses"][0]["signature"], "hip-unregister-fatbinary-hang",
        "{:#}",
        report["diagnoses"]
    );
    assert_eq!(report["exit_phase"]["blamed_thread"], pid);
    assert_eq!(report["exception"]["thread_id"], pid);
    let main = common::function_names(thread(report, u64::from(pid)));
    assert!(main.iter().any(|f| f == "SyncAllStreams"), "{main:?}");
    let pal = report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] != pid)
        .unwrap();
    assert!(common::function_names(pal)
        .iter()
        .any(|f| f == "PalFenceWait"));
}

/// When exit runs on a thread other than the main one, the dump is made to
/// name that thread: analysing the file again blames the same thread.
#[test]
fn attach_records_the_blamed_thread_in_the_dump() {
    let dir = tempfile::tempdir().unwrap();
    let hung = Running::start("hip_exit_hang", &["exit-from-thread"]);
    hung.wait_for("hanging in exit");
    let pid = hung.pid();

    let out = Capture::attach(pid).json().dump_dir(dir.path()).output();
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let report = &doc["reports"][0];
    let blamed = report["exit_phase"]["blamed_thread"].as_u64().unwrap();
    assert_ne!(blamed, u64::from(pid), "exit runs on a worker thread");
    assert!(common::function_names(thread(report, blamed))
        .iter()
        .any(|f| f == "__hipUnregisterFatBinary"));
    assert_eq!(report["exception"]["thread_id"], blamed);
    assert_eq!(report["exception"]["code"], "0xffffffff");
    assert_eq!(
        report["diagnoses"][0]["signature"],
        "hip-unregister-fatbinary-hang"
    );

    // The file itself names the blamed thread, with its own context.
    let dump = &dumps_in(dir.path())[0];
    let again = bin()
        .args(["analyze", "--format", "json"])
        .arg(dump)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&again.stdout).unwrap();
    let exception = &doc["reports"][0]["exception"];
    assert_eq!(exception["thread_id"], blamed);
    let top = &thread(&doc["reports"][0], blamed)["frames"][0]["instruction"];
    assert_eq!(&exception["address"], top);
}

/// `run --hang-timeout`: the hang is captured, diagnosed and reported on
/// stderr, the process is killed, and the status is 124.
#[test]
fn run_captures_a_hang_at_the_timeout_and_kills_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let report_file = dir.path().join("report.json");
    let out = Capture::run(programs().join("hip_exit_hang"))
        .hang_timeout(2)
        .json()
        .dump_dir(dir.path())
        .report_to(&report_file)
        .command()
        .env(SECRET_NAME, SECRET_VALUE)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(124), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "work done\n");
    assert!(
        stderr.contains("hip_exit_hang: hanging in exit"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "still running after 2.0 s (hang timeout); ended it and every process it started"
        ) && stderr.contains(&format!(
            "process {} (the command): minidump ",
            out_pid(&stderr)
        )),
        "{stderr}"
    );

    let report = &read_json(&report_file)["reports"][0];
    // The dump was taken at the timeout, not before (the report's own
    // measure: the test's clock would measure the machine's load too).
    assert!(
        report["capture"]["after_seconds"].as_f64().unwrap() >= 2.0,
        "{:#}",
        report["capture"]
    );
    let pid = report["process"]["pid"].as_u64().unwrap() as u32;
    assert_procdump_name(&dumps_in(dir.path())[0], "hip_exit_hang", pid);
    assert_no_secret(&dumps_in(dir.path())[0]);
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the hung process was killed and reaped"
    );
    assert_eq!(
        report["diagnoses"][0]["signature"],
        "hip-unregister-fatbinary-hang"
    );
}

/// `run --no-kill`: the hung command is left running, untraced.
#[test]
fn run_no_kill_leaves_the_hung_command_running() {
    let dir = tempfile::tempdir().unwrap();
    let report_file = dir.path().join("report.json");
    // Null streams: the command left running keeps its copies of them, so a
    // pipe would never reach end-of-file.
    let status = Capture::run(programs().join("hip_exit_hang"))
        .hang_timeout(1)
        .option("--no-kill")
        .json()
        .dump_dir(dir.path())
        .report_to(&report_file)
        .command()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(124));
    let pid = read_json(&report_file)["reports"][0]["process"]["pid"]
        .as_u64()
        .unwrap() as u32;
    let alive = proc_status(pid, "State");
    let tracer = proc_status(pid, "TracerPid");
    // SAFETY: kill has no memory effects.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert!(alive.is_some_and(|s| s.starts_with('S')));
    assert_eq!(tracer.as_deref(), Some("0"));
}

/// A crash at exit in an unloaded library: the dump is taken at the crash,
/// with its exception record, and `run` dies of the same signal.
#[test]
fn run_captures_a_crash_at_exit_and_dies_of_the_same_signal() {
    let dir = tempfile::tempdir().unwrap();
    let report_file = dir.path().join("report.json");
    let out = Capture::run(programs().join("unload_crash"))
        .args([programs().join("libplugin.so")])
        .json()
        .dump_dir(dir.path())
        .report_to(&report_file)
        .command()
        .env(SECRET_NAME, SECRET_VALUE)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), Some(libc::SIGSEGV), "{stderr}");
    // Exactly what the program does on its own: with stdout a pipe, "work
    // done" is still in the stdio buffer when the atexit handler crashes.
    let alone = Command::new(programs().join("unload_crash"))
        .arg(programs().join("libplugin.so"))
        .output()
        .unwrap();
    assert_eq!(alone.status.signal(), Some(libc::SIGSEGV));
    assert_eq!(out.stdout, alone.stdout);
    assert!(stderr.starts_with(&*String::from_utf8_lossy(&alone.stderr)));
    assert!(
        stderr.contains("crashed with SIGSEGV; minidump: "),
        "{stderr}"
    );

    let report = &read_json(&report_file)["reports"][0];
    let pid = report["process"]["pid"].as_u64().unwrap();
    assert_procdump_name(&dumps_in(dir.path())[0], "unload_crash", pid as u32);
    assert_no_secret(&dumps_in(dir.path())[0]);
    let exception = &report["exception"];
    assert_eq!(exception["code"], "0xb");
    assert_eq!(exception["name"], "SIGSEGV / SEGV_MAPERR");
    assert_eq!(exception["thread_id"], pid);
    assert_eq!(exception["crash"], true);
    // The faulting instruction is the call target, in no loaded module:
    // the plugin was unloaded.
    let crashing = thread(report, pid);
    assert_eq!(crashing["frames"][0]["instruction"], exception["address"]);
    assert!(crashing["frames"][0]["module"].is_null());
    assert!(report["modules"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["name"] != "libplugin.so"));
    let names = common::function_names(crashing);
    assert!(names.iter().any(|f| f == "run_release_hook"), "{names:?}");
    // A crash at exit. (A Linux dump has no unloaded-module list, so the
    // unloaded plugin can only be inferred from the address.)
    let diagnoses = report["diagnoses"].as_array().unwrap();
    assert_eq!(diagnoses[0]["kind"], "crash", "{diagnoses:#?}");
    assert!(
        diagnoses.iter().any(|d| {
            ["crash-in-unloaded-module", "crash-during-exit"]
                .contains(&d["signature"].as_str().unwrap_or(""))
        }),
        "{diagnoses:#?}"
    );
}

/// The symbols a test passes so libc's internal start-up function is named
/// (Breakpad symbols of this machine's libc, committed with the Linux
/// samples; with another libc build the machine's own debug files are used).
fn libc_symbols() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps/linux/symbols")
}

/// Whether a thread's frames hold `__libc_start_call_main`, the start-up
/// frame the "main has returned" inference keys on: without it a test of
/// that inference would prove nothing.
fn has_libc_start(thread: &Value) -> bool {
    common::function_names(thread)
        .iter()
        .any(|f| f == "__libc_start_call_main")
}

/// `attach PID --format json` with this machine's libc symbols; the report
/// document, after checking the attach succeeded.
fn attach_json(pid: u32) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let out = Capture::attach(pid)
        .json()
        .dump_dir(dir.path())
        .symbols(libc_symbols())
        .output();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Issue 10, "a stripped main is not 'main has returned'": a live program
/// without symbols, waiting in main, is not exiting. The unnamed frame of
/// the executable above `__libc_start_call_main` is main itself.
#[test]
fn attach_to_a_stripped_program_waiting_in_main_finds_no_exit() {
    let waiting = Running::start("stripped_main", &[]);
    waiting.wait_for("waiting in main");
    let pid = waiting.pid();
    let doc = attach_json(pid);
    let report = &doc["reports"][0];
    let main = thread(report, u64::from(pid));
    assert!(has_libc_start(main), "{:#}", main["frames"]);
    // main itself has no name: the executable is stripped.
    let unnamed_main = main["frames"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["module"] == "stripped_main" && f["function"].is_null());
    assert!(unnamed_main, "{:#}", main["frames"]);
    assert_eq!(
        report["diagnoses"],
        serde_json::json!([]),
        "{:#}",
        report["diagnoses"]
    );
    assert_eq!(report["exit_phase"]["process_exiting"], false);
    for t in report["threads"].as_array().unwrap() {
        assert!(t["exiting"].is_null(), "{t:#}");
    }
}

/// Issue 10's false-positive corpus: a healthy GPU service captured by
/// `attach`, whose PAL queue thread waits on a fence and whose HIP runtime
/// has its teardown handler registered, gets no diagnosis and no exit.
#[test]
fn attach_to_a_healthy_gpu_daemon_finds_nothing_wrong() {
    let daemon = Running::start("healthy_gpu_daemon", &[]);
    daemon.wait_for("healthy_gpu_daemon: serving");
    let doc = attach_json(daemon.pid());
    let report = &doc["reports"][0];
    // The threads the GPU hang signatures look at are there ...
    let all: Vec<String> = report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(common::function_names)
        .collect();
    for wanted in ["PalFenceWait", "serve_requests", "request_worker"] {
        assert!(all.iter().any(|f| f == wanted), "{wanted} not in {all:?}");
    }
    // ... and nothing is diagnosed.
    assert_eq!(
        report["diagnoses"],
        serde_json::json!([]),
        "{:#}",
        report["diagnoses"]
    );
    assert_eq!(report["exit_phase"]["process_exiting"], false);
    assert!(report["exit_phase"]["blamed_thread"].is_null());
}

/// The same program crashing in main: a crash, but not during exit.
#[test]
fn a_stripped_program_crashing_in_main_is_not_an_exit_time_crash() {
    let dir = tempfile::tempdir().unwrap();
    let report_file = dir.path().join("report.json");
    let out = Capture::run(programs().join("stripped_main"))
        .args(["crash"])
        .json()
        .dump_dir(dir.path())
        .symbols(libc_symbols())
        .report_to(&report_file)
        .output();
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGSEGV),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = &read_json(&report_file)["reports"][0];
    let pid = report["process"]["pid"].as_u64().unwrap();
    let crashing = thread(report, pid);
    assert!(has_libc_start(crashing), "{:#}", crashing["frames"]);
    assert_eq!(report["exception"]["crash"], true);
    assert_eq!(
        report["diagnoses"],
        serde_json::json!([]),
        "{:#}",
        report["diagnoses"]
    );
    assert_eq!(report["exit_phase"]["process_exiting"], false);
}

/// Wrapping never changes a program that ends by itself: same exit status,
/// same output, stdin passed through, and no dump.
#[test]
fn run_leaves_a_program_that_exits_by_itself_alone() {
    for code in [0, 3] {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Capture::run(programs().join("exit_status"))
            .args([code.to_string()])
            .hang_timeout(30)
            .dump_dir(dir.path())
            .command()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"hello\nworld\n")
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(code));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "hello\nworld\n");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("exit_status: exiting with {code}\n")
        );
        assert!(dumps_in(dir.path()).is_empty());
    }
}

/// Real-time signals (glibc itself uses 32 and 33) are passed on like any
/// other: the command handles them and exits, nothing stays stopped.
/// Regression test for issue 14: nix's waitpid cannot decode a stop by a
/// real-time signal, so the tracer keeps its raw waitpid.
#[test]
fn run_passes_real_time_signals_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Capture::run(programs().join("rt_signals"))
        .hang_timeout(30)
        .dump_dir(dir.path())
        .command()
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + common::HANG_GUARD;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the command never ended: a real-time signal left it stopped");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        status.code(),
        Some(7),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("received real-time signals"));
    assert!(dumps_in(dir.path()).is_empty());
}

/// A command killed by a signal: `run` ends the same way, and a SIGTERM
/// sent to the wrapper alone reaches the command.
#[test]
fn run_forwards_sigterm_and_dies_of_it_like_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let mut wrapper = Capture::run("sleep")
        .args(["30"])
        .dump_dir(dir.path())
        .command()
        .spawn()
        .unwrap();
    let wrapper_pid = wrapper.id();
    let deadline = Instant::now() + common::HANG_GUARD;
    let sleeper = loop {
        let children =
            std::fs::read_to_string(format!("/proc/{wrapper_pid}/task/{wrapper_pid}/children"))
                .unwrap_or_default();
        if let Some(pid) = children.split_whitespace().next() {
            let pid: u32 = pid.parse().unwrap();
            if std::fs::read_link(format!("/proc/{pid}/exe"))
                .is_ok_and(|exe| exe.ends_with("sleep"))
            {
                break pid;
            }
        }
        assert!(Instant::now() < deadline, "sleep never started");
        std::thread::sleep(Duration::from_millis(10));
    };
    // SAFETY: kill has no memory effects.
    unsafe { libc::kill(wrapper_pid as i32, libc::SIGTERM) };
    let status = wrapper.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM));
    assert!(!Path::new(&format!("/proc/{sleeper}")).exists());
    assert!(dumps_in(dir.path()).is_empty());
}

#[test]
fn run_reports_a_missing_command_like_a_shell() {
    let out = Capture::run("/nonexistent/program").output();
    assert_eq!(out.status.code(), Some(127));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("dumptriage: error: cannot start /nonexistent/program: "),
        "{stderr}"
    );
}

fn attach_error(pid: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = Capture::attach(pid).dump_dir(dir.path()).output();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(dumps_in(dir.path()).is_empty(), "no dump is left behind");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn attach_to_a_missing_process_is_a_clear_error() {
    let pid_max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let missing = (pid_max + 1).to_string();
    assert_eq!(
        attach_error(&missing),
        format!("dumptriage: error: no process with PID {missing}\n")
    );
}

#[test]
fn attach_to_itself_is_a_clear_error() {
    // `exec` keeps the shell's PID, so $$ is dumptriage's own.
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec {} attach $$ --dump-dir {}",
            env!("CARGO_BIN_EXE_dumptriage"),
            dir.path().display()
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is dumptriage itself: a process cannot dump itself"),
        "{stderr}"
    );
    assert!(dumps_in(dir.path()).is_empty());
}

#[test]
fn attach_to_a_traced_process_names_the_tracer() {
    let target = Running::start("hip_exit_hang", &[]);
    target.wait_for("hanging in exit");
    let pid = target.pid() as i32;
    // The test thread becomes the tracer (it stays attached until the
    // thread ends or the process is killed).
    // SAFETY: PTRACE_SEIZE takes no pointers.
    let seized = unsafe { libc::ptrace(libc::PTRACE_SEIZE, pid, 0usize, 0usize) };
    assert_eq!(seized, 0, "{}", std::io::Error::last_os_error());
    let stderr = attach_error(&pid.to_string());
    assert!(
        stderr.contains(&format!(
            "process {pid} is already being traced by process {}",
            std::process::id()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("detach that debugger first"), "{stderr}");
}

#[test]
fn run_help_documents_its_exit_status() {
    let out = bin().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("124  the command was still running"),
        "{help}"
    );
    assert!(help.contains("death by the same signal"), "{help}");
}

/// Issue 11: `--dump-dir` may name a folder that does not exist yet, two
/// levels deep: attach and run create it and write the dump there.
#[test]
fn attach_and_run_create_a_missing_nested_dump_dir() {
    let dir = tempfile::tempdir().unwrap();
    let hung = Running::start("hip_exit_hang", &[]);
    hung.wait_for("hanging in exit");
    let attach_dir = dir.path().join("attach/nested/dumps");
    let out = Capture::attach(hung.pid())
        .quiet()
        .dump_dir(&attach_dir)
        .json()
        .output();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = dumps_in(&attach_dir);
    assert_eq!(written.len(), 1, "{written:?}");
    assert_procdump_name(&written[0], "hip_exit_hang", hung.pid());

    let run_dir = dir.path().join("run/nested/dumps");
    let out = Capture::run(programs().join("hip_exit_hang"))
        .hang_timeout(1)
        .quiet()
        .dump_dir(&run_dir)
        .json()
        .report_to(&dir.path().join("report.json"))
        .output();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(124), "{stderr}");
    assert_eq!(dumps_in(&run_dir).len(), 1, "{stderr}");
    let report = &read_json(&dir.path().join("report.json"))["reports"][0];
    assert_eq!(report["status"], "ok");
}

/// Issue 11: a dump folder that cannot be created is one clear line, before
/// the command starts (run) or the process is stopped (attach).
#[test]
fn an_unusable_dump_dir_is_an_error_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"").unwrap();
    let bad = file.join("dumps");
    let expected = format!(
        "dumptriage: error: cannot use {} as the dump folder: cannot create it: ",
        bad.display()
    );

    let marker = dir.path().join("the-command-ran");
    let out = Capture::run("touch")
        .args([&marker])
        .hang_timeout(30)
        .dump_dir(&bad)
        .output();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with(&expected), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!marker.exists(), "the command must not start");

    let hung = Running::start("hip_exit_hang", &[]);
    hung.wait_for("hanging in exit");
    let pid = hung.pid();
    let out = Capture::attach(pid).dump_dir(&bad).output();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with(&expected), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // Left as it was: neither traced nor stopped.
    assert_eq!(proc_status(pid, "TracerPid").as_deref(), Some("0"));
    assert!(proc_status(pid, "State").unwrap().starts_with('S'));
}

/// The stop limit the tests of a thread that cannot stop use, in ms.
const SHORT_STOP_LIMIT: &str = "300";

/// Starts `vfork_stuck SECONDS [crash]` and waits until its second thread is
/// in uninterruptible sleep.
fn start_stuck(seconds: u32) -> (Running, u32) {
    let running = Running::start("vfork_stuck", &[&seconds.to_string()]);
    let deadline = Instant::now() + common::HANG_GUARD;
    loop {
        if let Some(stuck) = thread_in_state(running.pid(), 'D') {
            return (running, stuck);
        }
        assert!(
            Instant::now() < deadline,
            "no thread ever went into D state"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn thread_in_state(pid: u32, wanted: char) -> Option<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    tasks.filter_map(Result::ok).find_map(|task| {
        let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
        let state = stat.rsplit_once(") ")?.1.chars().next()?;
        (state == wanted).then(|| task.file_name().to_str()?.parse().ok())?
    })
}

/// Every thread of `pid`: not traced, not stopped. A process that has
/// already ended was let go (a stopped or traced one cannot end).
fn assert_let_go(pid: u32) {
    let tasks = match std::fs::read_dir(format!("/proc/{pid}/task")) {
        Ok(tasks) => tasks,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => panic!("/proc/{pid}/task: {e}"),
    };
    let tasks: Vec<_> = tasks.filter_map(Result::ok).collect();
    assert!(!tasks.is_empty());
    for task in tasks {
        let status = match std::fs::read_to_string(task.path().join("status")) {
            Ok(status) => status,
            // The thread ended meanwhile.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => panic!("{}: {e}", task.path().display()),
        };
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.trim().to_string())
                .unwrap_or_default()
        };
        assert_eq!(field("TracerPid:"), "0", "{status}");
        let state = field("State:");
        assert!(!state.starts_with(['t', 'T']), "{state}");
    }
}

/// The live (not zombie) processes of `vfork_stuck ARGS`: each test passes
/// its own sleep, so the command line is its own.
fn vfork_stuck_processes(args: &[&str]) -> Vec<i32> {
    let mut wanted = programs().join("vfork_stuck").into_os_string().into_vec();
    for arg in args {
        wanted.push(0);
        wanted.extend_from_slice(arg.as_bytes());
    }
    wanted.push(0);
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == wanted)
                && thread_in_state(*pid as u32, 'Z').is_none()
        })
        .collect()
}

/// The vfork child of `vfork_stuck ARGS` is still alive: whoever returned
/// before it did not wait for it. It is ended here.
fn assert_vfork_child_outlived_us(args: &[&str], stderr: &str) {
    let children = vfork_stuck_processes(args);
    for pid in &children {
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    assert_eq!(
        children.len(),
        1,
        "vfork_stuck {args:?}: {children:?} {stderr}"
    );
}

fn stderr_file(dir: &Path) -> (std::fs::File, PathBuf) {
    let path = dir.join("stderr.txt");
    (std::fs::File::create(&path).unwrap(), path)
}

/// Issue 13: attach to a process one of whose threads cannot stop (it is in
/// uninterruptible sleep) gives up at the stop limit with a clear message,
/// writes no dump, and leaves no thread stopped or traced. Before, attach
/// waited, stopped, until the thread woke.
#[test]
fn attach_gives_up_on_a_thread_that_cannot_stop_and_lets_everything_go() {
    let dir = tempfile::tempdir().unwrap();
    let (running, stuck) = start_stuck(60);
    let pid = running.pid();
    let out = Capture::attach(pid)
        .dump_dir(dir.path())
        .command()
        .env("DUMPTRIAGE_STOP_LIMIT_MS", SHORT_STOP_LIMIT)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    // It gave up rather than waited: the thread is still stuck (its vfork
    // child sleeps for a minute).
    assert_eq!(thread_in_state(pid, 'D'), Some(stuck), "{stderr}");
    // One line naming the thread, its state and (where the kernel shows
    // it) the kernel function it waits in.
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "dumptriage: error: process {pid} could not be stopped for the dump: thread \
             {stuck} (state D"
        )),
        "{stderr}"
    );
    assert!(
        stderr.ends_with(
            " did not stop within 0.3 s (uninterruptible sleep: inside a driver call, or a \
             vfork); no dump was written, and no thread was left stopped or traced\n"
        ),
        "{stderr}"
    );
    assert!(dumps_in(dir.path()).is_empty());
    assert_let_go(pid);
}

/// `run` at the hang timeout with a thread that cannot stop: no dump, the
/// command is killed as usual (status 124), and nothing waits for ever.
#[test]
fn run_gives_up_on_a_thread_that_cannot_stop_and_kills_the_hung_command() {
    let dir = tempfile::tempdir().unwrap();
    let (err, err_path) = stderr_file(dir.path());
    // The vfork child lives on for 61 s with our stderr: a file, not a pipe.
    let status = Capture::run(programs().join("vfork_stuck"))
        .args(["61"])
        .hang_timeout(1)
        .dump_dir(dir.path())
        .command()
        .env("DUMPTRIAGE_STOP_LIMIT_MS", SHORT_STOP_LIMIT)
        .stdout(Stdio::null())
        .stderr(err)
        .status()
        .unwrap();
    let stderr = std::fs::read_to_string(&err_path).unwrap();
    assert_eq!(status.code(), Some(124), "{stderr}");
    // Nothing waited for the stuck thread: it was ended while its vfork
    // child still slept (it says when the child has ended), and so was
    // the child.
    assert!(!stderr.contains("vfork_stuck: child ended"), "{stderr}");
    assert!(vfork_stuck_processes(&["61"]).is_empty(), "{stderr}");
    assert!(
        stderr.contains("(the command): no minidump: process "),
        "{stderr}"
    );
    assert!(stderr.contains("did not stop within 0.3 s"), "{stderr}");
    let pid: u32 = stderr
        .split("dumptriage: process ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {stderr}"));
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "killed and reaped"
    );
    assert!(dumps_in(dir.path()).is_empty());
}

/// `run --no-kill` with a thread that cannot stop: the command is let go
/// thread by thread, the stuck one as soon as it wakes; then no thread is
/// traced or stopped.
#[test]
fn run_no_kill_lets_go_of_a_thread_that_could_not_stop_when_it_wakes() {
    let dir = tempfile::tempdir().unwrap();
    let (err, err_path) = stderr_file(dir.path());
    let status = Capture::run(programs().join("vfork_stuck"))
        .args(["3"])
        .hang_timeout(1)
        .option("--no-kill")
        .dump_dir(dir.path())
        .command()
        .env("DUMPTRIAGE_STOP_LIMIT_MS", SHORT_STOP_LIMIT)
        .stdout(Stdio::null())
        .stderr(err)
        .status()
        .unwrap();
    let stderr = std::fs::read_to_string(&err_path).unwrap();
    assert_eq!(status.code(), Some(124), "{stderr}");
    let pid: u32 = stderr
        .split("dumptriage: process ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {stderr}"));
    let let_go = std::panic::catch_unwind(|| assert_let_go(pid));
    // The thread, let go when it woke, goes on and reports its child's end:
    // possibly a moment after dumptriage itself has exited.
    let deadline = Instant::now() + common::HANG_GUARD;
    let mut stderr = stderr;
    while !stderr.contains("vfork_stuck: child ended") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        stderr = std::fs::read_to_string(&err_path).unwrap();
    }
    // SAFETY: kill has no memory effects.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert!(let_go.is_ok(), "{stderr}");
    assert!(
        stderr.contains("left it running (--no-kill)")
            && stderr.contains("(the command): no minidump: "),
        "{stderr}"
    );
    assert!(stderr.contains("vfork_stuck: child ended"), "{stderr}");
    assert!(dumps_in(dir.path()).is_empty());
}

/// A crash while another thread cannot stop: no dump, and the command dies
/// of its crash exactly as without the wrapper.
#[test]
fn run_lets_a_crash_happen_when_a_thread_cannot_stop() {
    let dir = tempfile::tempdir().unwrap();
    let (err, err_path) = stderr_file(dir.path());
    let status = Capture::run(programs().join("vfork_stuck"))
        .args(["62", "crash"])
        .dump_dir(dir.path())
        .command()
        .env("DUMPTRIAGE_STOP_LIMIT_MS", SHORT_STOP_LIMIT)
        .stdout(Stdio::null())
        .stderr(err)
        .status()
        .unwrap();
    let stderr = std::fs::read_to_string(&err_path).unwrap();
    assert_eq!(status.signal(), Some(libc::SIGSEGV), "{stderr}");
    // Nothing waited for the stuck thread: its vfork child still sleeps.
    assert_vfork_child_outlived_us(&["62", "crash"], &stderr);
    assert!(
        stderr.contains("crashed with SIGSEGV; no minidump: process "),
        "{stderr}"
    );
    assert!(stderr.contains("did not stop within 0.3 s"), "{stderr}");
    assert!(dumps_in(dir.path()).is_empty());
}
