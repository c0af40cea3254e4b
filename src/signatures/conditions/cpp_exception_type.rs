//! `cpp_exception_type`: the type an MSVC C++ exception threw.

use super::condition::{Compiler, Condition, OnDump, Scene};
use super::found::Found;
use crate::pattern::{Case, Pattern};

pub(super) struct CppExceptionType;

impl Condition for CppExceptionType {
    /// A pattern on the type (`std::runtime_error`); needs the dump's memory
    /// or the throwing module's binary.
    type Spec = Option<String>;
    type Compiled = Pattern;
    const DOC: &'static str = "a pattern the type thrown by an MSVC C++ exception must match (`onnxruntime::OnnxRuntimeException`, `re:^c10::`): known when the dump's memory or the throwing module's binary holds the exception's ThrowInfo, so a rule using it answers only with the binary (or a full-memory dump). It also matches the type of a C++ exception whose dispatch the crash interrupted (the report's `cpp_in_flight`: std::terminate's abort while the exception is being dispatched), with evidence that says so. Examples give the type as `cpp_type = \"...\"`, or `cpp_in_flight = \"...\"` for one in flight";

    fn compile(spec: &Option<String>, cx: &mut Compiler<'_>) -> Option<Pattern> {
        spec.as_deref()
            .and_then(|name| cx.pattern("", name, Case::Sensitive))
    }
}

impl OnDump for CppExceptionType {
    fn holds(wanted: &Pattern, scene: &Scene<'_>, found: &mut Found) -> bool {
        let Some(e) = scene.report.exception.as_ref().filter(|e| e.crash) else {
            return false;
        };
        // The crash's own C++ exception, or one whose dispatch the crash
        // (std::terminate's abort) interrupted.
        let own = e.cpp_type.as_deref().filter(|t| wanted.matches(t));
        let in_flight = e
            .cpp_in_flight
            .as_ref()
            .filter(|f| wanted.matches(&f.cpp_type));
        match (own, in_flight) {
            (Some(thrown), _) => found.fact(
                Some(e.thread_id),
                None,
                format!("the C++ exception thrown is a {thrown}"),
            ),
            (None, Some(f)) => found.fact(
                Some(e.thread_id),
                None,
                format!(
                    "a C++ exception of type {} was being dispatched when the process crashed (its record is on the stack at {})",
                    f.cpp_type,
                    crate::model::hex(f.record_address)
                ),
            ),
            (None, None) => return false,
        }
        true
    }
}
