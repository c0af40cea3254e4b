//! A compiled rule: its texts and the conditions of each `[[match]]`
//! alternative (compiled in [`super::conditions`]), ready for the matcher.

use super::conditions::Conditions;
use super::schema::ExampleSpec;
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
