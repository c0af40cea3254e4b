//! The Linux samples in their poorer forms (sample-dumps/linux/twins.toml):
//! the dump alone, with the programs' own binaries only, and with those
//! plus this machine's system libraries as installed (no debug files).

mod common;

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
    report["diagnoses"][0]["signature"]
        .as_str()
        .unwrap_or("none")
        .to_string()
}

/// The system libraries (and Debian's python3.11) the dumps use, copied
/// beside the programs' binaries.
fn with_libraries(dir: &Path) -> PathBuf {
    let folder = dir.join("own_and_libs");
    std::fs::create_dir_all(&folder).unwrap();
    for entry in std::fs::read_dir(linux().join("bin")).unwrap().flatten() {
        std::fs::copy(entry.path(), folder.join(entry.file_name())).unwrap();
    }
    for lib in [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/lib64/ld-linux-x86-64.so.2",
        "/lib/x86_64-linux-gnu/libstdc++.so.6",
        "/lib/x86_64-linux-gnu/libgcc_s.so.1",
        "/usr/bin/python3.11",
    ] {
        let path = Path::new(lib);
        if let Ok(real) = std::fs::canonicalize(path) {
            std::fs::copy(real, folder.join(path.file_name().unwrap())).unwrap();
        }
    }
    folder
}

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
    let libs = with_libraries(dir.path());
    let mut problems = Vec::new();
    let mut libs_tried = 0;
    for twin in &twins.dump {
        let dump = linux().join(&twin.file);
        let alone = report(dir.path(), &dump, &[]);
        let with_own = report(dir.path(), &dump, &[Path::new("--symbols"), &own]);
        let with_libs = report(dir.path(), &dump, &[Path::new("--symbols"), &libs]);
        for (form, got, want) in [
            ("alone", top(&alone), &twin.alone),
            ("own", top(&with_own), &twin.own),
        ] {
            if got != *want {
                problems.push(format!("{}: {form}: {got}, want {want}", twin.file));
            }
        }
        // The system's libraries serve only where they are the dump's.
        let libc_is_the_dumps = with_libs["modules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["name"] == "libc.so.6" && m["symbols"] == "loaded");
        if libc_is_the_dumps {
            libs_tried += 1;
            let got = top(&with_libs);
            if got != twin.own_and_libs {
                problems.push(format!(
                    "{}: own_and_libs: {got}, want {}",
                    twin.file, twin.own_and_libs
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    if libs_tried == 0 {
        eprintln!("this machine's libc is not the dumps': the own_and_libs form was not tried");
    }
}
