//! The Linux samples in their poorer forms (sample-dumps/linux/twins.toml):
//! the dump alone, with the programs' own binaries only, and with those
//! plus the system libraries as installed (no debug files). The libraries
//! are the dumps' own builds, kept as what they give without debug files
//! (export and unwind tables, in Breakpad form: sample-dumps/linux/syslibs/,
//! written by syslibs.sh), so every form runs on any machine.

use crate::common;

use std::path::{Path, PathBuf};

use common::bin;
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
struct Twins {
    dump: Vec<Twin>,
}

#[derive(Deserialize)]
struct Twin {
    file: String,
    alone: String,
    own: String,
    own_and_libs: String,
    #[allow(dead_code)]
    why: Option<String>,
}

fn linux() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps/linux")
}

/// The report of `dump` (copied alone into `dir`: no symbols folder beside
/// it) with `args`.
fn report(dir: &Path, dump: &Path, args: &[&Path]) -> Value {
    let alone = dir.join(dump.file_name().unwrap());
    std::fs::copy(dump, &alone).unwrap();
    let out = bin()
        .args(["analyze", "--format", "json", "--no-system-symbols"])
        .args(args)
        .arg(&alone)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["reports"][0].clone()
}

fn top(report: &Value) -> String {
    match common::diagnosis_name(&report["diagnoses"][0]) {
        name if name.is_empty() => "none".to_string(),
        name => name,
    }
}

/// The system libraries (and Debian's python3.11) the dumps use, as the
/// installed files give them: each must serve the dumps it is in.
const SYSTEM_LIBRARIES: [&str; 5] = [
    "libc.so.6",
    "ld-linux-x86-64.so.2",
    "libstdc++.so.6",
    "libgcc_s.so.1",
    "python3.11",
];

#[test]
fn linux_samples_in_their_poor_forms() {
    let twins: Twins =
        toml::from_str(&std::fs::read_to_string(linux().join("twins.toml")).unwrap()).unwrap();
    let mut dumps: Vec<String> = std::fs::read_dir(linux())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".dmp"))
        .collect();
    dumps.sort();
    let mut listed: Vec<String> = twins.dump.iter().map(|t| t.file.clone()).collect();
    listed.sort();
    assert_eq!(dumps, listed, "every Linux sample has its twins");

    let dir = tempfile::tempdir().unwrap();
    let own = linux().join("bin");
    let libs = linux().join("syslibs");
    let mut problems = Vec::new();
    for twin in &twins.dump {
        let dump = linux().join(&twin.file);
        let alone = report(dir.path(), &dump, &[]);
        let with_own = report(dir.path(), &dump, &[Path::new("--symbols"), &own]);
        let with_libs = report(
            dir.path(),
            &dump,
            &[Path::new("--symbols"), &own, Path::new("--symbols"), &libs],
        );
        for (form, got, want) in [
            ("alone", top(&alone), &twin.alone),
            ("own", top(&with_own), &twin.own),
            ("own_and_libs", top(&with_libs), &twin.own_and_libs),
        ] {
            if got != *want {
                problems.push(format!("{}: {form}: {got}, want {want}", twin.file));
            }
        }
        // Every system library the walk needs is named from syslibs/: the
        // form is the one twins.toml describes, not a poorer one.
        for module in with_libs["modules"].as_array().unwrap() {
            let name = module["name"].as_str().unwrap_or_default();
            // The system's own (pyenv's python3.11 is another build).
            let path = module["path"].as_str().unwrap_or_default();
            let system = path.starts_with("/usr/") || path.starts_with("/lib");
            if system
                && SYSTEM_LIBRARIES.contains(&name)
                && module["symbols"] != "loaded"
                && module["symbols"] != "not_needed"
            {
                problems.push(format!(
                    "{}: own_and_libs: {name} not loaded from syslibs/: {}",
                    twin.file, module["symbols"]
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}
