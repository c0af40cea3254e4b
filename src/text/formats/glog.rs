//! glog's failure traces (`*** Check failure stack trace: ***`, `***
//! SIGSEGV (@0x0) received by PID ...; stack trace: ***`) and their `@
//! 0xADDR name` frames.

use super::common::*;

pub(super) struct Glog;

re!(
    GLOG_FRAME,
    r"^\s*@\s+(0x[0-9a-fA-F]+)\s+(?:\(unknown\)|(.+?))\s*$"
);
re!(
    GLOG_SIGNAL,
    r"^\*\*\* (SIG[A-Z]+) \(@0x[0-9a-fA-F]+\) received by PID \d+ \(TID (0x[0-9a-fA-F]+)\)"
);

impl TraceFormat for Glog {
    fn format(&self) -> Format {
        Format::Glog
    }

    fn read(&self, t: &Text<'_>, _inside: Option<Format>) -> Option<Line> {
        let trimmed = t.trimmed;
        match t.first {
            b'*' if trimmed.starts_with("*** Check failure stack trace") => Some(Line::Crash {
                what: "abort (glog CHECK failure)".to_string(),
                thread: None,
            }),
            b'*' if trimmed.contains(" received by PID ") => {
                let c = GLOG_SIGNAL.captures(trimmed)?;
                Some(Line::Crash {
                    what: c[1].to_string(),
                    thread: None,
                })
            }
            b'@' => {
                let c = GLOG_FRAME.captures(t.line)?;
                let function = named(text(&c, 2));
                frame_line(
                    Format::Glog,
                    TextFrame {
                        address: hex(&c[1]),
                        function: function.map(|f| demangle(&f)),
                        ..TextFrame::default()
                    },
                )
            }
            _ => None,
        }
    }
}
