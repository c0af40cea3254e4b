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
use crate::common::capture::Capture;
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
    let out = Capture::run(programs::programs().join("registry_unload_crash"))
        .option("--brief")
        .dump_dir(&dir)
        .command()
        .current_dir(programs::programs())
        .output()
        .unwrap();
    // `run` ends as the command did: killed by its SIGSEGV.
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(11),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let registry = common::dumps_in(&dir).pop().expect("a dump");
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
