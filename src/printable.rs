//! Text from a dump, a rule file or a file name, made safe to print: the
//! one cleaner every output path uses (reports, progress, errors, panics),
//! in a leaf module so that none of them imports another for it.

/// Escapes control characters (terminal escapes, newlines, NULs) so that a
/// string from a dump prints as one inert line.
pub fn clean(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A command line as a POSIX shell would take it back: each word as is
/// when it holds only characters no shell treats specially, else in single
/// quotes (a quote inside written `'\''`), `''` for an empty word, and in
/// bash's `$'...'` when it holds control characters (a newline, an
/// escape), so that the line stays one line and still says exactly what
/// the process was given.
pub fn shell_words<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|word| shell_word(word.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_string();
    }
    if !word.chars().any(char::is_control) {
        return format!("'{}'", word.replace('\'', r"'\''"));
    }
    let mut out = String::from("$'");
    for c in word.chars() {
        match c {
            '\\' => out.push_str(r"\\"),
            '\'' => out.push_str(r"\'"),
            '\n' => out.push_str(r"\n"),
            '\t' => out.push_str(r"\t"),
            '\r' => out.push_str(r"\r"),
            c if c.is_control() && u32::from(c) < 0x80 => {
                out.push_str(&format!(r"\x{:02x}", u32::from(c)));
            }
            c if c.is_control() => out.push_str(&format!(r"\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::{clean, shell_words};

    #[test]
    fn command_lines_are_quoted_as_a_shell_would() {
        let line = |words: &[&str]| shell_words(words);
        assert_eq!(line(&["./prog", "--x=1", "a/b.c"]), "./prog --x=1 a/b.c");
        assert_eq!(
            line(&["sh", "-c", "./prog 'a b'"]),
            r"sh -c './prog '\''a b'\'''"
        );
        assert_eq!(
            line(&["echo", "", "a b", "$HOME", "*"]),
            "echo '' 'a b' '$HOME' '*'"
        );
        assert_eq!(
            line(&["x", "line\nnext", "it's\x1b"]),
            r"x $'line\nnext' $'it\'s\x1b'"
        );
        assert_eq!(line(&["naïve"]), "'naïve'");
        assert_eq!(line(&[]), "");
        // What `$'...'` gives is one printable line.
        assert!(!line(&["a\u{7f}\u{85}b"]).chars().any(char::is_control));
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(clean("a\x1b[31mb\nc"), "a\\u{1b}[31mb\\nc");
        assert_eq!(clean("plain name.dll"), "plain name.dll");
    }
}
