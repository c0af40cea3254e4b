//! Python's faulthandler: `Fatal Python error: ...` / `Windows fatal
//! exception: ...`, `Current thread 0x... (most recent call first):` and
//! `Thread 0x...:` headers, `  File "...", line N in f` frames (read with
//! the traceback's in python.rs), and Python 3.14's C stack (`Current
//! thread's C stack trace`, `  Binary file "...", at f+0x1a [0x...]`).

use super::common::*;

pub(super) struct Faulthandler;

re!(
    FAULT_THREAD,
    r"^(Current thread|Thread) (0x[0-9a-fA-F]+)(?: \[([^\]]*)\])?(?: \(most recent call first\))?:\s*$"
);
re!(
    FAULT_C_FRAME,
    r#"^\s+Binary file "(.+?)"(?:, at (\S+?)\+0x([0-9a-fA-F]+))? \[(0x[0-9a-fA-F]+)\]"#
);
re!(
    FATAL_PYTHON,
    r"^(?:Fatal Python error|Windows fatal exception): (.+?)\s*$"
);

impl TraceFormat for Faulthandler {
    fn format(&self) -> Format {
        Format::Faulthandler
    }

    fn read(&self, t: &Text<'_>, _inside: Option<Format>) -> Option<Line> {
        let (line, trimmed) = (t.line, t.trimmed);
        match t.first {
            b'T' | b'C' => {
                if let Some(c) = FAULT_THREAD.captures(line) {
                    return Some(Line::Thread {
                        format: Format::Faulthandler,
                        number: None,
                        id: text(&c, 2).and_then(|t| hex(&t)),
                        name: text(&c, 3),
                        current: &c[1] == "Current thread",
                        event: false,
                    });
                }
                if trimmed.starts_with("Current thread's C stack trace") {
                    return Some(Line::NativeStack);
                }
                None
            }
            b'F' | b'W' => {
                let c = FATAL_PYTHON.captures(line)?;
                if line.starts_with("Windows fatal exception: code ") && !fatal_code(&c[1]) {
                    // faulthandler logs every error-class exception as it is
                    // raised, before any handler runs: a COM or RPC error
                    // (0x8...), a C++ or CLR exception (0xE...) is often
                    // caught and the process goes on. Such a dump is no
                    // crash.
                    return Some(Line::Start(Format::Faulthandler));
                }
                Some(Line::Crash {
                    what: c[1].to_string(),
                    thread: None,
                })
            }
            b'B' if trimmed.starts_with("Binary file \"") => {
                let c = FAULT_C_FRAME.captures(line)?;
                frame_line(
                    Format::Faulthandler,
                    TextFrame {
                        module: text(&c, 1).as_deref().map(base),
                        function: named(text(&c, 2)),
                        function_offset: text(&c, 3).and_then(|o| hex(&o)),
                        address: text(&c, 4).and_then(|a| hex(&a)),
                        ..TextFrame::default()
                    },
                )
            }
            _ => None,
        }
    }
}

/// Whether `code 0x...` (faulthandler's words for an exception it has no
/// name for) is a status that ends a process: an NTSTATUS error
/// (0xC...), not a COM, RPC or language exception that a handler may
/// still catch.
fn fatal_code(said: &str) -> bool {
    said.strip_prefix("code ")
        .and_then(hex)
        .and_then(|code| u32::try_from(code).ok())
        .is_none_or(|code| code & 0xF000_0000 == 0xC000_0000)
}
