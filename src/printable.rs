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

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(clean("a\x1b[31mb\nc"), "a\\u{1b}[31mb\\nc");
        assert_eq!(clean("plain name.dll"), "plain name.dll");
    }
}
