//! The development set of real text traces (issue #37): 60 traces from
//! public issue threads in `../shared/corpus/text`, each labelled from what
//! its thread established (`at_exit`, `failure_kind`, `best_label`). The
//! repository holds none of them; this test reads them there.
//!
//! Scoring, as the issue sets it: an exit-time case is answered when a
//! report's first diagnosis is its labelled family (the corpus's label ids
//! mapped to our rule ids below) or an exit-time generic of the same kind
//! (a crash or an abort by a crash rule, a hang by a hang rule; a label that
//! is itself generic by any exit-time rule of its kind). A "possibly"
//! answer counts as an answer, for the exit-time cases and for the
//! negatives alike: a negative must get no exit-time diagnosis at all,
//! established or possible, in any of its reports. `error` cases (CUDA
//! errors with no crash) count only by their family.

use crate::common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

/// The corpus's label ids and the rules that answer them.
const FAMILIES: &[(&str, &[&str])] = &[
    (
        "cuda-runtime-teardown-at-exit",
        &["cuda-runtime-teardown-at-exit"],
    ),
    (
        "cudnn-cublas-handle-destroy-at-exit",
        &["cuda-library-handle-at-exit"],
    ),
    (
        "hip-unregister-fatbinary-hang",
        &["hip-unregister-fatbinary-hang"],
    ),
    ("node-ort-env-release-late", &["ort-node-env-late-release"]),
    (
        "python-threads-after-finalization",
        &["python-thread-after-finalization"],
    ),
    (
        "python-exit-waits-nondaemon-threads",
        &["python-exit-waits-for-thread"],
    ),
    (
        "abort-in-static-destructors",
        &["abort-during-exit", "abort-in-destructor-at-exit"],
    ),
    (
        "thread-local-destructor-at-exit",
        &["tls-destructor-crash-at-exit", "tls-teardown-hang-at-exit"],
    ),
    (
        "dl-fini-loader-lock-deadlock",
        &["glibc-loader-lock-at-exit"],
    ),
    ("loader-lock-at-exit", &["loader-lock-at-exit"]),
    ("generic-crash-during-exit", &[]),
    ("generic-hang-during-exit", &[]),
];

/// The generic rules of process exit, by the kind they answer.
const CRASH_GENERICS: &[&str] = &[
    "crash-during-exit",
    "abort-during-exit",
    "crash-in-static-destructor",
    "crash-in-python-finalizer",
    "crash-in-unloaded-module",
];
const HANG_GENERICS: &[&str] = &["hang-during-exit", "loader-lock-at-exit"];

/// Rules that are no exit-time answer.
const NOT_EXIT: &[&str] = &["hang-during-work", "deadlock"];

/// The issue's bar: 34 of the 42 exit-time cases answered.
const ISSUE_BAR: usize = 34;
/// What this version answers, held as a floor so that no change slips
/// back. The cases it misses lack in their text what decided them in their
/// threads (the set's README: a stack cut off before its exit frames or
/// its quit path, an exit told only in the thread's title); the test
/// prints them.
const ANSWERED: usize = 35;
const _: () = assert!(ANSWERED >= ISSUE_BAR);

struct Case {
    file: String,
    at_exit: String,
    kind: String,
    label: String,
}

fn corpus() -> Option<(PathBuf, Vec<Case>)> {
    let dir = common::shared_dir().join("corpus/text");
    let table = std::fs::read_to_string(dir.join("cases.tsv")).ok()?;
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next()?.split('\t').collect();
    let column = |name: &str| header.iter().position(|h| *h == name);
    let (file, at_exit, kind, label) = (
        column("file")?,
        column("at_exit")?,
        column("failure_kind")?,
        column("best_label")?,
    );
    let cases = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split('\t').collect();
            let cell = |i: usize| cells.get(i).copied().unwrap_or("").to_string();
            Case {
                file: cell(file),
                at_exit: cell(at_exit),
                kind: cell(kind),
                label: cell(label),
            }
        })
        .collect();
    Some((dir.join("cases"), cases))
}

/// Every rule's kind (`crash` or `hang`), from `signatures list` (`ID
/// KIND TITLE` a line).
fn rule_kinds() -> Vec<(String, String)> {
    let out = common::bin().args(["signatures", "list"]).output().unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            Some((words.next()?.to_string(), words.next()?.to_string()))
        })
        .collect()
}

