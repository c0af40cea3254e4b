//! Node.js's own report of a fatal error: `FATAL ERROR: ...` (V8 or Node
//! giving up, then aborting), `----- Native stack trace -----` (Node 20 and
//! later), and its numbered native frames: ` 1: 00007FF6A1B2C3D4
//! node::Start+1234` on Windows (the nearest export and a decimal offset),
//! ` 1: 0xb7c1a0 node::Abort() [node]` elsewhere (the module in brackets).
//! A numbered line alone is too plain a shape: frames are read inside
//! Node's trace (after its banner), in Windows's form with its 16-digit
//! address, or with the module in brackets after the name (Node 18 and
//! older print no banner).

use super::common::*;

pub(super) struct Node;

re!(
    NODE_FRAME,
    r"^\s*(\d+): (0x[0-9a-fA-F]+|[0-9A-Fa-f]{16}) (\S.*?)(?:\+(\d+))?(?: \[([^\]]+)\])?\s*$"
);

impl TraceFormat for Node {
    fn format(&self) -> Format {
        Format::Node
    }

    fn read(&self, t: &Text<'_>, inside: Option<Format>) -> Option<Line> {
        let trimmed = t.trimmed;
        match t.first {
            b'F' if trimmed.starts_with("FATAL ERROR: ") => Some(Line::Crash {
                what: format!(
                    "abort (Node.js {})",
                    trimmed.trim_end().chars().take(160).collect::<String>()
                ),
                thread: None,
            }),
            b'-' if trimmed.starts_with("----- Native stack trace -----") => {
                Some(Line::Start(Format::Node))
            }
            b'0'..=b'9' => {
                let c = NODE_FRAME.captures(trimmed)?;
                // Windows's form (a 16-digit address, `name+offset`) and the
                // others' (`[module]` last) are Node's own shapes; a bare
                // `N: 0x... name` is read inside Node's trace only.
                let windows = !c[2].starts_with("0x") && c.get(4).is_some();
                let bracketed = c.get(5).is_some();
                if inside != Some(Format::Node) && !windows && !bracketed {
                    return None;
                }
                let offset = number::<u64>(&c, 4);
                frame_line(
                    Format::Node,
                    TextFrame {
                        index: number::<usize>(&c, 1).map(|n| n.saturating_sub(1)),
                        address: hex(&c[2]),
                        function: named(text(&c, 3)),
                        function_offset: offset,
                        module: text(&c, 5).as_deref().map(base),
                        ..TextFrame::default()
                    },
                )
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{classify, Format, Line};

    #[test]
    fn native_frames() {
        let Some(Line::Frame(Format::Node, f)) =
            classify(" 7: 00007FF6A1B2C3D4 node::FreeEnvironment+300", None)
        else {
            panic!("a Windows frame");
        };
        assert_eq!(
            (f.index, f.function.as_deref(), f.function_offset),
            (Some(6), Some("node::FreeEnvironment"), Some(300))
        );
        let linux = " 1: 0xb7c1a0 node::Abort() [/usr/bin/node]";
        let Some(Line::Frame(Format::Node, f)) = classify(linux, None) else {
            panic!("a frame with its module in brackets");
        };
        assert_eq!(
            (f.function.as_deref(), f.module.as_deref()),
            (Some("node::Abort()"), Some("node"))
        );
        assert!(matches!(
            classify("FATAL ERROR: Reached heap limit Allocation failed", None),
            Some(Line::Crash { what, .. }) if what.starts_with("abort (Node.js FATAL ERROR")
        ));
        // A numbered list in prose is no frame, nor a bare address line
        // outside Node's trace.
        assert!(classify("1: 0123456789 things to do", None).is_none());
        assert!(classify(" 2: 0x7f12ab34 worker_loop", None).is_none());
        assert!(classify(" 2: 0x7f12ab34 worker_loop", Some(Format::Node)).is_some());
    }
}
