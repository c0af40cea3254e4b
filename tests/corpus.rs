//! The analyzer against work nobody here wrote: the public Breakpad and
//! rust-minidump test dumps, checked against the reference stack walker's
//! output (tests/data/corpus/expected, made by scripts/corpus-expected.sh)
//! and Breakpad's own expected output for minidump2.dmp.

use crate::common;

use std::collections::HashMap;

use common::{analyze_json, data, public, reports_by_stem};
use serde_json::Value;

fn expected(stem: &str) -> Value {
    let path = data(&format!("corpus/expected/{stem}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// A report's threads by id.
fn threads_by_id(report: &Value) -> HashMap<u64, &Value> {
    report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_u64().unwrap(), t))
        .collect()
}

/// Each frame as (module, function), the way the reference output lists them.
fn frames(thread: &Value) -> Vec<(Option<String>, Option<String>)> {
    thread["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |v: &Value| v.as_str().map(str::to_string);
            match f {
                Value::Array(pair) => (s(&pair[0]), s(&pair[1])),
                _ => (s(&f["module"]), s(&f["function"])),
            }
        })
        .collect()
}

#[test]
fn every_corpus_dump_matches_the_reference_stack_walker() {
    // One run per folder, so each uses only its own `symbols` store, as the
    // reference output was made.
    let (breakpad, out) = analyze_json(&[&public("breakpad")]);
    assert_eq!(out.status.code(), Some(0), "breakpad dumps all analyse");
    let (rust_minidump, out) = analyze_json(&[&public("rust-minidump")]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "two malformed dumps make the run fail"
    );
    let mut reports = reports_by_stem(&breakpad);
    reports.extend(reports_by_stem(&rust_minidump));
    assert_eq!(reports.len(), 53, "every corpus dump is reported once");
    let mut compared_frames = 0;
    for (stem, report) in reports {
        let want = expected(&stem);
        if want["status"] == "error" {
            assert_eq!(report["status"], "error", "{stem}");
            let error = report["error"].as_str().unwrap();
            assert!(error.starts_with("corrupt minidump: "), "{stem}: {error}");
            continue;
        }
        assert_eq!(report["status"], "ok", "{stem}: {}", report["error"]);
        let ours = threads_by_id(report);
        let theirs = want["threads"].as_array().unwrap();
        assert_eq!(ours.len(), theirs.len(), "{stem}: thread count");
        for thread in theirs {
            let id = thread["id"].as_u64().unwrap();
            let mine = ours
                .get(&id)
                .unwrap_or_else(|| panic!("{stem}: thread {id} missing"));
            assert_eq!(mine["name"], thread["name"], "{stem}: thread {id} name");
            assert_eq!(
                mine["crashing"], thread["crashing"],
                "{stem}: thread {id} crashing"
            );
            assert_eq!(frames(mine), frames(thread), "{stem}: thread {id} frames");
            compared_frames += frames(thread).len();
        }
    }
    assert!(
        compared_frames > 500,
        "only {compared_frames} frames compared"
    );
}

