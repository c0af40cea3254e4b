//! The thread a blocked thread's wait leads to, said in one line (issue
//! 39): `waits for thread 7 "uploader", blocked in `Queue.get` at
//! uploader_hang.py:9`. The diagnosis names it, since it is the thread the
//! user must change; the wait chain itself comes from the wait analysis
//! (src/dump/waits, src/python/joins.rs), never from a guess.

use crate::model::signature_name;
use crate::model::{file_name, Frame, FrameKind, Report, Thread, WaitsFor};

/// Where `thread`'s wait leads, when the dump tells: `None` when it waits
/// for nothing known.
pub(crate) fn waits_for(report: &Report, thread: u32) -> Option<WaitsFor> {
    let chain: Vec<u32> = report.wait_chain(thread).into_iter().skip(1).collect();
    let last = *chain.last()?;
    let culprit = report.threads.iter().find(|t| t.id == last)?;
    let (blocked_in, at) = doing(culprit);
    let label = |t: &Thread| match &t.name {
        Some(name) => format!("thread {} {name:?}", t.id),
        None => format!("thread {}", t.id),
    };
    let mut summary = String::from("waits for ");
    for id in &chain[..chain.len() - 1] {
        if let Some(t) = report.threads.iter().find(|t| t.id == *id) {
            summary.push_str(&format!("{}, which waits for ", label(t)));
        }
    }
    summary.push_str(&label(culprit));
    match (&blocked_in, &at, culprit.blocked.is_some()) {
        (Some(what), Some(at), true) => summary.push_str(&format!(", blocked in `{what}` at {at}")),
        (Some(what), None, true) => summary.push_str(&format!(", blocked in `{what}`")),
        (Some(what), Some(at), false) => summary.push_str(&format!(", in `{what}` at {at}")),
        (Some(what), None, false) => summary.push_str(&format!(", in `{what}`")),
        (None, Some(at), _) => summary.push_str(&format!(", at {at}")),
        (None, None, _) => {}
    }
    Some(WaitsFor {
        thread_id: culprit.id,
        thread_name: culprit.name.clone(),
        chain,
        blocked_in,
        at,
        summary,
    })
}

/// What a thread's own code is doing: the call it made (the callee of its
/// innermost frame of its own code) and where (that frame's file and line).
/// Its own code: Python frames outside the standard library when it runs
/// Python, else the first frame below the wait with a source line.
fn doing(thread: &Thread) -> (Option<String>, Option<String>) {
    let python: Vec<&Frame> = thread
        .frames
        .iter()
        .filter(|f| f.kind == FrameKind::Python)
        .collect();
    if let Some(own) = python.iter().position(|f| !in_standard_library(f)) {
        let callee = match own {
            0 => thread
                .blocked
                .as_ref()
                .map(|b| signature_name(&b.function).to_string()),
            _ => python[own - 1].function.clone(),
        };
        return (callee, location(python[own]));
    }
    // Only the library's frames (a thread whose target is `Event.wait`):
    // the call under threading's own start-up frames.
    if let Some(outer) = python.iter().rev().find(|f| {
        !f.function
            .as_deref()
            .is_some_and(|name| THREAD_START.contains(&name))
    }) {
        return (outer.function.clone(), None);
    }
    let from = thread.blocked.as_ref().map_or(0, |b| b.frame_index);
    let callee = thread
        .blocked
        .as_ref()
        .map(|b| signature_name(&b.function).to_string())
        .or_else(|| {
            thread
                .frames
                .first()
                .and_then(|f| f.function.as_deref())
                .map(|f| signature_name(f).to_string())
        });
    let at = thread.frames[from.min(thread.frames.len())..]
        .iter()
        .find_map(location);
    (callee, at)
}

/// The frames of `threading` that start a thread and call its target.
const THREAD_START: [&str; 6] = [
    "_bootstrap",
    "Thread._bootstrap",
    "_bootstrap_inner",
    "Thread._bootstrap_inner",
    "run",
    "Thread.run",
];

/// `file.py:9`: a frame's file name and line, when it has both.
fn location(frame: &Frame) -> Option<String> {
    Some(format!(
        "{}:{}",
        file_name(frame.file.as_deref()?),
        frame.line?
    ))
}

/// A Python frame of the interpreter's own library (`.../lib/python3.11/
/// queue.py`, `<frozen importlib._bootstrap>`), not of the program or an
/// installed package.
fn in_standard_library(frame: &Frame) -> bool {
    let Some(file) = frame.file.as_deref() else {
        return true;
    };
    let lower = file.replace('\\', "/").to_ascii_lowercase();
    if lower.starts_with('<') {
        return true;
    }
    let parts: Vec<&str> = lower.split('/').collect();
    let packages = parts
        .iter()
        .any(|p| *p == "site-packages" || *p == "dist-packages");
    // `.../lib/python3.11/` (Unix), `...\Python311\Lib\` (Windows).
    let library = parts.windows(2).any(|w| {
        (w[0] == "lib" && w[1].starts_with("python"))
            || (w[0].starts_with("python") && w[1] == "lib")
    });
    library && !packages
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python(file: &str) -> Frame {
        Frame {
            file: Some(file.to_string()),
            kind: FrameKind::Python,
            ..Frame::from_text(0)
        }
    }

    #[test]
    fn the_standard_library_is_told_from_the_program() {
        for file in [
            "/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py",
            "/usr/lib/python3.11/queue.py",
            "C:\\Python311\\Lib\\queue.py",
            "<frozen importlib._bootstrap>",
        ] {
            assert!(in_standard_library(&python(file)), "{file}");
        }
        for file in [
            "/work/app/uploader_hang.py",
            "/usr/lib/python3/dist-packages/requests/sessions.py",
            "/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py",
            "uploader_hang.py",
            "/home/me/library/worker.py",
        ] {
            assert!(!in_standard_library(&python(file)), "{file}");
        }
    }
}
