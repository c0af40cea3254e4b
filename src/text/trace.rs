//! One trace as the formats read it: its threads and their frames, where
//! it is in the log, and what stopped the process as the text named it.

use super::formats::{Format, TextFrame};

/// Lines before a trace searched for what the runtime said (the crash, the
/// exit), and after it.
const CONTEXT_BEFORE: usize = 40;
const CONTEXT_AFTER: usize = 20;

/// One trace as read.
#[derive(Debug, Default)]
pub(super) struct Trace {
    /// The last line of the trace before this one and the first of the
    /// one after (0 and `usize::MAX` when there are none).
    pub(super) around: (usize, usize),
    pub(super) format: Option<Format>,
    /// 1-based line numbers.
    pub(super) first_line: usize,
    pub(super) last_line: usize,
    pub(super) threads: Vec<TextThread>,
    pub(super) crash: Option<(String, Option<u64>)>,
    /// The line the crash was named on.
    pub(super) crash_line: usize,
    /// A debugger or a user stopped the process (Ctrl-C, a breakpoint, an
    /// attach): the stack is of a live process, not of a crash.
    pub(super) interrupted: bool,
    pub(super) elided: bool,
}

#[derive(Debug, Default)]
pub(super) struct TextThread {
    /// The debugger's own number for it (gdb's `Thread 2`).
    pub(super) number: Option<u64>,
    pub(super) id: Option<u64>,
    pub(super) name: Option<String>,
    pub(super) current: bool,
    /// WinDbg's `#` mark: the thread of the last event.
    pub(super) event: bool,
    pub(super) frames: Vec<TextFrame>,
    pub(super) format: Option<Format>,
    /// The line of its header, or of its first frame.
    pub(super) line: usize,
}

impl Trace {
    pub(super) fn has_frames(&self) -> bool {
        self.threads.iter().any(|t| !t.frames.is_empty())
    }

    /// The thread frames go to; a new one at `line` when there is none.
    pub(super) fn thread(&mut self, line: usize) -> &mut TextThread {
        if self.threads.is_empty() {
            self.threads.push(TextThread {
                line,
                ..TextThread::default()
            });
        }
        self.threads.last_mut().expect("a thread")
    }

    /// The lines around the trace searched for what the runtime said: up
    /// to CONTEXT_BEFORE before it and CONTEXT_AFTER after, never into the
    /// traces before and after it (`around`). 0-based, end exclusive.
    pub(super) fn context(&self, lines: usize) -> (usize, usize) {
        let (after_previous, before_next) = self.around;
        let from = self
            .first_line
            .saturating_sub(CONTEXT_BEFORE + 1)
            .max(after_previous);
        let to = (self.last_line + CONTEXT_AFTER)
            .min(lines)
            .min(before_next.saturating_sub(1).max(self.last_line));
        (from, to.max(from))
    }
}
