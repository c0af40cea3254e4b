//! The signature database through the real binary: the interface ids exist,
//! every rule's examples hold, rule files are linted with file, key and
//! reason, user folders override rules, the generated docs are current, the
//! public corpus gets no exit-time diagnosis, and --fail-on picks the status.

use crate::common;
use crate::common::synth;

use std::path::Path;

use common::{analyze_json, bin, public, run};

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn every_interface_id_is_listed() {
    let out = run(&["signatures", "list"]);
    assert!(out.status.success());
    let listed: Vec<String> = stdout(&out)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    for id in common::SPECIFIC_IDS.iter().chain(&common::GENERIC_IDS) {
        assert!(
            listed.iter().any(|l| l == id),
            "{id} missing from {listed:?}"
        );
    }
    assert!(
        listed.len() >= common::SPECIFIC_IDS.len() + common::GENERIC_IDS.len() + 3,
        "extra evidence-backed rules exist"
    );
}

#[test]
fn show_prints_the_rule_file_and_unknown_ids_fail() {
    let out = run(&["signatures", "show", "dxc-after-unload"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(
        text.contains("id = \"dxc-after-unload\"") && text.contains("[[match]]"),
        "{text}"
    );
    let out = run(&["signatures", "show", "no-such-rule"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no signature with id \"no-such-rule\""));
}

/// Each rule matches its own positive examples (first among specific rules,
/// with no other specific rule matching) and none of its negative ones.
#[test]
fn every_rule_passes_its_examples() {
    let out = run(&["signatures", "test"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("FAIL"), "{text}");
    for id in common::SPECIFIC_IDS.iter().chain(&common::GENERIC_IDS) {
        let positives = text
            .lines()
            .filter(|l| l.starts_with(&format!("ok    {id}: ")))
            .count();
        assert!(
            positives >= 2,
            "{id} has a positive and a negative example: {text}"
        );
    }
    let summary = text.lines().last().unwrap();
    assert!(summary.ends_with(" passed, 0 failed"), "{summary}");
}

/// The examples are not a formality: a rule whose example does not hold
/// makes `signatures test` fail and say which.
#[test]
fn a_wrong_example_fails_the_test_command() {
    let dir = tempfile::tempdir().unwrap();
    let rule = r#"
id = "always-wrong"
title = "t"
kind = "crash"
summary = "s"
why = "w"
fix = "f"
references = ["https://example.com/x"]
[[match]]
frames = [{ function = "NeverThere" }]
[[examples]]
name = "claims a match it cannot have"
expect = "match"
exception = "0xC0000005"
threads = [{ id = 1, crashing = true, frames = ["app.exe!main"] }]
[[examples]]
name = "negative"
expect = "no-match"
threads = [{ id = 1, frames = ["app.exe!main"] }]
"#;
    std::fs::write(dir.path().join("always-wrong.toml"), rule).unwrap();
    let out = run(&["signatures", "test", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("FAIL  always-wrong: claims a match it cannot have: did not match"),
        "{text}"
    );
    assert!(text.contains("ok    always-wrong: negative"), "{text}");
}

#[test]
fn builtin_rules_lint_clean() {
    let out = run(&["signatures", "lint"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("signatures");
    let out = run(&["signatures", "lint", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Unknown keys, a duplicate id and a bad regex are each reported with file,
/// key and reason, all of them in one run.
#[test]
fn lint_reports_every_problem_with_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("signatures/crash-during-exit.toml"),
    )
    .unwrap();
    // The same rule under another file name: a duplicate id, and an id that
    // is not its file name.
    std::fs::write(dir.path().join("crash-during-exit.toml"), &good).unwrap();
    std::fs::write(dir.path().join("copy.toml"), &good).unwrap();
    let unknown = good
        .replace("kind = \"crash\"", "kind = \"crash\"\nseverity = \"high\"")
        .replace(
            "process_exiting = true",
            "process_exiting = true\nframe = \"x\"",
        )
        .replace("id = \"crash-during-exit\"", "id = \"unknown-keys\"");
    std::fs::write(dir.path().join("unknown-keys.toml"), unknown).unwrap();
    let bad_regex = good
        .replace("id = \"crash-during-exit\"", "id = \"bad-regex\"")
        .replace(
            "process_exiting = true",
            "process_exiting = true\nframes = [{ function = \"re:(unclosed\" }]",
        )
        .replace(
            "references = [",
            "references = [\"http://insecure.example\", ",
        );
    std::fs::write(dir.path().join("bad-regex.toml"), bad_regex).unwrap();

    let out = run(&["signatures", "lint", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let text = stderr(&out);
    let has = |file: &str, key: &str, reason: &str| {
        text.lines()
            .any(|l| l.contains(file) && l.contains(&format!(": {key}: ")) && l.contains(reason))
    };
    assert!(
        has("unknown-keys.toml", "severity", "unknown key"),
        "{text}"
    );
    assert!(
        has("unknown-keys.toml", "match[0].frame", "unknown key"),
        "{text}"
    );
    assert!(has("copy.toml", "id", "must equal the file name"), "{text}");
    assert!(
        has("copy.toml", "id", "duplicate id")
            || has("crash-during-exit.toml", "id", "duplicate id"),
        "{text}"
    );
    assert!(
        has(
            "bad-regex.toml",
            "match[0].frames[0].function",
            "invalid regular expression"
        ),
        "{text}"
    );
    assert!(
        has("bad-regex.toml", "references[0]", "not an https URL"),
        "{text}"
    );
    assert!(text.contains("problem(s)"), "{text}");
}

/// `--signatures DIR` adds rules and replaces built-in ones by id; a broken
/// folder stops the run with its problems.
#[test]
fn user_rules_override_builtin_ones_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("signatures/dxc-after-unload.toml"),
    )
    .unwrap();
    let changed = original.replace(
        "title = \"Call into dxcompiler.dll",
        "title = \"LOCAL OVERRIDE: call into dxcompiler.dll",
    );
    std::fs::write(dir.path().join("dxc-after-unload.toml"), changed).unwrap();
    let dump = dir.path().join("unloaded.dmp");
    std::fs::write(&dump, synth::crash_in_unloaded_module()).unwrap();

    let rules = dir.path().to_str().unwrap();
    let out = run(&[
        "analyze",
        "--signatures",
        rules,
        "--format",
        "json",
        dump.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = &doc["reports"][0]["diagnoses"][0];
    assert_eq!(first["signature"], "dxc-after-unload");
    assert!(first["title"]
        .as_str()
        .unwrap()
        .starts_with("LOCAL OVERRIDE"));

    std::fs::write(dir.path().join("broken.toml"), "id = 3").unwrap();
    let out = run(&["analyze", "--signatures", rules, dump.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("broken.toml"), "{}", stderr(&out));
}

/// The per-signature pages and the README's table of rules are generated
/// from the rule files and must be current (regenerate with `dumptriage
/// signatures docs docs/signatures --readme README.md`).
#[test]
fn generated_docs_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("docs/signatures");
    let readme = root.join("README.md");
    let out = run(&[
        "signatures",
        "docs",
        "--check",
        dir.to_str().unwrap(),
        "--readme",
        readme.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A README whose table is stale or has no markers is reported, and
/// writing puts the table between the markers with links into the pages.
#[test]
fn readme_table_is_checked_and_written() {
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("docs/signatures");
    let readme = dir.path().join("README.md");
    std::fs::write(&readme, "# Tool\n\nno markers\n").unwrap();
    let docs = |check: bool| {
        let mut args = vec!["signatures", "docs", pages.to_str().unwrap()];
        args.extend(["--readme", readme.to_str().unwrap()]);
        if check {
            args.push("--check");
        }
        run(&args)
    };
    let out = docs(false);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no table markers"),
        "{}",
        stderr(&out)
    );
    std::fs::write(
        &readme,
        "# Tool\n\n<!-- signatures table: generated by `dumptriage signatures docs --readme`; do not edit -->\nold\n<!-- end of signatures table -->\nafter\n",
    )
    .unwrap();
    assert_eq!(docs(true).status.code(), Some(1));
    assert!(docs(false).status.success());
    let text = std::fs::read_to_string(&readme).unwrap();
    assert!(
        !text.contains("old\n") && text.ends_with("<!-- end of signatures table -->\nafter\n"),
        "{text}"
    );
    assert!(
        text.contains("| [`dxc-after-unload`](docs/signatures/dxc-after-unload.md) | crash |"),
        "{text}"
    );
    assert!(docs(true).status.success());
}

/// The public corpus is ordinary crashes, none at exit: no specific
/// signature, no exit-time diagnosis, no exiting thread.
#[test]
fn no_public_dump_gets_an_exit_time_diagnosis() {
    for folder in ["breakpad", "rust-minidump"] {
        let (doc, _) = analyze_json(&[&public(folder)]);
        for report in doc["reports"].as_array().unwrap() {
            if report["status"] != "ok" {
                continue;
            }
            let path = report["path"].as_str().unwrap();
            assert_eq!(report["diagnoses"], serde_json::json!([]), "{path}");
            assert_eq!(report["exit_phase"]["process_exiting"], false, "{path}");
        }
    }
}

/// A dump that matches nothing says so plainly and shows the exit facts.
#[test]
fn an_unmatched_dump_says_so() {
    let out = run(&[
        "analyze",
        public("breakpad/minidump2.dmp").to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert!(
        text.contains("Diagnosis: no known exit-time failure matched"),
        "{text}"
    );
    assert!(
        text.contains("Exit phase: no thread is exiting; blamed: thread 3060"),
        "{text}"
    );
}

/// --fail-on: 1 for a matching finding, 0 otherwise, and 2 for a bad input
/// whatever the policy.
#[test]
fn fail_on_policy_sets_the_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let known = dir.path().join("known.dmp");
    std::fs::write(&known, synth::crash_in_unloaded_module()).unwrap();
    let unknown = public("breakpad/minidump2.dmp");
    let bad = dir.path().join("bad.dmp");
    std::fs::write(&bad, b"garbage").unwrap();
    let status = |policy: &str, path: &Path| {
        let mut cmd = bin();
        cmd.args(["analyze", "--format", "json"]);
        if !policy.is_empty() {
            cmd.args(["--fail-on", policy]);
        }
        cmd.arg(path).output().unwrap().status.code()
    };
    assert_eq!(status("", &known), Some(0), "default is none");
    assert_eq!(status("none", &known), Some(0));
    assert_eq!(status("known", &known), Some(1));
    assert_eq!(status("unknown", &known), Some(0));
    assert_eq!(status("any", &known), Some(1));
    assert_eq!(status("known", &unknown), Some(0));
    assert_eq!(status("unknown", &unknown), Some(1));
    assert_eq!(status("any", &unknown), Some(1));
    assert_eq!(status("none", &bad), Some(2));
    assert_eq!(status("any", &bad), Some(2));
}

/// Conditions no built-in rule needs yet, on the real sample dumps: a thread
/// chosen by name, loaded and unloaded modules, and exceptions by name on
/// each OS (a signal name never matches a Windows code).
#[test]
fn named_threads_module_lists_and_exception_names_match_real_dumps() {
    let dir = tempfile::tempdir().unwrap();
    let rule = |id: &str, conditions: &str| {
        format!(
            "id = \"{id}\"\ntitle = \"t\"\nkind = \"crash\"\nsummary = \"s\"\nwhy = \"w\"\nfix = \"f\"\n\
             references = [\"https://example.com/{id}\"]\n[[match]]\n{conditions}\n\
             [[examples]]\nname = \"p\"\nexpect = \"match\"\nexception = \"0xC0000005\"\n\
             threads = [{{ id = 1, crashing = true, frames = [\"python312.dll!x\"] }}]\n\
             [[examples]]\nname = \"n\"\nexpect = \"no-match\"\nthreads = [{{ id = 1, frames = [\"a.exe\"] }}]\n"
        )
    };
    let rules = [
        (
            "finalizer-thread",
            "thread = \"named\"\nthread_name = \"python-*\"\nmodules_loaded = [\"python3*.dll\"]\nexception = [\"EXCEPTION_ACCESS_VIOLATION\"]",
        ),
        ("dxil-unloaded", "crash = true\nmodules_unloaded = [\"DXIL.DLL\"]"),
        ("segv-by-name", "exception = [\"SIGSEGV\"]"),
    ];
    for (id, conditions) in rules {
        std::fs::write(dir.path().join(format!("{id}.toml")), rule(id, conditions)).unwrap();
    }
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps");
    let out = bin()
        .args(["analyze", "--format", "json", "--signatures"])
        .arg(dir.path())
        .arg(&samples)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut matched: Vec<(String, String)> = Vec::new();
    for report in doc["reports"].as_array().unwrap() {
        let file = Path::new(report["path"].as_str().unwrap())
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        for d in report["diagnoses"].as_array().unwrap() {
            let id = d["signature"].as_str().unwrap();
            if rules.iter().any(|(r, _)| *r == id) {
                matched.push((id.to_string(), file.clone()));
            }
        }
    }
    matched.sort();
    let expected: Vec<(String, String)> = [
        ("dxil-unloaded", "dxc-after-unload.dmp"),
        ("finalizer-thread", "winml-epcatalog-release.dmp"),
        ("segv-by-name", "crash-at-exit-after-dlclose-linux.dmp"),
        ("segv-by-name", "cuda-runtime-teardown-at-exit-linux.dmp"),
        ("segv-by-name", "tls-destructor-crash-at-exit-linux.dmp"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(matched, expected);
}
