//! Batch triage formats through the real binary: the summary grouping in
//! text and JSON, Markdown for CI job summaries, JUnit XML valid against the
//! usual schema, parallel runs giving the same answer, and the progress bar
//! only on a terminal. Golden files: see tests/output.rs for UPDATE_GOLDEN.

use crate::common;
use crate::common::golden;
use crate::common::synth;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{bin, placeholder_paths, public, shared_dir};
use golden::golden;

/// A folder like a CI run's artifacts: the same crash twice, other crashes,
/// a known exit-time failure, and a file that is not a dump.
fn batch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let corpus = public("breakpad");
    for (from, to) in [
        ("minidump2.dmp", "a-minidump2.dmp"),
        ("minidump2.dmp", "b-minidump2-again.dmp"),
        ("null_read_av.dmp", "c-null-read.dmp"),
        ("linux_overflow.dmp", "d-linux-overflow.dmp"),
    ] {
        std::fs::copy(corpus.join(from), root.join(to)).unwrap();
    }
    std::fs::write(
        root.join("e-dxc-unloaded.dmp"),
        synth::crash_in_unloaded_module(),
    )
    .unwrap();
    std::fs::write(root.join("f-not-a-dump.dmp"), b"junk").unwrap();
    copy_dir(&corpus.join("symbols"), &root.join("symbols"));
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn run_batch(dir: &Path, extra: &[&str]) -> (String, String, Option<i32>) {
    // The machine's own files must not change a golden file.
    let out = bin()
        .args(["analyze", "--no-system-symbols"])
        .args(extra)
        .arg(dir)
        .output()
        .unwrap();
    let filter = |b: &[u8]| placeholder_paths(&String::from_utf8_lossy(b), &[(dir, "<TMP>")]);
    (filter(&out.stdout), filter(&out.stderr), out.status.code())
}

#[test]
fn text_opens_with_the_summary_table() {
    let dir = batch();
    let (stdout, _, code) = run_batch(dir.path(), &[]);
    assert_eq!(code, Some(2), "one input is unreadable");
    let first = stdout.lines().next().unwrap();
    assert_eq!(first, "Summary: 6 dumps, 5 analysed, 1 unreadable");
    // The known failure first, then the two identical unknown crashes together.
    let groups: Vec<&str> = stdout
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(groups[0].contains("1  dxc-after-unload"), "{groups:?}");
    assert!(
        stdout.contains("2  unknown crash: CrashFunction | main"),
        "{stdout}"
    );
    assert!(
        stdout.contains("error  <TMP>/f-not-a-dump.dmp: not a minidump"),
        "{stdout}"
    );
    golden("batch-summary.txt", &stdout);
}

