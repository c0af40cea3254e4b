//! `.github/workflows/ci.yml` (issue 11) and `release.yml` (issue 30): they
//! cannot run here, so this test checks what can be checked: they are valid
//! YAML; CI has a Linux, a Windows and a macOS job each running fmt, clippy
//! with warnings denied and `cargo test --locked`; the release builds and
//! packs Linux, Windows and macOS binaries with scripts/package.sh (which
//! tests/ci_recipe.rs runs) and publishes them; and every `run:` step is
//! cargo, rustup or a script of this repository that exists.

use std::path::Path;

use yaml_rust2::{Yaml, YamlLoader};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn workflow() -> Yaml {
    load("ci.yml")
}

fn load(name: &str) -> Yaml {
    let text = std::fs::read_to_string(root().join(".github/workflows").join(name)).unwrap();
    let mut docs = YamlLoader::load_from_str(&text)
        .unwrap_or_else(|e| panic!("{name} is not valid YAML: {e}"));
    assert_eq!(docs.len(), 1);
    docs.remove(0)
}

/// The GitHub actions a workflow may use: checking out, and passing the
/// release's archives from job to job.
const ACTIONS: [&str; 3] = [
    "actions/checkout@",
    "actions/upload-artifact@",
    "actions/download-artifact@",
];

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
    let mut problems = Vec::new();
    for file in ["ci.yml", "release.yml"] {
        problems.extend(
            run_step_problems(&load(file))
                .into_iter()
                .map(|p| format!("{file}: {p}")),
        );
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

fn run_step_problems(doc: &Yaml) -> Vec<String> {
    let jobs = doc["jobs"].as_hash().expect("jobs");
    assert!(!jobs.is_empty());
    let mut problems = Vec::new();
    for (name, job) in jobs {
        for step in job["steps"].as_vec().expect("steps") {
            if let Some(action) = step["uses"].as_str() {
                if !ACTIONS.iter().any(|a| action.starts_with(a)) {
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
    problems
}

/// The release: a tag builds and packs the three systems' binaries with
/// scripts/package.sh, and the last job publishes them.
#[test]
fn a_tag_packs_linux_windows_and_macos_binaries_and_publishes_them() {
    let doc = load("release.yml");
    let tags = doc["on"]["push"]["tags"].as_vec().expect("on: push: tags");
    assert!(tags.iter().any(|t| t.as_str() == Some("v*")));
    let build = &doc["jobs"]["build"];
    let targets: Vec<&str> = build["strategy"]["matrix"]["include"]
        .as_vec()
        .expect("a matrix of targets")
        .iter()
        .filter_map(|t| t["target"].as_str())
        .collect();
    for system in ["linux", "windows", "apple-darwin"] {
        assert!(
            targets.iter().any(|t| t.contains(system)),
            "no {system} target in {targets:?}"
        );
    }
    let runs: Vec<&str> = build["steps"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    assert!(
        runs.iter()
            .any(|r| r.starts_with("bash scripts/package.sh --target")),
        "{runs:?}"
    );
    let publish: Vec<&str> = doc["jobs"]["publish"]["steps"]
        .as_vec()
        .expect("a publish job")
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    assert!(
        publish
            .iter()
            .any(|r| r.starts_with("bash scripts/release-publish.sh")),
        "{publish:?}"
    );
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

/// `.ci/run`, the check that runs here, runs the same three commands
/// (through its `step` function, which times them).
#[test]
fn ci_run_runs_what_the_workflow_runs() {
    let script = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    for expected in [
        "cargo fmt --all -- --check",
        "cargo clippy --locked --all-targets -- -D warnings",
        "cargo test --locked",
    ] {
        assert!(
            script
                .lines()
                .any(|l| l.trim().trim_start_matches("step ") == expected),
            ".ci/run does not run `{expected}`"
        );
    }
}
