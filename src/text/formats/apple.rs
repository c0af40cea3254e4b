//! macOS crash reports: `N   module   0xADDR name + off` with the module
//! column padded (tabs or spaces).

use super::common::*;

pub(super) struct AppleCrashReport;

re!(
    APPLE_FRAME,
    r"^(\d+)\s+(\S+)\s+(0x[0-9a-fA-F]+) (.+?)(?: \+ (\d+))?\s*$"
);

impl TraceFormat for AppleCrashReport {
    fn format(&self) -> Format {
        Format::AppleCrashReport
    }

    fn read(&self, t: &Text<'_>, _inside: Option<Format>) -> Option<Line> {
        let trimmed = t.trimmed;
        if !t.first.is_ascii_digit() || !trimmed.contains(" 0x") {
            return None;
        }
        let c = APPLE_FRAME.captures(trimmed)?;
        let module = c[2].to_string();
        if module.starts_with("0x") {
            return None;
        }
        frame_line(
            Format::AppleCrashReport,
            TextFrame {
                index: number(&c, 1),
                module: Some(module),
                address: hex(&c[3]),
                function: named(text(&c, 4)),
                function_offset: number(&c, 5),
                ..TextFrame::default()
            },
        )
    }
}
