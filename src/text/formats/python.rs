//! Python's own stack formats: a traceback (`Traceback (most recent call
//! last):`, `  File "...", line N, in f` and the source line under it),
//! pytest-timeout's dump (`+++ Timeout +++`, `~~~ Stack of NAME (ID) ~~~`),
//! the `File` frames faulthandler prints without the comma, and gdb's
//! `py-bt` (the same words, innermost first, in a gdb thread).

use super::common::*;

pub(super) struct Python;

re!(PY_FRAME, r#"^\s*File "(.+)", line (\d+),? in ([^\s#]+)"#);
re!(PYTEST_THREAD, r"^~+ Stack of (.+) \((\d+)\) ~+\s*$");

impl TraceFormat for Python {
    fn format(&self) -> Format {
        Format::PythonTraceback
    }

    fn read(&self, t: &Text<'_>, inside: Option<Format>) -> Option<Line> {
        let (line, trimmed) = (t.line, t.trimmed);
        match t.first {
            b'T' if line.starts_with("Traceback (most recent call last)") => {
                Some(Line::Start(Format::PythonTraceback))
            }
            b'~' => {
                let c = PYTEST_THREAD.captures(line)?;
                Some(Line::Thread {
                    format: Format::PythonTraceback,
                    number: None,
                    id: number(&c, 2),
                    name: text(&c, 1),
                    current: false,
                    event: false,
                })
            }
            b'+' if line.contains("Timeout") => Some(Line::Start(Format::PythonTraceback)),
            b'F' if trimmed.starts_with("File \"") => {
                // Pasted outside a code block, a traceback loses its
                // indentation: at the line's start, a frame only inside one.
                let in_python = matches!(
                    inside,
                    Some(Format::PythonTraceback | Format::Faulthandler | Format::Gdb)
                );
                if !line.starts_with(char::is_whitespace) && !in_python {
                    return None;
                }
                let c = PY_FRAME.captures(line)?;
                let format = match inside {
                    Some(Format::Faulthandler) => Format::Faulthandler,
                    // gdb's `py-bt` prints a thread's Python frames in a
                    // traceback's words but innermost first (`Traceback
                    // (most recent call first):`), under gdb's header.
                    Some(Format::Gdb) => Format::Gdb,
                    _ if line.contains("\", line ") && line.contains(", in ") => {
                        Format::PythonTraceback
                    }
                    _ => Format::Faulthandler,
                };
                frame_line(
                    format,
                    TextFrame {
                        file: text(&c, 1),
                        line: number(&c, 2),
                        function: text(&c, 3),
                        python: true,
                        ..TextFrame::default()
                    },
                )
            }
            _ => None,
        }
    }
}
