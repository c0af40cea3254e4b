//! Matching rules against a classified report (see exit_phase::classify),
//! producing diagnoses with their evidence and confidence.

use super::conditions::found::{Found, GENERIC_BASE, SPECIFIC_BASE};
use super::conditions::{Conditions, Scene, ThreadChoice};
use super::rule::Rule;
use crate::exit_phase::Classified;
use crate::model::{Alternative, Diagnosis, Report, Thread};

/// Every rule that matches, the answer first: established findings before
/// possible ones (docs/signatures.md, "When exit is not established"),
/// specific rules before generic ones, then the more specific match, then
/// the higher confidence.
pub(crate) fn diagnose(rules: &[&Rule], report: &Classified) -> Vec<Diagnosis> {
    let mut found: Vec<(u32, Diagnosis)> = rules
        .iter()
        .filter_map(|rule| {
            rule.alternatives
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    match_conditions(rule, i, c, report).map(|d| (c.specificity(), d))
                })
                // Established before possible, then the most specific, then
                // the most confident; among equals the first in the file
                // (max_by would take the last).
                .reduce(|best, next| {
                    let better = best
                        .1
                        .possible
                        .is_some()
                        .cmp(&next.1.possible.is_some())
                        .then(next.0.cmp(&best.0))
                        .then(next.1.confidence.total_cmp(&best.1.confidence));
                    if better.is_gt() {
                        next
                    } else {
                        best
                    }
                })
        })
        .collect();
    found.sort_by(|(sa, a), (sb, b)| {
        a.possible
            .is_some()
            .cmp(&b.possible.is_some())
            .then(a.generic.cmp(&b.generic))
            .then(sb.cmp(sa))
            .then(b.confidence.total_cmp(&a.confidence))
            .then(a.signature.cmp(&b.signature))
    });
    found.into_iter().map(|(_, d)| d).collect()
}

fn match_conditions(
    rule: &Rule,
    index: usize,
    c: &Conditions,
    report: &Report,
) -> Option<Diagnosis> {
    let mut found = Found {
        evidence: Vec::new(),
        confidence: if rule.generic {
            GENERIC_BASE
        } else {
            SPECIFIC_BASE
        },
        possible: None,
        thread_exit: false,
    };
    let scene = Scene {
        report,
        generic: rule.generic,
        stack_search: c.stack_search,
    };
    if !c.on_dump(&scene, &mut found) {
        return None;
    }
    let candidates: Vec<&Thread> = match c.thread {
        ThreadChoice::Crashing => report.crashing_thread().into_iter().collect(),
        ThreadChoice::Blamed => match report.blamed_thread() {
            Some(thread) => vec![thread],
            // No walked stack shows exit: with stack-search evidence allowed,
            // the threads whose stack memory does (blocked ones first).
            None if c.stack_search => {
                let mut threads: Vec<&Thread> = report
                    .threads
                    .iter()
                    .filter(|t| t.exiting_in_stack.is_some())
                    .collect();
                threads.sort_by_key(|t| t.blocked.is_none());
                threads
            }
            None => Vec::new(),
        },
        ThreadChoice::Any | ThreadChoice::Named => report.threads.iter().collect(),
    };
    let (thread, thread_found) = candidates.into_iter().find_map(|thread| {
        let mut here = Found {
            evidence: Vec::new(),
            confidence: 1.0,
            possible: None,
            thread_exit: false,
        };
        c.on_thread(&scene, thread, &mut here)
            .then_some((thread, here))
    })?;
    found.evidence.extend(thread_found.evidence);
    // Process and thread conditions may state the same fact (exit not
    // established): once.
    let mut seen = std::collections::HashSet::new();
    found
        .evidence
        .retain(|e| seen.insert((e.thread_id, e.frame_index, e.fact.clone())));
    found.confidence *= thread_found.confidence;
    let possible = found.possible.or(thread_found.possible);
    Some(Diagnosis {
        signature: rule.id.clone(),
        title: rule.title.clone(),
        kind: rule.kind,
        generic: rule.generic,
        confidence: (found.confidence * 100.0).round() / 100.0,
        thread_id: thread.id,
        thread_exit: found.thread_exit,
        possible,
        alternative: Alternative {
            index,
            label: c.label.clone(),
        },
        evidence: found.evidence,
        summary: format!("{} {}", rule.summary.trim(), rule.why.trim()),
        fix: rule.fix.trim().to_string(),
        workaround: rule.workaround.as_ref().map(|w| w.trim().to_string()),
        references: rule.references.clone(),
        version_check: rule
            .fixed
            .as_ref()
            .map(|fixed| super::versions::check(fixed, report)),
        waits_for: crate::exit_phase::waits_for(report, thread.id),
    })
}
