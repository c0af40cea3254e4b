//! pystack: `Traceback for thread N (NAME)`, `(Python) File "...", line N,
//! in f` and, with `--native`, `(C) File "...", line N, in f (LIB)`.

use super::common::*;

pub(super) struct Pystack;

re!(
    PYSTACK_THREAD,
    r"^Traceback for thread (\d+)(?: \(([^)]*)\))?"
);
re!(
    PYSTACK_FRAME,
    r#"^\s+\((Python|C)\) File "(.+)", line (\d+), in (\S+)(?: \((\S+)\))?"#
);

impl TraceFormat for Pystack {
    fn format(&self) -> Format {
        Format::Pystack
    }

    fn read(&self, t: &Text<'_>, _inside: Option<Format>) -> Option<Line> {
        let (line, trimmed) = (t.line, t.trimmed);
        if t.first == b'T' && line.starts_with("Traceback for thread ") {
            let c = PYSTACK_THREAD.captures(line)?;
            return Some(Line::Thread {
                format: Format::Pystack,
                number: None,
                id: number(&c, 1),
                name: text(&c, 2),
                current: false,
                event: false,
            });
        }
        if !(trimmed.starts_with("(Python) File") || trimmed.starts_with("(C) File")) {
            return None;
        }
        let c = PYSTACK_FRAME.captures(line)?;
        let python = &c[1] == "Python";
        frame_line(
            Format::Pystack,
            TextFrame {
                file: if python { text(&c, 2) } else { None },
                line: if python { number(&c, 3) } else { None },
                function: named(text(&c, 4)),
                module: text(&c, 5).as_deref().map(base),
                python,
                ..TextFrame::default()
            },
        )
    }
}
