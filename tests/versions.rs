//! Versions in diagnoses (issue 39): a rule's `[fixed]` table names the
//! component, its modules and the release that carries the fix; the report
//! compares it with the version the dump records. On the real vendor dump
//! (node.exe with onnxruntime-node 1.23.2's onnxruntime.dll, whose version
//! resource the dump keeps: 1.23.25.1021) through rule files written here,
//! one per answer, and on the built-in ONNX Runtime rules: a stand-in whose
//! onnxruntime.dll has no version says so, never a verdict.

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};

fn sample(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A rule that matches the vendor dump (its thread has onnxruntime.dll
/// frames), with `fixed` as its `[fixed]` table.
fn rule(id: &str, fixed: &str) -> String {
    format!(
        r#"id = "{id}"
title = "Test: a thread in onnxruntime.dll"
kind = "hang"
summary = "A thread has onnxruntime.dll frames."
why = "For the version check's test."
fix = "None: a test rule."
references = ["https://example.org/test"]

[fixed]
{fixed}

[[match]]
thread = "any"
frames = [{{ module = "onnxruntime.dll", within = 8 }}]

[[examples]]
name = "a thread in onnxruntime.dll"
expect = "match"
threads = [{{ id = 1, frames = ["onnxruntime.dll"] }}]

[[examples]]
name = "no onnxruntime.dll frame"
expect = "no-match"
threads = [{{ id = 1, frames = ["app.exe!main"] }}]
"#
    )
}

/// The vendor dump analysed with one test rule: its version check.
fn check(id: &str, fixed: &str) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(format!("{id}.toml")), rule(id, fixed)).unwrap();
    let dump = sample("sample-dumps/vendor/node-ort-exit-release-env.dmp");
    let args = |format: &str| {
        let out = common::bin()
            .args([
                "analyze",
                "--no-system-symbols",
                "--format",
                format,
                "--signatures",
            ])
            .arg(dir.path())
            .arg(&dump)
            .output()
            .unwrap();
        assert!(
            out.status.success() || out.status.code() == Some(1),
            "{out:?}"
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let doc: Value = serde_json::from_str(&args("json")).unwrap();
    let diagnosis = doc["reports"][0]["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["signature"] == id)
        .unwrap_or_else(|| panic!("{id} did not match: {doc}"))
        .clone();
    (diagnosis["version_check"].clone(), args("text"))
}

const ORT: &str = r#"component = "onnxruntime-node"
modules = ["onnxruntime.dll"]
release_digits = 2
fix = "https://github.com/microsoft/onnxruntime/pull/27569""#;

#[test]
fn a_version_before_the_fix_release_says_upgrade() {
    let (check, text) = check(
        "test-before",
        &format!("{ORT}\nrelease = \"1.25.1\"\nsource = \"https://www.npmjs.com/package/onnxruntime-node/v/1.25.1\""),
    );
    assert_eq!(check["verdict"], "predates_fix", "{check}");
    assert_eq!(check["module"], "onnxruntime.dll");
    assert_eq!(check["module_version"], "1.23.25.1021");
    assert_eq!(check["fixed_in"], "1.25.1");
    let line = "onnxruntime.dll 1.23.25.1021 (onnxruntime-node 1.23) predates the fix in onnxruntime-node 1.25.1";
    assert!(
        check["summary"].as_str().unwrap().starts_with(line),
        "{check}"
    );
    assert!(
        text.contains(
            "    Version: onnxruntime.dll 1.23.25.1021 (onnxruntime-node 1.23) predates the fix"
        ),
        "{text}"
    );
    assert!(
        text.contains("      (release: https://www.npmjs.com/package/onnxruntime-node/v/1.25.1)"),
        "{text}"
    );
}

/// The must-nots: a release the version already is past, one the version
/// is too coarse to place, no established release, no such module.
#[test]
fn the_other_answers_say_what_is_known_and_no_more() {
    let (c, _) = check(
        "test-after",
        &format!("{ORT}\nrelease = \"1.22.0\"\nsource = \"https://example.org/release\""),
    );
    assert_eq!(c["verdict"], "has_fix", "{c}");
    assert!(
        c["summary"].as_str().unwrap().ends_with("look elsewhere"),
        "{c}"
    );

    // 1.23.x: the DLL's version says 1.23, not which patch release.
    let (c, _) = check(
        "test-same-series",
        &format!("{ORT}\nrelease = \"1.23.3\"\nsource = \"https://example.org/release\""),
    );
    assert_eq!(c["verdict"], "undecided", "{c}");
    // ...but 1.23.0 is reached by any 1.23.
    let (c, _) = check(
        "test-series-start",
        &format!("{ORT}\nrelease = \"1.23.0\"\nsource = \"https://example.org/release\""),
    );
    assert_eq!(c["verdict"], "has_fix", "{c}");

    let (c, text) = check("test-unknown", ORT);
    assert_eq!(c["verdict"], "release_unknown", "{c}");
    assert!(c["fixed_in"].is_null());
    assert!(
        text.contains(
            "onnxruntime.dll is 1.23.25.1021; no source establishes which onnxruntime-node"
        ),
        "{text}"
    );

    let (c, _) = check(
        "test-absent",
        r#"component = "ROCm"
modules = ["amdhip64*.dll"]
fix = "https://example.org/fix"
release = "6.4.0"
source = "https://example.org/release""#,
    );
    assert_eq!(c["verdict"], "no_module", "{c}");
    assert!(c["module_version"].is_null());
}

/// The built-in rule on its stand-in sample, whose onnxruntime.dll carries
/// no version resource: said so, no verdict.
#[test]
fn a_module_without_a_version_is_said_so() {
    let dump = sample("sample-dumps/ort-node-env-late-release.dmp");
    let symbols = sample("sample-dumps/symbols");
    let out = common::bin()
        .args(["analyze", "--format", "json", "--symbols"])
        .arg(&symbols)
        .arg(&dump)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &doc["reports"][0]["diagnoses"][0];
    assert_eq!(d["signature"], "ort-node-env-late-release");
    assert_eq!(d["version_check"]["verdict"], "no_version", "{d}");
    assert_eq!(d["version_check"]["fixed_in"], "1.25.1");
    assert!(d["version_check"]["module_version"].is_null());
}

/// Bad `[fixed]` tables are refused with the key.
#[test]
fn a_release_without_its_source_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("test-bad.toml"),
        rule("test-bad", &format!("{ORT}\nrelease = \"1.25.x\"")),
    )
    .unwrap();
    let out = common::bin()
        .args(["signatures", "lint"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("fixed.release"), "{stderr}");
    assert!(stderr.contains("fixed.source"), "{stderr}");
}

/// Builds libpkgdemo.so (with the package note when `version` is given,
/// at optimization level `optimize`) and pkg_exit_crash in `dir`.
#[cfg(target_os = "linux")]
fn build_pkg_demo(dir: &Path, version: Option<&str>, optimize: &str) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let mut lib = std::process::Command::new("gcc");
    lib.current_dir(dir)
        .args(["-g", optimize, "-fPIC", "-shared", "-o", "libpkgdemo.so"])
        .arg(src.join("libpkgdemo.c"));
    if let Some(version) = version {
        lib.arg("-Xlinker").arg(format!(
            r#"--package-metadata={{"type":"deb","name":"libpkgdemo","version":"{version}"}}"#
        ));
    }
    assert!(lib.status().unwrap().success());
    let exe = std::process::Command::new("gcc")
        .current_dir(dir)
        .args(["-g", "-O0", "-o", "pkg_exit_crash"])
        .arg(src.join("pkg_exit_crash.c"))
        .args(["-L.", "-lpkgdemo", "-Wl,-rpath,$ORIGIN"])
        .status()
        .unwrap();
    assert!(exe.success());
}

/// `dumptriage run` of pkg_exit_crash in `dir`: its dump.
#[cfg(target_os = "linux")]
fn crash_dump(dir: &Path) -> PathBuf {
    let dumps = dir.join("dumps");
    let out = common::capture::Capture::run(dir.join("pkg_exit_crash"))
        .option("--brief")
        .dump_dir(&dumps)
        .output();
    assert!(!out.status.success(), "{out:?}");
    common::dumps_in(&dumps).pop().expect("a dump")
}

#[cfg(target_os = "linux")]
const PKG_RULE: &str = r#"id = "test-pkgdemo"
title = "Test: libpkgdemo flushes at exit"
kind = "crash"
summary = "libpkgdemo's flush crashed at exit."
why = "For the package-note version test."
fix = "None: a test rule."
references = ["https://example.org/test"]

[fixed]
component = "libpkgdemo"
modules = ["libpkgdemo.so"]
fix = "https://example.org/fix"
release = "2.5.0"
source = "https://example.org/release"

[[match]]
thread = "crashing"
frames = [{ module = "libpkgdemo.so", within = 2 }]

[[examples]]
name = "the flush"
expect = "match"
exception = "SIGSEGV"
threads = [{ id = 1, crashing = true, frames = ["libpkgdemo.so"] }]

[[examples]]
name = "elsewhere"
expect = "no-match"
exception = "SIGSEGV"
threads = [{ id = 1, crashing = true, frames = ["app!main"] }]
"#;

#[cfg(target_os = "linux")]
fn pkg_check(dump: &Path, rules: &Path) -> Value {
    let out = common::bin()
        .args(["analyze", "--format", "json", "--signatures"])
        .arg(rules)
        .arg(dump)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let d = doc["reports"][0]["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["signature"] == "test-pkgdemo")
        .unwrap_or_else(|| panic!("no match: {doc}"))
        .clone();
    d["version_check"].clone()
}

/// An ELF library's `.note.package` gives its version when the dump records
/// none; without the note, or when the file here is another build, none.
#[cfg(target_os = "linux")]
#[test]
fn a_package_note_gives_an_elf_librarys_version() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(rules.join("test-pkgdemo.toml"), PKG_RULE).unwrap();

    let with = dir.path().join("with");
    std::fs::create_dir_all(&with).unwrap();
    build_pkg_demo(&with, Some("2.4.1"), "-O0");
    let dump = crash_dump(&with);
    let c = pkg_check(&dump, &rules);
    assert_eq!(c["module"], "libpkgdemo.so", "{c}");
    assert_eq!(c["module_version"], "2.4.1", "{c}");
    assert_eq!(c["verdict"], "predates_fix", "{c}");

    // The file at the dump's path is rebuilt (another build id: ld leaves
    // the package note out of the build id, so the code differs too): not
    // this module's version.
    build_pkg_demo(&with, Some("9.9.9"), "-O1");
    let c = pkg_check(&dump, &rules);
    assert_eq!(c["verdict"], "no_version", "{c}");

    let without = dir.path().join("without");
    std::fs::create_dir_all(&without).unwrap();
    build_pkg_demo(&without, None, "-O0");
    let c = pkg_check(&crash_dump(&without), &rules);
    assert_eq!(c["verdict"], "no_version", "{c}");
    assert!(c["module_version"].is_null());
}
