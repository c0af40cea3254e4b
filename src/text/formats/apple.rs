//! macOS crash reports: `N   module   0xADDR name + off (file:line)` with
//! the module column padded (tabs or spaces), under `Thread 0 Crashed::  Dispatch
//! queue: ...` headers (the crashed thread marked); the exception above
//! them (`Exception Type:  EXC_BAD_ACCESS (SIGSEGV)`, and `Termination
//! Reason:  Namespace SIGNAL, Code 11, Segmentation fault: 11`).

use super::common::*;

pub(super) struct AppleCrashReport;

re!(
    APPLE_FRAME,
    r"^(\d+)\s+(\S+)\s+(0x[0-9a-fA-F]+) (.+?)(?: \+ (\d+))?(?: \(([^()\s]+):(\d+)\))?\s*$"
);

// `Thread 3:` alone is a header only inside a report; `Thread 0::` and a
// crashed thread's header are the report's own anywhere.
re!(
    APPLE_THREAD,
    r"^Thread (\d+)( Crashed)?:(:)?(?:\s+(.*?))?\s*$"
);
re!(APPLE_EXCEPTION, r"^Exception Type:\s+(\S.*?)\s*$");
re!(
    APPLE_TERMINATION,
    r"^Termination Reason:\s+Namespace SIGNAL, Code (\d+)"
);

impl TraceFormat for AppleCrashReport {
    fn format(&self) -> Format {
        Format::AppleCrashReport
    }

    fn read(&self, t: &Text<'_>, inside: Option<Format>) -> Option<Line> {
        let trimmed = t.trimmed;
        match t.first {
            b'T' => return header(trimmed, inside),
            b'E' => {
                let c = APPLE_EXCEPTION.captures(trimmed)?;
                return Some(Line::Crash {
                    what: c[1].to_string(),
                    thread: None,
                });
            }
            _ => {}
        }
        if !t.first.is_ascii_digit() || !(trimmed.contains(" 0x") || trimmed.contains("\t0x")) {
            return None;
        }
        let c = APPLE_FRAME.captures(trimmed)?;
        let module = c[2].to_string();
        if module.starts_with("0x") {
            return None;
        }
        frame_line(
            Format::AppleCrashReport,
            TextFrame {
                index: number(&c, 1),
                module: Some(module),
                address: hex(&c[3]),
                function: named(text(&c, 4)),
                function_offset: number(&c, 5),
                file: text(&c, 6),
                line: number(&c, 7),
                ..TextFrame::default()
            },
        )
    }
}

/// A thread's header, or the termination reason's signal.
fn header(trimmed: &str, inside: Option<Format>) -> Option<Line> {
    if let Some(c) = APPLE_TERMINATION.captures(trimmed) {
        let signal = match &c[1] {
            "4" => "SIGILL",
            "5" => "SIGTRAP",
            "6" => "SIGABRT",
            "7" | "10" => "SIGBUS",
            "8" => "SIGFPE",
            "11" => "SIGSEGV",
            _ => return None,
        };
        return Some(Line::Crash {
            what: signal.to_string(),
            thread: None,
        });
    }
    let c = APPLE_THREAD.captures(trimmed)?;
    let crashed = c.get(2).is_some();
    if !crashed && c.get(3).is_none() && inside != Some(Format::AppleCrashReport) {
        return None;
    }
    Some(Line::Thread {
        format: Format::AppleCrashReport,
        number: number(&c, 1),
        id: None,
        name: text(&c, 4).filter(|n| !n.is_empty()),
        current: crashed,
        event: crashed,
    })
}