#[test]
fn json_adds_a_top_level_summary() {
    let dir = batch();
    let (stdout, _, _) = run_batch(dir.path(), &["--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let summary = &doc["summary"];
    assert_eq!(summary["dumps"], 6);
    assert_eq!(summary["analysed"], 5);
    assert_eq!(summary["failed"], 1);
    let groups = summary["groups"].as_array().unwrap();
    assert_eq!(groups[0]["signature"], "dxc-after-unload");
    assert_eq!(groups[0]["known"], true);
    let twice = groups
        .iter()
        .find(|g| g["count"] == 2)
        .expect("a group of two");
    assert_eq!(
        twice["dumps"],
        serde_json::json!(["<TMP>/a-minidump2.dmp", "<TMP>/b-minidump2-again.dmp"])
    );
    assert_eq!(summary["errors"][0]["path"], "<TMP>/f-not-a-dump.dmp");
    let report = &doc["reports"][0];
    assert_eq!(report["crash_signature"], "CrashFunction | main");
    assert_eq!(doc["crash_signature_version"], 2);
}

#[test]
fn markdown_for_a_ci_job_summary() {
    let dir = batch();
    let (stdout, _, _) = run_batch(dir.path(), &["--format", "markdown"]);
    assert!(stdout.starts_with("## dumptriage: 6 dumps, 5 analysed, 1 unreadable\n"));
    assert!(stdout.contains("| **`dxc-after-unload`** "), "{stdout}");
    assert_eq!(
        stdout.matches("<details>").count(),
        6,
        "one collapsed section per dump"
    );
    golden("batch.md", &stdout);
}

/// 250 dumps fit a GitHub job summary (1 MiB at most, issue 30): the table
/// counts every dump, the sections that would pass the limit are left out
/// with a note saying how many and where the whole report is.
#[test]
fn markdown_of_250_dumps_fits_a_job_summary() {
    let dir = tempfile::tempdir().unwrap();
    // Ten Firefox crashes of about 120 kB of report each, then 240 small ones.
    let firefox = common::shared_dir()
        .join("corpus/external/mozilla-services+minidump-stackwalk/linux-x86_64.dmp");
    for i in 0..10 {
        std::fs::copy(&firefox, dir.path().join(format!("a-firefox-{i:02}.dmp"))).unwrap();
    }
    let dump = public("breakpad/minidump2.dmp");
    for i in 0..240 {
        std::fs::copy(&dump, dir.path().join(format!("crash-{i:03}.dmp"))).unwrap();
    }
    let (stdout, _, _) = run_batch(dir.path(), &["--format", "markdown"]);
    assert!(stdout.len() <= 1 << 20, "{} bytes", stdout.len());
    assert!(stdout.starts_with("## dumptriage: 250 dumps, 250 analysed, 0 unreadable\n"));
    assert!(
        stdout.contains("| crash | 240 |") && stdout.contains("| crash | 10 |"),
        "every dump counted in the table"
    );
    let shown = stdout.matches("<details>").count();
    assert!((5..250).contains(&shown), "{shown} sections");
    let note = format!(
        "_{} more dumps are not shown: a job summary holds at most 1 MiB.",
        250 - shown
    );
    assert!(
        stdout.contains(&note),
        "{}",
        &stdout[stdout.len().saturating_sub(600)..]
    );
}

/// One test case per dump; failed when a crash or hang was diagnosed,
/// errored when unreadable; valid against tests/data/junit/JUnit.xsd.
#[test]
fn junit_is_valid_and_fails_the_crashed_dumps() {
    let dir = batch();
    let (stdout, _, _) = run_batch(dir.path(), &["--format", "junit"]);
    assert_eq!(stdout.matches("<testcase ").count(), 6);
    assert_eq!(stdout.matches("<failure ").count(), 5);
    assert_eq!(stdout.matches("<error ").count(), 1);
    assert!(
        stdout.contains("<failure message=\"dxc-after-unload: Call into dxcompiler.dll"),
        "{stdout}"
    );
    let stable = regex_lite::Regex::new(r#"timestamp="[0-9T:-]+""#)
        .unwrap()
        .replace(&stdout, "timestamp=\"<TIME>\"");
    golden("batch.junit.xml", &stable);

    // Validate the output as written, before any path filtering.
    let raw = bin()
        .args(["analyze", "--format", "junit"])
        .arg(dir.path())
        .output()
        .unwrap();
    let xml = dir.path().join("report.xml");
    std::fs::write(&xml, &raw.stdout).unwrap();
    let schema = shared_dir().join("data/junit/JUnit.xsd");
    match Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&schema)
        .arg(&xml)
        .output()
    {
        Ok(out) => assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => common::skip::skip(
            "formats::junit_schema",
            &format!("xmllint cannot run ({e}): Debian's libxml2-utils, installed by scripts/ci-setup-linux.sh"),
        ),
    }
}

/// Parallel workers must not change the answer or its order.
#[test]
fn jobs_do_not_change_the_result() {
    let dir = batch();
    let (one, _, _) = run_batch(dir.path(), &["--format", "json", "--jobs", "1"]);
    let (four, _, _) = run_batch(dir.path(), &["--format", "json", "--jobs", "4"]);
    assert!(one == four, "--jobs 1 and --jobs 4 differ");
    let out = bin()
        .args(["analyze", "--jobs", "0"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--jobs 0 is refused");
}

#[test]
fn no_progress_bar_off_a_terminal() {
    let dir = batch();
    let (_, stderr, _) = run_batch(dir.path(), &["--format", "json"]);
    assert!(!stderr.contains("ETA"), "{stderr}");
}

/// On a terminal (a pseudo-terminal from util-linux `script`), the progress
/// bar appears on stderr, and --quiet removes it.
#[test]
fn progress_bar_on_a_terminal_unless_quiet() {
    if !common::skip::util_linux_script() {
        return common::skip::skip(
            "pty::util_linux_script",
            "no util-linux `script` (the pseudo-terminal this test runs the binary on)",
        );
    }
    let dir = batch();
    let out_file: PathBuf = dir.path().join("report.json");
    let command = |quiet: &str| {
        format!(
            "{} analyze --format json -o {} {quiet} {}",
            env!("CARGO_BIN_EXE_dumptriage"),
            out_file.display(),
            dir.path().display()
        )
    };
    let tty = |cmd: String| {
        let out = Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(
        tty(command("")).contains("dumps, ETA"),
        "progress bar shown"
    );
    assert!(
        !tty(command("--quiet")).contains("dumps, ETA"),
        "--quiet hides it"
    );
}

/// A multi-GB dump is mapped, never read into memory: a real dump padded to
/// 3 GiB (a sparse file, so it costs no disk) is analysed in a few tens of
/// MiB. Peak memory comes from the kernel's accounting of the finished child.
#[cfg(target_os = "linux")]
#[test]
fn a_huge_dump_is_not_read_into_memory() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("huge.dmp");
    std::fs::copy(public("breakpad/minidump2.dmp"), &dump).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&dump).unwrap();
    file.set_len(3 << 30).unwrap();
    drop(file);

    // Reaped by wait4 below, which also returns the child's peak memory.
    #[allow(clippy::zombie_processes)]
    let child = bin()
        .args(["analyze", "--format", "json", "-o", "/dev/null"])
        .arg(&dump)
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; the pointers are to live locals.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "status {status}"
    );
    let peak_kib = usage.ru_maxrss;
    assert!(
        peak_kib < 200 * 1024,
        "peak memory {peak_kib} KiB for a 3 GiB dump"
    );
}
