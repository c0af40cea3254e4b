//! CI noise off a log line, before any trace format looks at it: ANSI
//! colours and cursor codes, GitHub Actions' and GitLab's timestamps and
//! section markers, `> ` quoting and Markdown fences of issue text, and
//! carriage returns.

/// Longest line looked at: a 100 MB line (a minified bundle, a binary
/// blob) is no trace line, and is skipped rather than scanned.
pub(super) const MAX_LINE: usize = 64 * 1024;

/// What a raw line is once the noise is off: the text, or a line to skip
/// (group markers, fences, over-long lines).
pub(super) fn clean_line(raw: &str) -> Option<String> {
    if raw.len() > MAX_LINE {
        return None;
    }
    let mut line = unlink_hex_words(strip_ansi(raw));
    // GitLab's collapsible sections: `section_start:1700000000:name[...]`.
    if let Some(at) = line
        .find("section_start:")
        .or_else(|| line.find("section_end:"))
    {
        line.truncate(at);
    }
    let mut text = line.trim_end_matches(['\r', '\n']);
    text = strip_timestamp(text);
    text = strip_clock_time(text);
    text = strip_bracketed_time(text);
    text = strip_name_number(text, ':');
    text = strip_name_number(text, '-');
    // A test runner's label on each line of a captured stream.
    for stream in ["stderr: ", "stdout: "] {
        text = text.strip_prefix(stream).unwrap_or(text);
    }
    // GitHub Actions' workflow commands: `##[group]`, `##[endgroup]`,
    // `##[error]message` (the message is kept).
    if let Some(rest) = text.strip_prefix("##[") {
        let (command, message) = rest.split_once(']').unwrap_or((rest, ""));
        if matches!(command, "group" | "endgroup" | "section" | "command") {
            return None;
        }
        text = message;
    }
    // Quoting in issue text and mail, nested (`> > `, `>> `). Visual
    // Studio's `>` marks the current frame and is followed by a tab, and
    // Python's prompt is `>>> `: neither is quoting.
    loop {
        let trimmed = text.trim_start_matches(' ');
        let marks = trimmed.len() - trimmed.trim_start_matches('>').len();
        let rest = &trimmed[marks..];
        if marks == 0 || marks == 3 || !(rest.is_empty() || rest.starts_with(' ')) {
            break;
        }
        text = rest.strip_prefix(' ').unwrap_or(rest);
    }
    // Markdown fences: ``` or a line of tildes only (pytest-timeout's
    // `~~~~ Stack of ... ~~~~` headers are not fences).
    let fence = text.trim();
    if fence.starts_with("```") || (fence.len() >= 3 && fence.chars().all(|c| c == '~')) {
        return None;
    }
    // Markdown inline code around a frame (`` `#0 0x... in f ()` ``), or
    // opened on one line and closed on another: the backticks go. A
    // single backtick alone on a line is such a delimiter too.
    let bare = text.trim();
    if bare == "`" {
        return None;
    }
    if let Some(inner) = bare.strip_prefix('`').filter(|i| !i.starts_with('`')) {
        let inner = inner.strip_suffix('`').unwrap_or(inner);
        let indent = &text[..text.len() - text.trim_start().len()];
        return Some(format!("{indent}{inner}"));
    }
    // Markdown emphasis a reporter put on a frame: `**ntdll!Foo()**`; not
    // the asterisks a runtime prints itself (glog's `*** Check failure
    // stack trace: ***`, glibc's `*** Error in ...`).
    if text.trim_start().starts_with("***") {
        return Some(text.to_string());
    }
    let unbold = text.trim_end().trim_end_matches("**");
    let indent = unbold.len() - unbold.trim_start().len();
    if unbold[indent..].starts_with("**") {
        return Some(format!("{}{}", &unbold[..indent], &unbold[indent + 2..]));
    }
    Some(text.to_string())
}

/// Whether a raw line marks the edge of a block a person or a CI system
/// drew around part of a log: a Markdown fence (```` ``` ````, `~~~`), a
/// GitHub Actions group (`##[group]`, `##[endgroup]`), a GitLab section
/// marker, an HTML `<details>` block of an issue. Traces do not run across
/// such an edge unless the frames go on counting (split.rs).
pub(super) fn is_boundary(raw: &str) -> bool {
    let line = raw.trim();
    // Quoting in issue text (`> ```).
    let line = line.trim_start_matches(['>', ' ']);
    let line = strip_timestamp(line).trim();
    line.starts_with("```")
        || (line.len() >= 3 && line.bytes().all(|b| b == b'~'))
        || line.starts_with("##[group]")
        || line.starts_with("##[endgroup]")
        || line.contains("section_start:")
        || line.contains("section_end:")
        || line.starts_with("<details")
        || line.starts_with("</details")
}

