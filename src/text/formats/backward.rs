//! backward-cpp's stack trace, as C++ programs that link it print it on a
//! fatal signal: `Stack trace (most recent call last):` (or `... in thread
//! N:`), the outermost frame first, `#N    Object "PATH", at 0xADDR, in
//! FUNC` for a frame of a module without debug information and `#N
//! Source "FILE", line L, in FUNC [0xADDR]` (then a few lines of the
//! source) for one with; the signal after the frames (`Segmentation fault
//! (Address not mapped to object [0x0])`).

use super::common::*;

pub(super) struct Backward;

re!(
    BACKWARD_OBJECT,
    r#"^#\d+\s+Object "([^"]*)", at (0x[0-9a-fA-F]+), in ?(.*?)\s*$"#
);
re!(
    BACKWARD_SOURCE,
    r#"^#\d+\s+Source "([^"]*)", line (\d+), in (.+?)(?: \[(0x[0-9a-fA-F]+)\])?\s*$"#
);

/// The signal backward-cpp names after the frames, and its name.
const SIGNALS: [(&str, &str); 5] = [
    ("Segmentation fault (", "SIGSEGV"),
    ("Aborted (", "SIGABRT"),
    ("Bus error (", "SIGBUS"),
    ("Illegal instruction (", "SIGILL"),
    ("Floating point exception (", "SIGFPE"),
];

impl TraceFormat for Backward {
    fn format(&self) -> Format {
        Format::Backward
    }

    fn read(&self, t: &Text<'_>, inside: Option<Format>) -> Option<Line> {
        let trimmed = t.trimmed.trim_end();
        if trimmed.starts_with("Stack trace (most recent call last)") {
            return Some(Line::Start(Format::Backward));
        }
        if inside != Some(Format::Backward) {
            return None;
        }
        if t.first != b'#' {
            let (_, signal) = SIGNALS
                .iter()
                .find(|(words, _)| trimmed.starts_with(words))?;
            return Some(Line::Crash {
                what: (*signal).to_string(),
                thread: None,
            });
        }
        // (Frames are numbered down to #0, the innermost: no number is kept,
        // or #0 would start another thread.)
        if let Some(c) = BACKWARD_OBJECT.captures(trimmed) {
            return frame_line(
                Format::Backward,
                TextFrame {
                    module: (!c[1].is_empty()).then(|| base(&c[1])),
                    address: hex(&c[2]).filter(|&a| a != u64::MAX),
                    function: named(text(&c, 3)),
                    ..TextFrame::default()
                },
            );
        }
        let c = BACKWARD_SOURCE.captures(trimmed)?;
        frame_line(
            Format::Backward,
            TextFrame {
                file: text(&c, 1),
                line: number(&c, 2),
                function: named(text(&c, 3)),
                address: text(&c, 4).and_then(|a| hex(&a)),
                ..TextFrame::default()
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::classify;
    use super::*;

    #[test]
    fn its_lines() {
        assert_eq!(
            classify("Stack trace (most recent call last):", None),
            Some(Line::Start(Format::Backward))
        );
        let inside = Some(Format::Backward);
        let Some(Line::Frame(_, object)) = classify(
            r#"#15   Object "/opt/ws/bin/control_node", at 0x564ec85451aa, in main"#,
            inside,
        ) else {
            panic!("an object frame");
        };
        assert_eq!(object.module.as_deref(), Some("control_node"));
        assert_eq!(object.function.as_deref(), Some("main"));
        let Some(Line::Frame(_, source)) = classify(
            r#"#17   Source "../csu/libc-start.c", line 392, in __libc_start_main_impl [0x7f60f8d6fe3f]"#,
            inside,
        ) else {
            panic!("a source frame");
        };
        assert_eq!(source.line, Some(392));
        assert_eq!(source.function.as_deref(), Some("__libc_start_main_impl"));
        assert!(matches!(
            classify("Segmentation fault (Address not mapped to object [0x0])", inside),
            Some(Line::Crash { what, .. }) if what == "SIGSEGV"
        ));
        // Outside its trace, the same shapes are another tool's or prose.
        assert_eq!(
            classify(
                "Segmentation fault (Address not mapped to object [0x0])",
                None
            ),
            None
        );
    }
}
