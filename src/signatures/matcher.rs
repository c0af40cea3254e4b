//! Matching rules against a classified report (see exit_phase::classify),
//! producing diagnoses with their evidence and confidence.

use super::rule::{Conditions, FramePattern, Rule};
use super::schema::ThreadChoice;
use crate::exit_phase::Classified;
use crate::model::{
    bare_name, offset, Alternative, Diagnosis, Evidence, ExitStage, Frame, FrameKind, Report,
    Thread, Trust,
};

mod evidence;
mod functions;
mod waits;
use evidence::{describe, describe_hit, with_stack_hits};
use functions::function_facts;
use waits::{holder_phrase, wait_facts};

/// Confidence factors, documented in docs/signatures.md ("Confidence").
const SPECIFIC_BASE: f64 = 1.0;
const GENERIC_BASE: f64 = 0.6;
const SCANNED_FRAME: f64 = 0.8;
const CFI_SCANNED_FRAME: f64 = 0.9;
const MODULE_ONLY_FRAME: f64 = 0.85;
const INFERRED_WAIT: f64 = 0.9;
const INFERRED_EXIT: f64 = 0.95;
/// A specific rule whose exit condition could not be established (nothing
/// proves exit, nothing rules it out): a possible finding only.
const EXIT_NOT_PROVEN: f64 = 0.6;
/// Evidence from a return address found by searching stack memory rather
/// than by walking the stack.
const STACK_SEARCH: f64 = 0.7;

/// Every rule that matches, the answer first: established findings before
/// possible ones (docs/signatures.md, "When exit is not established"),
/// specific rules before generic ones, then the more specific match, then
/// the higher confidence.
pub fn diagnose(rules: &[&Rule], report: &Classified) -> Vec<Diagnosis> {
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

/// Evidence and confidence gathered while checking one thread.
struct Found {
    evidence: Vec<Evidence>,
    confidence: f64,
    /// Why exit, which the rule asks for, is not established: the match is
    /// a possible finding only.
    possible: Option<String>,
    /// The exit the rule asks for is a thread's own, not the process's.
    thread_exit: bool,
}

impl Found {
    fn fact(&mut self, thread: Option<u32>, frame: Option<usize>, fact: String) {
        self.evidence.push(Evidence {
            thread_id: thread,
            frame_index: frame,
            fact,
        });
    }
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
    })
}

/// An exit condition met by a thread's stack memory instead of its walked
/// frames, for rules that allow stack-search evidence.
fn exit_in_stack(c: &Conditions, thread: &Thread, found: &mut Found) -> bool {
    if !c.stack_search {
        return false;
    }
    let Some(marker) = &thread.exiting_in_stack else {
        return false;
    };
    let Some(hit) = thread.stack_search.get(marker.frame_index) else {
        return false;
    };
    found.fact(
        Some(thread.id),
        None,
        format!(
            "{}; it runs only at exit ({})",
            describe_hit(thread, hit),
            marker.stage
        ),
    );
    found.confidence *= STACK_SEARCH;
    true
}

/// A specific rule's exit condition that does not hold may still be met
/// softly: when the stacks neither prove exit nor rule it out, the rule's
/// other evidence stands, at lower confidence, as a *possible* finding
/// with the missing fact said. Only evidence that itself happens only at
/// exit or unload establishes exit: the exit-only function groups
/// (functions.toml), which the exit-phase tables hold, and unloaded
/// modules. Generic rules are about exit itself and are never met this way.
fn exit_unproven(rule: &Rule, report: &Report, found: &mut Found) -> bool {
    let Some(why) = report.exit_phase.exit_not_proven.as_deref() else {
        return false;
    };
    if rule.generic {
        return false;
    }
    found.fact(None, None, format!("exit not established: {why}"));
    found.confidence *= EXIT_NOT_PROVEN;
    found.possible = Some(why.to_string());
    true
}

