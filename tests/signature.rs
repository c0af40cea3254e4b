//! Crash signatures (issue 40) over every sample dump, through the real
//! binary: versioned in the JSON, present for every failure, and never one
//! for two different programs because of runtime frames. (That the dump,
//! the core and the gdb or WinDbg text of one failure give one signature is
//! checked where those are made: tests/cores.rs and tests/text_traces.rs.)

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

fn samples() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps");
    let mut dumps = common::dumps_in(&root);
    dumps.extend(common::dumps_in(&root.join("linux")));
    dumps
}

fn failed(report: &Value) -> bool {
    report["exception"]["crash"] == true || !report["diagnoses"].as_array().unwrap().is_empty()
}

/// Samples that are one failure in two programs: the same library's code
/// fails the same way (a vendor library's frames are the failure, not
/// machinery).
const SAME_FAILURE: &[(&str, &str, &str)] = &[(
    "hip-fatbinary-hang-in-dll-detach",
    "hip-unregister-fatbinary-hang",
    "the HIP runtime's own hang in SyncAllStreams at unregister, from a DLL's detach and \
     from exit",
)];

#[test]
fn every_failure_has_a_signature_and_programs_do_not_share_one() {
    let dumps = samples();
    assert!(dumps.len() >= 35, "{}", dumps.len());
    let paths: Vec<&Path> = dumps.iter().map(PathBuf::as_path).collect();
    let (doc, _) = common::analyze_json(&paths);
    assert_eq!(doc["crash_signature_version"], 2);
    let mut by_signature: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for report in doc["reports"].as_array().unwrap() {
        let name = Path::new(report["path"].as_str().unwrap())
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if !failed(report) {
            continue;
        }
        let signature = report["crash_signature"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: a failure without a crash signature"));
        // glibc's and the C++ runtime's frames are never what tells two
        // failures apart: no Linux sample's signature names one (the
        // loader lock's has only machinery: its deepest frames).
        if name.ends_with("-linux") && name != "glibc-loader-lock-at-exit-linux" {
            for machinery in [
                "futex", "pthread", "__GI_", "lll_", "_Unwind", "__cxa_", "exit",
            ] {
                assert!(
                    !signature.contains(machinery),
                    "{name}: {signature} names {machinery}"
                );
            }
        }
        by_signature
            .entry(signature.to_string())
            .or_default()
            .push(name.trim_end_matches("-linux").to_string());
    }
    for (signature, names) in &by_signature {
        if names.len() < 2 {
            continue;
        }
        let listed = SAME_FAILURE.iter().any(|(a, b, _)| {
            names.len() == 2 && names.contains(&a.to_string()) && names.contains(&b.to_string())
        });
        assert!(listed, "{names:?} share {signature}");
    }
    for (a, b, why) in SAME_FAILURE {
        assert!(
            by_signature
                .values()
                .any(|n| n.contains(&a.to_string()) && n.contains(&b.to_string())),
            "{a} and {b} no longer share a signature ({why}): remove them from SAME_FAILURE"
        );
    }
}

/// A hang's signature says what its thread waits for; a crash's does not;
/// a signature with a module offset says so.
#[test]
fn hangs_say_their_wait_and_offsets_are_flagged() {
    let linux = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps/linux");
    let (doc, _) = common::analyze_json(&[
        &linux.join("mutex-held-by-worker-at-exit-linux.dmp"),
        &linux.join("tls-teardown-hang-at-exit-linux.dmp"),
        &linux.join("tls-destructor-crash-at-exit-linux.dmp"),
        &common::public("rust-minidump/linux-mini.dmp"),
    ]);
    let reports = doc["reports"].as_array().unwrap();
    let signatures: Vec<&str> = reports
        .iter()
        .map(|r| r["crash_signature"].as_str().unwrap_or("-"))
        .collect();
    assert_eq!(
        signatures[..3],
        [
            "[mutex wait] | flush_log",
            "[join] | parlay::scheduler::~scheduler",
            "registry_forget | cache_release",
        ]
    );
    let offsets: Vec<bool> = reports
        .iter()
        .map(|r| r["crash_signature_offsets"] == true)
        .collect();
    assert_eq!(offsets[..3], [false, false, false]);
    assert!(signatures[3].contains("+0x"), "{}", signatures[3]);
    assert!(offsets[3]);
}
