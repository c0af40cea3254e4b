//! The signature database: known exit-time failures as rule files, loaded,
//! linted, and matched against a report.
//!
//! Works on plain stacks and needs no dump: a rule's examples are stacks
//! written by hand (see [`examples`]).

mod conditions;
pub mod docs;
pub(crate) mod examples;
pub(crate) mod exception;
pub mod load;
pub(crate) mod matcher;
mod names;
pub(crate) mod rule;
pub(crate) mod schema;
pub(crate) mod versions;

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
    /// positive example must be diagnosed as its rule, established, first
    /// among the specific rules (and matched by no other specific rule); a
    /// negative one must not be diagnosed as its rule (a possible finding
    /// is not a diagnosis); a `possible` one must be its rule's possible
    /// finding. Then the rule as a whole: each `[[match]]` table must be the
    /// one that matches some positive example, and a rule with frame
    /// patterns needs a negative example of normal work (see
    /// [`normal_work`]).
    pub fn test_examples<'a>(
        &'a self,
        rules: impl IntoIterator<Item = &'a Rule>,
    ) -> Vec<ExampleOutcome> {
        let mut outcomes = Vec::new();
        for rule in rules {
            let mut winners = std::collections::BTreeSet::new();
            let mut normal = false;
            for example in &rule.examples {
                let failure = match examples::to_report(example) {
                    Err(e) => Some(e),
                    Ok(report) => {
                        let report = crate::exit_phase::classify(report);
                        let found = self.diagnose(&report);
                        if example.expect == schema::Expect::Match {
                            winners.extend(
                                found
                                    .iter()
                                    .find(|d| d.signature == rule.id && d.possible.is_none())
                                    .map(|d| d.alternative.index),
                            );
                        }
                        let failure = check_example(rule, example.expect, &found);
                        normal |= failure.is_none()
                            && example.expect != schema::Expect::Match
                            && normal_work(rule, example, &report);
                        failure
                    }
                };
                outcomes.push(ExampleOutcome {
                    rule: rule.id.clone(),
                    example: example.name.clone(),
                    failure,
                });
            }
            for (index, c) in rule.alternatives.iter().enumerate() {
                if !winners.contains(&index) {
                    outcomes.push(ExampleOutcome {
                        rule: rule.id.clone(),
                        example: format!("[[match]] {} ({})", index + 1, c.label),
                        failure: Some(
                            "no positive example is matched by this [[match]] table: add one, or remove the table".to_string(),
                        ),
                    });
                }
            }
            if rule.alternatives.iter().any(|c| !c.frames().is_empty()) && !normal {
                outcomes.push(ExampleOutcome {
                    rule: rule.id.clone(),
                    example: "normal work".to_string(),
                    failure: Some(
                        "no negative example of the rule's own frames during normal work: a release build's stacks (unnamed application frames) with no exit frame and nothing ruling exit out".to_string(),
                    ),
                });
            }
        }
        outcomes
    }
}

/// Whether a negative example shows the rule's own frames during normal
/// work, the case where a rule that asks for exit must not answer: no
/// thread shows exit and nothing rules it out (so only the rule's own
/// evidence could decide), some application frame is unnamed (a release
/// build), and a frame is the rule's own: one its frame patterns match, or
/// one of its positive examples has.
fn normal_work(rule: &Rule, example: &schema::ExampleSpec, report: &Classified) -> bool {
    if report.exit_phase.exit_not_proven.is_none() {
        return false;
    }
    let unnamed = report
        .threads
        .iter()
        .flat_map(|t| &t.frames)
        .any(|f| f.module.is_some() && f.function.is_none());
    let patterns = || rule.alternatives.iter().flat_map(|c| c.frames());
    let matched = report
        .threads
        .iter()
        .flat_map(|t| &t.frames)
        .any(|f| patterns().any(|p| p.function.is_some() && conditions::frame_matches(p, f)));
    let positive: std::collections::BTreeSet<&str> = rule
        .examples
        .iter()
        .filter(|e| e.expect == schema::Expect::Match)
        .flat_map(|e| &e.threads)
        .flat_map(|t| &t.frames)
        .filter(|f| f.contains('!'))
        .map(String::as_str)
        .collect();
    let shared = example
        .threads
        .iter()
        .flat_map(|t| &t.frames)
        .any(|f| positive.contains(f.as_str()));
    unnamed && (matched || shared)
}

fn check_example(rule: &Rule, expect: schema::Expect, found: &[Diagnosis]) -> Option<String> {
    let ids: Vec<String> = found.iter().map(Diagnosis::name).collect();
    let established = |d: &&Diagnosis| d.possible.is_none();
    let others: Vec<&str> = found
        .iter()
        .filter(established)
        .filter(|d| !d.generic && d.signature != rule.id)
        .map(|d| d.signature.as_str())
        .collect();
    let own = found.iter().find(|d| d.signature == rule.id);
    match expect {
        schema::Expect::NoMatch => own
            .filter(established)
            .map(|_| format!("matched, but should not (diagnoses: {ids:?})")),
        schema::Expect::Possible => match own {
            Some(d) if d.possible.is_some() => None,
            Some(_) => Some(format!(
                "matched as established, expected a possible finding (diagnoses: {ids:?})"
            )),
            None => Some(format!("did not match (diagnoses: {ids:?})")),
        },
        schema::Expect::Match => match own {
            None => Some(format!("did not match (diagnoses: {ids:?})")),
            Some(d) if d.possible.is_some() => Some(format!(
                "only a possible finding ({}) (diagnoses: {ids:?})",
                d.not_established().unwrap_or_default()
            )),
            Some(_) if !others.is_empty() => {
                Some(format!("other specific rules match too: {others:?}"))
            }
            Some(_) if !rule.generic && found.first().map(|d| &d.signature) != Some(&rule.id) => {
                Some(format!("matched, but not first (diagnoses: {ids:?})"))
            }
            Some(_) => None,
        },
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
