//! Command-line behaviour a user relies on: exit status, --output, colour,
//! hostile file names, help text.

use crate::common;

use common::{bin, public, run};

#[test]
fn exit_status_is_zero_when_every_input_is_analysed() {
    let out = run(&[
        "analyze",
        public("breakpad/minidump2.dmp").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn exit_status_is_two_when_an_input_fails_and_the_rest_still_run() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.dmp");
    std::fs::write(&bad, b"MDMP").unwrap();
    let good = public("breakpad/minidump2.dmp");
    let out = run(&["analyze", bad.to_str().unwrap(), good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("truncated minidump: 4 bytes"), "{stdout}");
    assert!(
        stdout.contains("CrashFunction"),
        "the good dump is still analysed"
    );
}

#[test]
fn output_writes_the_report_to_a_file_without_colour() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let out = run(&[
        "analyze",
        "--format",
        "json",
        "--color",
        "always",
        "--output",
        report.to_str().unwrap(),
        public("breakpad/minidump2.dmp").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["reports"][0]["status"], "ok");

    let text = dir.path().join("report.txt");
    let out = run(&[
        "analyze",
        "-o",
        text.to_str().unwrap(),
        public("breakpad/minidump2.dmp").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let written = std::fs::read_to_string(&text).unwrap();
    assert!(written.contains("CrashFunction") && !written.contains('\x1b'));
}

#[test]
fn unwritable_output_is_a_clear_error() {
    let out = run(&[
        "analyze",
        "--output",
        "/nonexistent-dir/report.txt",
        public("breakpad/minidump2.dmp").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("dumptriage: error: cannot create /nonexistent-dir/report.txt"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn colour_is_off_in_a_pipe_and_on_when_forced() {
    let dump = public("breakpad/minidump2.dmp");
    let plain = run(&["analyze", dump.to_str().unwrap()]);
    assert!(!plain.stdout.contains(&0x1b));
    let forced = run(&["analyze", "--color", "always", dump.to_str().unwrap()]);
    assert!(forced.stdout.contains(&0x1b));
}

/// On a real terminal (a pseudo-terminal made by `script`), colour is on by
/// default and NO_COLOR turns it off.
#[test]
fn colour_on_a_terminal_respects_no_color() {
    if !common::skip::util_linux_script() {
        return common::skip::skip(
            "pty::util_linux_script",
            "no util-linux `script` (the pseudo-terminal this test runs the binary on)",
        );
    }
    let dump = public("breakpad/minidump2.dmp");
    let command = format!(
        "{} analyze {}",
        env!("CARGO_BIN_EXE_dumptriage"),
        dump.display()
    );
    let on_tty = |no_color: Option<&str>| {
        let mut cmd = std::process::Command::new("script");
        cmd.args(["-qec", &command, "/dev/null"])
            .env_remove("NO_COLOR");
        if let Some(value) = no_color {
            cmd.env("NO_COLOR", value);
        }
        cmd.output().unwrap().stdout
    };
    assert!(on_tty(None).contains(&0x1b), "coloured on a terminal");
    assert!(
        !on_tty(Some("1")).contains(&0x1b),
        "NO_COLOR turns colour off"
    );
}

#[test]
fn hostile_file_names_print_as_one_inert_line() {
    let dir = tempfile::tempdir().unwrap();
    let nasty = dir.path().join("evil\n\x1b[2Jname.dmp");
    std::fs::write(&nasty, b"not a dump").unwrap();
    let out = run(&["analyze", nasty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout:?}");
    assert!(!stdout.contains('\x1b'));
    assert!(stdout.contains("evil\\n\\u{1b}[2Jname.dmp"), "{stdout:?}");

    let out = run(&["analyze", "--format", "json", nasty.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(!stderr.contains('\x1b'));
}

#[test]
fn help_documents_the_exit_status() {
    for args in [&["--help"][..], &["analyze", "--help"][..]] {
        let out = run(args);
        assert!(out.status.success());
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("Exit status:") && help.contains("2  an input could not"),
            "{help}"
        );
    }
}

#[test]
fn a_folder_is_searched_and_symbols_beside_it_are_used() {
    let out = bin()
        .args(["analyze", "--format", "json"])
        .arg(public("rust-minidump"))
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let reports = doc["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 7);
    let test = reports
        .iter()
        .find(|r| r["path"].as_str().unwrap().ends_with("test.dmp"))
        .unwrap();
    assert_eq!(
        test["threads"][0]["frames"][0]["function"],
        "`anonymous namespace'::CrashFunction"
    );
    assert_eq!(test["threads"][0]["frames"][0]["symbol_source"], "sym");
}

/// A FIFO named like a dump must not block the batch (opening it would wait
/// for a writer forever), and a device is not a dump either.
#[cfg(unix)]
#[test]
fn fifos_and_devices_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("evil.dmp");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::copy(
        public("breakpad/minidump2.dmp"),
        dir.path().join("good.dmp"),
    )
    .unwrap();
    let out = run(&[
        "analyze",
        "--format",
        "json",
        dir.path().to_str().unwrap(),
        "/dev/zero",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors: Vec<&str> = doc["reports"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["error"].as_str())
        .collect();
    assert_eq!(
        errors,
        [
            "not a regular file (a FIFO): not a minidump",
            "not a regular file (a character device): not a minidump"
        ]
    );
    assert_eq!(
        doc["summary"]["analysed"], 1,
        "the good dump is still analysed"
    );
}

/// The option lines (`-o, --output <FILE>`, ...) of one heading of a
/// command's `--help`.
fn help_section(command: &str, heading: &str) -> Vec<String> {
    let out = run(&[command, "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = help
        .lines()
        .skip_while(|line| *line != heading)
        .skip(1)
        .take_while(|line| line.is_empty() || line.starts_with(' '));
    let mut options = Vec::new();
    for line in lines.by_ref() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('-') && line.len() - trimmed.len() <= 6 {
            options.push(trimmed.to_string());
        }
    }
    options
}

/// Issue 11: analyze, attach and run take the same report options, listed
/// the same way in their help.
#[test]
fn every_reporting_command_lists_the_same_report_options() {
    let analyze = help_section("analyze", "Report options:");
    for expected in [
        "--format <FORMAT>",
        "-o, --output <FILE>",
        "-q, --quiet",
        "--fail-on <FAIL_ON>",
    ] {
        assert!(
            analyze.iter().any(|line| line == expected),
            "{expected} not among {analyze:?}"
        );
    }
    assert_eq!(help_section("attach", "Report options:"), analyze);
    assert_eq!(help_section("run", "Report options:"), analyze);
}

/// `attach --quiet` was rejected by the parser (issue 11): now it is
/// accepted, and the error is about the process.
#[test]
fn attach_accepts_every_report_option() {
    let out = run(&[
        "attach",
        "--quiet",
        "--jobs",
        "1",
        "--format",
        "json",
        "--fail-on",
        "any",
        "0",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("unexpected argument"), "{stderr}");
}

/// Issue 13: an unexpected panic while one dump of a batch is analysed is
/// one line naming that file, a report with status "error" and
/// `error_kind` "internal", and the other dumps are still analysed.
/// (`DUMPTRIAGE_DEBUG_PANIC_ON` makes a debug build panic on one dump.)
#[test]
fn a_panic_on_one_dump_is_one_line_and_the_batch_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let good = public("breakpad/minidump2.dmp");
    let doomed = dir.path().join("doomed.dmp");
    std::fs::copy(&good, &doomed).unwrap();
    let out = bin()
        .env("DUMPTRIAGE_DEBUG_PANIC_ON", "doomed.dmp")
        .args(["analyze", "--format", "json", "--jobs", "2"])
        .arg(&doomed)
        .arg(&good)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "dumptriage: error: {}: internal error while analysing this dump: panicked at src",
            doomed.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("DUMPTRIAGE_DEBUG_PANIC_ON names this dump"),
        "{stderr}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let reports = doc["reports"].as_array().unwrap();
    assert_eq!(reports[0]["status"], "error");
    assert_eq!(reports[0]["error_kind"], "internal");
    assert_eq!(reports[1]["status"], "ok");
    assert_eq!(reports[1]["error_kind"], serde_json::Value::Null);
    assert_eq!(doc["summary"]["errors"][0]["error_kind"], "internal");
}

/// Issue 13: every error report names its kind with a stable name.
#[test]
fn json_error_reports_carry_a_stable_error_kind() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 3] = [
        ("empty.dmp", b"", "empty"),
        (
            "text.dmp",
            b"hello, world, not a dump at all",
            "not_minidump",
        ),
        ("short.dmp", b"MDMP", "truncated"),
    ];
    let mut cmd = bin();
    cmd.args(["analyze", "--format", "json"]);
    for (name, bytes, _) in &cases {
        std::fs::write(dir.path().join(name), bytes).unwrap();
        cmd.arg(dir.path().join(name));
    }
    cmd.arg(dir.path().join("missing.dmp"));
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let kinds: Vec<&str> = doc["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["error_kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["empty", "not_minidump", "truncated", "unreadable"]);
}

#[test]
fn help_lists_no_system_symbols() {
    let out = run(&["analyze", "--help"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("--no-system-symbols"));
}

/// Symbol set-up is checked before any work (issue 30): an entry of a
/// scheme the tool does not read can never work and stops the run with a
/// one-line error naming it; a folder that is not there is a warning, and
/// the dump is still analysed.
#[test]
fn mistyped_symbol_entries_are_reported_up_front() {
    let dump = public("breakpad/minidump2.dmp");
    let dump = dump.to_str().unwrap();
    for scheme in [
        "ftp://symbols.example/",
        "s3://bucket/syms",
        "debuginfod+ftp://x/",
    ] {
        let out = run(&["analyze", "--symbols", scheme, dump]);
        assert_eq!(out.status.code(), Some(2), "{scheme}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{scheme}: {stderr}");
        assert!(stderr.contains(scheme), "{scheme}: {stderr}");
        assert!(out.stdout.is_empty(), "{scheme}: no report");
    }
    let missing = "/nonexistent/dumptriage-symbols";
    let out = run(&["analyze", "--symbols", missing, dump]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("warning: --symbols {missing}:"))
            && stderr.contains("not searched"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("test_app.exe"));
    // A usable entry says nothing.
    let out = run(&[
        "analyze",
        "--symbols",
        "https://127.0.0.1:1/",
        "--symbols-timeout",
        "1",
        dump,
    ]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("--symbols https"));
}

/// An ELF core file, or a compressed one as systemd-coredump keeps it, is
/// read as a core (issue 25): a broken one gets one line saying what is
/// wrong with it as a core; another ELF file (a binary) is not a minidump.
#[test]
fn a_broken_core_file_is_named_as_a_core() {
    let dir = tempfile::tempdir().unwrap();
    let mut core = vec![0u8; 64];
    core[..4].copy_from_slice(b"\x7fELF");
    core[4] = 2; // 64-bit
    core[5] = 1; // little-endian
    core[16] = 4; // ET_CORE
    let mut binary = core.clone();
    binary[16] = 3; // ET_DYN
    let cases: [(&str, Vec<u8>, &str); 3] = [
        (
            "core.1234",
            core,
            "core file: unsupported architecture: ELF machine 0",
        ),
        (
            "core.app.1000.zst",
            b"\x28\xb5\x2f\xfd\x00\x00\x00\x00".to_vec(),
            "core file: zstd-compressed data that is not an ELF core file",
        ),
        (
            "libapp.so",
            binary,
            "not a minidump: file starts with \"\\x7fELF\"",
        ),
    ];
    for (name, bytes, says) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = run(&["analyze", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        // The report of an unreadable input is its error line.
        let report = String::from_utf8_lossy(&out.stdout);
        assert!(report.contains(says), "{name}: {report}");
        assert_eq!(report.trim().lines().count(), 1, "{name}: {report}");
    }
}

/// `--brief` (issue 30): the diagnosis and the thread it is about (with the
/// threads its wait leads to: issue 28), the others counted, no module
/// list; the same as `--format brief`, which it cannot be combined with.
#[test]
fn brief_shows_the_diagnosis_and_its_thread() {
    // The exiting thread joins a worker: both are shown, the worker (the
    // thread to look at next) right after it.
    let joined = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-dumps/linux/tls-teardown-hang-at-exit-linux.dmp");
    let brief = run(&["analyze", "--brief", joined.to_str().unwrap()]);
    let brief_text = String::from_utf8_lossy(&brief.stdout);
    let threads: Vec<&str> = brief_text
        .lines()
        .filter(|l| l.starts_with("Thread "))
        .collect();
    assert_eq!(threads.len(), 2, "{brief_text}");
    assert!(threads[1].contains("\"parlay-worker\""), "{brief_text}");
    assert!(!brief_text.contains("not shown"), "{brief_text}");

    let dump = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-dumps/linux/hip-unregister-fatbinary-hang-linux.dmp");
    let dump = dump.to_str().unwrap();
    let full = run(&["analyze", dump]);
    let brief = run(&["analyze", "--brief", dump]);
    let (full, brief_text) = (
        String::from_utf8_lossy(&full.stdout),
        String::from_utf8_lossy(&brief.stdout),
    );
    assert!(
        brief_text.contains("Diagnosis: hip-unregister-fatbinary-hang"),
        "{brief_text}"
    );
    assert_eq!(full.matches("\nThread ").count(), 2, "{full}");
    assert_eq!(brief_text.matches("\nThread ").count(), 1, "{brief_text}");
    assert!(
        brief_text.contains("(1 other thread not shown"),
        "{brief_text}"
    );
    assert!(
        full.contains("Modules") && !brief_text.contains("Modules"),
        "{brief_text}"
    );
    assert!(brief_text.len() < full.len());
    let format = run(&["analyze", "--format", "brief", dump]);
    assert_eq!(String::from_utf8_lossy(&format.stdout), brief_text);
    let both = run(&["analyze", "--brief", "--format", "json", dump]);
    assert_eq!(both.status.code(), Some(2));
}
