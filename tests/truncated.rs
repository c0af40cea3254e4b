//! Dumps cut short (issue 30, part 5): whatever is readable is reported,
//! with a warning naming what is missing; never a panic. The Linux samples
//! (minidump-writer puts the system info stream past the middle) and the
//! public corpus' Linux and Windows dumps, cut at 60%.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps/linux")
}

fn analyze(path: &Path) -> Value {
    let out = common::bin()
        .args(["analyze", "--format", "json", "--no-system-symbols"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["reports"][0].clone()
}

fn cut(from: &Path, percent: u64, to: &Path) {
    let bytes = std::fs::read(from).unwrap();
    let keep = bytes.len() as u64 * percent / 100;
    std::fs::write(to, &bytes[..keep as usize]).unwrap();
}

#[test]
fn a_linux_dump_cut_at_60_percent_gives_a_partial_report() {
    let dir = tempfile::tempdir().unwrap();
    let mut walked = 0;
    let mut names = Vec::new();
    for entry in std::fs::read_dir(samples()).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "dmp") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let whole = analyze(&path);
        let to = dir.path().join(&name);
        cut(&path, 60, &to);
        let report = analyze(&to);
        assert_eq!(report["status"], "ok", "{name}: {}", report["error"]);
        let warnings: Vec<&str> = report["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let warning = warnings
            .iter()
            .find(|w| w.starts_with("the dump is cut short: "))
            .unwrap_or_else(|| panic!("{name}: {warnings:#?}"));
        // A dump whose directory the capture moved to its end is read
        // from the writer's own, which describes the dump before the
        // capture's streams: the share is of that.
        let moved = warning.contains("the streams dumptriage's capture added");
        assert!(
            warning.contains("(60%)") || warning.contains("(59%)") || moved,
            "{warning}"
        );
        // What the file still holds: the threads it lists, each with its
        // registers, and the stacks that are in it.
        let threads = report["threads"].as_array().unwrap();
        assert!(!threads.is_empty(), "{name}");
        assert!(threads.len() <= whole["threads"].as_array().unwrap().len());
        if threads
            .iter()
            .any(|t| t["frames"].as_array().unwrap().len() > 1)
        {
            walked += 1;
        }
        if warning.contains("guessed Linux amd64") {
            assert_eq!(report["system"]["os"], "Linux", "{name}");
        }
        names.push(name);
    }
    assert!(names.len() >= 9, "{names:?}");
    // Most keep stacks deeper than the registers' frame.
    assert!(walked * 2 > names.len(), "{walked} of {}", names.len());
}

/// A dump whose directory was moved to its end (the capture's appended
/// streams) and then cut: the writer's own directory after the header
/// (here Wine's) still gives what the file holds, with a warning naming
/// what is lost.
#[test]
fn a_dump_whose_moved_directory_is_cut_is_read_from_the_writers() {
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps/dxc-after-unload.dmp");
    let to = dir.path().join("cut.dmp");
    cut(&from, 60, &to);
    let report = analyze(&to);
    assert_eq!(report["status"], "ok", "{}", report["error"]);
    let warning = report["warnings"][0].as_str().unwrap();
    assert!(warning.starts_with("the dump is cut short: "), "{warning}");
    assert!(warning.contains("the exception record"), "{warning}");
    assert!(
        warning.contains("the streams dumptriage's capture added"),
        "{warning}"
    );
    assert!(!report["threads"].as_array().unwrap().is_empty());
    assert_eq!(report["system"]["os"], "Windows NT");
}

/// Cut at every tenth of the file, the real dumps of other writers give a
/// report or one clear error, never a panic.
#[test]
fn dumps_cut_anywhere_never_panic() {
    let corpus = common::shared_dir().join("corpus/public");
    let dir = tempfile::tempdir().unwrap();
    for seed in [
        "rust-minidump/linux-mini.dmp",
        "breakpad/minidump2.dmp",
        "rust-minidump/simple-crashpad.dmp",
    ] {
        let from = corpus.join(seed);
        for percent in (10..100).step_by(10) {
            let to = dir.path().join(format!("{percent}.dmp"));
            cut(&from, percent, &to);
            let report = analyze(&to);
            match report["status"].as_str() {
                Some("ok") => {}
                _ => {
                    let error = report["error"].as_str().unwrap();
                    assert!(
                        !error.contains('\n') && !error.starts_with("internal error"),
                        "{seed} {percent}%: {error}"
                    );
                }
            }
        }
    }
}

/// Issue 36: a crafted 140-byte dump (fuzz/regressions/analyze_dump/)
/// whose Memory64List range claims u64::MAX bytes, in a dump whose thread
/// list lies past the end. The repair added the range's size to its
/// offset, which overflowed (a panic with overflow checks, a wrong size
/// without); the range is now cut at the end of the file and the dump is
/// reported.
#[test]
fn a_memory64_range_whose_size_wraps_around_is_cut_at_the_end() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/analyze_dump/crash-memory64-range-size-overflow.dmp");
    let report = analyze(&path);
    assert_eq!(report["status"], "ok", "{}", report["error"]);
    let warning = report["warnings"][0].as_str().unwrap();
    assert!(
        warning.starts_with("streams extend past the end of the file (140 bytes)"),
        "{warning}"
    );
}
