//! Numbered frames with an address and no `in`, as crash handlers print
//! them: LLVM's own stack dump (what clang, lldb, rustc's LLVM and every
//! LLVM-based tool print when they crash: `PLEASE submit a bug report ...`
//! or `Stack dump:`, then ` #N 0xADDR NAME FILE:LINE:COL` or ` #N 0xADDR
//! NAME (MODULE+0xOFF)`), and crash reporters' `#N 0xADDR NAME
//! (FILE:LINE)` (Datadog's crashtracker). A frame with a name and no
//! location, or an address alone, is read inside such a trace.

use super::common::*;

pub(super) struct AddressFrames;

re!(
    LOCATED,
    r"^\s*#(\d+)\s+(0x[0-9a-fA-F]+)\s+(?:(.+?)\s+)?(?:\((\S+?)\+(0x[0-9a-fA-F]+)\)|\((\S+?):(\d+)(?::\d+)?\)|(\S+?):(\d+)(?::\d+)?)\s*$"
);
re!(BARE, r"^\s*#(\d+)\s+(0x[0-9a-fA-F]+)(?:\s+(\S.*?))?\s*$");

impl TraceFormat for AddressFrames {
    fn format(&self) -> Format {
        Format::AddressFrames
    }

    fn read(&self, t: &Text<'_>, inside: Option<Format>) -> Option<Line> {
        let trimmed = t.trimmed;
        match t.first {
            b'P' if trimmed.starts_with("PLEASE submit a bug report") => {
                return Some(Line::Start(Format::AddressFrames))
            }
            b'S' if trimmed == "Stack dump:" => return Some(Line::Start(Format::AddressFrames)),
            b'#' => {}
            _ => return None,
        }
        if let Some(c) = LOCATED.captures(t.line) {
            let name = named(text(&c, 3)).map(|f| demangle(&f));
            // (A gdb frame's `NAME (ARGS)` is gdb's, read before this.)
            return frame_line(
                Format::AddressFrames,
                TextFrame {
                    index: number(&c, 1),
                    address: text(&c, 2).and_then(|a| hex(&a)),
                    function: name,
                    module: text(&c, 4).as_deref().map(base),
                    module_offset: text(&c, 5).and_then(|o| hex(&o)),
                    file: text(&c, 6).or_else(|| text(&c, 8)),
                    line: number(&c, 7).or_else(|| number(&c, 9)),
                    ..TextFrame::default()
                },
            );
        }
        if inside != Some(Format::AddressFrames) {
            return None;
        }
        let c = BARE.captures(t.line)?;
        frame_line(
            Format::AddressFrames,
            TextFrame {
                index: number(&c, 1),
                address: text(&c, 2).and_then(|a| hex(&a)),
                function: named(text(&c, 3)).map(|f| demangle(&f)),
                ..TextFrame::default()
            },
        )
    }
}
