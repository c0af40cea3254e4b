//! Matching rules against a classified report (see exit_phase::classify),
//! producing diagnoses with their evidence and confidence.

use super::rule::{Conditions, FramePattern, Rule};
use super::schema::ThreadChoice;
use crate::exit_phase::Classified;
use crate::model::{
    bare_name, offset, Alternative, Diagnosis, ExitStage, Frame, FrameKind, Report, Thread, Trust,
};

mod evidence;
mod exit;
mod found;
mod functions;
mod process;
mod waits;
use evidence::{describe, describe_hit, with_stack_hits};
use exit::{exit_in_stack, exit_unproven};
use found::{
    Found, CFI_SCANNED_FRAME, GENERIC_BASE, INFERRED_EXIT, INFERRED_WAIT, MODULE_ONLY_FRAME,
    SCANNED_FRAME, SPECIFIC_BASE, STACK_SEARCH,
};
use process::process_conditions;
use waits::{holder_phrase, wait_facts};

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
    if !process_conditions(rule, c, report, &mut found) {
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
        thread_conditions(rule, c, report, thread, &mut here).then_some((thread, here))
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

/// Conditions on the chosen thread.
fn thread_conditions(
    rule: &Rule,
    c: &Conditions,
    report: &Report,
    thread: &Thread,
    found: &mut Found,
) -> bool {
    let id = Some(thread.id);
    if let Some(pattern) = &c.thread_name {
        if !thread.name.as_deref().is_some_and(|n| pattern.matches(n)) {
            return false;
        }
        found.fact(
            id,
            None,
            format!(
                "thread {} is named {:?}",
                thread.id,
                thread.name.as_deref().unwrap_or("")
            ),
        );
    }
    if let Some(want) = c.thread_exiting {
        if thread.exiting.is_some() != want
            && !(want && (exit_in_stack(c, thread, found) || exit_unproven(rule, report, found)))
        {
            return false;
        }
        if let Some(marker) = &thread.exiting {
            found.fact(
                id,
                Some(marker.frame_index),
                format!(
                    "thread {} is exiting: {} ({})",
                    thread.id, marker.stage, marker.function
                ),
            );
            if marker.stage == ExitStage::MainReturned {
                found.confidence *= INFERRED_EXIT;
            }
        }
    }
    if let Some(want) = c.thread_blocked {
        if thread.blocked.is_some() != want {
            return false;
        }
        if let Some(blocked) = &thread.blocked {
            let how = if blocked.certain {
                ""
            } else {
                " (inferred: unsymbolized system call)"
            };
            // What it waits for and who holds it, where the dump tells.
            let holder = thread.wait.as_ref().map_or(String::new(), holder_phrase);
            found.fact(
                id,
                Some(blocked.frame_index),
                format!(
                    "thread {} is blocked in {}{how}{holder}",
                    thread.id,
                    blocked.describe()
                ),
            );
            if !blocked.certain {
                found.confidence *= INFERRED_WAIT;
            }
        }
    }
    match wait_facts(c, thread, report) {
        Some(facts) => {
            for (id, frame, text) in facts {
                found.fact(Some(id), Some(frame), text);
            }
        }
        None => return false,
    }
    if let Some(wanted) = &c.ip_in_unloaded_module {
        let Some(top) = thread.frames.first() else {
            return false;
        };
        let Some(name) = top.unloaded_module.as_deref() else {
            return false;
        };
        if wanted.as_ref().is_some_and(|p| !p.matches(name)) {
            return false;
        }
        found.fact(
            id,
            Some(0),
            format!(
                "the instruction pointer {:#x} lies in unloaded {} + {}",
                top.instruction,
                name,
                offset(top.unloaded_module_offset)
            ),
        );
    }
    if !c.frames.is_empty() {
        let walked = thread.frames.len();
        let searched;
        let (frames, indices) = match match_frames(&c.frames, &thread.frames, walked, 0, None) {
            Some(indices) => (&thread.frames[..], indices),
            // The walk does not show them: with stack-search evidence
            // allowed, the return addresses found in stack memory follow
            // the walked frames (deeper in the stack, in order).
            None if c.stack_search && !thread.stack_search.is_empty() => {
                searched = with_stack_hits(thread);
                match match_frames(&c.frames, &searched, walked, 0, None) {
                    Some(indices) => (&searched[..], indices),
                    None => return false,
                }
            }
            None => return false,
        };
        for (pattern, index) in c.frames.iter().zip(indices) {
            let frame = &frames[index];
            if let Some(hit) = index
                .checked_sub(walked)
                .and_then(|i| thread.stack_search.get(i))
            {
                found.fact(id, None, describe_hit(thread, hit));
                found.confidence *= STACK_SEARCH;
                if pattern.function.is_none() {
                    found.confidence *= MODULE_ONLY_FRAME;
                }
                continue;
            }
            found.fact(
                id,
                Some(index),
                format!("frame {index}: {}", describe(frame)),
            );
            found.confidence *= match frame.trust {
                Trust::Scan => SCANNED_FRAME,
                Trust::CfiScan => CFI_SCANNED_FRAME,
                _ => 1.0,
            };
            if pattern.function.is_none() {
                found.confidence *= MODULE_ONLY_FRAME;
            }
        }
    }
    true
}

/// Finds frames matching `patterns` in order, each within its allowed
/// distance of the previous match (or of the top). Frames from index
/// `walked` on are stack-search hits, whose distance from the walked frames
/// is unknown: `within` does not limit them. Backtracks, so an early greedy
/// choice cannot hide a valid match.
fn match_frames(
    patterns: &[FramePattern],
    frames: &[Frame],
    walked: usize,
    from: usize,
    previous: Option<usize>,
) -> Option<Vec<usize>> {
    let Some((pattern, rest)) = patterns.split_first() else {
        return Some(Vec::new());
    };
    let start = previous.map_or(0, |p| p + 1);
    let limit = match pattern.within {
        Some(gap) => start + gap + 1,
        None => frames.len(),
    };
    (from.max(start)..frames.len()).find_map(|i| {
        if (i >= limit && i < walked) || !frame_matches(pattern, &frames[i]) {
            return None;
        }
        let mut tail = match_frames(rest, frames, walked, i + 1, Some(i))?;
        tail.insert(0, i);
        Some(tail)
    })
}

pub(super) fn frame_matches(pattern: &FramePattern, frame: &Frame) -> bool {
    // Python frames answer to Python patterns only, native to native.
    if pattern.python != (frame.kind == FrameKind::Python) {
        return false;
    }
    if let Some(p) = &pattern.file {
        if !frame.file.as_deref().is_some_and(|f| p.matches(f)) {
            return false;
        }
    }
    if let Some(p) = &pattern.module {
        if !frame.module.as_deref().is_some_and(|m| p.matches(m)) {
            return false;
        }
    }
    if let Some(p) = &pattern.unloaded {
        if !frame
            .unloaded_module
            .as_deref()
            .is_some_and(|m| p.matches(m))
        {
            return false;
        }
    }
    if let Some(p) = &pattern.function {
        let hit = |n: &str| p.matches(n) || p.matches(bare_name(n));
        let matched = if pattern.guessed {
            frame.names_with_guesses().any(hit)
        } else {
            frame.names().any(hit)
        };
        if !matched {
            return false;
        }
    }
    true
}
