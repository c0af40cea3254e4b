//! `.github/workflows/ci.yml` (issue 11): it cannot run here, so this test
//! checks what can be checked: it is valid YAML, it has a Linux, a Windows
//! and a macOS job each running fmt, clippy with warnings denied and
//! `cargo test --locked`, and every `run:` step is cargo, rustup or a script
//! of this repository that exists.

use std::path::Path;

use yaml_rust2::{Yaml, YamlLoader};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn workflow() -> Yaml {
    let text = std::fs::read_to_string(root().join(".github/workflows/ci.yml")).unwrap();
    let mut docs = YamlLoader::load_from_str(&text).expect("ci.yml is valid YAML");
    assert_eq!(docs.len(), 1);
    docs.remove(0)
}

/// Whether one command line of a `run:` step is one this project owns.
fn allowed(line: &str) -> Result<(), String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["cargo", ..] | ["rustup", ..] => Ok(()),
        ["bash", script, ..] => {
            if !(script.starts_with("scripts/") || script.starts_with(".ci/")) {
                return Err(format!("`{line}` runs a script from outside the project"));
            }
            if root().join(script).is_file() {
                Ok(())
            } else {
                Err(format!("`{line}`: {script} does not exist"))
            }
        }
        _ => Err(format!(
            "`{line}` is not cargo, rustup or one of the project's scripts"
        )),
    }
}

#[test]
fn every_run_step_is_cargo_rustup_or_a_project_script() {
    let doc = workflow();
    let jobs = doc["jobs"].as_hash().expect("jobs");
    assert!(!jobs.is_empty());
    let mut problems = Vec::new();
    for (name, job) in jobs {
        for step in job["steps"].as_vec().expect("steps") {
            if let Some(action) = step["uses"].as_str() {
                if !action.starts_with("actions/checkout@") {
                    problems.push(format!("{name:?}: uses {action}"));
                }
                continue;
            }
            let run = step["run"]
                .as_str()
                .unwrap_or_else(|| panic!("{name:?}: a step with neither uses nor run"));
            for line in run.lines().map(str::trim).filter(|l| !l.is_empty()) {
                if let Err(problem) = allowed(line) {
                    problems.push(format!("{name:?}: {problem}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn linux_windows_and_macos_each_run_fmt_clippy_and_the_tests() {
    let doc = workflow();
    for (job, runner) in [
        ("linux", "ubuntu-"),
        ("windows", "windows-"),
        ("macos", "macos-"),
    ] {
        let job_doc = &doc["jobs"][job];
        let runs_on = job_doc["runs-on"].as_str().unwrap_or_default();
        assert!(runs_on.starts_with(runner), "{job}: runs-on {runs_on:?}");
        let runs: Vec<&str> = job_doc["steps"]
            .as_vec()
            .unwrap_or_else(|| panic!("{job}: no steps"))
            .iter()
            .filter_map(|step| step["run"].as_str())
            .collect();
        for expected in [
            "cargo fmt --all -- --check",
            "cargo clippy --locked --all-targets -- -D warnings",
            "cargo test --locked",
        ] {
            assert!(runs.contains(&expected), "{job} does not run `{expected}`");
        }
    }
}

/// `.ci/run`, the check that runs here, runs the same three commands.
#[test]
fn ci_run_runs_what_the_workflow_runs() {
    let script = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    for expected in [
        "cargo fmt --all -- --check",
        "cargo clippy --locked --all-targets -- -D warnings",
        "cargo test --locked",
    ] {
        assert!(
            script.lines().any(|l| l.trim() == expected),
            ".ci/run does not run `{expected}`"
        );
    }
}
