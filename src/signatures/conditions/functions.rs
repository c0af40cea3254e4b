//! `functions_absent` (no frame of any thread runs one of the functions)
//! and `functions_present` (some frame of some thread runs each): one
//! question, which thread runs a function, asked both ways.

use super::condition::{Compiler, Condition, OnDump, Scene};
use super::found::Found;
use crate::model::{bare_name, Report};
use crate::pattern::{Case, Pattern};

/// `functions_absent`.
pub(super) struct FunctionsAbsent;

/// `functions_present`: what a module list would show, said by the frames
/// (a text trace of a statically linked interpreter has no module for it).
pub(super) struct FunctionsPresent;

impl Condition for FunctionsAbsent {
    type Spec = Vec<String>;
    type Compiled = Vec<Pattern>;
    const DOC: &'static str = "function patterns that no frame of any thread may match";

    fn compile(spec: &Vec<String>, cx: &mut Compiler<'_>) -> Option<Vec<Pattern>> {
        cx.patterns(spec, Case::Sensitive)
    }

    fn weight(patterns: &Vec<Pattern>) -> u32 {
        patterns.len() as u32
    }
}

impl OnDump for FunctionsAbsent {
    fn holds(patterns: &Vec<Pattern>, scene: &Scene<'_>, found: &mut Found) -> bool {
        for pattern in patterns {
            if running(scene.report, pattern).is_some() {
                return false;
            }
            found.fact(None, None, format!("no thread runs {}", pattern.source()));
        }
        true
    }
}

impl Condition for FunctionsPresent {
    type Spec = Vec<String>;
    type Compiled = Vec<Pattern>;
    const DOC: &'static str = "function patterns that some frame of some thread must match (what a module list would say, said by the frames: a text trace of a statically linked interpreter has no module for it)";
    const LABEL_RANK: u8 = 14;

    fn compile(spec: &Vec<String>, cx: &mut Compiler<'_>) -> Option<Vec<Pattern>> {
        cx.patterns(spec, Case::Sensitive)
    }

    fn weight(patterns: &Vec<Pattern>) -> u32 {
        patterns.len() as u32
    }

    fn label(spec: &Vec<String>) -> Option<String> {
        (!spec.is_empty()).then(|| format!("running {}", spec.join(", ")))
    }
}

impl OnDump for FunctionsPresent {
    fn holds(patterns: &Vec<Pattern>, scene: &Scene<'_>, found: &mut Found) -> bool {
        for pattern in patterns {
            let Some((thread, frame)) = running(scene.report, pattern) else {
                return false;
            };
            found.fact(
                Some(thread),
                Some(frame),
                format!("thread {thread} runs {}", pattern.source()),
            );
        }
        true
    }
}

/// The first thread, and its frame, that runs a function the pattern
/// matches.
fn running(report: &Report, pattern: &Pattern) -> Option<(u32, usize)> {
    report.threads.iter().find_map(|t| {
        t.frames
            .iter()
            .find(|f| f.names().any(|n| name_matches(pattern, n)))
            .map(|f| (t.id, f.index))
    })
}

/// A function pattern matches a frame's name with or without its
/// parameter list (`exit` matches `exit(int)`).
pub(super) fn name_matches(pattern: &Pattern, name: &str) -> bool {
    pattern.matches(name) || pattern.matches(bare_name(name))
}
