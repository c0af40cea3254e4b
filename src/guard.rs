//! Panics while a dump is analysed: caught per dump, so one dump that hits
//! a bug (ours or a parser's) becomes an error report naming that file and
//! the batch goes on.
//!
//! The binary installs a panic hook that asks [`record_panic`]: a panic
//! inside [`catching`] is not printed (the dump's error report carries it,
//! with the place it happened); any other panic is printed as one line.
//! The library itself installs nothing process-wide. The two thread-locals
//! below are how a panic hook, which gets no argument of ours, hands where
//! a panic happened to the [`catching`] call on the same thread: state of
//! that one call, empty outside it.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe, PanicHookInfo};
use std::path::{Path, PathBuf};

thread_local! {
    /// The dump this thread is analysing inside [`catching`].
    static CURRENT: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
    /// What the hook saw of the last panic inside [`catching`].
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `work` on the dump at `path`; a panic becomes `Err` with the panic's
/// message and, when the hook recorded it, where it happened.
pub(crate) fn catching<T>(path: &Path, work: impl FnOnce() -> T) -> Result<T, String> {
    let previous = CURRENT.with(|c| c.replace(Some(path.to_path_buf())));
    LAST_PANIC.with(|p| p.borrow_mut().take());
    let outcome = catch_unwind(AssertUnwindSafe(work));
    CURRENT.with(|c| *c.borrow_mut() = previous);
    outcome.map_err(|payload| {
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| format!("panicked: {}", payload_message(payload.as_ref())))
    })
}

/// The dump being analysed on this thread, if any.
pub(crate) fn current_dump() -> Option<PathBuf> {
    CURRENT.with(|c| c.borrow().clone())
}

/// The panic hook's part that belongs to the library (the binary installs
/// the hook, and prints): inside [`catching`], the panic is recorded for
/// the dump's error report and `None` comes back; elsewhere its one-line
/// description (`panicked at FILE:LINE:COL: MESSAGE`), never a backtrace.
pub fn record_panic(info: &PanicHookInfo<'_>) -> Option<String> {
    let message = describe(info);
    if current_dump().is_some() {
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(message));
        return None;
    }
    Some(message)
}

/// `panicked at FILE:LINE:COL: MESSAGE`
fn describe(info: &PanicHookInfo<'_>) -> String {
    let message = payload_message(info.payload());
    match info.location() {
        Some(at) => format!(
            "panicked at {}:{}:{}: {message}",
            at.file(),
            at.line(),
            at.column()
        ),
        None => format!("panicked: {message}"),
    }
}

fn payload_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_caught_and_the_dump_is_forgotten_after() {
        let path = Path::new("x.dmp");
        let result: Result<(), String> = catching(path, || panic!("boom"));
        assert_eq!(result.unwrap_err(), "panicked: boom");
        assert_eq!(current_dump(), None);
        assert_eq!(catching(path, || 7), Ok(7));
    }
}
