//! The conditions on the functions of every thread at once:
//! `functions_absent` (no frame of any thread runs one) and
//! `functions_present` (some frame of some thread does).

use crate::model::{bare_name, Report};
use crate::pattern::Pattern;
use crate::signatures::rule::Conditions;

/// A fact of the evidence: thread, frame and what holds.
type Fact = (Option<u32>, Option<usize>, String);

/// A function pattern matches a frame's name with or without its
/// parameter list (`exit` matches `exit(int)`).
pub(super) fn name_matches(pattern: &Pattern, name: &str) -> bool {
    pattern.matches(name) || pattern.matches(bare_name(name))
}

/// What shows these conditions hold, or `None` when one does not.
pub(super) fn function_facts(c: &Conditions, report: &Report) -> Option<Vec<Fact>> {
    let mut facts = Vec::new();
    let absent = c.functions_absent.iter().map(|p| (p, false));
    for (pattern, want) in absent.chain(c.functions_present.iter().map(|p| (p, true))) {
        let running = report.threads.iter().find_map(|t| {
            t.frames
                .iter()
                .find(|f| f.names().any(|n| name_matches(pattern, n)))
                .map(|f| (t.id, f.index))
        });
        match running {
            Some(_) if !want => return None,
            None if want => return None,
            None => facts.push((None, None, format!("no thread runs {}", pattern.source()))),
            Some((thread, frame)) => facts.push((
                Some(thread),
                Some(frame),
                format!("thread {thread} runs {}", pattern.source()),
            )),
        }
    }
    Some(facts)
}
