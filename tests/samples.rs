//! Every shipped sample dump (real minidumps written under Wine, see
//! sample-dumps/README.md) gets its expected diagnosis through the real
//! binary, as sample-dumps/expected.toml records it: the signature as
//! diagnoses[0], the generic situations that also hold, the blamed thread,
//! the key frames, thread names and unloaded modules. A regression in
//! parsing, symbolization or matching fails here.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
struct Expected {
    dump: Vec<Sample>,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Sample {
    file: String,
    signature: String,
    also_true: Vec<String>,
    kind: String,
    process: String,
    exception_code: String,
    capture: String,
    blamed_thread_id: i64,
    blamed_thread_name: String,
    key_functions: Vec<String>,
    absent_functions: Vec<String>,
    unloaded_modules: Vec<String>,
    thread_ids: Vec<u64>,
    thread_names: Vec<String>,
    thread_functions: BTreeMap<String, Vec<String>>,
}

fn samples_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps")
}

/// The function names of a thread's frames (and their inlines), without
/// parameter lists.
fn functions(thread: &Value) -> BTreeSet<String> {
    let bare = |name: &str| dumptriage::model::bare_name(name).to_string();
    let mut names = BTreeSet::new();
    for frame in thread["frames"].as_array().unwrap() {
        if let Some(f) = frame["function"].as_str() {
            names.insert(bare(f));
        }
        for inline in frame["inlines"].as_array().unwrap() {
            names.insert(bare(inline["function"].as_str().unwrap()));
        }
    }
    names
}

#[test]
fn every_sample_dump_gets_its_expected_diagnosis() {
    let text = std::fs::read_to_string(samples_dir().join("expected.toml")).unwrap();
    let expected: Expected = toml::from_str(&text).unwrap();
    assert!(expected.dump.len() >= 14, "every sample is listed");

    // One run over the folder, as a user would do it: no flags, the
    // `symbols` folder beside the dumps is found by itself.
    let (doc, out) = common::analyze_json(&[&samples_dir()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reports: BTreeMap<String, &Value> = doc["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let path = r["path"].as_str().unwrap();
            (
                Path::new(path)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                r,
            )
        })
        .collect();
    assert_eq!(
        reports.len(),
        expected.dump.len(),
        "one report per sample, raw dumps skipped"
    );

    let mut failures = Vec::new();
    for sample in &expected.dump {
        let file = &sample.file;
        let Some(report) = reports.get(file) else {
            failures.push(format!("{file}: not analysed"));
            continue;
        };
        let mut fail = |what: String| failures.push(format!("{file}: {what}"));
        assert_eq!(report["status"], "ok", "{file}: {}", report["error"]);
        check_diagnoses(sample, report, &mut fail);
        check_threads(sample, report, &mut fail);
    }
    assert!(
        failures.is_empty(),
        "{} problem(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The sample's diagnoses (the first, its kind, the generic ones also
/// true), process name and exception code.
fn check_diagnoses(sample: &Sample, report: &Value, fail: &mut impl FnMut(String)) {
    let names = common::diagnosis_names(report);
    let diagnoses: Vec<&str> = names.iter().map(String::as_str).collect();
    if sample.signature.is_empty() {
        if !diagnoses.is_empty() {
            fail(format!(
                "expected no exit-time diagnosis, got {diagnoses:?}"
            ));
        }
    } else {
        if diagnoses.first() != Some(&sample.signature.as_str()) {
            fail(format!(
                "diagnoses[0] should be {}, got {diagnoses:?}",
                sample.signature
            ));
        }
        let kind = &report["diagnoses"][0]["kind"];
        if kind != sample.kind.as_str() {
            fail(format!("kind {kind} != {}", sample.kind));
        }
    }
    for generic in &sample.also_true {
        if !diagnoses.contains(&generic.as_str()) {
            fail(format!("{generic} should also match, got {diagnoses:?}"));
        }
    }
    if report["process"]["name"] != sample.process.as_str() {
        fail(format!(
            "process {} != {}",
            report["process"]["name"], sample.process
        ));
    }
    let code = report["exception"]["code"].as_str().unwrap_or("");
    if code != sample.exception_code {
        fail(format!("exception {code:?} != {:?}", sample.exception_code));
    }
}

/// The sample's threads: ids, names, the blamed thread and the functions
/// on it and on named threads, and the unloaded modules.
fn check_threads(sample: &Sample, report: &Value, fail: &mut impl FnMut(String)) {
    let threads: BTreeMap<u64, &Value> = report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_u64().unwrap(), t))
        .collect();
    let ids: Vec<u64> = threads.keys().copied().collect();
    let mut want_ids = sample.thread_ids.clone();
    want_ids.sort_unstable();
    if ids != want_ids {
        fail(format!("threads {ids:?} != {want_ids:?}"));
    }
    for pair in &sample.thread_names {
        let (id, name) = pair.split_once('=').unwrap();
        let id: u64 = id.parse().unwrap();
        if threads.get(&id).map(|t| &t["name"]) != Some(&Value::from(name)) {
            fail(format!("thread {id} should be named {name:?}"));
        }
    }

    let blamed = report["exit_phase"]["blamed_thread"].as_i64().unwrap_or(-1);
    if blamed != sample.blamed_thread_id {
        fail(format!(
            "blamed thread {blamed} != {}",
            sample.blamed_thread_id
        ));
    }
    if let Some(thread) = threads.get(&(blamed as u64)).filter(|_| blamed >= 0) {
        let name = thread["name"].as_str().unwrap_or("");
        if name != sample.blamed_thread_name {
            fail(format!(
                "blamed thread named {name:?} != {:?}",
                sample.blamed_thread_name
            ));
        }
        if !sample.signature.is_empty() && report["diagnoses"][0]["thread_id"] != blamed {
            fail(format!(
                "diagnosis is about thread {}, not {blamed}",
                report["diagnoses"][0]["thread_id"]
            ));
        }
        let names = functions(thread);
        for f in &sample.key_functions {
            if !names.contains(f) {
                fail(format!("{f} not on the blamed thread"));
            }
        }
        for f in &sample.absent_functions {
            if names.contains(f) {
                fail(format!("{f} should not be on the blamed thread"));
            }
        }
    }
    for (thread_name, wanted) in &sample.thread_functions {
        // "main" is the first thread in the dump's own order.
        let thread = if thread_name == "main" {
            threads.get(&sample.thread_ids[0])
        } else {
            threads.values().find(|t| t["name"] == thread_name.as_str())
        };
        let Some(thread) = thread else {
            fail(format!("no thread {thread_name:?}"));
            continue;
        };
        let names = functions(thread);
        for f in wanted {
            if !names.contains(f) {
                fail(format!("{f} not on thread {thread_name}"));
            }
        }
    }
    let unloaded: Vec<&str> = report["unloaded_modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    for module in &sample.unloaded_modules {
        if !unloaded.contains(&module.as_str()) {
            fail(format!(
                "{module} missing from unloaded modules {unloaded:?}"
            ));
        }
    }
}

/// The README's first command, word for word: `analyze sample-dumps/`
/// needs no flags and names a known failure for every exit-time sample.
#[test]
fn the_quick_start_command_diagnoses_the_samples() {
    let out = common::bin()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["analyze", "sample-dumps/"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("Summary: 38 dumps, 38 analysed, 0 unreadable"),
        "{text}"
    );
    for id in common::SPECIFIC_IDS {
        assert!(
            text.contains(&format!("Diagnosis: {id} - ")),
            "{id} not diagnosed:\n{text}"
        );
    }
}
