//! The signature database: known exit-time failures as rule files, loaded,
//! linted, and matched against a report.
//!
//! Works on plain stacks and needs no dump: a rule's examples are stacks
//! written by hand (see [`examples`]).

pub mod docs;
pub(crate) mod examples;
pub(crate) mod exception;
pub mod load;
pub(crate) mod matcher;
pub(crate) mod rule;
pub(crate) mod schema;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::exit_phase::Classified;
use crate::model::Diagnosis;
pub use load::{lint_builtin, lint_dir, Problem};
pub(crate) use rule::Rule;

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
        db.add_files(
            load::builtin_files(load::Checks::Trusted),
            load::Checks::Trusted,
        )?;
        Ok(db)
    }

    /// The built-in rules, then each folder's rules in order; a rule with the
    /// id of an earlier one replaces it. The built-in rules come without
    /// their examples: [`Database::load_with_examples`] has them.
    pub fn load(extra: &[PathBuf]) -> Result<Database, Vec<Problem>> {
        let mut db = Database::builtin()?;
        db.add_dirs(extra)?;
        Ok(db)
    }

    /// As [`Database::load`], with every check and every example of the
    /// built-in rules: for `signatures test` and the generated docs.
    pub fn load_with_examples(extra: &[PathBuf]) -> Result<Database, Vec<Problem>> {
        let mut db = Database::default();
        db.add_files(load::builtin_files(load::Checks::Full), load::Checks::Full)?;
        db.add_dirs(extra)?;
        Ok(db)
    }

    fn add_dirs(&mut self, extra: &[PathBuf]) -> Result<(), Vec<Problem>> {
        for dir in extra {
            self.add_files(load::read_dir(dir)?, load::Checks::Full)?;
        }
        Ok(())
    }

    /// Adds rule files; ids must be unique among them.
    fn add_files(
        &mut self,
        files: impl IntoIterator<Item = load::RuleText>,
        checks: load::Checks,
    ) -> Result<(), Vec<Problem>> {
        let (rules, problems) = load::parse_all(files, checks);
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

    /// Every matching rule, the answer first. Only a classified report is
    /// accepted: an analysed one that skipped the exit phase does not
    /// compile.
    ///
    /// ```compile_fail
    /// fn skip_the_exit_phase(db: &dumptriage::signatures::Database, report: &dumptriage::model::Report) {
    ///     db.diagnose(report);
    /// }
    /// ```
    pub fn diagnose(&self, report: &Classified) -> Vec<Diagnosis> {
        let rules: Vec<&Rule> = self.rules.values().collect();
        matcher::diagnose(&rules, report)
    }
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
                    Ok(report) => {
                        let found = self.diagnose(&crate::exit_phase::classify(report));
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

fn check_example(rule: &Rule, expect: schema::Expect, found: &[Diagnosis]) -> Option<String> {
    let ids: Vec<&str> = found.iter().map(|d| d.signature.as_str()).collect();
    let others: Vec<&str> = found
        .iter()
        .filter(|d| !d.generic && d.signature != rule.id)
        .map(|d| d.signature.as_str())
        .collect();
    match expect {
        schema::Expect::NoMatch => ids
            .contains(&rule.id.as_str())
            .then(|| format!("matched, but should not (diagnoses: {ids:?})")),
        schema::Expect::Match if !ids.contains(&rule.id.as_str()) => {
            Some(format!("did not match (diagnoses: {ids:?})"))
        }
        schema::Expect::Match if !others.is_empty() => {
            Some(format!("other specific rules match too: {others:?}"))
        }
        schema::Expect::Match if !rule.generic && ids.first() != Some(&rule.id.as_str()) => {
            Some(format!("matched, but not first (diagnoses: {ids:?})"))
        }
        schema::Expect::Match => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run reads the built-in rules from build.rs's JSON without their
    /// examples; `signatures test` from their TOML. Both must be the same
    /// rules.
    #[test]
    fn json_and_toml_forms_of_the_builtin_rules_agree() {
        assert!(load::builtin_files(load::Checks::Trusted).all(|f| f.json.is_some()));
        let run = Database::load(&[]).unwrap();
        let full = Database::load_with_examples(&[]).unwrap();
        assert_eq!(run.rules.len(), full.rules.len());
        for (a, b) in run.rules().zip(full.rules()) {
            let fields = |r: &Rule| {
                format!(
                    "{} {} {:?} {} {} {} {} {:?} {:?} {} {}",
                    r.id,
                    r.title,
                    r.kind,
                    r.generic,
                    r.summary,
                    r.why,
                    r.fix,
                    r.workaround,
                    r.references,
                    r.origin,
                    r.text
                )
            };
            assert_eq!(fields(a), fields(b));
            assert_eq!(
                format!("{:?}", a.alternatives),
                format!("{:?}", b.alternatives)
            );
            assert!(a.examples.is_empty() && !b.examples.is_empty(), "{}", a.id);
        }
    }
}
