//! Visual Studio's Call Stack window copied as text: `module.dll!name(args)
//! Line 12` with its other columns (language, `Symbols loaded.`, `>` for
//! the current frame) after tabs or runs of spaces, in any UI language;
//! `module.dll!00007ffa12345678()` for a frame without a name; `[Inline
//! Frame]` before an inlined one; the offset older versions and crash
//! handlers print after the name (`name+0x3f`, `name()  + 0x10 bytes`).
//! And the exception as the debugger's dialog or a crash handler names it:
//! `Unhandled exception at 0x00007FF6... (app.dll) in app.exe: 0xC0000005:
//! Access violation ...`, `Unhandled exception: c0000005`, `Unhandled
//! exception 0xc0000005`, and the first-chance `Exception thrown at ...:
//! 0xC0000005: ...` the debugger stopped on.

use super::common::*;

pub(super) struct VisualStudio;

re!(
    VS_FRAME,
    r"^([\w.+-]+?\.(?:dll|exe|pyd|node|sys|so|DLL|EXE))!(.+?)(?:\s+(?:Line|Zeile|Ligne|Línea|Riga|Linha|Строка|行|줄|Řádek|Wiersz|Satır)\s*(\d+))?(?:\s+(?:C\+\+|C|Unknown|Unbekannt|Native|Mixed))?\s*$"
);

re!(
    UNHANDLED,
    r"^(Unhandled exception|Exception thrown)(?: at 0x[0-9a-fA-F`]+(?: \([^)]*\))? in [^:]+)?:? (?:0x)?([0-9a-fA-F]{8})\b"
);
re!(OFFSET, r"^(.+?)(?:\s*\+\s*0x([0-9a-fA-F]+)(?: bytes)?)$");

impl TraceFormat for VisualStudio {
    fn format(&self) -> Format {
        Format::VisualStudio
    }

    fn read(&self, t: &Text<'_>, _inside: Option<Format>) -> Option<Line> {
        if matches!(t.first, b'U' | b'E')
            && (t.trimmed.starts_with("Unhandled exception")
                || t.trimmed.starts_with("Exception thrown"))
        {
            let c = UNHANDLED.captures(t.trimmed)?;
            let code = c[2].to_ascii_lowercase();
            // The debugger's first-chance report: a crash when the code is
            // an NTSTATUS error (an access violation the debugger stopped
            // on), not a language exception a handler may catch.
            if &c[1] == "Exception thrown" && !code.starts_with('c') {
                return None;
            }
            return Some(Line::Crash {
                what: code,
                thread: None,
            });
        }
        if !t.trimmed.contains('!') {
            return None;
        }
        let cell = frame_cell(t.trimmed)?;
        let c = VS_FRAME.captures(&cell)?;
        // Characters a copy from the window can leave in a name (a
        // non-breaking hyphen before the parameters, a soft hyphen).
        let function: String = c[2]
            .trim()
            .chars()
            .filter(|ch| !matches!(ch, '\u{2011}' | '\u{00ad}'))
            .collect();
        // A debugger front end that repeats the module before the name
        // (`msvcrt.dll!msvcrt!_cexit(  )`, gdb's `msvcrt!_cexit` under an
        // IDE's columns), and the parameters the column cut left open.
        let stem = c[1].rsplit_once('.').map_or(&c[1], |(stem, _)| stem);
        let function = match function.split_once('!') {
            Some((again, name)) if again.eq_ignore_ascii_case(stem) => name.to_string(),
            _ => function,
        };
        let function = match function.strip_suffix('(') {
            Some(open) if !open.contains('(') => open.trim_end().to_string(),
            _ => function,
        };
        // An offset after the name: its own field.
        let (function, offset) = match OFFSET.captures(&function) {
            Some(o) => (o[1].trim().to_string(), hex(&o[2])),
            None => (function, None),
        };
        let (function, address) = match function.strip_suffix("()") {
            // `module.dll!00007ffa12345678()`: an address, no name.
            Some(hex_name) if hex(hex_name).is_some() && hex_name.len() >= 8 => {
                (None, hex(hex_name))
            }
            _ => (Some(function), None),
        };
        frame_line(
            Format::VisualStudio,
            TextFrame {
                module: text(&c, 1),
                function_offset: function.as_ref().and(offset),
                function,
                address,
                line: number(&c, 3),
                ..TextFrame::default()
            },
        )
    }
}

/// The frame's own column of a copied Call Stack row: the current-frame
/// mark and `[Inline Frame]` off, the other columns (after a tab, or after
/// a run of spaces where the copy turned tabs into spaces) cut.
fn frame_cell(row: &str) -> Option<String> {
    let row = row.trim_start_matches(['>', ' ', '\t']);
    let row = row
        .strip_prefix("[Inline Frame]")
        .unwrap_or(row)
        .trim_start();
    let cells: Vec<&str> = row.split('\t').map(str::trim).collect();
    let at = cells.iter().position(|cell| cell.contains('!'))?;
    // A process viewer's thread list copied without its header (`7312\t\t\t
    // app.exe!wmainCRTStartup`: the thread id, CPU and cycle columns before
    // the start address) is no call stack: a Call Stack row begins with the
    // frame.
    let tid = cells
        .first()
        .is_some_and(|first| !first.is_empty() && first.bytes().all(|b| b.is_ascii_digit()));
    if at >= 2 && tid {
        return None;
    }
    let cell = cells[at];
    let cell = cell.split("  ").next().unwrap_or(cell).trim();
    Some(cell.to_string())
}
