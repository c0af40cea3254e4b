//! A crash into unloaded code keeps its caller (issue 39): the nearest
//! frame in a loaded module, even one only the stack scan found, is part
//! of the crash signature, so two programs that call into a library they
//! dlclose'd, from different destructors, group apart, each under its own
//! destructor's name: the Linux sample (an atexit handler,
//! `run_release_hook`) and tests/programs/registry_unload_crash.cpp (a
//! static `PluginRegistry`'s destructor). The must-not: a crash in a loaded
//! module keeps scanned frames out of its signature.
#![cfg(target_os = "linux")]

use crate::common;
use crate::common::capture::{self, Capture};
use crate::common::programs;

use serde_json::Value;
use std::path::Path;

fn report_of(doc: &Value, stem: &str) -> Value {
    common::reports_by_stem(doc)
        .into_iter()
        .find(|(s, _)| s.contains(stem))
        .map(|(_, r)| r.clone())
        .unwrap_or_else(|| panic!("no report for {stem}"))
}

#[test]
fn two_crashes_into_unloaded_code_keep_their_callers_and_group_apart() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("unloaded-caller");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // The program opens ./libplugin.so: run it from the programs' folder.
    let registry = capture::segv_dump(
        Capture::run(programs::programs().join("registry_unload_crash"))
            .option("--brief")
            .dump_dir(&dir)
            .command()
            .current_dir(programs::programs()),
        &dir,
    );
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-dumps/linux/crash-at-exit-after-dlclose-linux.dmp");
    let (doc, _) = common::analyze_json(&[&sample, &registry]);
    let sample = report_of(&doc, "crash-at-exit-after-dlclose");
    let registry = report_of(&doc, "registry_unload_crash");
    // The signature spells the caller without its anonymous namespace.
    for (report, caller, label) in [
        (&sample, "run_release_hook", "run_release_hook"),
        (
            &registry,
            "(anonymous namespace)::PluginRegistry::~PluginRegistry",
            "PluginRegistry::~PluginRegistry",
        ),
    ] {
        assert_eq!(report["exception"]["ip_in_no_module"], true);
        let signature = report["crash_signature"].as_str().unwrap();
        assert_eq!(signature, format!("(no module) | {label}"), "{report}");
        // The caller is in the blamed stack, marked as the stack scan's.
        let frame = &report["threads"][0]["frames"][1];
        assert_eq!(
            frame["function"].as_str().unwrap().split('(').next(),
            Some(caller.split('(').next().unwrap())
        );
        assert_eq!(frame["trust"], "scan");
    }
    let keys: Vec<&str> = doc["summary"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(
        keys.contains(&"crash-in-static-destructor: (no module) | run_release_hook"),
        "{keys:?}"
    );
    assert!(
        keys.contains(&"crash-in-static-destructor: (no module) | PluginRegistry::~PluginRegistry"),
        "{keys:?}"
    );
    // The text summary shows the two groups.
    let text = String::from_utf8(
        common::run(&[
            "analyze",
            sample["path"].as_str().unwrap(),
            registry["path"].as_str().unwrap(),
        ])
        .stdout,
    )
    .unwrap();
    assert!(
        text.contains("(no module) | PluginRegistry::~PluginRegistry"),
        "{text}"
    );
}

/// Captures one of the programs that crash into a dlclose'd library and
/// analyzes its dump.
fn capture_unload_crash(program: &str) -> Value {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(program);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dump = capture::segv_dump(
        Capture::run(programs::programs().join(program))
            .option("--quiet")
            .dump_dir(&dir)
            .command()
            .current_dir(programs::programs()),
        &dir,
    );
    let (doc, _) = common::analyze_json(&[&dump]);
    doc["reports"][0].clone()
}

/// When the walk stops at the unmapped address (no unwind information
/// there, and a frame-pointer register that reads as the end of the
/// stack), the caller comes from the stack search: the return address the
/// call left at the stack pointer. It is the frame below the top, marked as
/// the stack scan's, and part of the signature.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_walk_that_stops_in_unloaded_code_gets_its_caller_from_the_stack_search() {
    let report = capture_unload_crash("unload_crash_no_frame");
    assert_eq!(report["exception"]["ip_in_no_module"], true);
    let thread = &report["threads"][0];
    assert_eq!(thread["crashing"], true);
    let frames = thread["frames"].as_array().unwrap();
    // The walk gave the top frame alone: every other return address the
    // search found lies below it.
    assert_eq!(frames.len(), 2, "{thread}");
    let caller = &frames[1];
    assert_eq!(caller["function"], "flush_plugin_cache", "{caller}");
    assert_eq!(caller["module"], "unload_crash_no_frame");
    assert_eq!(caller["trust"], "scan");
    assert_eq!(caller["index"], 1);
    let hits = thread["stack_search"].as_array().unwrap();
    assert!(!hits.is_empty(), "{thread}");
    assert!(hits.iter().all(|h| h["below_walk"] == true), "{thread}");
    assert!(
        hits.iter().all(|h| h["function"] != "flush_plugin_cache"),
        "the caller is not listed twice: {thread}"
    );
    assert_eq!(
        report["crash_signature"], "(no module) | flush_plugin_cache",
        "{report}"
    );
    // The text report shows the caller in the crashing thread's stack,
    // marked as found by the stack scan.
    let text =
        String::from_utf8(common::run(&["analyze", report["path"].as_str().unwrap()]).stdout)
            .unwrap();
    assert!(
        text.contains("Signature: (no module) | flush_plugin_cache"),
        "{text}"
    );
    assert!(
        text.lines().any(
            |l| l.contains("1  unload_crash_no_frame!flush_plugin_cache")
                && l.contains("(stack scan")
        ),
        "{text}"
    );
}

/// The must-not: the same crash whose walk finds the caller keeps the
/// walk's stack and signature; the stack search adds nothing to them.
#[test]
fn a_walk_with_a_loaded_caller_keeps_its_own_signature() {
    let report = capture_unload_crash("unload_crash");
    let thread = &report["threads"][0];
    let frames = thread["frames"].as_array().unwrap();
    assert_eq!(frames[1]["function"], "run_release_hook", "{thread}");
    assert!(frames.len() > 2, "the walk went on: {thread}");
    assert_eq!(report["crash_signature"], "(no module) | run_release_hook");
}

/// A crash in a loaded module: frames the stack scan found stay out of its
/// signature, as before.
#[test]
fn a_crash_in_a_loaded_module_keeps_scanned_frames_out() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-dumps/linux/tls-destructor-crash-at-exit-linux.dmp");
    let (doc, _) = common::analyze_json(&[&sample]);
    let report = &doc["reports"][0];
    assert_eq!(report["exception"]["ip_in_no_module"], false);
    let thread = &report["threads"][0];
    let scanned: Vec<&str> = thread["frames"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["trust"] == "scan")
        .filter_map(|f| f["function"].as_str())
        .collect();
    let signature = report["crash_signature"].as_str().unwrap();
    for name in &scanned {
        assert!(
            !signature.contains(name),
            "{signature} has the scanned {name}"
        );
    }
    assert_eq!(signature, "registry_forget | cache_release");
}
