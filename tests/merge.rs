//! `dumptriage merge` (issue 40) through the real binary: a folder of
//! every sample dump (and an unreadable one), analysed whole and in four
//! shards; the shards' JSON reports merged give exactly the single run's
//! output, in every format: groups, counts, each dump's report, order.
//! Broken and foreign shards are one error each, and the rest is merged.
//! (The folder is made of symbolic links: Unix only.)
#![cfg(unix)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A flat folder of links to every sample dump, and a file that is not one.
fn folder(root: &Path) -> PathBuf {
    let dumps = root.join("dumps");
    std::fs::create_dir_all(&dumps).unwrap();
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps");
    let mut all = common::dumps_in(&samples);
    all.extend(common::dumps_in(&samples.join("linux")));
    all.extend(common::dumps_in(&samples.join("vendor")));
    assert!(all.len() >= 38, "{}", all.len());
    for dump in &all {
        std::os::unix::fs::symlink(dump, dumps.join(dump.file_name().unwrap())).unwrap();
    }
    std::fs::write(dumps.join("zz-truncated.dmp"), b"MDMP\x93\xa7").unwrap();
    dumps
}

/// The symbol folders the samples need, the same for every run (the links'
/// folder has none beside them).
fn symbols() -> Vec<String> {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps");
    ["symbols", "linux/symbols"]
        .iter()
        .flat_map(|s| {
            [
                "--symbols".to_string(),
                samples.join(s).display().to_string(),
            ]
        })
        .collect()
}

fn dumptriage(args: &[&str], paths: &[PathBuf], cwd: &Path) -> Output {
    common::bin()
        .args(args)
        .args(symbols())
        .args(paths)
        .current_dir(cwd)
        .output()
        .unwrap()
}

