//! WinDbg and cdb: `k`, `kn`, `kp`, `kb`, `~*k` thread headers, `!analyze
//! -v`'s STACK_TEXT (arguments between colons), inline frames, source
//! locations, and the exception lines (`ExceptionCode: c0000005`, `(1a2c.
//! 1a30): Access violation - code c0000005 (first chance)`).

use super::*;

pub(super) struct WinDbg;

re!(
    WINDBG_FRAME,
    r"^(?:[0-9a-fA-F]{2,4}\s+)?(?:[0-9a-fA-F]{8}(?:`?[0-9a-fA-F]{8})?\s+[0-9a-fA-F]{8}(?:`?[0-9a-fA-F]{8})?|\(Inline Function\)\s+-{8}`?-{0,8})\s+(?::\s+)?(?:[0-9a-fA-F`]{8,17}\s+){0,4}(?::\s+)?(\S.*?)(?:\+0x([0-9a-fA-F]+))?(?:\s+\[(.+?) @ (\d+)\])?\s*$"
);
re!(
    WINDBG_THREAD,
    r"^\s*([.#])?\s*(\d+)\s+Id: ([0-9a-fA-F]+)\.([0-9a-fA-F]+) Suspend:"
);
re!(
    WINDBG_EXCEPTION,
    r"(?i)^(?:ExceptionCode: ([0-9a-f]{8})|\([0-9a-f]+\.[0-9a-f]+\): (.+?) - code ([0-9a-f]{8}))"
);

impl TraceFormat for WinDbg {
    fn read(&self, t: &Text<'_>, _inside: Option<Format>) -> Option<Line> {
        let (line, trimmed) = (t.line, t.trimmed);
        if trimmed.contains(" Id: ") {
            if let Some(c) = WINDBG_THREAD.captures(line) {
                return Some(Line::Thread {
                    format: Format::WinDbg,
                    number: None,
                    id: text(&c, 4).and_then(|t| hex(&t)),
                    name: None,
                    current: c.get(1).is_some_and(|m| m.as_str() == "."),
                    event: c.get(1).is_some_and(|m| m.as_str() == "#"),
                });
            }
        }
        if matches!(t.first, b'E' | b'e' | b'(') {
            if let Some(c) = WINDBG_EXCEPTION.captures(trimmed) {
                let what = text(&c, 1).or_else(|| text(&c, 3)).unwrap_or_default();
                return Some(Line::Crash { what, thread: None });
            }
        }
        if !(trimmed.contains('`')
            || (trimmed.contains('!') && trimmed.split_whitespace().count() >= 3))
        {
            return None;
        }
        let c = WINDBG_FRAME.captures(trimmed)?;
        windbg_frame(&c)
    }
}

fn windbg_frame(c: &Captures) -> Option<Line> {
    let symbol = c[1].trim().to_string();
    // An address with no module: nothing else to say.
    if let Some(address) = symbol
        .strip_prefix("0x")
        .and_then(|a| hex(&a.replace('`', "")))
    {
        return frame_line(
            Format::WinDbg,
            TextFrame {
                address: Some(address),
                ..TextFrame::default()
            },
        );
    }
    // `kp` adds the parameter list: not part of the name.
    let symbol = match symbol.find('(') {
        Some(at) if symbol.ends_with(')') && !symbol.starts_with('`') => symbol[..at].to_string(),
        _ => symbol,
    };
    let (module, function) = match symbol.split_once('!') {
        Some((module, function)) => (Some(module.to_string()), Some(function.to_string())),
        None => (Some(symbol), None),
    };
    // WinDbg names a module by its file name without the extension
    // (`ntdll`, `cudnn64_9`); rules and families name files. Nearly all
    // are DLLs: taken as `NAME.dll` (the report says so).
    let module = module.map(|m| {
        if m.contains('.') {
            m
        } else {
            format!("{m}.dll")
        }
    });
    let offset = text(c, 2).and_then(|o| hex(&o));
    frame_line(
        Format::WinDbg,
        TextFrame {
            module,
            function_offset: function.as_ref().and(offset),
            module_offset: if function.is_none() { offset } else { None },
            function,
            file: text(c, 3),
            line: number(c, 4),
            ..TextFrame::default()
        },
    )
}