/// Each report's first diagnosis: its rule and whether it is only possible.
fn first_answers(reports: &[&Value]) -> Vec<(String, bool)> {
    reports
        .iter()
        .filter_map(|r| r["diagnoses"].as_array()?.first())
        .map(|d| {
            (
                d["signature"].as_str().unwrap().to_string(),
                d["possible"].is_string(),
            )
        })
        .collect()
}

/// The rules that answer an exit-time case right: its family's, the
/// generic ones of its kind, and for a `generic-` label every exit-time
/// rule of its kind.
fn wanted<'a>(case: &Case, kinds: &'a [(String, String)]) -> BTreeSet<&'a str> {
    let family = FAMILIES
        .iter()
        .find(|(label, _)| *label == case.label)
        .unwrap_or_else(|| panic!("{}: unknown label {}", case.file, case.label));
    let mut wanted: BTreeSet<&str> = family.1.iter().copied().collect();
    let kind = match case.kind.as_str() {
        "crash" | "abort" => Some("crash"),
        "hang" => Some("hang"),
        _ => None,
    };
    match kind {
        Some("crash") => wanted.extend(CRASH_GENERICS),
        Some(_) => wanted.extend(HANG_GENERICS),
        None => {}
    }
    if case.label.starts_with("generic-") {
        for (id, k) in kinds {
            if Some(k.as_str()) == kind && !NOT_EXIT.contains(&id.as_str()) {
                wanted.insert(id);
            }
        }
    }
    wanted
}

#[test]
fn the_development_set() {
    let Some((dir, cases)) = corpus() else {
        common::skip::skip(
            "text_corpus::the_development_set",
            "../shared/corpus/text/cases.tsv is not there",
        );
        return;
    };
    let kinds = rule_kinds();
    let kind_of = |id: &str| {
        kinds
            .iter()
            .find(|(rule, _)| rule == id)
            .map(|(_, k)| k.as_str())
    };
    let mut paths: Vec<PathBuf> = cases.iter().map(|c| dir.join(&c.file)).collect();
    paths.retain(|p| p.exists());
    assert_eq!(paths.len(), cases.len(), "every listed case is there");
    let out = common::bin()
        .args(["analyze", "--format", "json"])
        .args(&paths)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reports = doc["reports"].as_array().unwrap();
    // Reports are named after their file (`path:LINE` for several).
    let of = |case: &Case| -> Vec<&Value> {
        let path = dir.join(&case.file).to_string_lossy().into_owned();
        reports
            .iter()
            .filter(|r| {
                let p = r["path"].as_str().unwrap_or("");
                p == path || p.starts_with(&format!("{path}:"))
            })
            .collect()
    };
    let mut answered = Vec::new();
    let mut missed = Vec::new();
    let mut false_answers = Vec::new();
    let mut positives = 0;
    let mut negatives = 0;
    for case in &cases {
        let reports = of(case);
        let firsts = first_answers(&reports);
        match case.at_exit.as_str() {
            "yes" => {
                positives += 1;
                let wanted = wanted(case, &kinds);
                match firsts.iter().find(|(id, _)| wanted.contains(id.as_str())) {
                    Some((id, possible)) => answered.push(format!(
                        "{}: {}{id}",
                        case.file,
                        if *possible { "possibly " } else { "" }
                    )),
                    None => missed.push(format!("{}: {:?}", case.file, firsts)),
                }
            }
            "no" => {
                negatives += 1;
                let exit_time: Vec<String> = reports
                    .iter()
                    .flat_map(|r| r["diagnoses"].as_array().into_iter().flatten())
                    .map(|d| d["signature"].as_str().unwrap().to_string())
                    .filter(|id| !NOT_EXIT.contains(&id.as_str()) && kind_of(id).is_some())
                    .collect();
                if !exit_time.is_empty() {
                    false_answers.push(format!("{}: {exit_time:?}", case.file));
                }
            }
            _ => {}
        }
    }
    assert_eq!(
        (positives, negatives),
        (42, 17),
        "the set as its README counts it"
    );
    eprintln!(
        "exit-time cases answered: {} of {positives} (the issue's bar: {ISSUE_BAR})\n  {}\nmissed:\n  {}\nnegatives with an exit-time answer: {} of {negatives}",
        answered.len(),
        answered.join("\n  "),
        missed.join("\n  "),
        false_answers.len()
    );
    assert!(
        false_answers.is_empty(),
        "negatives answered as exit-time failures: {false_answers:#?}"
    );
    assert!(
        answered.len() >= ANSWERED,
        "{} of {positives} exit-time cases answered (the floor is {ANSWERED}); missed: {missed:#?}",
        answered.len()
    );
}
