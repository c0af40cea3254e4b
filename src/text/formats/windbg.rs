//! WinDbg and cdb: `k`, `kn`, `kp`, `kb`, `kv` (its FPO and calling
//! convention notes are no part of the name), `~*k` thread headers, `!analyze
//! -v`'s STACK_TEXT (arguments between colons), inline frames, source
//! locations, and the exception lines (`ExceptionCode: c0000005`, `(1a2c.
//! 1a30): Access violation - code c0000005 (first chance)`); and a crash
//! handler's thread headers over rows of the same shape (OBS Studio's
//! `Thread A2C: name (Crashed)`).

use super::common::*;
use regex_lite::Captures;

pub(super) struct WinDbg;

re!(
    WINDBG_FRAME,
    r"^(?:[0-9a-fA-F]{2,4}\s+)?(?:[0-9a-fA-F]{8}(?:`?[0-9a-fA-F]{8})?\s+[0-9a-fA-F]{8}(?:`?[0-9a-fA-F]{8})?|\(Inline Function\)\s+-{8}`?-{0,8})\s+(?::\s+)?(?:[0-9a-fA-F`]{8,17}\s+){0,4}(?::\s+)?(\S.*?)(?:\+0x([0-9a-fA-F]+))?(?:\s+\(FPO: [^)]*\))?(?:\s+\(CONV: \w+\))?(?:\s+\[(.+?) @ (\d+)\])?\s*$"
);
re!(
    WINDBG_THREAD,
    r"^\s*([.#])?\s*(\d+)\s+Id: ([0-9a-fA-F]+)\.([0-9a-fA-F]+) Suspend:"
);
re!(
    WINDBG_EXCEPTION,
    r"(?i)^(?:ExceptionCode: ([0-9a-f]{8})|\([0-9a-f]+\.[0-9a-f]+\): (.+?) - code ([0-9a-f]{8}))"
);

// A crash handler's thread header over WinDbg-shaped rows (OBS Studio's
// crash log: `Thread 3F54`, `Thread A2C: video_thread (Crashed)`), its id
// in hex of three digits or more.
re!(
    HANDLER_THREAD,
    r"^Thread ([0-9A-Fa-f]{3,8})(?:: ([^()]*?))?( \(Crashed\))?:?\s*$"
);

impl TraceFormat for WinDbg {
    fn format(&self) -> Format {
        Format::WinDbg
    }

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
        if t.first == b'T' && trimmed.starts_with("Thread ") {
            let c = HANDLER_THREAD.captures(trimmed)?;
            return Some(Line::Thread {
                format: Format::WinDbg,
                number: None,
                id: hex(&c[1]),
                name: text(&c, 2)
                    .map(|n| n.trim().to_string())
                    .filter(|n| !n.is_empty()),
                current: c.get(3).is_some(),
                event: false,
            });
        }
        if matches!(t.first, b'E' | b'e' | b'(') {
            if let Some(c) = WINDBG_EXCEPTION.captures(trimmed) {
                let what = text(&c, 1).or_else(|| text(&c, 3)).unwrap_or_default();
                return Some(Line::Crash { what, thread: None });
            }
        }
        if trimmed.contains('`')
            || (trimmed.contains('!') && trimmed.split_whitespace().count() >= 3)
        {
            if let Some(c) = WINDBG_FRAME.captures(trimmed) {
                return windbg_frame(&c);
            }
        }
        if trimmed.contains('!') || trimmed.starts_with('<') {
            return call_site(trimmed);
        }
        None
    }
}

// `kc`: the frame number and the call site only (`00 ntdll!NtWaitFor...`);
// a person's list of call sites (`ntdll!NtDelayExecution   <- spin`,
// `ntdll!LdrShutdownProcess -> RtlExitUserProcess`), unnumbered.
re!(
    CALL_SITE,
    r"^(?:([0-9a-fA-F]{2,4})\s+)?(?:([A-Za-z_][\w-]*)!(\S+?)(?:\+0x([0-9a-fA-F]+))?|(<[^<>]+>))(\s.*)?$"
);

/// A WinDbg call site alone (`kc`, or a person's list): WinDbg's module
/// names have no extension (`ntdll!...`); with one it is Visual Studio's.
fn call_site(line: &str) -> Option<Line> {
    let c = CALL_SITE.captures(line)?;
    let joined = abridged_tail(c.get(6).map_or("", |m| m.as_str()))?;
    let numbered = c.get(1).is_some();
    // A placeholder (`<consumer DLL atexit handler>`) is a frame only
    // among others.
    if c.get(5).is_some() && joined.is_empty() {
        return None;
    }
    let function = text(&c, 3);
    if function.as_deref() == Some("...") {
        return Some(Line::Elided);
    }
    // (The module says it is a call site: a name in any case.)
    if function
        .as_deref()
        .is_some_and(|f| !symbol_name(&format!("m!{f}")))
    {
        return None;
    }
    frame_line(
        Format::WinDbg,
        TextFrame {
            index: c
                .get(1)
                .and_then(|n| usize::from_str_radix(n.as_str(), 16).ok()),
            module: text(&c, 2).map(|m| format!("{m}.dll")),
            function,
            function_offset: text(&c, 4).and_then(|o| hex(&o)),
            bare: !numbered,
            joined,
            ..TextFrame::default()
        },
    )
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
