//! Name patterns used by rules and by the exit-phase tables.
//!
//! A pattern is a glob (`*` any run of characters, `?` one character) that
//! must match the whole name, or a regular expression when written
//! `re:EXPR` (searched anywhere in the name; anchor it with `^...$`).
//! Module names compare case-insensitively (Windows file names are), function
//! names case-sensitively (C++ and C symbols are).

use regex::{Regex, RegexBuilder};

#[derive(Debug, Clone)]
pub struct Pattern {
    source: String,
    regex: Regex,
}

/// Whether a pattern is for module names or function names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// Module file names: case-insensitive.
    Insensitive,
    /// Function names: case-sensitive.
    Sensitive,
}

impl Pattern {
    pub fn new(source: &str, case: Case) -> Result<Pattern, String> {
        let expr = match source.strip_prefix("re:") {
            Some(expr) => expr.to_string(),
            None => glob_to_regex(source),
        };
        let regex = RegexBuilder::new(&expr)
            .case_insensitive(case == Case::Insensitive)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| match source.starts_with("re:") {
                true => format!(
                    "invalid regular expression {source:?}: {}",
                    first_line(&e.to_string())
                ),
                false => format!("invalid pattern {source:?}: {}", first_line(&e.to_string())),
            })?;
        Ok(Pattern {
            source: source.to_string(),
            regex,
        })
    }

    pub fn matches(&self, name: &str) -> bool {
        self.regex.is_match(name)
    }

    pub fn source(&self) -> &str {
        &self.source
    }
}

fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .rfind(|l| l.starts_with("error:"))
        .unwrap_or_else(|| text.lines().next().unwrap_or(text))
}

fn glob_to_regex(glob: &str) -> String {
    let mut expr = String::with_capacity(glob.len() + 8);
    expr.push('^');
    for c in glob.chars() {
        match c {
            '*' => expr.push_str(".*"),
            '?' => expr.push('.'),
            other => expr.push_str(&regex::escape(other.encode_utf8(&mut [0; 4]))),
        }
    }
    expr.push('$');
    expr
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        let p = Pattern::new("amdhip64*.dll", Case::Insensitive).unwrap();
        assert!(p.matches("amdhip64.dll"));
        assert!(p.matches("AMDHIP64_6.DLL"));
        assert!(!p.matches("libamdhip64.so"));
        let f = Pattern::new("__hipUnregisterFatBinary", Case::Sensitive).unwrap();
        assert!(f.matches("__hipUnregisterFatBinary"));
        assert!(!f.matches("__hipunregisterfatbinary"));
        assert!(!f.matches("x__hipUnregisterFatBinary"));
        let special = Pattern::new("operator()(int)", Case::Sensitive).unwrap();
        assert!(special.matches("operator()(int)"));
    }

    #[test]
    fn regexes_search_and_report_errors() {
        let p = Pattern::new("re:^Py_Finalize(Ex)?$", Case::Sensitive).unwrap();
        assert!(p.matches("Py_FinalizeEx") && p.matches("Py_Finalize"));
        let err = Pattern::new("re:([", Case::Sensitive).unwrap_err();
        assert!(err.starts_with("invalid regular expression"), "{err}");
    }
}