/// Markdown's indentation of a pasted block (a 4-space code block, a
/// fence inside a list item) goes: every run of non-blank lines loses the
/// indentation all its lines share, so a trace reads as its tool printed
/// it (gdb's frames and a sanitizer's first line at the line start). A run
/// made only of a sanitizer's frames (`#0 0x...`, one space: gdb puts two
/// after a one-digit number), its report's first lines cut off, keeps the
/// indentation that tells them from gdb's.
pub(super) fn dedent_blocks(lines: &mut [Option<String>]) {
    let mut start = 0;
    while start < lines.len() {
        let len = lines[start..]
            .iter()
            .take_while(|l| l.as_deref().is_some_and(|l| !l.trim().is_empty()))
            .count();
        dedent(&mut lines[start..start + len]);
        start += len.max(1);
    }
}

fn dedent(run: &mut [Option<String>]) {
    let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let shared = run.iter().flatten().map(|l| indent(l)).min().unwrap_or(0);
    let sanitizer = |l: &str| {
        let b = l.trim_start().as_bytes();
        b.len() > 5 && b[0] == b'#' && b[1].is_ascii_digit() && &b[2..5] == b" 0x"
    };
    if shared == 0 || run.iter().flatten().all(|l| sanitizer(l)) {
        return;
    }
    for line in run.iter_mut().flatten() {
        line.drain(..shared);
    }
}

/// A bracketed `[NAME<sep>NUMBER] ` before a line's text: Open MPI's host
/// and process id on each line its signal handler prints (`[node-7:05428] `,
/// `:`), ROS's launched node and its number on each line of the node's
/// output (`[planner-1] `, `-`). A pasted block's indentation may come
/// before it.
fn strip_name_number(text: &str, sep: char) -> &str {
    let Some(rest) = text.trim_start().strip_prefix('[') else {
        return text;
    };
    let Some((inside, after)) = rest.split_once("] ") else {
        return text;
    };
    let Some((name, number)) = inside.rsplit_once(sep) else {
        return text;
    };
    let name_like = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
    if name_like && !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
        after
    } else {
        text
    }
}

/// A leading bracketed elapsed time or clock, as build services print it
/// (`[  192s] `, `[12:00:01] `, `[12:00:01.123] `).
fn strip_bracketed_time(text: &str) -> &str {
    let Some(rest) = text.strip_prefix('[') else {
        return text;
    };
    let Some(end) = rest.find(']') else {
        return text;
    };
    let inside = rest[..end].trim();
    // (A bare number is a shell's job (`[1]    25816 segmentation
    // fault`), a list's index: no time.)
    let timelike = !inside.is_empty()
        && inside.chars().any(|c| c.is_ascii_digit())
        && !inside.chars().all(|c| c.is_ascii_digit())
        && inside
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, ':' | '.' | ',' | 's' | 'm' | 'h' | ' '));
    if timelike {
        rest[end + 1..]
            .strip_prefix(' ')
            .unwrap_or(&rest[end + 1..])
    } else {
        text
    }
}

