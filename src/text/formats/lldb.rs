//! lldb: `bt`, `bt all`, `thread backtrace all`; `* thread #N, name = ...,
//! stop reason = ...` headers and `frame #N: 0xADDR module`name + off at
//! file:line` frames, with the marks lldb puts after the location.

use super::common::*;

pub(super) struct Lldb;

// lldb marks optimized, inlined and compiler-made frames after the
// location: `[opt]`, `[inlined]`, `[artificial]`.
re!(
    LLDB_FRAME,
    r"^\s*\*?\s*frame #(\d+):\s+(0x[0-9a-fA-F]+)?(?:\s*(\S+?)`(.+?)(?: \+ (\d+))?(?: at (\S+?):(\d+)(?::\d+)?)?)?(?:\s+\[(?:opt|inlined|artificial)\])*\s*$"
);
re!(
    LLDB_THREAD,
    r"^\s*(\*)?\s*thread #(\d+)(?:, name = '([^']*)')?(?:.*stop reason = (.*))?"
);

impl TraceFormat for Lldb {
    fn format(&self) -> Format {
        Format::Lldb
    }

    fn read(&self, t: &Text<'_>, _inside: Option<Format>) -> Option<Line> {
        let (line, trimmed) = (t.line, t.trimmed);
        if trimmed.starts_with("thread #") || trimmed.starts_with("* thread #") {
            let c = LLDB_THREAD.captures(line)?;
            return Some(Line::Thread {
                format: Format::Lldb,
                number: None,
                id: number(&c, 2),
                name: text(&c, 3),
                current: c.get(1).is_some() || c.get(4).is_some(),
                event: false,
            });
        }
        if !(trimmed.starts_with("frame #") || trimmed.starts_with("* frame #")) {
            return None;
        }
        let c = LLDB_FRAME.captures(line)?;
        frame_line(
            Format::Lldb,
            TextFrame {
                index: number(&c, 1),
                address: text(&c, 2).and_then(|a| hex(&a)),
                module: text(&c, 3),
                function: named(text(&c, 4)),
                function_offset: number(&c, 5),
                file: text(&c, 6),
                line: number(&c, 7),
                ..TextFrame::default()
            },
        )
    }
}

/// A stop reason that is a crash (not a breakpoint, a step or a Ctrl-C).
pub(in crate::text) fn crashed(reason: &str) -> bool {
    [
        "EXC_BAD_ACCESS",
        "EXC_BAD_INSTRUCTION",
        "EXC_CRASH",
        "EXC_ARITHMETIC",
        "EXC_GUARD",
    ]
    .iter()
    .any(|e| reason.contains(e))
        || (reason.contains("signal SIG")
            && !reason.contains("SIGSTOP")
            && !reason.contains("SIGINT"))
}
