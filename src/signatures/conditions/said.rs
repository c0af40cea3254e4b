//! `said`: messages the text log must hold.

use serde::Deserialize;

use super::condition::{Compiler, Condition, OnDump, Scene};
use super::found::Found;
use crate::model::MessageKind;
use crate::pattern::{Case, Pattern};

pub(super) struct Said;

impl Condition for Said {
    /// By kind (`cuda-runtime-unloading`, `python-finalizing`, ...), each
    /// a fact like a frame.
    type Spec = Vec<SaidSpec>;
    /// A kind, and a pattern on the text.
    type Compiled = Vec<(MessageKind, Option<Pattern>)>;
    const DOC: &'static str = "messages the text log must hold (a text report's `source.messages`, [text-traces.md](../text-traces.md)), each by its kind (`\"cuda-runtime-unloading\"`) or by its kind and a pattern on its text or meaning (`{ kind = \"exception-what\", text = 're:.*OrtEnv::Release.*' }`); each is a fact of the evidence, like a frame. A dump has no messages: a table with `said` answers text only. Examples give them as `said = [...]`, a message's text in place of the pattern";
    const LABEL_RANK: u8 = 15;

    fn compile(spec: &Vec<SaidSpec>, cx: &mut Compiler<'_>) -> Option<Self::Compiled> {
        let said: Self::Compiled = spec
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let text = s
                    .text()
                    .and_then(|t| cx.pattern(&format!("[{i}].text"), t, Case::Sensitive));
                (s.kind(), text)
            })
            .collect();
        (!said.is_empty()).then_some(said)
    }

    fn weight(said: &Self::Compiled) -> u32 {
        said.len() as u32
    }

    fn label(spec: &Vec<SaidSpec>) -> Option<String> {
        let said: Vec<&str> = spec.iter().map(|k| k.kind().name()).collect();
        (!said.is_empty()).then(|| format!("the log says {}", said.join(", ")))
    }
}

impl OnDump for Said {
    fn holds(said: &Self::Compiled, scene: &Scene<'_>, found: &mut Found) -> bool {
        for (kind, text) in said {
            let Some(m) = scene.report.source.messages.iter().find(|m| {
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
        true
    }
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
