//! `dumptriage attach` on Windows (MiniDumpWriteDump): a real child
//! process, waiting, is dumped into a folder that does not exist yet, the
//! report is read, and the process keeps running.
//!
//! Compiled and run only on Windows (the GitHub Actions job of
//! .github/workflows/ci.yml); the project's own machines are Linux and have
//! no Windows target, so this file has never been built there.
#![cfg(windows)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::bin;
use serde_json::Value;

/// A child that waits (a hang stand-in), killed when the test ends.
struct Waiting(Child);

impl Waiting {
    fn start() -> Waiting {
        let child = Command::new("powershell.exe")
            .args([
                "-NoProfile",
                "-NonInteractive",
                "-Command",
                "Start-Sleep -Seconds 300",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start powershell.exe");
        // Let it load its modules and reach the sleep.
        std::thread::sleep(Duration::from_secs(3));
        Waiting(child)
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn dumps_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "dmp"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn attach_dumps_a_waiting_process_and_leaves_it_running() {
    let dir = tempfile::tempdir().unwrap();
    let dump_dir = dir.path().join("nested").join("dumps");
    let mut waiting = Waiting::start();
    let pid = waiting.0.id();

    let out = bin()
        .args(["attach", &pid.to_string(), "--quiet", "--format", "json"])
        .arg("--dump-dir")
        .arg(&dump_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");

    let dumps = dumps_in(&dump_dir);
    assert_eq!(dumps.len(), 1, "{dumps:?}");
    let name = dumps[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.to_ascii_lowercase()
            .starts_with(&format!("powershell.exe_{pid}_")),
        "{name}"
    );

    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let report = &doc["reports"][0];
    assert_eq!(report["status"], "ok", "{report:#}");
    assert_eq!(report["process"]["pid"], pid);
    assert!(!report["threads"].as_array().unwrap().is_empty());
    let modules = report["modules"].as_array().unwrap();
    assert!(
        modules.iter().any(|m| m["name"]
            .as_str()
            .is_some_and(|n| n.eq_ignore_ascii_case("ntdll.dll"))),
        "{modules:#?}"
    );

    // The process is still running.
    assert!(waiting.0.try_wait().unwrap().is_none(), "the process ended");
}

#[test]
fn attach_to_a_missing_process_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    // Process ids are multiples of 4 on Windows: this one never exists.
    let out = bin()
        .args(["attach", "4294967293", "--dump-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("dumptriage: error: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(dumps_in(dir.path()).is_empty());
}
