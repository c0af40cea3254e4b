//! py-spy dump: `Thread 0x... (idle|active): "NAME"` headers, `    f
//! (file.py:12)` Python frames and, with `--native`, `    f (libx.so)` or
//! `    0x7f... (libx.so)` native ones, read inside a py-spy trace only.

use super::common::*;

pub(super) struct PySpy;

re!(
    PYSPY_THREAD,
    r#"^Thread (0x[0-9a-fA-F]+|\d+) \((idle|active)[^)]*\)(?:: "(.*)")?\s*$"#
);
re!(PYSPY_FRAME, r"^\s+(\S+) \((.+?)(?::(\d+))?\)\s*$");

impl TraceFormat for PySpy {
    fn format(&self) -> Format {
        Format::PySpy
    }

    fn read(&self, t: &Text<'_>, inside: Option<Format>) -> Option<Line> {
        let line = t.line;
        if t.first == b'T' {
            let c = PYSPY_THREAD.captures(line)?;
            // py-spy prints a native thread id in decimal, a pthread id in
            // hex.
            let id = text(&c, 1).and_then(|t| match t.starts_with("0x") {
                true => hex(&t),
                false => t.parse().ok(),
            });
            return Some(Line::Thread {
                format: Format::PySpy,
                number: None,
                id,
                name: text(&c, 3),
                current: false,
                event: false,
            });
        }
        if inside != Some(Format::PySpy) {
            return None;
        }
        let c = PYSPY_FRAME.captures(line)?;
        let location = c[2].to_string();
        let python = location.ends_with(".py") || c.get(3).is_some();
        // `--native`: a frame with no symbol is its address.
        if let Some(address) = c[1].strip_prefix("0x").and_then(hex) {
            return frame_line(
                Format::PySpy,
                TextFrame {
                    address: Some(address),
                    module: Some(base(&location)),
                    ..TextFrame::default()
                },
            );
        }
        frame_line(
            Format::PySpy,
            TextFrame {
                function: named(text(&c, 1)),
                file: python.then(|| location.clone()),
                line: number(&c, 3),
                module: (!python).then(|| base(&location)),
                python,
                ..TextFrame::default()
            },
        )
    }
}
