//! AddressSanitizer and the other sanitizers: the `==PID==ERROR:` line and
//! `    #N 0xADDR in NAME FILE:LINE` frames (an unsymbolized frame has no
//! `in NAME`: `#3 0x...  (/bin/app+0x1c)`; newer runtimes put ` (BuildId:
//! ...)` after the module).

use super::common::*;

pub(super) struct Sanitizer;

re!(
    SAN_FRAME,
    r"^\s+#(\d+) (0x[0-9a-fA-F]+)(?: in (.+?))?(?: +\((\S+?)\+(0x[0-9a-fA-F]+)\)| (\S+?):(\d+)(?::\d+)?)?(?: \(BuildId: [0-9a-fA-F]+\))?\s*$"
);
re!(
    SAN_START,
    r"^==\d+==\s*ERROR: \w+Sanitizer: (\S+(?: on unknown address)?)"
);

impl TraceFormat for Sanitizer {
    fn format(&self) -> Format {
        Format::Sanitizer
    }

    fn read(&self, t: &Text<'_>, _inside: Option<Format>) -> Option<Line> {
        let line = t.line;
        if t.first == b'=' {
            let c = SAN_START.captures(line)?;
            return Some(Line::Crash {
                what: format!("sanitizer: {}", &c[1]),
                thread: None,
            });
        }
        if t.first != b'#' || !line.starts_with(' ') {
            return None;
        }
        let c = SAN_FRAME.captures(line)?;
        frame_line(
            Format::Sanitizer,
            TextFrame {
                index: number(&c, 1),
                address: text(&c, 2).and_then(|a| hex(&a)),
                function: named(text(&c, 3)),
                module: text(&c, 4).as_deref().map(base),
                module_offset: text(&c, 5).and_then(|o| hex(&o)),
                file: text(&c, 6),
                line: number(&c, 7),
                ..TextFrame::default()
            },
        )
    }
}
