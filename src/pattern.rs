//! Name patterns used by rules and by the exit-phase tables.
//!
//! A pattern is a glob (`*` any run of characters, `?` one character) that
//! must match the whole name, or a regular expression when written
//! `re:EXPR` (searched anywhere in the name; anchor it with `^...$`).
//! Module names compare case-insensitively (Windows file names are), function
//! names case-sensitively (C++ and C symbols are).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use regex_lite::{Regex, RegexBuilder};

#[derive(Clone)]
pub struct Pattern {
    source: String,
    matcher: Matcher,
}

/// Globs are matched directly. Regular expressions are compiled by
/// regex-lite (tens of microseconds per pattern, against about a
/// millisecond each for the `regex` crate's Unicode-aware automata, which
/// made compiling the database's patterns cost more than analysing a small
/// dump); the price is ASCII-only `\w`, `\d`, `\b` and case folding, which
/// is what symbol and module names need. A pattern from a file the user
/// gave is compiled when it is made, so a bad one is reported at load; one
/// compiled into the binary (checked by the test suite) on first use, as
/// most are never reached on a given dump.
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
        /// Shared by every pattern of the same expression and case (rules
        /// repeat their module and namespace lists), so each is compiled once.
        compiled: Arc<OnceLock<Option<Regex>>>,
    },
    /// A named group of patterns (`functions:NAME`): any one matches,
    /// unless one of its exceptions does.
    Any {
        patterns: Arc<[Pattern]>,
        except: Arc<[Pattern]>,
    },
}

/// A pattern is shown as it was written (with its case), whether or not its
/// regular expression has been compiled yet.
impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let insensitive = match &self.matcher {
            Matcher::Glob { insensitive, .. } | Matcher::Regex { insensitive, .. } => *insensitive,
            Matcher::Any { .. } => false,
        };
        let case = if insensitive { "(any case)" } else { "" };
        write!(f, "Pattern({:?}{case})", self.source)
    }
}

/// When a regular expression is compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compile {
    /// Now: a syntax error is reported by [`Pattern::compile`].
    Now,
    /// On first use, for patterns compiled into the binary and checked by
    /// the test suite; one that does not compile would match nothing.
    OnFirstUse,
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
    /// A pattern whose regular expression, if it is one, is checked now.
    pub fn new(source: &str, case: Case) -> Result<Pattern, String> {
        Pattern::compile(source, case, Compile::Now)
    }

    pub(crate) fn compile(source: &str, case: Case, when: Compile) -> Result<Pattern, String> {
        let insensitive = case == Case::Insensitive;
        let matcher = match source.strip_prefix("re:") {
            Some(expr) => {
                let compiled = shared_slot(expr, insensitive);
                if when == Compile::Now && compiled.get().is_none() {
                    let regex =
                        build(expr, insensitive).map_err(|e| invalid(source, &e.to_string()))?;
                    let _ = compiled.set(Some(regex));
                }
                if when == Compile::Now && compiled.get().is_some_and(Option::is_none) {
                    // Compiled on first use before and found bad: say so now.
                    let error = build(expr, insensitive).err().map(|e| e.to_string());
                    return Err(invalid(
                        source,
                        error.as_deref().unwrap_or("does not compile"),
                    ));
                }
                Matcher::Regex {
                    expr: expr.to_string(),
                    insensitive,
                    compiled,
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

    /// A pattern named `source` that matches what any of `patterns` does
    /// and none of `except`.
    pub(crate) fn any_of(
        source: &str,
        patterns: Arc<[Pattern]>,
        except: Arc<[Pattern]>,
    ) -> Pattern {
        Pattern {
            source: source.to_string(),
            matcher: Matcher::Any { patterns, except },
        }
    }

    pub fn matches(&self, name: &str) -> bool {
        match &self.matcher {
            Matcher::Any { patterns, except } => {
                patterns.iter().any(|p| p.matches(name)) && !except.iter().any(|p| p.matches(name))
            }
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

/// The compiled form of `expr` in this case, shared by the process: the
/// same slot for the same expression.
fn shared_slot(expr: &str, insensitive: bool) -> Arc<OnceLock<Option<Regex>>> {
    type Slots = Mutex<HashMap<(String, bool), Arc<OnceLock<Option<Regex>>>>>;
    static SLOTS: OnceLock<Slots> = OnceLock::new();
    let slots = SLOTS.get_or_init(Default::default);
    let mut slots = slots
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    slots
        .entry((expr.to_string(), insensitive))
        .or_default()
        .clone()
}

fn build(expr: &str, insensitive: bool) -> Result<Regex, regex_lite::Error> {
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
        // A built-in pattern is compiled on first use; the same expression
        // checked later (a user's rule) is still reported, and identical
        // expressions share one compiled form.
        let lazy = Pattern::compile("re:)x(", Case::Sensitive, Compile::OnFirstUse).unwrap();
        assert!(!lazy.matches(")x("));
        assert!(Pattern::new("re:)x(", Case::Sensitive).is_err());
        let a = Pattern::compile("re:^same$", Case::Sensitive, Compile::OnFirstUse).unwrap();
        let b = Pattern::new("re:^same$", Case::Sensitive).unwrap();
        assert!(a.matches("same") && b.matches("same"));
        let (Matcher::Regex { compiled: x, .. }, Matcher::Regex { compiled: y, .. }) =
            (&a.matcher, &b.matcher)
        else {
            panic!("regular expressions");
        };
        assert!(Arc::ptr_eq(x, y));
        let other_case = Pattern::new("re:^same$", Case::Insensitive).unwrap();
        assert!(other_case.matches("SAME") && !a.matches("SAME"));
    }
}
