//! Valgrind's reports (memcheck, and the error lines of its other tools):
//! an error's headline (`==PID== Invalid read of size 8`), then its stack
//! innermost first (`   at 0xADDR: name (file.c:12)`, `   by 0xADDR: ???
//! (in /lib/libx.so)`), then what it knows of the address (`Address 0x...
//! is 8 bytes inside a block of size 16 free'd`) with the stacks where that
//! block was freed and allocated. The `==PID==` prefix is often cut off
//! when a report is pasted; both forms are read.
//!
//! The error's own stack is the thread's. The stacks under an address's
//! description are history (where a block was freed or allocated), and so
//! are the stacks of errors that are no crash (an uninitialised value, a
//! leak record): they are read as asides, no thread's frames. An invalid
//! read, write, free or jump is a memory error valgrind caught before it
//! became a crash: the stop, named as valgrind names it; a process valgrind
//! saw end on a signal crashed by that signal.

use super::common::*;

pub(super) struct Valgrind;

re!(
    VG_FRAME,
    r"^(?:==\d+==)?\s*(at|by) (0x[0-9A-Fa-f]+): (.+?)(?: \((?:in (.+)|(\S+?):(\d+))\))?\s*$"
);
re!(
    VG_SIGNAL,
    r"^Process terminating with default action of signal \d+ \((SIG[A-Z]+)\)"
);

/// Headlines of errors that are memory accesses gone wrong: the failure.
const CRASH_LIKE: [&str; 4] = [
    "Invalid read of size ",
    "Invalid write of size ",
    "Invalid free() / delete",
    "Jump to the invalid address",
];

/// Lines after which the stacks are no thread's: an address's history, and
/// errors that are no crash (their stacks are where a value was used, or a
/// block allocated, not where a thread stopped).
const ASIDES: [&str; 13] = [
    "Address 0x",
    "Block was alloc'd at",
    "Block was allocated at",
    "Uninitialised value was created by",
    "Conditional jump or move depends on uninitialised",
    "Use of uninitialised value of size ",
    "Syscall param ",
    "Mismatched free() / delete",
    "Source and destination overlap",
    "Argument 'size' of function",
    "Possible data race during ",
    "Lock at 0x",
    "This conflicts with a previous ",
];

impl TraceFormat for Valgrind {
    fn format(&self) -> Format {
        Format::Valgrind
    }

    fn read(&self, t: &Text<'_>, _inside: Option<Format>) -> Option<Line> {
        if !matches!(
            t.first,
            b'=' | b'a' | b'b' | b'I' | b'J' | b'P' | b'0'..=b'9'
        ) && !ASIDES.iter().any(|a| a.as_bytes()[0] == t.first)
        {
            return None;
        }
        let bare = without_pid(t.trimmed);
        let said = bare.trim_start();
        if said.starts_with("at 0x") || said.starts_with("by 0x") {
            let c = VG_FRAME.captures(t.line)?;
            let file = text(&c, 5);
            return frame_line(
                Format::Valgrind,
                TextFrame {
                    // `at` is the innermost frame: a new stack.
                    index: (&c[1] == "at").then_some(0),
                    address: hex(&c[2]),
                    function: named(text(&c, 3)),
                    module: text(&c, 4).as_deref().map(base),
                    line: file.as_ref().and_then(|_| number(&c, 6)),
                    file,
                    ..TextFrame::default()
                },
            );
        }
        // A headline stands at the line's start, or one blank after the
        // prefix; what is said of an address has two.
        if ASIDES.iter().any(|a| said.starts_with(a)) || leak_record(said) {
            return Some(Line::Aside(Format::Valgrind));
        }
        if CRASH_LIKE.iter().any(|c| said.starts_with(c)) {
            return Some(Line::Crash {
                what: format!("valgrind: {}", said.trim_end()),
                thread: None,
            });
        }
        let c = VG_SIGNAL.captures(said)?;
        Some(Line::Crash {
            what: c[1].to_string(),
            thread: None,
        })
    }
}

/// `line` without valgrind's `==PID==` prefix.
fn without_pid(line: &str) -> &str {
    let Some(rest) = line.strip_prefix("==") else {
        return line;
    };
    match rest.find("==") {
        Some(end) if end > 0 && rest[..end].bytes().all(|b| b.is_ascii_digit()) => &rest[end + 2..],
        _ => line,
    }
}

/// A leak record's headline (`64 bytes in 1 blocks are definitely lost in
/// loss record 3 of 9`): its stack is where the block was allocated.
fn leak_record(said: &str) -> bool {
    said.starts_with(|c: char| c.is_ascii_digit())
        && said.contains(" blocks are ")
        && said.contains(" in loss record ")
}
