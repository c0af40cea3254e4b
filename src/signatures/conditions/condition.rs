//! What every rule condition is made of, and the two contexts it works in:
//! the [`Compiler`] that turns its TOML value into its compiled form
//! (reporting problems under the key the list gives it), and the [`Scene`]
//! a compiled condition is matched against.
//!
//! A leaf of the conditions folder: each condition file imports it, the
//! list in `mod.rs` drives it.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::Deserialize;

use super::found::Found;
use crate::functions;
use crate::model::{Report, Thread};
use crate::pattern::{Case, Compile, Pattern};
use crate::signatures::names::resolve_family;

/// A key of a `[[match]]` table that a dump must satisfy.
pub(super) trait Condition {
    /// The value as the rule file writes it; its default is the key left
    /// out.
    type Spec: DeserializeOwned + Default + Debug;
    /// What matching needs, made once at load.
    type Compiled: Debug;
    /// What the generated docs say of the key (Markdown).
    const DOC: &'static str;
    /// Where this condition's words stand in a table's default label
    /// (lowest first); conditions without words leave it.
    const LABEL_RANK: u8 = u8::MAX;

    /// The compiled condition, or `None` when the key is absent or says
    /// nothing (`false` where only `true` constrains). Problems go to
    /// `cx`, under the key.
    fn compile(spec: &Self::Spec, cx: &mut Compiler<'_>) -> Option<Self::Compiled>;

    /// How much a match of it says, for ranking (named functions count
    /// most); 0 for a condition that narrows nothing by itself.
    fn weight(_compiled: &Self::Compiled) -> u32 {
        1
    }

    /// A few words for a table without a `label`.
    fn label(_spec: &Self::Spec) -> Option<String> {
        None
    }
}

/// A condition on the dump as a whole, checked once per table.
pub(super) trait OnDump: Condition {
    /// Whether it holds; if so, its facts are added to `found`.
    fn holds(compiled: &Self::Compiled, scene: &Scene<'_>, found: &mut Found) -> bool;
}

/// A condition on the thread the table chose, checked on each candidate.
pub(super) trait OnThread: Condition {
    /// Whether it holds on `thread`; if so, its facts are added to `found`.
    fn holds(
        compiled: &Self::Compiled,
        scene: &Scene<'_>,
        thread: &Thread,
        found: &mut Found,
    ) -> bool;
}

/// What a condition is matched against: the report, and what the rule and
/// its table say beyond their conditions.
pub(in crate::signatures) struct Scene<'a> {
    pub(in crate::signatures) report: &'a Report,
    /// The rule is generic: about exit itself, so never met softly.
    pub(in crate::signatures) generic: bool,
    /// The table allows stack-search hits to stand in for frames.
    pub(in crate::signatures) stack_search: bool,
}

/// Compiles a table's conditions, collecting every problem with its key.
pub(super) struct Compiler<'a> {
    /// The table's key path, `match[0]`.
    path: &'a str,
    /// The key of the condition being compiled.
    key: &'static str,
    /// Every check (user files, lint): patterns compiled now, lint-only
    /// checks run.
    full: bool,
    /// The thread the table's thread conditions apply to.
    pub(super) thread: ThreadChoice,
    pub(super) errors: Vec<(String, String)>,
}

impl<'a> Compiler<'a> {
    pub(super) fn new(path: &'a str, full: bool, thread: ThreadChoice) -> Self {
        Compiler {
            path,
            key: "",
            full,
            thread,
            errors: Vec::new(),
        }
    }

    /// Compiles one condition under its key.
    pub(super) fn compile<C: Condition>(
        &mut self,
        key: &'static str,
        spec: &C::Spec,
    ) -> Option<C::Compiled> {
        self.key = key;
        C::compile(spec, self)
    }

    /// Every check is made (a user's file, `signatures lint`), not only
    /// those a run of the built-in rules needs.
    pub(super) fn full(&self) -> bool {
        self.full
    }

    /// The full path of the condition's key followed by `rest`
    /// (`[1].text`): `match[0].said[1].text`.
    pub(super) fn key(&self, rest: &str) -> String {
        format!("{}.{}{rest}", self.path, self.key)
    }

    /// A problem with the key followed by `rest`.
    pub(super) fn error(&mut self, rest: &str, reason: String) {
        let key = self.key(rest);
        self.errors.push((key, reason));
    }

    /// A pattern at the key followed by `rest`: a glob or `re:`, a module
    /// family (`family:NAME`, families.toml) or a function group
    /// (`functions:NAME`, functions.toml); `None`, and a problem, when it
    /// is not valid.
    pub(super) fn pattern(&mut self, rest: &str, source: &str, case: Case) -> Option<Pattern> {
        let when = if self.full {
            Compile::Now
        } else {
            Compile::OnFirstUse
        };
        let compiled = functions::resolve(source).and_then(|group| match group {
            Some(_) if case == Case::Insensitive => {
                Err("a function group names functions, not modules".to_string())
            }
            Some(group) => Ok(group),
            None => resolve_family(source).and_then(|source| Pattern::compile(source, case, when)),
        });
        match compiled {
            Ok(p) => Some(p),
            Err(e) => {
                self.error(rest, e);
                None
            }
        }
    }

    /// A list of patterns (`[0]`, `[1]`, ... under the key); `None` when
    /// it is empty.
    pub(super) fn patterns(&mut self, items: &[String], case: Case) -> Option<Vec<Pattern>> {
        let patterns: Vec<Pattern> = items
            .iter()
            .enumerate()
            .filter_map(|(i, s)| self.pattern(&format!("[{i}]"), s, case))
            .collect();
        (!items.is_empty()).then_some(patterns)
    }
}

/// Which thread a table's thread conditions apply to (the `thread` key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ThreadChoice {
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

/// `true` (any module) or a module pattern: the value of the conditions on
/// unloaded modules.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(super) enum UnloadedChoice {
    Any(bool),
    Named(String),
}

impl UnloadedChoice {
    /// `Some(None)` for any module, `Some(Some(pattern))` for one, `None`
    /// for `false` or the key left out.
    pub(super) fn compile(
        choice: &Option<UnloadedChoice>,
        cx: &mut Compiler<'_>,
    ) -> Option<Option<Pattern>> {
        match choice {
            None | Some(UnloadedChoice::Any(false)) => None,
            Some(UnloadedChoice::Any(true)) => Some(None),
            Some(UnloadedChoice::Named(name)) => Some(cx.pattern("", name, Case::Insensitive)),
        }
    }
}

/// `not crash` for `false`, `crash` for `true`: the label words of a
/// yes-or-no condition.
pub(super) fn flag_label(want: Option<bool>, name: &str) -> Option<String> {
    want.map(|want| {
        if want {
            name.to_string()
        } else {
            format!("not {name}")
        }
    })
}
