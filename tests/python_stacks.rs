//! Python stacks from memory (issue 26), checked against py-spy on the
//! same process at the same moment, for every CPython 3.10 to 3.13 that
//! pyenv has here: tests/programs/python_exit_hang.py hangs at exit with a
//! non-daemon thread in queue.get and daemon threads in time.sleep under
//! deep recursion, a generator, a coroutine and a C function calling back
//! into Python. From gdb's gcore of it, every thread's Python frames
//! (function, file, line) and threading names equal py-spy's; from the
//! dump `run --hang-timeout` writes, the report alone (the interpreter's
//! library deleted before the analysis) names the blocked worker and
//! shows its frames down to the program's own line.
#![cfg(target_os = "linux")]

use crate::common;
use crate::common::capture::{self, Capture};
use crate::common::pyenv;
use pyenv::interpreters;

use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn program() -> PathBuf {
    script("python_exit_hang.py")
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs")
        .join(name)
}

/// Starts the program and waits until every thread is in place.
fn start(python: &Path, env: &[(&str, &Path)]) -> std::process::Child {
    start_script(python, &program(), env)
}

fn start_script(python: &Path, script: &Path, env: &[(&str, &Path)]) -> std::process::Child {
    let mut command = Command::new(python);
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("every thread in place"), "{line}");
    // The spinner of python_gil_spin.py never sleeps.
    let spinning = usize::from(script.ends_with("python_gil_spin.py"));
    common::wait_until_asleep(child.id(), spinning);
    child
}

/// A thread's name and Python frames: (function, file name, line).
type Stack = (Option<String>, Vec<(String, String, u32)>);

fn base(file: &str) -> String {
    file.rsplit('/').next().unwrap_or(file).to_string()
}

/// py-spy's `dump` text, by thread id.
fn py_spy(pid: u32) -> BTreeMap<u64, Stack> {
    let out = Command::new("py-spy")
        .args(["dump", "--pid", &pid.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut threads: BTreeMap<u64, Stack> = BTreeMap::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Thread ") {
            let tid = rest.split_whitespace().next().unwrap().parse().unwrap();
            let name = rest
                .split_once(": \"")
                .map(|(_, n)| n.trim_end_matches('"').to_string());
            threads.insert(tid, (name, Vec::new()));
            current = Some(tid);
        } else if let (Some(tid), Some(frame)) = (current, line.strip_prefix("    ")) {
            let Some((function, place)) = frame.rsplit_once(" (") else {
                continue;
            };
            let place = place.trim_end_matches(')');
            let Some((file, line)) = place.rsplit_once(':') else {
                continue;
            };
            threads.get_mut(&tid).unwrap().1.push((
                function.to_string(),
                base(file),
                line.parse().unwrap(),
            ));
        }
    }
    assert!(
        !threads.is_empty(),
        "py-spy: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    threads
}

fn ours(report: &Value) -> BTreeMap<u64, Stack> {
    report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let frames = t["frames"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["kind"] == "python")
                .map(|f| {
                    (
                        f["function"].as_str().unwrap().to_string(),
                        base(f["file"].as_str().unwrap()),
                        f["line"].as_u64().unwrap_or(0) as u32,
                    )
                })
                .collect();
            (
                t["id"].as_u64().unwrap(),
                (t["name"].as_str().map(str::to_string), frames),
            )
        })
        .collect()
}

fn analyze(path: &Path) -> Value {
    common::analyze_json(&[path]).0["reports"][0].clone()
}

