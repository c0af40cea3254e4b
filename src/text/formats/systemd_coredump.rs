//! systemd-coredump's stacks (`coredumpctl info`, the journal): `Stack
//! trace of thread 4242:` (some versions add the thread's name), then `#0
//! 0x00007f... FUNCTION (MODULE + 0xOFFSET)`, `n/a` for no name; the signal
//! is on a `Signal: 11 (SEGV)` line above.

use super::common::*;

pub(super) struct SystemdCoredump;

re!(
    COREDUMP_THREAD,
    r"^\s*Stack trace of thread (\d+)(?: \(([^)]*)\))?:\s*$"
);
re!(
    COREDUMP_FRAME,
    r"^\s*#(\d+)\s+(0x[0-9a-fA-F]+)\s+(.+?) \(([^()\s]+)(?: \+ (0x[0-9a-fA-F]+))?\)\s*$"
);
re!(COREDUMP_SIGNAL, r"^\s*Signal: \d+ \((\w+)\)\s*$");

impl TraceFormat for SystemdCoredump {
    fn format(&self) -> Format {
        Format::SystemdCoredump
    }

    fn read(&self, t: &Text<'_>, _inside: Option<Format>) -> Option<Line> {
        let (line, trimmed) = (t.line, t.trimmed);
        match t.first {
            b'S' if trimmed.starts_with("Stack trace of thread ") => {
                let c = COREDUMP_THREAD.captures(line)?;
                Some(Line::Thread {
                    format: Format::SystemdCoredump,
                    number: None,
                    id: number(&c, 1),
                    name: text(&c, 2),
                    current: false,
                    event: false,
                })
            }
            b'S' if trimmed.starts_with("Signal: ") => {
                let c = COREDUMP_SIGNAL.captures(line)?;
                Some(Line::Crash {
                    what: format!("SIG{}", &c[1]),
                    thread: None,
                })
            }
            // (Before gdb's: its pattern would take `0x... NAME` for a
            // function name. Not a sanitizer's `#1 0x... in NAME
            // (/lib/MODULE+0x...)`.)
            b'#' if trimmed.ends_with(')') && trimmed.contains(" 0x") => {
                let c = COREDUMP_FRAME.captures(line).filter(|c| {
                    !c[3].starts_with("in ") && (&c[4] == "n/a" || !c[4].contains('/'))
                })?;
                let module = c[4].to_string();
                frame_line(
                    Format::SystemdCoredump,
                    TextFrame {
                        index: number(&c, 1),
                        address: text(&c, 2).and_then(|a| hex(&a)),
                        function: named(text(&c, 3)).map(|f| demangle(&f)),
                        module_offset: text(&c, 5).and_then(|o| hex(&o)),
                        module: (module != "n/a").then_some(module),
                        ..TextFrame::default()
                    },
                )
            }
            _ => None,
        }
    }
}
