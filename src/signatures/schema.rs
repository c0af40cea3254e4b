//! Rule files as written: the TOML schema, deserialized as it is.
//!
//! Keys the schema does not know are not an error here; loading
//! ([`super::load`]) reports each of them with its full path, so an author
//! sees every problem at once. docs/signatures.md documents the format. A
//! `[[match]]` table's keys are those of the conditions
//! ([`super::conditions`]).

use serde::Deserialize;

use super::conditions::{MatchSpec, SaidSpec};
use crate::model::{CaptureReason, Kind};

#[derive(Debug, Deserialize)]
pub(crate) struct RuleFile {
    pub id: String,
    pub title: String,
    pub kind: Kind,
    #[serde(default)]
    pub generic: bool,
    pub summary: String,
    pub why: String,
    pub fix: String,
    pub workaround: Option<String>,
    pub references: Vec<String>,
    /// Which release of which component carries the fix (issue 39).
    pub fixed: Option<FixedSpec>,
    #[serde(rename = "match")]
    pub alternatives: Vec<MatchSpec>,
    #[serde(default)]
    pub examples: Vec<ExampleSpec>,
}

/// `[fixed]`: the component the fix is in, the modules whose version is
/// that component's, the fix and the first release that carries it, with
/// the source that says so.
#[derive(Debug, Deserialize)]
pub(crate) struct FixedSpec {
    pub component: String,
    pub modules: Vec<String>,
    /// How many leading numbers of those modules' versions are the
    /// component's release (onnxruntime.dll: 2, its file version goes on
    /// with the build date). Default: as many as `release` has.
    pub release_digits: Option<usize>,
    /// The change that fixed it (https).
    pub fix: String,
    /// The first release that carries the fix; absent when no source
    /// establishes one.
    pub release: Option<String>,
    /// The source that establishes `release` (https).
    pub source: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct ExampleSpec {
    pub name: String,
    pub expect: Expect,
    #[serde(default = "default_os")]
    pub os: String,
    pub exception: Option<String>,
    /// Where an access fault's data address lies: `MODULE` (a loaded
    /// module) or `unloaded:MODULE`.
    pub access: Option<String>,
    /// The type a C++ exception threw (`std::runtime_error`).
    pub cpp_type: Option<String>,
    /// The type of a C++ exception still being dispatched when another
    /// exception (an abort) ended the process.
    pub cpp_in_flight: Option<String>,
    #[serde(default)]
    pub modules: Vec<String>,
    #[serde(default)]
    pub unloaded_modules: Vec<String>,
    /// Why the dump was taken (`hang-timeout`, `crash`, `attach`), as
    /// `run` or `attach` would record it.
    pub captured: Option<CaptureReason>,
    /// Messages a text log held around the stacks, by kind (a report of a
    /// text trace); messages alone when `threads` has no frames.
    #[serde(default)]
    pub said: Vec<SaidSpec>,
    pub threads: Vec<ExampleThread>,
}

fn default_os() -> String {
    "windows".to_string()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    /// The rule is the answer, established.
    Match,
    /// The rule is not an established answer (a possible finding is
    /// allowed: it is not a diagnosis).
    NoMatch,
    /// The rule is a possible finding only: exit is not established.
    Possible,
}

#[derive(Debug, Deserialize)]
pub struct ExampleThread {
    pub id: u32,
    pub name: Option<String>,
    #[serde(default)]
    pub crashing: bool,
    pub frames: Vec<String>,
    /// Return addresses a stack search found below the walked frames, as
    /// `MODULE!FUNCTION`, nearest first.
    #[serde(default)]
    pub stack: Vec<String>,
    /// What the thread waits for, as the wait analysis would find it: a
    /// mutex held by, or a join of, thread `holder`.
    pub waits_for: Option<ExampleWait>,
}

#[derive(Debug, Deserialize)]
pub struct ExampleWait {
    pub kind: crate::model::WaitKind,
    pub holder: Option<u32>,
}