/// Breakpad's expected output for minidump2.dmp names the crashing thread's
/// functions; ours must name exactly the same ones, in order.
#[test]
fn minidump2_crashing_thread_matches_breakpads_expected_output() {
    let text = std::fs::read_to_string(public("breakpad/minidump2.stackwalk.out")).unwrap();
    let section = text
        .split("\n\n")
        .find(|block| block.starts_with("Thread 0 (crashed)"))
        .expect("crashed thread section");
    // Frame lines look like ` 0  test_app.exe!main [test_app.cc : 65 + 0x5]`.
    let breakpad: Vec<String> = section
        .lines()
        .filter_map(|line| {
            let rest = line.trim_start();
            let (index, rest) = rest.split_once("  ")?;
            index.parse::<u32>().ok()?;
            let function = rest.split_once('!')?.1;
            let end = function
                .find(" [")
                .or_else(|| function.find(" + "))
                .unwrap_or(function.len());
            Some(function[..end].to_string())
        })
        .collect();
    assert_eq!(breakpad.len(), 4, "parsed {breakpad:?}");

    let (doc, out) = analyze_json(&[&public("breakpad/minidump2.dmp")]);
    assert!(out.status.success());
    let report = &doc["reports"][0];
    let crashing = &report["threads"][0];
    assert_eq!(crashing["crashing"], true);
    let ours: Vec<String> = crashing["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(ours, breakpad);
    assert_eq!(report["exception"]["code"], "0xc0000005");
    assert_eq!(
        report["exception"]["name"],
        "EXCEPTION_ACCESS_VIOLATION_WRITE"
    );
    assert_eq!(report["process"]["name"], "test_app.exe");
    assert_eq!(report["process"]["pid"], 3932);
}

/// The external corpus (../shared/corpus/external: 35 dumps of Sentry,
/// symbolicator, lldb, Firefox on six platforms, Electron, ChromeOS,
/// BugSplat and rizin's fuzzed files) against the reference stack walker's
/// output on the same dumps with the same Breakpad stores
/// (tests/data/corpus/expected/external, scripts/corpus-expected.sh): none
/// gets a diagnosis, the malformed ones are refused with a clear error, and
/// every thread names at least as many frames as the reference, with the
/// crashing thread's first frame named alike where the reference names it.
#[test]
fn external_dumps_get_no_diagnosis_and_frames_as_good_as_the_reference() {
    let root = common::shared_dir().join("corpus/external");
    let mut dumps = Vec::new();
    let mut todo = vec![root.clone()];
    while let Some(dir) = todo.pop() {
        for path in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "dmp" || e == "mdmp") {
                dumps.push(path);
            }
        }
    }
    dumps.sort();
    assert_eq!(dumps.len(), 35, "the external corpus has 35 dumps");
    let named = |frames: &[(Option<String>, Option<String>)]| {
        frames.iter().filter(|(_, f)| f.is_some()).count()
    };
    let (mut compared_threads, mut refused) = (0, 0);
    for dump in &dumps {
        let rel = dump.strip_prefix(&root).unwrap();
        let name = rel.with_extension("").to_string_lossy().replace('/', "__");
        let want = expected(&format!("external/{name}"));
        let project = root.join(rel.components().next().unwrap());
        let mut cmd = common::bin();
        cmd.args(["analyze", "--format", "json"]);
        if let Some(store) = ["symbols-breakpad", "symbols"]
            .iter()
            .map(|s| project.join(s))
            .find(|s| s.is_dir())
        {
            cmd.arg("--symbols").arg(store);
        }
        let out = cmd.arg(dump).output().unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let report = &doc["reports"][0];
        if want["status"] == "error" {
            refused += 1;
            assert_eq!(report["status"], "error", "{name}");
            let error = report["error"].as_str().unwrap();
            assert!(
                error.starts_with("corrupt minidump: ")
                    || error.starts_with("truncated minidump: "),
                "{name}: {error}"
            );
            continue;
        }
        assert_eq!(report["status"], "ok", "{name}: {}", report["error"]);
        let diagnoses = report["diagnoses"].as_array().unwrap();
        assert!(diagnoses.is_empty(), "{name}: {diagnoses:#?}");
        let ours = threads_by_id(report);
        for thread in want["threads"].as_array().unwrap() {
            let id = thread["id"].as_u64().unwrap();
            let mine = ours
                .get(&id)
                .unwrap_or_else(|| panic!("{name}: thread {id} missing"));
            let (theirs, mine_frames) = (frames(thread), frames(mine));
            assert!(
                named(&mine_frames) >= named(&theirs),
                "{name}: thread {id}: {} named frames, the reference {}\nours {mine_frames:?}\ntheirs {theirs:?}",
                named(&mine_frames),
                named(&theirs)
            );
            if mine["crashing"] == true {
                if let (Some((_, Some(want))), Some((_, got))) =
                    (theirs.first(), mine_frames.first())
                {
                    assert_eq!(
                        got.as_deref(),
                        Some(want.as_str()),
                        "{name}: crashing thread's first frame"
                    );
                }
            }
            compared_threads += 1;
        }
    }
    eprintln!("{} dumps, {compared_threads} threads compared", dumps.len());
    assert_eq!(refused, 3, "the three malformed dumps are refused");
    assert!(
        compared_threads > 300,
        "only {compared_threads} threads compared"
    );
}

/// ChromeOS's `abort` dump (issue 25): the program's separate debug file
/// lies beside the dump as `abort.debug` (objcopy --only-keep-debug's
/// naming), neither under the binary's own name nor in a build-id tree; it
/// is matched by its build id and names `main` with its line.
#[test]
fn a_debug_file_beside_the_dump_is_found_by_its_build_id() {
    let dump = common::shared_dir()
        .join("corpus/external/nya3jp+tast/abort.20180103.145440.12345.20827.dmp");
    let out = common::bin()
        .args(["analyze", "--format", "json", "--no-system-symbols"])
        .arg(&dump)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let frame = &doc["reports"][0]["threads"][0]["frames"][1];
    assert_eq!(frame["function"], "main", "{frame:#}");
    assert_eq!(frame["line"], 4, "{frame:#}");
    // Copied away from its debug file, the dump has no names for it.
    let dir = tempfile::tempdir().unwrap();
    let alone = dir.path().join("abort.dmp");
    std::fs::copy(&dump, &alone).unwrap();
    let out = common::bin()
        .args(["analyze", "--format", "json", "--no-system-symbols"])
        .arg(&alone)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["reports"][0]["threads"][0]["frames"][1]["function"].is_null());
}