/// A specific rule's exit met by a thread's own exit: the crashing thread
/// (or, without a crash, a blocked one) is running its teardown under its
/// start function (a worker's thread-local destructors) while nothing
/// shows the process exiting. The same failure as at process exit, torn
/// down by one thread; the diagnosis says so. Generic rules are about the
/// process's exit and are never met this way.
fn thread_ending(rule: &Rule, report: &Report, found: &mut Found) -> bool {
    if rule.generic {
        return false;
    }
    let thread = match report.crashing_thread() {
        Some(t) => t.ending.as_ref().map(|e| (t, e)),
        None => report
            .threads
            .iter()
            .filter(|t| t.blocked.is_some())
            .find_map(|t| t.ending.as_ref().map(|e| (t, e))),
    };
    let Some((thread, end)) = thread else {
        return false;
    };
    let under = end
        .start
        .as_deref()
        .map(|s| format!(" under {s}"))
        .unwrap_or_default();
    found.fact(
        Some(thread.id),
        Some(end.frame_index),
        format!(
            "thread {} is ending: {}{under}, its own teardown (a thread's exit, not the process's)",
            thread.id, end.function
        ),
    );
    found.thread_exit = true;
    true
}

/// Conditions on the dump as a whole.
fn process_conditions(rule: &Rule, c: &Conditions, report: &Report, found: &mut Found) -> bool {
    if let Some(want) = c.crash {
        if report.crashed() != want {
            return false;
        }
    }
    if let Some(want) = c.deadlock {
        let cycle = report.exit_phase.deadlock.as_ref();
        if cycle.is_some() != want {
            return false;
        }
        if let Some(cycle) = cycle {
            found.fact(
                None,
                None,
                format!(
                    "the threads wait for each other: {}",
                    crate::model::describe_cycle(cycle)
                ),
            );
        }
    }
    if let Some(want) = c.captured {
        let Some(capture) = report.capture.as_ref().filter(|c| c.reason == want) else {
            return false;
        };
        found.fact(None, None, format!("the dump was {}", capture.describe()));
    }
    if !c.exception.is_empty() {
        let Some(exception) = report.exception.as_ref().filter(|e| e.crash) else {
            return false;
        };
        let windows = report
            .system
            .as_ref()
            .is_some_and(|s| s.os.starts_with("Windows"));
        let hit = c
            .exception
            .iter()
            .find(|want| exception.code == want.code && (!want.signal || !windows));
        let Some(hit) = hit else { return false };
        found.fact(
            Some(exception.thread_id),
            None,
            format!(
                "exception {:#x} {} ({})",
                exception.code, exception.name, hit.written
            ),
        );
    }
    if let Some(want) = c.abort {
        let abort = report
            .exception
            .as_ref()
            .filter(|e| e.crash)
            .and_then(|e| e.abort.as_deref().map(|why| (e.thread_id, why)));
        if abort.is_some() != want {
            return false;
        }
        if let Some((thread, why)) = abort {
            found.fact(Some(thread), None, format!("the process aborted: {why}"));
        }
    }
    if !access_conditions(c, report, found) {
        return false;
    }
    if let Some(wanted) = &c.cpp_exception_type {
        let Some(e) = report.exception.as_ref().filter(|e| e.crash) else {
            return false;
        };
        // The crash's own C++ exception, or one whose dispatch the crash
        // (std::terminate's abort) interrupted.
        let own = e.cpp_type.as_deref().filter(|t| wanted.matches(t));
        let in_flight = e
            .cpp_in_flight
            .as_ref()
            .filter(|f| wanted.matches(&f.cpp_type));
        match (own, in_flight) {
            (Some(thrown), _) => found.fact(
                Some(e.thread_id),
                None,
                format!("the C++ exception thrown is a {thrown}"),
            ),
            (None, Some(f)) => found.fact(
                Some(e.thread_id),
                None,
                format!(
                    "a C++ exception of type {} was being dispatched when the process crashed (its record is on the stack at {})",
                    f.cpp_type,
                    crate::model::hex(f.record_address)
                ),
            ),
            (None, None) => return false,
        }
    }
    if let Some(want) = c.process_exiting {
        let in_stack = || report.threads.iter().find(|t| t.exiting_in_stack.is_some());
        if report.exit_phase.process_exiting != want
            && !(want
                && (in_stack().is_some_and(|t| exit_in_stack(c, t, found))
                    || thread_ending(rule, report, found)
                    || exit_unproven(rule, report, found)))
        {
            return false;
        }
        if want {
            let exiting = report
                .threads
                .iter()
                .find_map(|t| t.exiting.as_ref().map(|m| (t, m)));
            if let Some((thread, marker)) = exiting {
                found.fact(
                    Some(thread.id),
                    Some(marker.frame_index),
                    format!(
                        "the process is exiting: thread {} is in {} ({})",
                        thread.id, marker.stage, marker.function
                    ),
                );
            } else if let Some(said) = &report.source.exit_evidence {
                found.fact(None, None, format!("the process is exiting: {said}"));
            }
        }
    }
    for (kind, text) in &c.said {
        let Some(m) = report.source.messages.iter().find(|m| {
            m.kind == *kind
                && text.as_ref().is_none_or(|p| {
                    p.matches(&m.text) || m.meaning.as_deref().is_some_and(|w| p.matches(w))
                })
        }) else {
            return false;
        };
        let meaning = m
            .meaning
            .as_deref()
            .map(|w| format!(" ({w})"))
            .unwrap_or_default();
        found.fact(
            None,
            None,
            format!("the log says, on line {}: `{}`{meaning}", m.line, m.text),
        );
    }
    for pattern in &c.modules_loaded {
        let Some(module) = report.modules.iter().find(|m| pattern.matches(&m.name)) else {
            return false;
        };
        found.fact(None, None, format!("{} is loaded", module.name));
    }
    for pattern in &c.modules_unloaded {
        let Some(module) = report
            .unloaded_modules
            .iter()
            .find(|m| pattern.matches(&m.name))
        else {
            return false;
        };
        found.fact(None, None, format!("{} was unloaded", module.name));
    }
    let Some(facts) = function_facts(c, report) else {
        return false;
    };
    for (thread, frame, fact) in facts {
        found.fact(thread, frame, fact);
    }
    true
}