#[test]
fn python_frames_from_a_gcore_equal_py_spys() {
    // Every 3.10 to 3.13 pyenv has is compared; 3.11 is the one a new
    // machine of this kind promises, so it must be there.
    let found = interpreters();
    eprintln!(
        "comparing with py-spy: {:?}",
        found.iter().map(|(v, _)| v.as_str()).collect::<Vec<_>>()
    );
    if !found.iter().any(|(v, _)| v == "3.11") {
        common::skip::skip("python_stacks::versions", "pyenv has no CPython 3.11");
        return;
    }
    if Command::new("py-spy").arg("--version").output().is_err()
        || Command::new("gdb").arg("--version").output().is_err()
    {
        common::skip::skip(
            "python_stacks::py_spy",
            "py-spy or gdb is not installed (scripts/ci-setup-linux.sh installs both)",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (version, python) in &found {
        let mut child = start(python, &[]);
        let spy = py_spy(child.id());
        let core = dir.path().join(format!("python-{version}.core"));
        common::gcore(child.id(), &core);
        let _ = child.kill();
        let _ = child.wait();
        let report = analyze(&core);
        let mine = ours(&report);
        assert_eq!(
            report["diagnoses"][0]["signature"], "python-exit-waits-for-thread",
            "{version}"
        );
        for (tid, (name, frames)) in &spy {
            let Some((my_name, my_frames)) = mine.get(tid) else {
                failures.push(format!("{version}: thread {tid} missing"));
                continue;
            };
            if my_frames != frames {
                failures.push(format!(
                    "{version} thread {tid}:\n  ours   {my_frames:?}\n  py-spy {frames:?}"
                ));
            }
            // The main thread has no threading name in memory we read
            // (py-spy takes it from threading's table).
            if name.as_deref() != Some("MainThread") && my_name != name {
                failures.push(format!(
                    "{version} thread {tid}: name {my_name:?}, py-spy {name:?}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The done-when: `run --hang-timeout` dumps the hung program; the
/// dump alone (the interpreter's library, loaded from a copy, deleted
/// before the analysis) names the blocked worker, shows its Python frames
/// down to the program's line, and the main thread in threading's shutdown.
#[test]
fn a_run_dump_alone_shows_who_blocks_the_exit() {
    let found = interpreters();
    let Some((version, python)) = found.iter().find(|(v, _)| v == "3.11").or(found.first()) else {
        common::skip::skip("python_stacks::run", "pyenv has no CPython 3.10 to 3.13");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("lib");
    std::fs::create_dir(&lib).unwrap();
    let name = format!("libpython{version}.so.1.0");
    std::fs::copy(
        python.parent().unwrap().join("../lib").join(&name),
        lib.join(&name),
    )
    .unwrap();
    let dumps = dir.path().join("dumps");
    let out = Capture::run(python)
        .args([program()])
        .quiet()
        .hang_timeout(3)
        .dump_dir(&dumps)
        .command()
        .env("LD_LIBRARY_PATH", &lib)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(124),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&lib).unwrap();
    let dump = common::dumps_in(&dumps).pop().expect("a dump");
    let report = analyze(&dump);
    assert_eq!(
        report["diagnoses"][0]["signature"],
        "python-exit-waits-for-thread"
    );
    let stacks = ours(&report);
    let (_, drainer) = stacks
        .values()
        .find(|(name, _)| name.as_deref() == Some("drainer"))
        .expect("the blocked worker, by its threading name");
    // Condition.wait, then Queue.get (3.10 names functions, not methods).
    assert!(drainer[1].0.ends_with("get"), "{drainer:?}");
    assert!(
        drainer.contains(&("drain".to_string(), "python_exit_hang.py".to_string(), 19)),
        "{drainer:?}"
    );
    let main = report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| !t["exiting"].is_null())
        .expect("the exiting main thread");
    let shutdown = main["frames"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "python")
        .unwrap();
    assert_eq!(shutdown["function"], "_shutdown", "{main:#}");
    assert!(shutdown["file"].as_str().unwrap().ends_with("threading.py"));
    // The dump is small: the Python memory kept is a few hundred KB.
    assert!(std::fs::metadata(&dump).unwrap().len() < 4 << 20);
}

/// The thread holding the GIL is marked: a thread spinning in Python holds
/// it, the sleeping main thread does not (every version).
#[test]
fn the_gil_holder_is_marked() {
    if Command::new("gdb").arg("--version").output().is_err() {
        common::skip::skip("python_stacks::gil", "gdb is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (version, python) in interpreters() {
        let mut child = start_script(&python, &script("python_gil_spin.py"), &[]);
        let core = dir.path().join(format!("gil-{version}.core"));
        common::gcore(child.id(), &core);
        let _ = child.kill();
        let _ = child.wait();
        let report = analyze(&core);
        let holders: Vec<&str> = report["threads"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["holds_gil"] == true)
            .map(|t| t["name"].as_str().unwrap_or("?"))
            .collect();
        assert_eq!(holders, ["spinner"], "{version}");
    }
}

/// A Python thread crashing under `run` (ctypes reading address 0): the
/// crash dump keeps the interpreter state too, so the crashing thread is
/// named, holds the GIL, and shows the Python line that made the call.
#[test]
fn a_run_crash_dump_shows_the_python_line() {
    let found = interpreters();
    let Some((_, python)) = found.iter().find(|(v, _)| v == "3.11").or(found.first()) else {
        common::skip::skip("python_stacks::crash", "pyenv has no CPython 3.10 to 3.13");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("crash.py");
    std::fs::write(
        &script,
        "import ctypes, threading, time\n\
         def read_null():\n    time.sleep(0.2)\n    ctypes.string_at(0)\n\
         threading.Thread(target=read_null, name='crasher').start()\n\
         time.sleep(30)\n",
    )
    .unwrap();
    let dumps = dir.path().join("dumps");
    let dump = capture::segv_dump(
        Capture::run(python)
            .args([&script])
            .quiet()
            .dump_dir(&dumps)
            .command()
            .stdin(Stdio::null()),
        &dumps,
    );
    let report = analyze(&dump);
    let crashing = report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["crashing"] == true)
        .unwrap();
    assert_eq!(crashing["name"], "crasher");
    assert_eq!(crashing["holds_gil"], true);
    let (_, frames) = &ours(&report)[&crashing["id"].as_u64().unwrap()];
    assert!(
        frames.contains(&("read_null".to_string(), "crash.py".to_string(), 4)),
        "{frames:?}"
    );
}
