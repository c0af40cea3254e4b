//! A rule's conditions on the dump as a whole and on the address an access
//! fault touched.

use super::exit::{exit_in_stack, exit_unproven, thread_ending};
use super::found::Found;
use super::functions::function_facts;
use crate::model::Report;
use crate::signatures::rule::{Conditions, Rule};

/// Conditions on the dump as a whole.
pub(super) fn process_conditions(
    rule: &Rule,
    c: &Conditions,
    report: &Report,
    found: &mut Found,
) -> bool {
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
