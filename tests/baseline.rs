//! Baselines (issue 40) through the real binary: `dumptriage baseline`
//! writes one from the Linux samples, `--baseline --fail-on new` exits 0
//! while every failure is in it and 1 when one is not, the known ones carry
//! their issue link in every format, a rewrite keeps the issues, and bad
//! baselines are one clear error.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const ISSUE: &str = "https://github.com/example/app/issues/7";

fn linux() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps/linux")
}

fn run(args: &[&str], baseline: &Path) -> Output {
    common::bin()
        .args(args)
        .arg("--baseline")
        .arg(baseline)
        .arg(linux())
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The entries of a baseline file, as TOML values.
fn entries(path: &Path) -> Vec<toml::Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc: toml::Value = toml::from_str(&text).unwrap();
    assert_eq!(doc["crash_signature_version"].as_integer(), Some(2));
    doc["failure"].as_array().cloned().unwrap_or_default()
}

/// The baseline with its first entry dropped and its second given an issue.
fn edited(from: &Path, to: &Path) -> (String, String) {
    let mut doc: toml::Value = toml::from_str(&std::fs::read_to_string(from).unwrap()).unwrap();
    let list = doc["failure"].as_array_mut().unwrap();
    let dropped = list.remove(0);
    let tracked = list[0].as_table_mut().unwrap();
    tracked.insert("issue".into(), toml::Value::String(ISSUE.into()));
    tracked.insert(
        "note".into(),
        toml::Value::String("flaky, being fixed".into()),
    );
    let tracked = tracked["signature"].as_str().unwrap().to_string();
    std::fs::write(to, toml::to_string(&doc).unwrap()).unwrap();
    (dropped["signature"].as_str().unwrap().to_string(), tracked)
}

#[test]
fn first_run_writes_the_baseline_then_ci_fails_on_new_failures_only() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("baseline.toml");
    // First run: the baseline of every failure of the folder.
    let out = common::bin()
        .arg("baseline")
        .arg(linux())
        .arg("-o")
        .arg(&first)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("12 new signature(s), 0 kept"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = entries(&first);
    assert_eq!(written.len(), 12, "one entry per failure of the samples");

    // Every failure is known: --fail-on new passes, --fail-on any does not.
    let out = run(&["analyze", "--format", "json", "--fail-on", "new"], &first);
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    for report in doc["reports"].as_array().unwrap() {
        assert_eq!(report["baseline"]["known"], true, "{}", report["path"]);
    }
    let out = run(&["analyze", "--fail-on", "any"], &first);
    assert_eq!(out.status.code(), Some(1));

    // One failure dropped from the baseline, another tracked in an issue.
    let edited_path = dir.path().join("edited.toml");
    let (dropped, tracked) = edited(&first, &edited_path);
    let out = run(
        &["analyze", "--format", "json", "--fail-on", "new"],
        &edited_path,
    );
    assert_eq!(out.status.code(), Some(1), "a new failure fails the run");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reports = doc["reports"].as_array().unwrap();
    let by_signature = |s: &str| {
        reports
            .iter()
            .find(|r| r["crash_signature"] == s)
            .unwrap_or_else(|| panic!("no report with {s}"))
    };
    assert_eq!(by_signature(&dropped)["baseline"]["known"], false);
    let known = &by_signature(&tracked)["baseline"];
    assert_eq!(known["known"], true);
    assert_eq!(known["issue"], ISSUE);
    assert_eq!(known["note"], "flaky, being fixed");
    let group = doc["summary"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["issues"].as_array().unwrap().iter().any(|i| i == ISSUE))
        .expect("the group lists the issue");
    assert_eq!(group["new"], 0);

    // The link in every format.
    for format in ["text", "markdown", "junit", "sarif", "html", "github"] {
        let out = run(&["analyze", "--format", format], &edited_path);
        let text = stdout(&out);
        assert!(text.contains(ISSUE), "{format} has no issue link:\n{text}");
    }
    let text = stdout(&run(&["analyze"], &edited_path));
    assert!(
        text.contains(&format!(
            "Baseline:  known, tracked at {ISSUE}: flaky, being fixed"
        )),
        "{text}"
    );
    assert!(text.contains("Baseline:  new: its signature is not in the baseline"));
    let junit = stdout(&run(&["analyze", "--format", "junit"], &edited_path));
    assert!(junit.contains("failures=\"1\""), "{junit}");
    assert!(junit.contains("skipped=\"11\""), "{junit}");
    assert!(junit.contains("(new: its crash signature is not in the baseline)"));
    let markdown = stdout(&run(&["analyze", "--format", "markdown"], &edited_path));
    assert!(markdown.contains("| Baseline |"), "{markdown}");
    assert!(markdown.contains("**1 new**"), "{markdown}");

    // Writing the baseline again keeps the issue and adds the dropped one.
    let out = common::bin()
        .arg("baseline")
        .arg(linux())
        .arg("-o")
        .arg(&edited_path)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("1 new signature(s), 11 kept"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let again = entries(&edited_path);
    assert_eq!(again.len(), 12);
    assert!(again
        .iter()
        .any(|e| e["signature"].as_str() == Some(&tracked) && e["issue"].as_str() == Some(ISSUE)));
    assert_eq!(
        again.last().unwrap()["signature"].as_str(),
        Some(dropped.as_str())
    );
}

/// Without a baseline every failure is new (and the user is told); a
/// signature one frame away from a baseline entry is not in it.
#[test]
fn look_alikes_are_new() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::bin()
        .args(["analyze", "--fail-on", "new"])
        .arg(linux().join("mutex-held-by-worker-at-exit-linux.dmp"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("without --baseline: every failure is new")
    );
    let near = dir.path().join("near.toml");
    std::fs::write(
        &near,
        "crash_signature_version = 2\n\n[[failure]]\nsignature = \"[mutex wait] | flush_log | main\"\n\
         issue = \"https://example.com/1\"\n\n[[failure]]\nsignature = \"[condition wait] | flush_log\"\n",
    )
    .unwrap();
    let out = common::bin()
        .args([
            "analyze",
            "--format",
            "json",
            "--fail-on",
            "new",
            "--baseline",
        ])
        .arg(&near)
        .arg(linux().join("mutex-held-by-worker-at-exit-linux.dmp"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["reports"][0]["crash_signature"],
        "[mutex wait] | flush_log"
    );
    assert_eq!(doc["reports"][0]["baseline"]["known"], false);
}

/// A baseline that cannot be used stops the run before any analysis with
/// one line naming the file and the problem.
#[test]
fn bad_baselines_are_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("old.toml", "crash_signature_version = 1\n", "version 1"),
        ("typo.toml", "crash_signature_version = 2\n[[failure]]\nsignatur = \"x\"\n", "unknown field"),
        (
            "url.toml",
            "crash_signature_version = 2\n[[failure]]\nsignature = \"x\"\nissue = \"javascript:alert(1)\"\n",
            "not an http(s) URL",
        ),
        ("binary.toml", "\u{0}\u{1}\u{2}", "not a dumptriage baseline"),
    ];
    for (name, text, says) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let out = common::bin()
            .args(["analyze", "--baseline"])
            .arg(&path)
            .arg(linux().join("mutex-held-by-worker-at-exit-linux.dmp"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(name) && err.contains(says), "{name}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
        assert!(out.stdout.is_empty(), "{name}: no report");
    }
    let missing = Command::new(env!("CARGO_BIN_EXE_dumptriage"))
        .args(["analyze", "--baseline", "/nonexistent/baseline.toml"])
        .arg(linux())
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/baseline.toml"));
}
