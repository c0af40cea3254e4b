//! Visual Studio's Call Stack window copied as text: `module.dll!name(args)
//! Line 12` with tab-separated columns (language, `>` for the current
//! frame), in any UI language; `module.dll!00007ffa12345678()` for a frame
//! without a name.

use super::*;

pub(super) struct VisualStudio;

re!(
    VS_FRAME,
    r"^\s*>?\s*([\w.+-]+?\.(?:dll|exe|pyd|node|sys|so|DLL|EXE))!(.+?)(?:\s+(?:Line|Zeile|Ligne|Línea|Riga|Linha|Строка|行|줄|Řádek|Wiersz|Satır)\s*(\d+))?(?:\s+(?:C\+\+|C|Unknown|Unbekannt|Native|Mixed))?\s*$"
);

impl TraceFormat for VisualStudio {
    fn read(&self, t: &Text<'_>, _inside: Option<Format>) -> Option<Line> {
        if !t.trimmed.contains('!') {
            return None;
        }
        let c = VS_FRAME.captures(t.line)?;
        let function = c[2].trim().to_string();
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
                function,
                address,
                line: number(&c, 3),
                ..TextFrame::default()
            },
        )
    }
}
