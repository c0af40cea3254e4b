//! The Linux CI recipe of docs/ci.md, run as printed (issue 11): the steps
//! and the table of what each step ends with are read from docs/ci.md
//! between the `ci-recipe` markers, so a change to the recipe is a change
//! to this test. Only the test command (`python -m pytest`), the hang timeout
//! (`900`) and where the release downloads are (`DUMPTRIAGE_RELEASES`) are
//! replaced, as the recipe tells its reader to. The install step runs as
//! printed, in a fresh home, against release archives made by
//! scripts/package.sh from the binary under test and served over HTTP;
//! `uses:` steps (GitHub's cache) are GitHub's own and not run, and the
//! cache is empty as on a first run.
#![cfg(target_os = "linux")]

use crate::common;
use crate::common::httpd;
use crate::common::programs;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use programs::programs;
use yaml_rust2::{Yaml, YamlLoader};

/// What the recipe says to replace, and what the test puts there.
const COMMAND_PLACEHOLDER: &str = "python -m pytest";
const TIMEOUT_PLACEHOLDER: &str = "--hang-timeout 900";
const TEST_TIMEOUT: &str = "--hang-timeout 3";
/// The core recipe's watchdog, and the test's.
const QUIT_TIMEOUT_PLACEHOLDER: &str = "timeout -s QUIT 900";
const QUIT_TIMEOUT: &str = "timeout -s QUIT 3";

/// The variable naming where the release downloads are.
const RELEASES: &str = "DUMPTRIAGE_RELEASES";

/// One step of the recipe, as GitHub Actions would run it.
struct Step {
    name: String,
    /// `if: always()`: runs even when an earlier step failed.
    always: bool,
    run: String,
    /// The step's `env:`.
    env: Vec<(String, String)>,
}

/// The recipe: its steps, and the rows of its table (the command's
/// behaviour, then the status each step ends with).
struct Recipe {
    steps: Vec<Step>,
    rows: Vec<(String, Vec<i32>)>,
}

fn the_run_recipe() -> Recipe {
    recipe_between("ci-recipe")
}

