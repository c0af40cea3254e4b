//! A symbolized frame list as IDEs and crash dialogs copy it: one frame a
//! line, the function then a column with its address (`__GI_abort
//! 0x00007ffff4a268b7`) or its source location (`Player::~Player
//! player.cpp:228`), innermost first, no numbers. The shape is plain, so a
//! line with an address starts such a list and a line with a location is
//! read only inside one.

use super::common::*;

pub(super) struct FrameList;

/// Source files a location column names.
const SOURCE: [&str; 18] = [
    ".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".inl", ".m", ".mm", ".rs",
    ".go", ".cs", ".java", ".swift", ".S",
];

impl TraceFormat for FrameList {
    fn format(&self) -> Format {
        Format::FrameList
    }

    fn read(&self, t: &Text<'_>, inside: Option<Format>) -> Option<Line> {
        if t.line.starts_with([' ', '\t']) {
            return None;
        }
        let line = t.line.trim_end();
        let at = line.rfind([' ', '\t'])?;
        let (name, column) = (line[..at].trim_end(), &line[at + 1..]);
        if !symbol_like(name) {
            return None;
        }
        if let Some(digits) = column.strip_prefix("0x") {
            if !(8..=16).contains(&digits.len()) || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            return frame_line(
                Format::FrameList,
                TextFrame {
                    function: named(Some(name.to_string())),
                    address: hex(digits),
                    ..TextFrame::default()
                },
            );
        }
        if inside != Some(Format::FrameList) {
            return None;
        }
        let (file, number) = column.rsplit_once(':')?;
        let line_number: u32 = number.parse().ok()?;
        if !SOURCE.iter().any(|ext| file.ends_with(ext)) {
            return None;
        }
        frame_line(
            Format::FrameList,
            TextFrame {
                function: named(Some(name.to_string())),
                file: Some(file.to_string()),
                line: Some(line_number),
                ..TextFrame::default()
            },
        )
    }
}

/// A function's name as a frame list prints it: one token, which may hold
/// blanks only inside its template or parameter brackets (`std::vector<int,
/// std::allocator<int> >::push_back(int const&)`), or `<unknown>`.
fn symbol_like(name: &str) -> bool {
    let Some(first) = name.chars().next() else {
        return false;
    };
    if !(first.is_ascii_alphabetic() || matches!(first, '_' | '~' | '<' | '$'))
        || name.ends_with(':')
    {
        return false;
    }
    let mut depth = 0i32;
    for c in name.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ' ' | '\t' if depth <= 0 => return false,
            '=' | ',' | ';' | '"' | '\'' if depth <= 0 => return false,
            _ => {}
        }
    }
    depth == 0
}
