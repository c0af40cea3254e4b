//! glibc's backtrace_symbols lines, as signal handlers print them:
//! `./prog(func+0x1a)[0x4005d6]`, `lib.so(+0x451cbe)[0x...]`; numbered by
//! some handlers (`[ 3] `, Open MPI's), followed by addr2line's
//! `FILE:LINE` by others; a frame without a symbol (`python[0x464c51]`); a
//! libunwind walk's `ip = 7f26..., sp = 7fff...: (func+0x60) [0x7f26...]`
//! with no module.

use super::common::*;

pub(super) struct BacktraceSymbols;

re!(
    BT_SYMBOLS,
    r"^(?:\d+\s+|\[\s*\d+\]\s+|ip\s*=\s*(?:0x)?[0-9a-fA-F]+,\s*sp\s*=\s*(?:0x)?[0-9a-fA-F]+:\s*)?(\S*)\(([^()+]*)(?:\+(0x[0-9a-fA-F]+))?\)\s*\[(0x[0-9a-fA-F]+)\](?:\s+(\S+?):(\d+))?\s*$"
);
// A frame with no symbol at all: `python[0x464c51]`, `/lib64/libc.so.6[0x3a1b]`.
re!(
    BT_ADDRESS_ONLY,
    r"^(?:\d+\s+|\[\s*\d+\]\s+)?([^\s()\[\]]+)\[(0x[0-9a-fA-F]+)\]\s*$"
);

impl TraceFormat for BacktraceSymbols {
    fn format(&self) -> Format {
        Format::BacktraceSymbols
    }

    fn read(&self, t: &Text<'_>, _inside: Option<Format>) -> Option<Line> {
        let trimmed = t.trimmed;
        if trimmed.ends_with(']') && !trimmed.contains('(') {
            let c = BT_ADDRESS_ONLY.captures(trimmed)?;
            return frame_line(
                Format::BacktraceSymbols,
                TextFrame {
                    module: Some(base(&c[1])),
                    address: hex(&c[2]),
                    // (A plain shape: alone, such lines are no trace.)
                    bare: true,
                    ..TextFrame::default()
                },
            );
        }
        if !(trimmed.contains('(') && (trimmed.contains(")[0x") || trimmed.contains(") [0x"))) {
            return None;
        }
        let c = BT_SYMBOLS.captures(trimmed)?;
        let function = text(&c, 2).map(|f| demangle(&f));
        let (function_offset, module_offset) = match &function {
            Some(_) => (text(&c, 3).and_then(|o| hex(&o)), None),
            None => (None, text(&c, 3).and_then(|o| hex(&o))),
        };
        frame_line(
            Format::BacktraceSymbols,
            TextFrame {
                module: (!c[1].is_empty()).then(|| base(&c[1])),
                function,
                function_offset,
                module_offset,
                address: hex(&c[4]),
                file: text(&c, 5),
                line: number(&c, 6),
                ..TextFrame::default()
            },
        )
    }
}
