//! The output formats, pinned by golden files of the real binary's output.
//! Paths are replaced by <ROOT> and <TMP>. After an intended change, rerun
//! with UPDATE_GOLDEN=1 and review the diff of tests/golden/.

use crate::common;
use crate::common::golden;
use crate::common::synth;

use std::path::Path;

use common::{bin, placeholder_paths, public, shared_dir};
use golden::golden;

/// Runs the binary and returns (stdout, stderr, status) with paths filtered.
fn run_filtered(args: &[&str], tmp: Option<&Path>) -> (String, String, Option<i32>) {
    // The machine's own files must not change a golden file.
    let out = bin()
        .args(args)
        .arg("--no-system-symbols")
        .output()
        .unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // ../shared first: its path starts with the checkout's.
    let shared = shared_dir();
    let filter = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        match tmp {
            Some(tmp) => placeholder_paths(
                &text,
                &[(tmp, "<TMP>"), (&shared, "<SHARED>"), (root, "<ROOT>")],
            ),
            None => placeholder_paths(&text, &[(&shared, "<SHARED>"), (root, "<ROOT>")]),
        }
    };
    (filter(&out.stdout), filter(&out.stderr), out.status.code())
}

fn path_str(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn text_report_of_a_symbolized_windows_crash() {
    let dump = path_str(&public("breakpad/minidump2.dmp"));
    let (stdout, stderr, code) = run_filtered(&["analyze", &dump], None);
    assert_eq!(code, Some(0), "{stderr}");
    golden("minidump2.txt", &stdout);
}

#[test]
fn json_report_of_a_symbolized_windows_crash() {
    let dump = path_str(&public("breakpad/minidump2.dmp"));
    let (stdout, _, code) = run_filtered(&["analyze", "--format", "json", &dump], None);
    assert_eq!(code, Some(0));
    golden("minidump2.json", &stdout);
}

#[test]
fn text_report_shows_thread_names() {
    let dump = path_str(&public("breakpad/thread_name_list.dmp"));
    let (stdout, _, code) = run_filtered(&["analyze", &dump], None);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("Thread 6564 \"main thread\""), "{stdout}");
    golden("thread_name_list.txt", &stdout);
}

#[test]
fn linux_and_macos_reports() {
    let linux = path_str(&public("rust-minidump/linux-mini.dmp"));
    let mac = path_str(&public("rust-minidump/pipeline-inlines-macos-segv.dmp"));
    let (stdout, _, code) = run_filtered(&["analyze", &linux, &mac], None);
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains("[inlined]"),
        "macOS inline frames are shown"
    );
    golden("linux-and-macos.txt", &stdout);
}

/// A frame whose address lies in an unloaded module names that module, in
/// both formats; a hostile thread name cannot reach the terminal raw.
#[test]
fn frames_in_unloaded_modules_are_marked() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("unloaded.dmp");
    std::fs::write(&dump, synth::crash_in_unloaded_module()).unwrap();
    let dump = path_str(&dump);

    let (text, _, code) = run_filtered(&["analyze", &dump], Some(dir.path()));
    assert_eq!(code, Some(0));
    assert!(
        text.contains("in unloaded dxcompiler.dll + 0x42a10"),
        "{text}"
    );
    assert!(
        !text.contains('\x1b'),
        "escape sequences from the dump are neutralised"
    );
    golden("unloaded.txt", &text);

    let (json, _, _) = run_filtered(&["analyze", "--format", "json", &dump], Some(dir.path()));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let frame = &doc["reports"][0]["threads"][0]["frames"][0];
    assert_eq!(frame["unloaded_module"], "dxcompiler.dll");
    assert_eq!(frame["unloaded_module_offset"], "0x42a10");
    assert_eq!(frame["module"], serde_json::Value::Null);
    golden("unloaded.json", &json);
}

/// Good and bad inputs together: the bad ones are one line each, in place,
/// and the good one is still analysed.
#[test]
fn batch_with_bad_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.dmp");
    std::fs::write(&empty, b"").unwrap();
    let text_file = dir.path().join("notes.dmp");
    std::fs::write(&text_file, b"hello, this is not a dump\n").unwrap();
    let truncated = dir.path().join("truncated.dmp");
    let real = std::fs::read(public("breakpad/minidump2.dmp")).unwrap();
    std::fs::write(&truncated, &real[..200]).unwrap();
    let good = path_str(&public("breakpad/minidump2.dmp"));
    let missing = path_str(&dir.path().join("missing.dmp"));
    let args = [
        "analyze",
        &path_str(&empty),
        &path_str(&text_file),
        &good,
        &path_str(&truncated),
        &missing,
    ];

    let (stdout, stderr, code) = run_filtered(&args, Some(dir.path()));
    assert_eq!(code, Some(2));
    assert_eq!(stderr, "", "text on stdout carries the errors itself");
    golden("batch-with-errors.txt", &stdout);

    let mut json_args = args.to_vec();
    json_args.insert(1, "--format");
    json_args.insert(2, "json");
    let (stdout, stderr, code) = run_filtered(&json_args, Some(dir.path()));
    assert_eq!(code, Some(2));
    golden("batch-with-errors.stderr", &stderr);
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let statuses: Vec<&str> = doc["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["error", "error", "ok", "error", "error"]);
}

/// The path filter gives the same golden text for a Windows path as for a
/// Unix one, and leaves backslashes outside the replaced paths alone.
#[test]
fn golden_path_filter_is_the_same_on_every_os() {
    let root = Path::new(r"C:\t\x");
    // As text, then as JSON (backslashes doubled).
    let text = r"dump C:\t\x\tests/data\corpus/a.dmp, C:\Windows\ntdll.dll";
    assert_eq!(
        placeholder_paths(text, &[(root, "<ROOT>")]),
        r"dump <ROOT>/tests/data/corpus/a.dmp, C:\Windows\ntdll.dll"
    );
    let json = r#"{"path": "C:\\t\\x\\tests/data\\b.dmp", "m": "C:\\Windows\\x.dll"}"#;
    assert_eq!(
        placeholder_paths(json, &[(root, "<ROOT>")]),
        r#"{"path": "<ROOT>/tests/data/b.dmp", "m": "C:\\Windows\\x.dll"}"#
    );
    let unix = Path::new("/w/x");
    assert_eq!(
        placeholder_paths("/w/x/tests/a.dmp", &[(unix, "<ROOT>")]),
        "<ROOT>/tests/a.dmp"
    );
}
