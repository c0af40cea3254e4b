//! A call chain written out by hand as an indented tree, outermost caller
//! first, each callee one level deeper than its caller:
//!
//! ```text
//! main
//!   exit (status=0)
//!     __run_exit_handlers                  # atexit handlers
//!       Pool::~Pool()       (libpool.so)
//!         std::thread::join()              # <-- never returns
//! ```
//!
//! Each line is a function's name, then maybe its arguments or a note in
//! parentheses, its module in parentheses (`(libpool.so)`), callees it
//! called in turn (`-> call_init`) and a comment (`# ...`, `<-- ...`,
//! `// ...`). One such line alone is no frame: a word on a line of its own
//! is as often prose. So the tree is found as a whole ([`mark`]) before any
//! format reads a line: at least [`MIN_LINES`] lines that each look like a
//! function's name, each exactly one step deeper than the line before (a
//! Markdown list has bullets, YAML has `key:`, a Python traceback and code
//! go back out), none branching off. Its lines are then tagged so this
//! format, and no other, reads them; the deepest line is the innermost
//! frame.

use super::common::*;

pub(super) struct CallTree;

/// Fewest lines of a tree: fewer are too plain a shape to be a stack.
const MIN_LINES: usize = 4;
/// Widest step of indentation from one level to the next.
const MAX_STEP: usize = 8;
/// What [`mark`] puts in front of a tree's line, then its level.
const TAG: &str = "\u{1}call-tree ";

impl TraceFormat for CallTree {
    fn format(&self) -> Format {
        Format::CallTree
    }

    fn read(&self, t: &Text<'_>, _inside: Option<Format>) -> Option<Line> {
        if t.first != 1 {
            return None;
        }
        let rest = t.trimmed.strip_prefix(TAG)?;
        let (level, line) = rest.split_once(' ')?;
        let mut frame = parse(line)?.0;
        // The level in the tree: 0 starts a stack of its own.
        frame.index = Some(level.parse().ok()?);
        frame_line(Format::CallTree, frame)
    }
}

/// Tags the lines of every call tree in `lines` for [`CallTree`] to read.
pub(in crate::text) fn mark(lines: &mut [Option<String>]) {
    for tree in trees(lines) {
        for (level, line) in lines[tree].iter_mut().enumerate() {
            if let Some(text) = line {
                *text = format!("{TAG}{level} {}", text.trim());
            }
        }
    }
}

/// The lines of each call tree in `lines`.
fn trees(lines: &[Option<String>]) -> Vec<std::ops::Range<usize>> {
    let mut trees = Vec::new();
    let indent = |i: usize| -> Option<usize> {
        let line = lines.get(i)?.as_deref()?;
        let trimmed = line.trim_start();
        (!trimmed.is_empty()).then(|| line.len() - trimmed.len())
    };
    let mut i = 0;
    while i + 1 < lines.len() {
        // Cheap tests first: the indentation of the next lines.
        let (Some(first), Some(second)) = (indent(i), indent(i + 1)) else {
            i += 1;
            continue;
        };
        let step = second.saturating_sub(first);
        if !(1..=MAX_STEP).contains(&step) {
            i += 1;
            continue;
        }
        let mut end = i;
        let mut strong = 0;
        while end < lines.len()
            && indent(end) == Some(first + (end - i) * step)
            && lines[end]
                .as_deref()
                .and_then(|l| parse(l.trim()))
                .map(|(_, s)| strong += usize::from(s))
                .is_some()
        {
            end += 1;
        }
        let count = end - i;
        // A line after the tree that sits inside it is another branch: a
        // tree of calls, not one stack.
        let branches = indent(end).is_some_and(|d| d > first && d < first + count * step)
            && lines[end]
                .as_deref()
                .is_some_and(|l| parse(l.trim()).is_some());
        if count >= MIN_LINES && strong * 2 >= count && !branches {
            trees.push(i..end);
        }
        i = end.max(i + 1);
    }
    trees
}

/// A tree's line read as a frame, and whether its name has a shape only
/// code names have (a scope, an underscore, parentheses, `module!`), not
/// also a lower-case word's.
fn parse(line: &str) -> Option<(TextFrame, bool)> {
    let (name, mut rest) = name_token(line)?;
    let plain: String = name.chars().filter(|c| !c.is_whitespace()).collect();
    if !symbol_name(&plain) || name.ends_with(':') || name.ends_with('.') {
        return None;
    }
    let strong = ["::", "_", "(", "!"].iter().any(|m| name.contains(m));
    let mut frame = TextFrame {
        function: Some(name.to_string()),
        bare: true,
        ..TextFrame::default()
    };
    loop {
        rest = rest.trim_start();
        if rest.is_empty()
            || rest.starts_with("# ")
            || rest == "#"
            || rest.starts_with("<-")
            || rest.starts_with("//")
        {
            return Some((frame, strong));
        }
        if let Some(next) = rest.strip_prefix("->") {
            let (callee, after) = name_token(next.trim_start())?;
            if !symbol_name(callee) {
                return None;
            }
            frame.joined.push(callee.to_string());
            rest = after;
            continue;
        }
        let (open, close) = match rest.as_bytes()[0] {
            b'(' => ('(', ')'),
            b'[' => ('[', ']'),
            _ => return None,
        };
        let end = closing(rest, open, close)?;
        let inside = rest[1..end].trim();
        // One word naming a library: the frame's module. Anything else in
        // brackets is its arguments or a note.
        if !inside.contains(char::is_whitespace) && is_library(inside) {
            frame.module = Some(base(inside));
        }
        rest = &rest[end + 1..];
    }
}

/// A function's name at the start of `line` (blanks only inside its
/// brackets: `f(int, char)`), and what follows it.
fn name_token(line: &str) -> Option<(&str, &str)> {
    let first = line.chars().next()?;
    if !(first.is_ascii_alphabetic() || first == '_' || first == '~') {
        return None;
    }
    let mut depth = 0i32;
    for (at, c) in line.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
            }
            c if c.is_whitespace() && depth == 0 => return Some((&line[..at], &line[at..])),
            _ => {}
        }
    }
    (depth == 0).then_some((line, ""))
}

/// Where the bracket that `text` opens with closes.
fn closing(text: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(at);
            }
        }
    }
    None
}
