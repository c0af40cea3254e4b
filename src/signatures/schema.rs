//! Rule files as written: the TOML schema, deserialized as it is.
//!
//! Keys the schema does not know are not an error here; loading
//! ([`super::load`]) reports each of them with its full path, so an author
//! sees every problem at once. docs/signatures.md documents the format.

use serde::Deserialize;

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

#[derive(Debug, Deserialize, Default)]
pub(crate) struct MatchSpec {
    /// A few words on what this alternative recognises, named by every
    /// diagnosis it gives.
    pub label: Option<String>,
    pub thread: Option<ThreadChoice>,
    pub thread_name: Option<String>,
    #[serde(default)]
    pub exception: Vec<String>,
    pub crash: Option<bool>,
    /// Some threads wait for each other in a cycle (exit_phase.deadlock).
    pub deadlock: Option<bool>,
    /// Why the dump was taken, as `run` or `attach` recorded it in the dump.
    pub captured: Option<CaptureReason>,
    pub abort: Option<bool>,
    pub process_exiting: Option<bool>,
    pub thread_exiting: Option<bool>,
    pub thread_blocked: Option<bool>,
    /// The kind of object the chosen thread waits for (its `wait.kind`).
    pub waits_for: Option<crate::model::WaitKind>,
    /// The chosen thread's wait is held by a thread that is itself blocked
    /// (`true`), or by one that is not (`false`).
    pub holder_blocked: Option<bool>,
    pub ip_in_unloaded_module: Option<UnloadedChoice>,
    pub access_in_unloaded_module: Option<UnloadedChoice>,
    pub access_in_module: Option<String>,
    /// The type an MSVC C++ exception threw (`std::runtime_error`), as a
    /// pattern; needs the dump's memory or the throwing module's binary.
    pub cpp_exception_type: Option<String>,
    /// Whether return addresses found by searching a thread's stack memory
    /// (when its walk is poor) may stand in for frames and exit frames.
    #[serde(default)]
    pub stack_search: bool,
    #[serde(default)]
    pub modules_loaded: Vec<String>,
    #[serde(default)]
    pub modules_unloaded: Vec<String>,
    #[serde(default)]
    pub functions_absent: Vec<String>,
    /// Function patterns some frame of some thread must match: what a
    /// module list would show, said by the frames (a text trace of a
    /// statically linked interpreter has no module for it).
    #[serde(default)]
    pub functions_present: Vec<String>,
    /// Messages the text log must hold (a text trace's `source.messages`,
    /// by kind: `cuda-runtime-unloading`, `python-finalizing`, ...), each
    /// as a fact like a frame.
    #[serde(default)]
    pub said: Vec<SaidSpec>,
    #[serde(default)]
    pub frames: Vec<FrameSpec>,
}

/// A message a rule asks the log for: its kind (`"terminate"`), or its
/// kind and a pattern its text or meaning must match (`{ kind =
/// "exception-what", text = 're:OrtEnv::Release' }`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum SaidSpec {
    Kind(crate::model::MessageKind),
    Text {
        kind: crate::model::MessageKind,
        text: String,
    },
}

impl SaidSpec {
    pub(crate) fn kind(&self) -> crate::model::MessageKind {
        match self {
            SaidSpec::Kind(kind) | SaidSpec::Text { kind, .. } => *kind,
        }
    }

    pub(crate) fn text(&self) -> Option<&str> {
        match self {
            SaidSpec::Kind(_) => None,
            SaidSpec::Text { text, .. } => Some(text),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThreadChoice {
    /// The thread of a real crash.
    Crashing,
    /// The crashing thread, or for a dump without a crash the exiting,
    /// blocked thread (exit_phase).
    Blamed,
    /// Any thread.
    Any,
    /// A thread whose name matches `thread_name`.
    Named,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum UnloadedChoice {
    Any(bool),
    Named(String),
}

#[derive(Debug, Deserialize, Default)]
pub(crate) struct FrameSpec {
    pub function: Option<String>,
    /// The function pattern may match a name that is only the nearest
    /// export before the address (a guess).
    #[serde(default)]
    pub guessed: bool,
    pub module: Option<String>,
    pub unloaded: Option<String>,
    /// The frame's source file (a Python frame's `.py` file), as a pattern
    /// on the path as the trace printed it.
    pub file: Option<String>,
    /// A Python frame (from a text trace), not a native one.
    #[serde(default)]
    pub python: bool,
    pub within: Option<usize>,
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
