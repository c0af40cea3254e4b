//! A compiled rule: the conditions of each `[[match]]` alternative, with
//! their patterns, ready for the matcher.

use super::exception::ExceptionCode;
use super::load::Problem;
use super::schema::{ExampleSpec, ThreadChoice};
use crate::model::Kind;
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
    pub alternatives: Vec<Conditions>,
    pub examples: Vec<ExampleSpec>,
    /// Where the rule came from (`signatures/x.toml`, or `built-in`).
    pub origin: String,
    /// The file's text, for `signatures show`.
    pub text: String,
}

#[derive(Debug)]
pub struct Conditions {
    pub thread: ThreadChoice,
    pub thread_name: Option<Pattern>,
    pub exception: Vec<ExceptionCode>,
    pub crash: Option<bool>,
    /// The crash is (`true`) or is not (`false`) an abort.
    pub abort: Option<bool>,
    pub process_exiting: Option<bool>,
    pub thread_exiting: Option<bool>,
    pub thread_blocked: Option<bool>,
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
    pub frames: Vec<FramePattern>,
}

impl Conditions {
    /// How much a match of these conditions says: named functions count
    /// most. Used to put the most specific diagnosis first.
    pub fn specificity(&self) -> u32 {
        let frames: u32 = self
            .frames
            .iter()
            .map(|f| if f.function.is_some() { 3 } else { 1 })
            .sum();
        let flags = [
            self.thread_name.is_some(),
            !self.exception.is_empty(),
            self.abort == Some(true),
            self.process_exiting == Some(true),
            self.thread_exiting == Some(true),
            self.thread_blocked == Some(true),
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
                + self.functions_absent.len()) as u32
    }
}

impl Conditions {
    /// Every pattern of these conditions, for a full compile in lint.
    fn patterns(&self) -> impl Iterator<Item = &Pattern> {
        self.thread_name
            .iter()
            .chain(self.ip_in_unloaded_module.iter().flatten())
            .chain(self.access_in_unloaded_module.iter().flatten())
            .chain(&self.access_in_module)
            .chain(&self.cpp_exception_type)
            .chain(&self.modules_loaded)
            .chain(&self.modules_unloaded)
            .chain(&self.functions_absent)
            .chain(
                self.frames
                    .iter()
                    .flat_map(|f| [&f.function, &f.module, &f.unloaded].into_iter().flatten()),
            )
    }
}

impl Rule {
    /// Compiles every regular expression of the rule now (matching compiles
    /// them lazily): what `signatures lint` adds to loading.
    pub fn check_patterns(&self) -> Vec<Problem> {
        self.alternatives
            .iter()
            .enumerate()
            .flat_map(|(i, c)| {
                c.patterns().filter_map(move |p| {
                    p.check().err().map(|reason| Problem {
                        file: self.origin.clone(),
                        key: format!("match[{i}]"),
                        reason,
                    })
                })
            })
            .collect()
    }
}

#[derive(Debug)]
pub struct FramePattern {
    pub function: Option<Pattern>,
    /// `function` may match a guessed name.
    pub guessed: bool,
    pub module: Option<Pattern>,
    pub unloaded: Option<Pattern>,
    pub within: Option<usize>,
}
