//! `thread_name`: a pattern on the chosen thread's name.

use super::condition::{Compiler, Condition, OnThread, Scene, ThreadChoice};
use super::found::Found;
use crate::model::Thread;
use crate::pattern::{Case, Pattern};

pub(super) struct ThreadName;

impl Condition for ThreadName {
    type Spec = Option<String>;
    type Compiled = Pattern;
    const DOC: &'static str =
        "pattern on the thread's name (with `thread = \"named\"` or `\"any\"`)";

    fn compile(spec: &Option<String>, cx: &mut Compiler<'_>) -> Option<Pattern> {
        let thread = cx.thread;
        if thread == ThreadChoice::Named && spec.is_none() {
            cx.error("", "required when thread = \"named\"".to_string());
        }
        if thread != ThreadChoice::Named && thread != ThreadChoice::Any && spec.is_some() {
            cx.error(
                "",
                "only meaningful with thread = \"named\" or \"any\"".to_string(),
            );
        }
        spec.as_deref()
            .and_then(|s| cx.pattern("", s, Case::Sensitive))
    }
}

impl OnThread for ThreadName {
    fn holds(pattern: &Pattern, _: &Scene<'_>, thread: &Thread, found: &mut Found) -> bool {
        if !thread.name.as_deref().is_some_and(|n| pattern.matches(n)) {
            return false;
        }
        found.fact(
            Some(thread.id),
            None,
            format!(
                "thread {} is named {:?}",
                thread.id,
                thread.name.as_deref().unwrap_or("")
            ),
        );
        true
    }
}
