//! Name patterns used by rules and by the exit-phase tables.
//!
//! A pattern is a glob (`*` any run of characters, `?` one character) that
//! must match the whole name, or a regular expression when written
//! `re:EXPR` (searched anywhere in the name; anchor it with `^...$`).
//! Module names compare case-insensitively (Windows file names are), function
//! names case-sensitively (C++ and C symbols are).

use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};

#[derive(Debug, Clone)]
pub struct Pattern {
    source: String,
    matcher: Matcher,
}

/// Globs are matched directly, and regular expressions are compiled on first
/// use (their syntax is checked up front): compiling every pattern of the
/// database at start-up would cost more than analysing a small dump.
#[derive(Debug, Clone)]
enum Matcher {
    Glob {
        glob: Vec<char>,
        /// The glob's bytes, when it is ASCII: matched against ASCII names
        /// byte by byte.
        ascii: Option<Vec<u8>>,
        insensitive: bool,
    },
    Regex {
        expr: String,
        insensitive: bool,
        compiled: OnceLock<Option<Regex>>,
    },
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
        let insensitive = case == Case::Insensitive;
        let matcher = match source.strip_prefix("re:") {
            Some(expr) => {
                regex_syntax::ParserBuilder::new()
                    .case_insensitive(insensitive)
                    .build()
                    .parse(expr)
                    .map_err(|e| invalid(source, &e.to_string()))?;
                Matcher::Regex {
                    expr: expr.to_string(),
                    insensitive,
                    compiled: OnceLock::new(),
                }
            }
            None if source.is_empty() => return Err("empty pattern".to_string()),
            None => Matcher::Glob {
                glob: source.chars().collect(),
                ascii: source.is_ascii().then(|| source.as_bytes().to_vec()),
                insensitive,
            },
        };
        Ok(Pattern {
            source: source.to_string(),
            matcher,
        })
    }

    /// Compiles a regular expression now, reporting what would otherwise
    /// make it match nothing (an expression too large to compile). Used by
    /// `signatures lint`.
    pub fn check(&self) -> Result<(), String> {
        match &self.matcher {
            Matcher::Glob { .. } => Ok(()),
            Matcher::Regex {
                expr, insensitive, ..
            } => build(expr, *insensitive)
                .map(drop)
                .map_err(|e| invalid(&self.source, &e.to_string())),
        }
    }

    pub fn matches(&self, name: &str) -> bool {
        match &self.matcher {
            Matcher::Glob {
                glob,
                ascii,
                insensitive,
            } => match ascii {
                // Symbol names are nearly always ASCII, and C++ ones run to
                // thousands of characters, each matched against every
                // pattern: compared in place.
                Some(glob) if name.is_ascii() => {
                    wildcard(glob, name.as_bytes(), b'*', b'?', |a, b| {
                        a == b || (*insensitive && a.eq_ignore_ascii_case(&b))
                    })
                }
                _ => {
                    let name: Vec<char> = name.chars().collect();
                    wildcard(glob, &name, '*', '?', |a, b| same(a, b, *insensitive))
                }
            },
            Matcher::Regex {
                expr,
                insensitive,
                compiled,
            } => compiled
                .get_or_init(|| build(expr, *insensitive).ok())
                .as_ref()
                .is_some_and(|regex| regex.is_match(name)),
        }
    }

    pub fn source(&self) -> &str {
        &self.source
    }
}

fn build(expr: &str, insensitive: bool) -> Result<Regex, regex::Error> {
    RegexBuilder::new(expr)
        .case_insensitive(insensitive)
        .size_limit(1 << 24)
        .build()
}

fn invalid(source: &str, error: &str) -> String {
    format!(
        "invalid regular expression {source:?}: {}",
        first_line(error)
    )
}

fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .rfind(|l| l.starts_with("error:"))
        .unwrap_or_else(|| text.lines().next().unwrap_or(text))
}

fn same(a: char, b: char, insensitive: bool) -> bool {
    a == b || (insensitive && (a.eq_ignore_ascii_case(&b) || a.to_lowercase().eq(b.to_lowercase())))
}

/// Whole-name wildcard match of `name` by `glob` (of characters or bytes):
/// `star` any run, `any` one. Linear backtracking over the last `star`
/// only, so no input makes it slow.
fn wildcard<T: Copy + PartialEq>(
    glob: &[T],
    name: &[T],
    star: T,
    any: T,
    same: impl Fn(T, T) -> bool,
) -> bool {
    let (mut g, mut n) = (0, 0);
    let mut last_star: Option<(usize, usize)> = None;
    while n < name.len() {
        match glob.get(g) {
            Some(&c) if c == star => {
                last_star = Some((g, n));
                g += 1;
            }
            Some(&c) if c == any || same(c, name[n]) => {
                g += 1;
                n += 1;
            }
            _ => match last_star {
                Some((sg, sn)) => {
                    g = sg + 1;
                    n = sn + 1;
                    last_star = Some((sg, sn + 1));
                }
                None => return false,
            },
        }
    }
    glob[g..].iter().all(|&c| c == star)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_and_other_names_match_alike() {
        for (glob, case, name, want) in [
            ("*Fat*", Case::Sensitive, "__hipUnregisterFatBinary", true),
            ("*fat*", Case::Sensitive, "__hipUnregisterFatBinary", false),
            ("*FAT*", Case::Insensitive, "__hipUnregisterFatBinary", true),
            ("*é*", Case::Sensitive, "café::run", true),
            ("CAF?::*", Case::Insensitive, "café::run", true),
            ("caf?::*", Case::Sensitive, "caf::run", false),
            ("a*b*c", Case::Sensitive, "axxbyyc", true),
            ("a*b*c", Case::Sensitive, "axxbyyd", false),
        ] {
            let p = Pattern::new(glob, case).unwrap();
            assert_eq!(p.matches(name), want, "{glob} on {name}");
        }
    }

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
        let middle = Pattern::new("a*b?d*", Case::Sensitive).unwrap();
        assert!(middle.matches("axxbcd") && middle.matches("abcdzz") && !middle.matches("abd"));
        assert!(Pattern::new("*", Case::Sensitive).unwrap().matches(""));
        let long = "a".repeat(10_000);
        assert!(!Pattern::new("*a*a*a*a*b", Case::Sensitive)
            .unwrap()
            .matches(&long));
    }

    #[test]
    fn regexes_search_and_report_errors() {
        let p = Pattern::new("re:^Py_Finalize(Ex)?$", Case::Sensitive).unwrap();
        assert!(p.matches("Py_FinalizeEx") && p.matches("Py_Finalize"));
        let err = Pattern::new("re:([", Case::Sensitive).unwrap_err();
        assert!(err.starts_with("invalid regular expression"), "{err}");
    }
}
