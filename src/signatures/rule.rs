//! A compiled rule: the conditions of each `[[match]]` alternative, with
//! their patterns, ready for the matcher.

use super::exception::ExceptionCode;
use super::schema::{ExampleSpec, ThreadChoice};
use crate::model::{CaptureReason, Kind};
use crate::pattern::Pattern;

/// A validated rule, ready to match.
#[derive(Debug)]
pub struct Rule {
    pub id: String,
    pub title: String,
    pub kind: Kind,
    pub generic: bool,
    pub summary: String,
    pub why: String,
    pub fix: String,
    pub workaround: Option<String>,
    pub references: Vec<String>,
    /// Which release carries the fix, when the rule says.
    pub fixed: Option<Fixed>,
    pub alternatives: Vec<Conditions>,
    pub examples: Vec<ExampleSpec>,
    /// Where the rule came from (`signatures/x.toml`, or `built-in`).
    pub origin: String,
    /// The file's text, for `signatures show`.
    pub text: String,
}

/// A rule's `[fixed]` table, compiled.
#[derive(Debug)]
pub struct Fixed {
    pub component: String,
    /// The module patterns, as written (for the report).
    pub module_names: Vec<String>,
    pub modules: Vec<Pattern>,
    pub release_digits: Option<usize>,
    pub fix: String,
    /// The release's numbers (`1.25.0` -> 1, 25, 0) and its text.
    pub release: Option<(Vec<u64>, String)>,
    pub source: Option<String>,
}

#[derive(Debug)]
pub struct Conditions {
    /// The table's label, else its conditions in a few words.
    pub label: String,
    pub thread: ThreadChoice,
    pub thread_name: Option<Pattern>,
    pub exception: Vec<ExceptionCode>,
    pub crash: Option<bool>,
    pub deadlock: Option<bool>,
    pub captured: Option<CaptureReason>,
    /// The crash is (`true`) or is not (`false`) an abort.
    pub abort: Option<bool>,
    pub process_exiting: Option<bool>,
    pub thread_exiting: Option<bool>,
    pub thread_blocked: Option<bool>,
    pub waits_for: Option<crate::model::WaitKind>,
    pub holder_blocked: Option<bool>,
    pub ip_in_unloaded_module: Option<Option<Pattern>>,
    /// The access fault's data address lies in an unloaded module (any, or
    /// one matching the pattern).
    pub access_in_unloaded_module: Option<Option<Pattern>>,
    /// The access fault's data address lies in a loaded module matching the
    /// pattern.
    pub access_in_module: Option<Pattern>,
    /// The type a C++ exception threw matches the pattern.
    pub cpp_exception_type: Option<Pattern>,
    /// Stack-search hits may stand in for frames and exit frames.
    pub stack_search: bool,
    pub modules_loaded: Vec<Pattern>,
    pub modules_unloaded: Vec<Pattern>,
    pub functions_absent: Vec<Pattern>,
    pub functions_present: Vec<Pattern>,
    /// Messages the text log holds: a kind, and a pattern on the text.
    pub said: Vec<(crate::model::MessageKind, Option<Pattern>)>,
    pub frames: Vec<FramePattern>,
}

impl Conditions {
    /// How much a match of these conditions says: named functions count
    /// most. Used to put the most specific diagnosis first.
    pub(crate) fn specificity(&self) -> u32 {
        let frames: u32 = self
            .frames
            .iter()
            .map(|f| if f.function.is_some() { 3 } else { 1 })
            .sum();
        let flags = [
            self.thread_name.is_some(),
            self.captured.is_some(),
            self.deadlock == Some(true),
            !self.exception.is_empty(),
            self.abort == Some(true),
            self.process_exiting == Some(true),
            self.thread_exiting == Some(true),
            self.thread_blocked == Some(true),
            self.waits_for.is_some(),
            self.holder_blocked == Some(true),
            self.ip_in_unloaded_module.is_some(),
            self.access_in_unloaded_module.is_some(),
            self.access_in_module.is_some(),
            self.cpp_exception_type.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count() as u32;
        frames
            + flags
            + (self.modules_loaded.len()
                + self.modules_unloaded.len()
                + self.functions_absent.len()
                + self.functions_present.len()
                + self.said.len()) as u32
    }
}

#[derive(Debug)]
pub struct FramePattern {
    pub function: Option<Pattern>,
    /// `function` may match a guessed name.
    pub guessed: bool,
    pub module: Option<Pattern>,
    pub unloaded: Option<Pattern>,
    /// The frame's source file.
    pub file: Option<Pattern>,
    /// Matches Python frames only (and the other patterns native ones only).
    pub python: bool,
    pub within: Option<usize>,
}