/// JUnit's timestamp is the time of the run.
fn without_timestamp(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("timestamp=\"") {
            Some(at) => format!("{}{}", &l[..at], &l[at + 30..]),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn four_shards_merged_equal_one_run_in_every_format() {
    let root = tempfile::tempdir().unwrap();
    let dumps = folder(root.path());
    let cwd = root.path();
    // Each shard gets every fourth file of the listing, so the merge must
    // put them back in order.
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dumps)
        .unwrap()
        .map(|e| PathBuf::from("dumps").join(e.unwrap().file_name()))
        .collect();
    files.sort();
    let mut shards = Vec::new();
    for i in 0..4 {
        let part: Vec<PathBuf> = files.iter().skip(i).step_by(4).cloned().collect();
        let json = root.path().join(format!("shard-{i}.json"));
        let out = dumptriage(
            &["analyze", "--format", "json", "-o", json.to_str().unwrap()],
            &part,
            cwd,
        );
        assert!(matches!(out.status.code(), Some(0..=2)), "{out:?}");
        shards.push(json);
    }
    for format in [
        "json", "text", "markdown", "junit", "sarif", "github", "html",
    ] {
        let single = dumptriage(
            &["analyze", "--format", format],
            &[PathBuf::from("dumps")],
            cwd,
        );
        let merged = dumptriage(&["merge", "--format", format], &shards, cwd);
        assert_eq!(
            single.status.code(),
            merged.status.code(),
            "{format}: the exit status (the truncated dump makes it 2)"
        );
        let (a, b) = (
            without_timestamp(&String::from_utf8_lossy(&single.stdout)),
            without_timestamp(&String::from_utf8_lossy(&merged.stdout)),
        );
        if a != b {
            let line = a
                .lines()
                .zip(b.lines())
                .position(|(x, y)| x != y)
                .unwrap_or(0);
            panic!(
                "{format}: the merge differs from the single run at line {}:\n  single {:?}\n  merged {:?}",
                line + 1,
                a.lines().nth(line),
                b.lines().nth(line)
            );
        }
        if format == "json" {
            let doc: serde_json::Value = serde_json::from_str(&b).unwrap();
            assert_eq!(doc["summary"]["dumps"], files.len());
            assert_eq!(doc["summary"]["failed"], 1);
            assert!(doc["summary"]["groups"].as_array().unwrap().len() > 10);
        }
    }
    // The same with a baseline applied at the merge, and --fail-on new.
    let baseline = root.path().join("baseline.toml");
    let out = dumptriage(
        &["baseline", "-o", baseline.to_str().unwrap()],
        &[PathBuf::from("dumps")],
        cwd,
    );
    assert_eq!(out.status.code(), Some(2), "the truncated dump");
    let b = baseline.to_str().unwrap();
    let single = dumptriage(
        &[
            "analyze",
            "--format",
            "json",
            "--baseline",
            b,
            "--fail-on",
            "new",
        ],
        &[PathBuf::from("dumps")],
        cwd,
    );
    let merged = dumptriage(
        &[
            "merge",
            "--format",
            "json",
            "--baseline",
            b,
            "--fail-on",
            "new",
        ],
        &shards,
        cwd,
    );
    assert_eq!(single.stdout, merged.stdout);
    assert_eq!(single.status.code(), merged.status.code());
}

/// A shard that is not a report, one of another signature version, and a
/// dump in two shards: one error or warning each, and the rest merged.
#[test]
fn broken_and_foreign_shards() {
    let dir = tempfile::tempdir().unwrap();
    let linux = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps/linux");
    let good = dir.path().join("good.json");
    let out = common::bin()
        .args(["analyze", "--format", "json", "-o"])
        .arg(&good)
        .arg(linux.join("abort-during-exit-linux.dmp"))
        .arg(linux.join("tls-destructor-crash-at-exit-linux.dmp"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = std::fs::read_to_string(&good).unwrap();
    let old = dir.path().join("old.json");
    std::fs::write(
        &old,
        text.replace(
            "\"crash_signature_version\": 2",
            "\"crash_signature_version\": 1",
        ),
    )
    .unwrap();
    let junk = dir.path().join("junk.json");
    std::fs::write(
        &junk,
        "{\"schema_version\": 1, \"reports\": [{\"path\": 3}]}",
    )
    .unwrap();
    let again = dir.path().join("again.json");
    std::fs::copy(&good, &again).unwrap();
    let out = common::bin()
        .args(["merge", "--format", "json"])
        .args([&good, &old, &junk, &again])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["analysed"], 2, "the good shard, once");
    assert_eq!(doc["summary"]["failed"], 2);
    let errors = doc["summary"]["errors"].as_array().unwrap();
    let error_of = |name: &str| {
        errors
            .iter()
            .find(|e| e["path"].as_str().unwrap().ends_with(name))
            .unwrap()["error"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(error_of("old.json").contains("crash signature version 1"));
    assert!(error_of("junk.json").contains("not a dumptriage JSON report"));
    for e in errors {
        assert!(!e["error"].as_str().unwrap().contains('\n'));
    }
    assert_eq!(
        stderr.matches("kept from the first").count(),
        2,
        "each dump of the repeated shard: {stderr}"
    );
}

/// The code block of docs/ci.md between `<!-- NAME:begin` and
/// `<!-- NAME:end -->`.
fn docs_block(name: &str) -> String {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md")).unwrap();
    let start = docs
        .find(&format!("<!-- {name}:begin"))
        .unwrap_or_else(|| panic!("no {name} in docs/ci.md"));
    let end = docs[start..].find(&format!("<!-- {name}:end -->")).unwrap() + start;
    let block = &docs[start..end];
    let code = &block[block.find("```bash\n").unwrap() + 8..];
    code[..code.find("```").unwrap()].to_string()
}

/// docs/ci.md's shard script and GNU parallel recipe, run as printed with
/// this machine as the one host (`:`): the merged page equals one run's.
#[test]
fn the_gnu_parallel_recipe_runs_as_printed() {
    if Command::new("parallel").arg("--version").output().is_err() {
        common::skip::skip(
            "merge::gnu_parallel",
            "GNU parallel is not installed (scripts/ci-setup-linux.sh installs it)",
        );
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let links = folder(root.path());
    // The recipe finds regular files: copies, not links.
    let dumps = root.path().join("work/dumps");
    std::fs::create_dir_all(&dumps).unwrap();
    for entry in std::fs::read_dir(&links).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dumps.join(path.file_name().unwrap())).unwrap();
    }
    let work = root.path().join("work");
    let script = work.join("analyze-shard.sh");
    std::fs::write(&script, docs_block("shard-script")).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(work.join("hosts.txt"), ":\n").unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_dumptriage"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &docs_block("shard-parallel")])
        .current_dir(&work)
        .env("PATH", &path)
        .env("HOME", root.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "the merge says the truncated dump: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for shard in 0..4 {
        assert!(work.join(format!("shard-0{shard}.json")).is_file());
    }
    let merged = std::fs::read_to_string(work.join("report.html")).unwrap();
    let single = common::bin()
        .args(["analyze", "--format", "html", "dumps"])
        .current_dir(&work)
        .output()
        .unwrap();
    assert!(
        merged == String::from_utf8_lossy(&single.stdout),
        "the recipe's report differs from one run's"
    );
}