/// The recipe between `<!-- NAME:begin` and `<!-- NAME:end -->`.
fn recipe_between(marker: &str) -> Recipe {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md")).unwrap();
    let begin = doc
        .find(&format!("<!-- {marker}:begin"))
        .unwrap_or_else(|| panic!("docs/ci.md has no `<!-- {marker}:begin` marker"));
    let end = doc[begin..]
        .find(&format!("<!-- {marker}:end -->"))
        .unwrap_or_else(|| panic!("docs/ci.md has no `<!-- {marker}:end -->` marker"))
        + begin;
    let section = &doc[begin..end];

    let yaml_start = section
        .find("```yaml\n")
        .expect("no ```yaml block in the recipe")
        + 8;
    let yaml_len = section[yaml_start..]
        .find("```")
        .expect("unclosed ```yaml block");
    let docs = YamlLoader::load_from_str(&section[yaml_start..yaml_start + yaml_len])
        .expect("the recipe is valid YAML");
    let steps: Vec<Step> = docs[0]
        .as_vec()
        .expect("the recipe is a list of steps")
        .iter()
        .filter(|step| match step["uses"].as_str() {
            // GitHub's cache: not run here (a first run: nothing cached).
            Some(action) if action.starts_with("actions/cache@") => false,
            Some(action) => panic!("the recipe uses {action}, which this test does not know"),
            None => true,
        })
        .map(|step| Step {
            env: step["env"]
                .as_hash()
                .map(|env| {
                    env.iter()
                        .map(|(k, v)| {
                            (
                                k.as_str().expect("env name").to_string(),
                                v.as_str().expect("env value").to_string(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default(),
            name: step["name"].as_str().expect("each step has a name").into(),
            always: match &step["if"] {
                Yaml::BadValue => false,
                Yaml::String(condition) if condition == "always()" => true,
                other => panic!("condition {other:?} is not understood by this test"),
            },
            run: step["run"].as_str().expect("each step has `run`").into(),
        })
        .collect();

    let table: Vec<Vec<String>> = section[yaml_start + yaml_len..]
        .lines()
        .filter(|line| line.starts_with('|'))
        .map(|line| {
            line.trim_matches('|')
                .split('|')
                .map(|cell| cell.trim().to_string())
                .collect()
        })
        .collect();
    let (header, body) = table.split_first().expect("no table in the recipe");
    let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        header[1..].iter().map(String::as_str).collect::<Vec<_>>(),
        names,
        "the table's columns are the steps, in order"
    );
    let rows = body
        .iter()
        .filter(|row| !row[0].starts_with("---"))
        .map(|row| {
            let statuses = row[1..]
                .iter()
                .map(|cell| cell.parse().unwrap_or_else(|_| panic!("status {cell:?}")))
                .collect();
            (row[0].clone(), statuses)
        })
        .collect();
    Recipe { steps, rows }
}

/// The program of tests/programs/ that behaves as a table row says.
fn command_for(behaviour: &str) -> Vec<PathBuf> {
    let dir = programs();
    match behaviour {
        "passes" => vec![dir.join("exit_status"), PathBuf::from("0")],
        "crashes at exit (SIGSEGV)" => vec![dir.join("unload_crash"), dir.join("libplugin.so")],
        "hangs at exit" => vec![dir.join("hip_exit_hang")],
        other => panic!("the recipe's table has a row {other:?} that this test has no program for"),
    }
}

fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// What running the recipe left: each step's status (None: skipped), and
/// the folder it ran in.
struct Outcome {
    statuses: Vec<Option<i32>>,
    dir: tempfile::TempDir,
    summary: PathBuf,
    stderr: String,
}

/// Runs the steps in a fresh folder the way a GitHub Actions job does:
/// each `run:` with `bash -e`, a step after a failure only when
/// `if: always()`, `dumptriage` on the PATH, `$GITHUB_STEP_SUMMARY` set.
fn run_recipe(recipe: &Recipe, command: &[PathBuf], releases: &str) -> Outcome {
    run_recipe_with(recipe, command, releases, &[])
}

/// As [`run_recipe`], with `timeout` replaced by the test's own, and
/// `extra_path` on the PATH (the binary under test, for a recipe that
/// follows the install steps).
fn run_recipe_with(
    recipe: &Recipe,
    command: &[PathBuf],
    releases: &str,
    extra_path: &[&Path],
) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("job");
    std::fs::create_dir(&work).unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let summary = dir.path().join("step-summary.md");
    let github_path = dir.path().join("github-path");
    std::fs::write(&github_path, "").unwrap();
    // The runner's PATH, without the binary under test: only the install
    // step puts dumptriage on it.
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_dumptriage"))
        .parent()
        .unwrap();
    let base_path: Vec<String> = std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .filter(|p| Path::new(p) != bin_dir)
        .map(str::to_string)
        .collect();
    let command = command
        .iter()
        .map(|p| shell_quote(p))
        .collect::<Vec<_>>()
        .join(" ");

    let mut statuses = Vec::new();
    let mut failed = false;
    let mut stderr = String::new();
    for (i, step) in recipe.steps.iter().enumerate() {
        if failed && !step.always {
            statuses.push(None);
            continue;
        }
        let script = step
            .run
            .replace(COMMAND_PLACEHOLDER, &command)
            .replace(TIMEOUT_PLACEHOLDER, TEST_TIMEOUT)
            .replace(QUIT_TIMEOUT_PLACEHOLDER, QUIT_TIMEOUT);
        let file = dir.path().join(format!("step-{i}.sh"));
        std::fs::write(&file, script).unwrap();
        // What earlier steps added to GITHUB_PATH comes first, as on GitHub.
        let added = std::fs::read_to_string(&github_path).unwrap();
        let mut path: Vec<String> = added.lines().rev().map(str::to_string).collect();
        path.extend(extra_path.iter().map(|p| p.display().to_string()));
        path.extend(base_path.iter().cloned());
        let mut bash = Command::new("bash");
        for (name, value) in &step.env {
            let value = if name == RELEASES { releases } else { value };
            bash.env(name, value);
        }
        let out = bash
            .arg("-e")
            .arg(&file)
            .current_dir(&work)
            .env("HOME", &home)
            .env("PATH", path.join(":"))
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("GITHUB_PATH", &github_path)
            .env_remove("_NT_SYMBOL_PATH")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        stderr.push_str(&format!(
            "--- {}\n{}",
            step.name,
            String::from_utf8_lossy(&out.stderr)
        ));
        // A shell reports a death by signal N as 128 + N.
        let status = out
            .status
            .code()
            .or(out.status.signal().map(|s| 128 + s))
            .unwrap();
        failed |= status != 0;
        statuses.push(Some(status));
    }
    Outcome {
        statuses,
        dir,
        summary,
        stderr,
    }
}

fn dumps(work: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(work.join("dumps"))
        .expect("the run step creates dumps/")
        .map(|e| e.unwrap().path())
        .collect();
    found.sort();
    found
}

#[test]
fn the_ci_recipe_runs_as_printed() {
    let recipe = the_run_recipe();
    let all_runs: String = recipe.steps.iter().map(|s| s.run.as_str()).collect();
    for placeholder in [COMMAND_PLACEHOLDER, TIMEOUT_PLACEHOLDER] {
        assert_eq!(
            all_runs.matches(placeholder).count(),
            1,
            "the recipe should name `{placeholder}` once: the test replaces it"
        );
    }
    // The release downloads: the binary under test, packed by the
    // release's own script, served as GitHub serves a release's assets.
    let releases = tempfile::tempdir().unwrap();
    let version = env!("CARGO_PKG_VERSION");
    let tag_dir = releases.path().join(format!("v{version}"));
    let packed = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/package.sh"))
        .args(["--binary", env!("CARGO_BIN_EXE_dumptriage"), "--out"])
        .arg(&tag_dir)
        .output()
        .unwrap();
    assert!(
        packed.status.success(),
        "{}",
        String::from_utf8_lossy(&packed.stderr)
    );
    let server = httpd::Httpd::start(releases.path().to_path_buf(), false);
    let releases_url = server.url.trim_end_matches('/').to_string();
    assert!(
        all_runs.contains(&format!("dumptriage-{version}-")),
        "the install step names this version, {version}"
    );

    let behaviours: Vec<&str> = recipe.rows.iter().map(|(b, _)| b.as_str()).collect();
    assert_eq!(
        behaviours,
        ["passes", "crashes at exit (SIGSEGV)", "hangs at exit"],
        "the recipe must promise something for a passing, crashing and hanging command"
    );

    for (behaviour, promised) in &recipe.rows {
        let outcome = run_recipe(&recipe, &command_for(behaviour), &releases_url);
        let work = outcome.dir.path().join("job");
        let context = format!("{behaviour}:\n{}", outcome.stderr);
        let promised: Vec<Option<i32>> = promised.iter().copied().map(Some).collect();
        assert_eq!(outcome.statuses, promised, "{context}");

        // The install step put the packed binary in the job's home.
        let installed = outcome.dir.path().join("home/.local/bin/dumptriage");
        assert!(installed.is_file(), "{context}");
        // The files the recipe promises.
        let found = dumps(&work);
        let summary = std::fs::read_to_string(&outcome.summary).expect("the job summary");
        let junit = std::fs::read_to_string(work.join("dumps-junit.xml")).expect("the JUnit file");
        if behaviour == "passes" {
            assert!(found.is_empty(), "{found:?}");
            assert!(
                summary.contains("No dumps: nothing crashed or hung."),
                "{summary}"
            );
            assert!(junit.contains(r#"tests="0""#), "{junit}");
        } else {
            assert_eq!(found.len(), 1, "one dump per capture: {found:?}\n{context}");
            let name = found[0].file_name().unwrap().to_string_lossy().into_owned();
            let process = command_for(behaviour)[0]
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            assert!(
                name.starts_with(&format!("{process}_")) && name.ends_with(".dmp"),
                "{name}"
            );
            assert!(
                summary.contains("| Diagnosis | Kind | Dumps | Fix |"),
                "{summary}"
            );
            assert!(
                junit.contains(r#"tests="1" failures="1" errors="0""#),
                "{junit}"
            );
        }
        if behaviour == "hangs at exit" {
            assert!(
                summary.contains("hip-unregister-fatbinary-hang"),
                "{summary}"
            );
        }
        if behaviour.starts_with("crashes") {
            assert!(summary.contains("| crash |"), "{summary}");
        }
    }
}

/// The core-file recipe of docs/ci.md (issue 25): the kernel's core of a crash,
/// and of a hang dumped by the watchdog's SIGQUIT, collected and analysed
/// as the steps say, with the statuses the table promises.
#[test]
fn the_core_recipe_runs_as_printed() {
    let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap_or_default();
    if pattern.trim() != "core" {
        common::skip::skip(
            "ci_recipe::cores",
            "kernel.core_pattern is not `core`: cores do not land in the job's folder",
        );
        return;
    }
    let recipe = recipe_between("ci-recipe-cores");
    let all_runs: String = recipe.steps.iter().map(|s| s.run.as_str()).collect();
    for placeholder in [COMMAND_PLACEHOLDER, QUIT_TIMEOUT_PLACEHOLDER] {
        assert_eq!(all_runs.matches(placeholder).count(), 1, "{placeholder}");
    }
    let behaviours: Vec<&str> = recipe.rows.iter().map(|(b, _)| b.as_str()).collect();
    assert_eq!(
        behaviours,
        ["passes", "crashes at exit (SIGSEGV)", "hangs at exit"]
    );
    let binary = Path::new(env!("CARGO_BIN_EXE_dumptriage"))
        .parent()
        .unwrap();
    for (behaviour, promised) in &recipe.rows {
        let outcome = run_recipe_with(&recipe, &command_for(behaviour), "", &[binary]);
        let context = format!("{behaviour}:\n{}", outcome.stderr);
        let promised: Vec<Option<i32>> = promised.iter().copied().map(Some).collect();
        assert_eq!(outcome.statuses, promised, "{context}");
        let cores: Vec<PathBuf> = std::fs::read_dir(outcome.dir.path().join("job/cores"))
            .expect("the triage step makes cores/")
            .map(|e| e.unwrap().path())
            .collect();
        let summary = std::fs::read_to_string(&outcome.summary).unwrap_or_default();
        match behaviour.as_str() {
            "passes" => assert!(cores.is_empty(), "{cores:?}"),
            "hangs at exit" => {
                assert_eq!(cores.len(), 1, "{cores:?}\n{context}");
                assert!(
                    summary.contains("hip-unregister-fatbinary-hang"),
                    "{summary}"
                );
            }
            _ => {
                assert_eq!(cores.len(), 1, "{cores:?}\n{context}");
                assert!(summary.contains("| crash |"), "{summary}");
            }
        }
    }
}
