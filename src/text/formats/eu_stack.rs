//! elfutils' eu-stack: `TID N:` headers and `#N 0xADDR NAME - MODULE`.

use super::common::*;

pub(super) struct EuStack;

re!(EU_THREAD, r"^TID (\d+):\s*$");
re!(
    EU_FRAME,
    r"^#(\d+)\s+(0x[0-9a-fA-F]+)(?:\s+-\s*1)?(?:\s+(\S+))?(?:\s+-\s+(\S+))?\s*$"
);

impl TraceFormat for EuStack {
    fn format(&self) -> Format {
        Format::EuStack
    }

    fn read(&self, t: &Text<'_>, _inside: Option<Format>) -> Option<Line> {
        let line = t.line;
        if t.first == b'T' {
            let c = EU_THREAD.captures(line)?;
            return Some(Line::Thread {
                format: Format::EuStack,
                number: None,
                id: number(&c, 1),
                name: None,
                current: false,
                event: false,
            });
        }
        if t.first != b'#' || line.starts_with(' ') {
            return None;
        }
        let c = EU_FRAME.captures(line)?;
        frame_line(
            Format::EuStack,
            TextFrame {
                index: number(&c, 1),
                address: text(&c, 2).and_then(|a| hex(&a)),
                function: named(text(&c, 3)),
                module: text(&c, 4).as_deref().map(base),
                ..TextFrame::default()
            },
        )
    }
}
