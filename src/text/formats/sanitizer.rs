//! AddressSanitizer and the other sanitizers: the `==PID==ERROR:` line and
//! `    #N 0xADDR in NAME FILE:LINE` frames (an unsymbolized frame has no
//! `in NAME`: `#3 0x...  (/bin/app+0x1c)`; newer runtimes put ` (BuildId:
//! ...)` after the module). ThreadSanitizer writes its frames without an
//! address (`    #1 Table::~Table() /src/t.cc:19 (app+0x4a1f2)`, `<null>`
//! for no source) under `WARNING: ThreadSanitizer: data race`.
//!
//! Only the stack of the failing access is a thread's. The stacks a report
//! adds are history: where the block was freed or allocated, where a thread
//! was created, another thread's earlier access (a data race's "Previous
//! ..."), and every stack of a LeakSanitizer report (where leaked blocks
//! were allocated). They are read as asides. A leak report is no crash:
//! LeakSanitizer runs at exit by design and reports what was never freed.

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
re!(
    TSAN_FRAME,
    r"^\s+#(\d+) (.+?) (?:<null>|(\S+?):(\d+)(?::\d+)?) \((\S+?)\+(0x[0-9a-fA-F]+)\)\s*$"
);
re!(
    TSAN_START,
    r"^WARNING: ThreadSanitizer: ([\w-]+(?: [\w-]+)*?)\s*(?:\(pid=\d+\))?\s*$"
);

/// Lines of a report after which the stacks are history, not a thread's.
const HISTORY: [&str; 8] = [
    "freed by thread ",
    "previously allocated by thread ",
    "allocated by thread ",
    "Previous ",
    "Thread T",
    "Mutex M",
    "Direct leak of ",
    "Indirect leak of ",
];

impl TraceFormat for Sanitizer {
    fn format(&self) -> Format {
        Format::Sanitizer
    }

    fn read(&self, t: &Text<'_>, inside: Option<Format>) -> Option<Line> {
        let line = t.line;
        if t.first == b'=' {
            let c = SAN_START.captures(line)?;
            if line.contains("LeakSanitizer: detected memory leaks") {
                return Some(Line::Aside(Format::Sanitizer));
            }
            return Some(Line::Crash {
                what: format!("sanitizer: {}", &c[1]),
                thread: None,
            });
        }
        if t.first == b'W' {
            let c = TSAN_START.captures(line)?;
            return Some(Line::Crash {
                what: format!("ThreadSanitizer: {}", &c[1]),
                thread: None,
            });
        }
        // (A leak record's words are its own; the others count inside a
        // sanitizer's report only.)
        let leak =
            t.trimmed.starts_with("Direct leak of ") || t.trimmed.starts_with("Indirect leak of ");
        if (leak
            || (inside == Some(Format::Sanitizer)
                && HISTORY.iter().any(|h| t.trimmed.starts_with(h))))
            && t.trimmed.trim_end().ends_with(':')
        {
            return Some(Line::Aside(Format::Sanitizer));
        }
        if t.first != b'#' || !line.starts_with(' ') {
            return None;
        }
        if let Some(c) = SAN_FRAME.captures(line) {
            return frame_line(
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
            );
        }
        let c = TSAN_FRAME.captures(line)?;
        frame_line(
            Format::Sanitizer,
            TextFrame {
                index: number(&c, 1),
                function: named(text(&c, 2)),
                file: text(&c, 3),
                line: number(&c, 4),
                module: text(&c, 5).as_deref().map(base),
                module_offset: text(&c, 6).and_then(|o| hex(&o)),
                ..TextFrame::default()
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::{classify, Format, Line, TextFrame};

    fn frame_of(line: &str, inside: Option<Format>) -> (Format, TextFrame) {
        match classify(line, inside) {
            Some(Line::Frame(format, frame)) => (format, frame),
            other => panic!("{line}: {other:?}"),
        }
    }

    /// ThreadSanitizer's frames have no address; `<null>` stands for no source.
    /// A report's history stacks and a leak report's lines are asides.
    #[test]
    fn thread_sanitizer_frames_and_history() {
        let (f, a) = frame_of(
            "    #1 cache::Shard::~Shard() /src/cache/shard.cc:41 (unit+0x5b21c)",
            None,
        );
        assert_eq!(
            (f, a.function.as_deref(), a.line, a.module.as_deref()),
            (
                Format::Sanitizer,
                Some("cache::Shard::~Shard()"),
                Some(41),
                Some("unit")
            )
        );
        let (_, b) = frame_of(
            "    #0 free <null> (libtsan.so.2+0x4f2e1)",
            Some(Format::Sanitizer),
        );
        assert_eq!(
            (b.function.as_deref(), b.file, b.module_offset),
            (Some("free"), None, Some(0x4f2e1))
        );
        assert!(matches!(
            classify("WARNING: ThreadSanitizer: data race (pid=4242)", None),
            Some(Line::Crash { ref what, .. }) if what == "ThreadSanitizer: data race"
        ));
        for (line, inside) in [
            ("==77==ERROR: LeakSanitizer: detected memory leaks", None),
            (
                "Direct leak of 24 byte(s) in 1 object(s) allocated from:",
                None,
            ),
            ("freed by thread T0 here:", Some(Format::Sanitizer)),
            (
                "  Previous write of size 4 at 0x7b04000000f0 by thread T2:",
                Some(Format::Sanitizer),
            ),
            (
                "  Thread T2 (tid=4250, running) created by main thread at:",
                Some(Format::Sanitizer),
            ),
        ] {
            assert!(
                matches!(classify(line, inside), Some(Line::Aside(Format::Sanitizer))),
                "{line}"
            );
        }
        // Outside a sanitizer's report, such words are prose.
        assert!(!matches!(
            classify("Previous releases:", None),
            Some(Line::Aside(_))
        ));
    }
}
