//! The signature database: known exit-time failures as rule files, loaded,
//! linted, and matched against a report.
//!
//! Works on plain stacks and needs no dump: a rule's examples are stacks
//! written by hand (see [`examples`]).

pub mod docs;
pub mod examples;
pub mod matcher;
pub mod pattern;
pub mod rule;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::model::{Diagnosis, Report};
pub use rule::{Problem, Rule};

mod builtin {
    include!(concat!(env!("OUT_DIR"), "/builtin_signatures.rs"));
}

/// The rules of a run, by id: the built-in ones, overridden or extended by
/// `--signatures DIR`.
#[derive(Debug, Default)]
pub struct Database {
    rules: BTreeMap<String, Rule>,
}

impl Database {
    /// The rules compiled into the binary.
    pub fn builtin() -> Result<Database, Vec<Problem>> {
        let mut db = Database::default();
        db.add_files(builtin_files())?;
        Ok(db)
    }

    /// The built-in rules, then each folder's rules in order; a rule with the
    /// id of an earlier one replaces it.
    pub fn load(extra: &[PathBuf]) -> Result<Database, Vec<Problem>> {
        let mut db = Database::builtin()?;
        for dir in extra {
            db.add_files(read_dir(dir)?)?;
        }
        Ok(db)
    }

    /// Adds rule files (name, text); ids must be unique among them.
    fn add_files(
        &mut self,
        files: impl IntoIterator<Item = (String, String)>,
    ) -> Result<(), Vec<Problem>> {
        let (rules, problems) = parse_all(files);
        if !problems.is_empty() {
            return Err(problems);
        }
        for rule in rules {
            self.rules.insert(rule.id.clone(), rule);
        }
        Ok(())
    }

    pub fn rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules.values()
    }

    pub fn get(&self, id: &str) -> Option<&Rule> {
        self.rules.get(id)
    }

    /// Every matching rule, the answer first. The report must have been
    /// classified by `exit_phase::classify`.
    pub fn diagnose(&self, report: &Report) -> Vec<Diagnosis> {
        let rules: Vec<&Rule> = self.rules.values().collect();
        matcher::diagnose(&rules, report)
    }
}

/// Lints a folder of rule files: every problem of every file.
pub fn lint_dir(dir: &Path) -> Vec<Problem> {
    match read_dir(dir) {
        Ok(files) => lint(files),
        Err(problems) => problems,
    }
}

/// Lints the rules compiled into the binary.
pub fn lint_builtin() -> Vec<Problem> {
    lint(builtin_files())
}

fn lint(files: impl IntoIterator<Item = (String, String)>) -> Vec<Problem> {
    let (rules, mut problems) = parse_all(files);
    problems.extend(rules.iter().flat_map(Rule::check_patterns));
    problems
}

fn builtin_files() -> impl Iterator<Item = (String, String)> {
    builtin::BUILTIN
        .iter()
        .map(|(name, text)| (format!("signatures/{name}"), text.to_string()))
}

/// Parses rule files, collecting all their problems and duplicate ids.
fn parse_all(files: impl IntoIterator<Item = (String, String)>) -> (Vec<Rule>, Vec<Problem>) {
    let mut rules: Vec<Rule> = Vec::new();
    let mut problems = Vec::new();
    // Ids seen so far, read even from files with other problems, so a
    // duplicate is reported whatever else is wrong.
    let mut seen: Vec<(String, String)> = Vec::new();
    for (file, text) in files {
        let stem = Path::new(&file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let id = text
            .parse::<toml::Table>()
            .ok()
            .and_then(|t| t.get("id")?.as_str().map(str::to_string));
        let duplicate = id
            .as_ref()
            .and_then(|id| seen.iter().find(|(i, _)| i == id));
        if let (Some(id), Some((_, first))) = (&id, duplicate) {
            problems.push(Problem {
                file: file.clone(),
                key: "id".to_string(),
                reason: format!("duplicate id {id:?}, already used by {first}"),
            });
        }
        let is_duplicate = duplicate.is_some();
        if let Some(id) = id {
            seen.push((id, file.clone()));
        }
        match rule::parse(&file, &stem, &text) {
            Ok(rule) if !is_duplicate => rules.push(rule),
            Ok(_) => {}
            Err(mut errors) => problems.append(&mut errors),
        }
    }
    (rules, problems)
}

/// The `*.toml` files of a folder, sorted, as (path, text).
fn read_dir(dir: &Path) -> Result<Vec<(String, String)>, Vec<Problem>> {
    let problem = |file: &Path, reason: String| {
        vec![Problem {
            file: file.display().to_string(),
            key: String::new(),
            reason,
        }]
    };
    let entries =
        std::fs::read_dir(dir).map_err(|e| problem(dir, format!("cannot read folder: {e}")))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(problem(dir, "no .toml rule files".to_string()));
    }
    paths
        .into_iter()
        .map(|path| {
            std::fs::read_to_string(&path)
                .map(|text| (path.display().to_string(), text))
                .map_err(|e| problem(&path, format!("cannot read: {e}")))
        })
        .collect()
}

/// The outcome of one rule example.
#[derive(Debug)]
pub struct ExampleOutcome {
    pub rule: String,
    pub example: String,
    /// None when the example behaved as expected.
    pub failure: Option<String>,
}

impl Database {
    /// Runs every example of the given rules against the whole database: a
    /// positive example must be diagnosed as its rule, first among the
    /// specific rules (and matched by no other specific rule); a negative
    /// one must not match its rule.
    pub fn test_examples<'a>(
        &'a self,
        rules: impl IntoIterator<Item = &'a Rule>,
    ) -> Vec<ExampleOutcome> {
        let mut outcomes = Vec::new();
        for rule in rules {
            for example in &rule.examples {
                let failure = match examples::to_report(example) {
                    Err(e) => Some(e),
                    Ok(mut report) => {
                        crate::exit_phase::classify(&mut report);
                        let found = self.diagnose(&report);
                        check_example(rule, example.expect, &found)
                    }
                };
                outcomes.push(ExampleOutcome {
                    rule: rule.id.clone(),
                    example: example.name.clone(),
                    failure,
                });
            }
        }
        outcomes
    }
}

fn check_example(rule: &Rule, expect: rule::Expect, found: &[Diagnosis]) -> Option<String> {
    let ids: Vec<&str> = found.iter().map(|d| d.signature.as_str()).collect();
    let others: Vec<&str> = found
        .iter()
        .filter(|d| !d.generic && d.signature != rule.id)
        .map(|d| d.signature.as_str())
        .collect();
    match expect {
        rule::Expect::NoMatch => ids
            .contains(&rule.id.as_str())
            .then(|| format!("matched, but should not (diagnoses: {ids:?})")),
        rule::Expect::Match if !ids.contains(&rule.id.as_str()) => {
            Some(format!("did not match (diagnoses: {ids:?})"))
        }
        rule::Expect::Match if !others.is_empty() => {
            Some(format!("other specific rules match too: {others:?}"))
        }
        rule::Expect::Match if !rule.generic && ids.first() != Some(&rule.id.as_str()) => {
            Some(format!("matched, but not first (diagnoses: {ids:?})"))
        }
        rule::Expect::Match => None,
    }
}