/// Where the data address of an access fault lies: a COM call on a released
/// object faults reading its vtable, so the instruction pointer is in the
/// caller and only the data address tells whose memory it was.
fn access_conditions(c: &Conditions, report: &Report, found: &mut Found) -> bool {
    if c.access_in_unloaded_module.is_none() && c.access_in_module.is_none() {
        return true;
    }
    let Some(exception) = report.exception.as_ref().filter(|e| e.crash) else {
        return false;
    };
    let Some(address) = exception.access_address else {
        return false;
    };
    let inside = |base: u64, size: u64| address >= base && address - base < size;
    if let Some(wanted) = &c.access_in_unloaded_module {
        let Some(module) = report
            .unloaded_modules
            .iter()
            .find(|m| inside(m.base, m.size) && wanted.as_ref().is_none_or(|p| p.matches(&m.name)))
        else {
            return false;
        };
        found.fact(
            Some(exception.thread_id),
            None,
            format!(
                "the faulting access {address:#x} lies in unloaded {} + {:#x}",
                module.name,
                address - module.base
            ),
        );
    }
    if let Some(wanted) = &c.access_in_module {
        let Some(module) = report
            .modules
            .iter()
            .find(|m| inside(m.base, m.size) && wanted.matches(&m.name))
        else {
            return false;
        };
        found.fact(
            Some(exception.thread_id),
            None,
            format!(
                "the faulting access {address:#x} lies in {} + {:#x}",
                module.name,
                address - module.base
            ),
        );
    }
    true
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
                    thread.id, blocked.function
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
