//! Rust panics and backtraces: `thread 'NAME' panicked at ...`, `stack
//! backtrace:`, `  N: name` frames with `at file:line` under them. A frame
//! with its address (`  13:   0x7ff6b78e2639 - NAME`) is distinctive
//! alone: a backtrace pasted from its middle, without its `stack
//! backtrace:` line, is read from its first such frame.

use super::common::*;

pub(super) struct Rust;

re!(RUST_ADDRESS_FRAME, r"^\s*\d+:\s+0x[0-9a-fA-F]+ - \S");
re!(
    RUST_FRAME,
    r"^\s*(\d+):\s+(?:(0x[0-9a-fA-F]+) - )?(.+?)\s*$"
);
re!(RUST_AT, r"^\s+at (.+?):(\d+)(?::\d+)?\s*$");

impl TraceFormat for Rust {
    fn format(&self) -> Format {
        Format::Rust
    }

    fn read(&self, t: &Text<'_>, inside: Option<Format>) -> Option<Line> {
        let (line, trimmed) = (t.line, t.trimmed);
        match t.first {
            b's' if trimmed.starts_with("stack backtrace:") => {
                return Some(Line::Start(Format::Rust))
            }
            b't' if trimmed.starts_with("thread '") && trimmed.contains("panicked at") => {
                return Some(Line::Crash {
                    what: "panic".to_string(),
                    thread: None,
                })
            }
            _ => {}
        }
        let inside = match t.first.is_ascii_digit() && RUST_ADDRESS_FRAME.is_match(line) {
            true => Some(Format::Rust),
            false => inside,
        };
        if inside != Some(Format::Rust) {
            return None;
        }
        if let Some(c) = RUST_AT.captures(line) {
            return Some(Line::Location {
                file: c[1].to_string(),
                line: number(&c, 2),
            });
        }
        let c = RUST_FRAME.captures(line)?;
        frame_line(
            Format::Rust,
            TextFrame {
                index: number(&c, 1),
                address: text(&c, 2).and_then(|a| hex(&a)),
                function: named(text(&c, 3)).map(|f| strip_hash(&f)),
                ..TextFrame::default()
            },
        )
    }
}

/// Rust's `::h0123456789abcdef` hash suffix off a symbol.
fn strip_hash(name: &str) -> String {
    match name.rsplit_once("::h") {
        Some((head, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            head.to_string()
        }
        _ => name.to_string(),
    }
}