/// Removes ANSI escape sequences (CSI `ESC [ ... letter`, OSC `ESC ] ...
/// BEL`, and lone two-byte escapes).
fn strip_ansi(text: &str) -> String {
    if !text.contains('\x1b') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' {
                        break;
                    }
                    if c == '\x1b' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Addresses an issue tracker turned into links (a tracker migrated from
/// another one links every hex word that could be a commit: `[1e7e0000
/// (bb)](https://.../commits/1e7e0000)`): each such link is its hex word
/// again, so a debugger's columns read as it printed them. A link cut off
/// before its `)` (a paste that ends mid-line) ends the line. Links whose
/// text is anything else are left alone.
fn unlink_hex_words(line: String) -> String {
    if !line.contains("](") {
        return line;
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line.as_str();
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let Some(close) = after.find("](") else {
            break;
        };
        let inner = &after[..close];
        let word = inner.split(' ').next().unwrap_or("");
        let tag = inner[word.len()..].trim();
        let hex_word = (8..=17).contains(&word.len())
            && word.bytes().all(|b| b.is_ascii_hexdigit() || b == b'`')
            && (tag.is_empty() || (tag.starts_with('(') && tag.ends_with(')')));
        if !hex_word {
            out.push_str(&rest[..open + 1]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..open]);
        out.push_str(word);
        let target = &after[close + 2..];
        match target.find(')') {
            Some(end) => rest = &target[end + 1..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A leading ISO 8601 timestamp, as GitHub Actions (`2024-05-01T12:00:00.1234567Z `)
/// and many loggers print it, with its separator.
fn strip_timestamp(text: &str) -> &str {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|b| b.iter().all(u8::is_ascii_digit))
    };
    let shape = digits(0..4)
        && bytes.get(4) == Some(&b'-')
        && digits(5..7)
        && bytes.get(7) == Some(&b'-')
        && digits(8..10)
        && matches!(bytes.get(10), Some(b'T' | b' '))
        && digits(11..13)
        && bytes.get(13) == Some(&b':');
    if !shape {
        return text;
    }
    match text[10..].find([' ', '\t']) {
        // The time's own space (`2024-05-01 12:00:00`) is not the end.
        Some(_) if bytes[10] == b' ' => match text[11..].find([' ', '\t']) {
            Some(end) => text[11 + end + 1..].trim_start_matches(['|', ' ']),
            None => "",
        },
        Some(at) => &text[10 + at + 1..],
        None => "",
    }
}

/// A leading time of day without a date, as Jenkins' Timestamper
/// (`20:52:40  `, two spaces) and Gradle-driven CI logs print it, with its
/// separator: a tab, or one or two spaces (indentation after them stays).
fn strip_clock_time(text: &str) -> &str {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|b| b.iter().all(u8::is_ascii_digit))
    };
    if !(digits(0..2)
        && bytes.get(2) == Some(&b':')
        && digits(3..5)
        && bytes.get(5) == Some(&b':')
        && digits(6..8))
    {
        return text;
    }
    let mut end = 8;
    if bytes.get(end) == Some(&b'.') {
        end += 1;
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
    }
    match (bytes.get(end), bytes.get(end + 1)) {
        (Some(b'\t'), _) => &text[end + 1..],
        (Some(b' '), Some(b' ')) => &text[end + 2..],
        (Some(b' '), _) => &text[end + 1..],
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_noise_comes_off() {
        let cases = [
            (
                "2024-05-01T12:00:00.1234567Z #0  0x00007f in raise () from /lib/libc.so.6",
                Some("#0  0x00007f in raise () from /lib/libc.so.6"),
            ),
            (
                "\x1b[31mFatal Python error\x1b[0m: Aborted",
                Some("Fatal Python error: Aborted"),
            ),
            ("##[group]Run tests", None),
            (
                "##[error]Process completed with exit code 139.",
                Some("Process completed with exit code 139."),
            ),
            ("> > Thread 0x0000bc98:", Some("Thread 0x0000bc98:")),
            (">> #0  0x00007f in raise ()", Some("#0  0x00007f in raise ()")),
            (">>> import torch", Some(">>> import torch")),
            (
                ">\tfoo.dll!Bar() Line 12\tC++",
                Some(">\tfoo.dll!Bar() Line 12\tC++"),
            ),
            ("```", None),
            (
                "  File \"x.py\", line 3 in f\r",
                Some("  File \"x.py\", line 3 in f"),
            ),
            ("2024-05-01 12:00:00,123 | INFO hello", Some("INFO hello")),
            // Jenkins' Timestamper: a time of day, two spaces.
            (
                "20:52:40  == 130 passed in 1.5s ==",
                Some("== 130 passed in 1.5s =="),
            ),
            ("09:01:02.345\t  File \"x.py\"", Some("  File \"x.py\"")),
            // Not a time: left as it is.
            ("12:30 is lunch", Some("12:30 is lunch")),
            ("section_start:1700000000:build\r\x1b[0KBuilding", Some("")),
            (
                "[  192s] ~~~ Stack of MainThread (1) ~~~",
                Some("~~~ Stack of MainThread (1) ~~~"),
            ),
            (
                "  **ntdll.dll!LdrpDrainWorkQueue()**",
                Some("  ntdll.dll!LdrpDrainWorkQueue()"),
            ),
            ("[External Code]", Some("[External Code]")),
            (
                "[control_node-3] #15   Object \"/opt/ws/bin/control_node\", at 0x564ec85451aa, in main",
                Some("#15   Object \"/opt/ws/bin/control_node\", at 0x564ec85451aa, in main"),
            ),
            (
                "[node-7:05428] [ 1] /lib/libQtCore.so.4(_ZNK7QObject6threadEv+0x4)[0x7fcff6b846e4]",
                Some("[ 1] /lib/libQtCore.so.4(_ZNK7QObject6threadEv+0x4)[0x7fcff6b846e4]"),
            ),
            (
                "[1]    25816 segmentation fault (core dumped)  ./prog",
                Some("[1]    25816 segmentation fault (core dumped)  ./prog"),
            ),
            ("`", None),
            (
                "` \tapp.dll!Run()\tUnknown",
                Some(" \tapp.dll!Run()\tUnknown"),
            ),
            (
                "`#0  0x00007f in raise () from /lib/libc.so.6`",
                Some("#0  0x00007f in raise () from /lib/libc.so.6"),
            ),
            (
                "  File \"x.py\", line 3 in `f`",
                Some("  File \"x.py\", line 3 in `f`"),
            ),
            (
                "*** Check failure stack trace: ***",
                Some("*** Check failure stack trace: ***"),
            ),
            // Hex words a tracker linked, one cut off mid-link; other
            // links stay.
            (
                "0012ff40 [7c8130a1 (bb)](https://example.org/c/7c8130a1) [00000000](https://example.org/c/0) app!Run+0x12",
                Some("0012ff40 7c8130a1 00000000 app!Run+0x12"),
            ),
            (
                "0012ff60 [7c81aaaa (bb)](https://example.org/c/7",
                Some("0012ff60 7c81aaaa"),
            ),
            (
                "see [the docs](https://example.org/x) and [deadbeef is here](https://e.org)",
                Some("see [the docs](https://example.org/x) and [deadbeef is here](https://e.org)"),
            ),
        ];
        for (raw, want) in cases {
            assert_eq!(clean_line(raw).as_deref(), want, "{raw:?}");
        }
        assert_eq!(clean_line(&"x".repeat(MAX_LINE + 1)), None);
    }
}
