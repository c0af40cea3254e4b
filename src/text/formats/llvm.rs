//! LLVM's own stack dump (`PrintStackTrace`, what clang, lldb, rustc's
//! LLVM and every LLVM-based tool print when they crash): `PLEASE submit a
//! bug report ...` or `Stack dump:`, then ` #N 0xADDR NAME FILE:LINE:COL`,
//! ` #N 0xADDR NAME (MODULE+0xOFF)`, or an address with only a location.

use super::*;

pub(super) struct Llvm;

re!(
    LLVM_FRAME,
    r"^\s*#(\d+) (0x[0-9a-fA-F]+) (?:(.+?) )?(?:\((\S+?)\+(0x[0-9a-fA-F]+)\)|(\S+?):(\d+)(?::\d+)?)\s*$"
);
re!(LLVM_BARE_FRAME, r"^\s*#(\d+) (0x[0-9a-fA-F]+) (\S.*?)\s*$");

impl TraceFormat for Llvm {
    fn read(&self, t: &Text<'_>, inside: Option<Format>) -> Option<Line> {
        let trimmed = t.trimmed;
        match t.first {
            b'P' if trimmed.starts_with("PLEASE submit a bug report") => {
                return Some(Line::Start(Format::Llvm))
            }
            b'S' if trimmed == "Stack dump:" => return Some(Line::Start(Format::Llvm)),
            b'#' => {}
            _ => return None,
        }
        if let Some(c) = LLVM_FRAME.captures(t.line) {
            return frame_line(
                Format::Llvm,
                TextFrame {
                    index: number(&c, 1),
                    address: text(&c, 2).and_then(|a| hex(&a)),
                    function: named(text(&c, 3)).map(|f| demangle(&f)),
                    module: text(&c, 4).as_deref().map(base),
                    module_offset: text(&c, 5).and_then(|o| hex(&o)),
                    file: text(&c, 6),
                    line: number(&c, 7),
                    ..TextFrame::default()
                },
            );
        }
        // A frame with a name and no location, inside such a dump.
        if inside != Some(Format::Llvm) {
            return None;
        }
        let c = LLVM_BARE_FRAME.captures(t.line)?;
        frame_line(
            Format::Llvm,
            TextFrame {
                index: number(&c, 1),
                address: text(&c, 2).and_then(|a| hex(&a)),
                function: named(text(&c, 3)).map(|f| demangle(&f)),
                ..TextFrame::default()
            },
        )
    }
}
