//! Baselines (`--baseline FILE`, `dumptriage baseline`): the crash
//! signatures a team already knows, each with the issue that tracks it, so
//! that CI fails on new failures only (`--fail-on new`) and every output
//! links the known ones to their issue.
//!
//! The file is TOML, written by `dumptriage baseline` and edited by people:
//!
//! ```toml
//! crash_signature_version = 2
//!
//! [[failure]]
//! signature = "[condition wait] | SyncAllStreams | __hipUnregisterFatBinary"
//! issue = "https://github.com/org/app/issues/123"
//! note = "HIP runtime hang at exit; fixed in ROCm 6.3"
//! ```
//!
//! Signatures of another version never match (a change in how they are
//! computed would silently make every failure new, or worse, known): such a
//! file is refused with what to do.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;

use crate::model::{BaselineMatch, Report};
use crate::{finding, signature, Finding};

/// One known failure.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub signature: String,
    /// The issue tracking it: an http(s) URL, or empty while none is filed.
    #[serde(default)]
    pub issue: String,
    #[serde(default)]
    pub note: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    crash_signature_version: u32,
    #[serde(default)]
    failure: Vec<Entry>,
}

/// A loaded baseline.
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    entries: Vec<Entry>,
    by_signature: HashMap<String, usize>,
}

impl Baseline {
    /// Reads and checks a baseline file; an error names the file and every
    /// problem in it.
    pub fn load(path: &Path) -> Result<Baseline, String> {
        let shown = crate::printable::clean(&path.display().to_string());
        let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
        Baseline::parse(&text).map_err(|e| format!("{shown}: {e}"))
    }

    /// A baseline from its text.
    pub fn parse(text: &str) -> Result<Baseline, String> {
        let file: File = toml::from_str(text).map_err(|e| {
            format!(
                "not a dumptriage baseline: {}",
                e.to_string().trim_end().replace('\n', " ")
            )
        })?;
        if file.crash_signature_version != signature::VERSION {
            return Err(format!(
                "its signatures are crash signature version {}, and this dumptriage computes \
                 version {}: they would never match. Write a new baseline with `dumptriage \
                 baseline DUMPS... -o FILE` and carry the issues and notes over",
                file.crash_signature_version,
                signature::VERSION
            ));
        }
        let mut problems = Vec::new();
        let mut by_signature = HashMap::new();
        for (i, entry) in file.failure.iter().enumerate() {
            let n = i + 1;
            if entry.signature.trim().is_empty() {
                problems.push(format!("[[failure]] {n}: empty signature"));
            }
            let url = entry.issue.starts_with("https://") || entry.issue.starts_with("http://");
            if !(entry.issue.is_empty() || url) {
                problems.push(format!(
                    "[[failure]] {n}: issue {:?} is not an http(s) URL",
                    entry.issue
                ));
            }
            if let Some(first) = by_signature.insert(entry.signature.clone(), i) {
                problems.push(format!(
                    "[[failure]] {n}: the signature of [[failure]] {} again",
                    first + 1
                ));
            }
        }
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        Ok(Baseline {
            entries: file.failure,
            by_signature,
        })
    }

    /// The baseline whose entries `dumptriage baseline` keeps: the
    /// `--baseline` file, else the file it writes when that exists, else
    /// none.
    pub fn to_keep(flag: Option<&Path>, output: Option<&Path>) -> Result<Baseline, String> {
        match flag.or(output.filter(|p| p.exists())) {
            Some(path) => Baseline::load(path),
            None => Ok(Baseline::default()),
        }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry for a crash signature.
    pub fn get(&self, signature: &str) -> Option<&Entry> {
        self.by_signature.get(signature).map(|&i| &self.entries[i])
    }

    /// Marks every failed report known or new.
    pub fn apply(&self, reports: &mut [Report]) {
        for report in reports {
            report.baseline = self.check(report);
        }
    }

    /// A report's standing against the baseline: `None` when nothing failed.
    pub fn check(&self, report: &Report) -> Option<BaselineMatch> {
        if finding(report) == Finding::None {
            return None;
        }
        let entry = report.crash_signature.as_deref().and_then(|s| self.get(s));
        let text = |s: &str| Some(s.to_string()).filter(|s| !s.trim().is_empty());
        Some(BaselineMatch {
            known: entry.is_some(),
            issue: entry.and_then(|e| text(&e.issue)),
            note: entry.and_then(|e| text(&e.note)),
        })
    }

    /// The baseline file for a run: this baseline's entries (their issues
    /// and notes as they are), then each failure's crash signature it does
    /// not have yet, in the order of the reports, with a note saying what it
    /// is and where it was seen. Failures without a signature (no stack)
    /// cannot be baselined; they are counted in the second value.
    pub fn updated(&self, reports: &[Report]) -> (String, Added) {
        let mut added: Vec<(String, String, usize)> = Vec::new();
        let mut unsigned = 0;
        for report in reports {
            if finding(report) == Finding::None {
                continue;
            }
            let Some(signature) = &report.crash_signature else {
                unsigned += 1;
                continue;
            };
            if self.get(signature).is_some() {
                continue;
            }
            match added.iter_mut().find(|(s, _, _)| s == signature) {
                Some((_, _, count)) => *count += 1,
                None => {
                    let what = match report.diagnoses.first() {
                        Some(d) => format!("{}: {}", d.name(), d.title),
                        None => "crash matching no known signature".to_string(),
                    };
                    added.push((
                        signature.clone(),
                        format!("{what}; first seen in {}", report.path),
                        1,
                    ));
                }
            }
        }
        let mut out = String::from(
            "# dumptriage baseline: the failures already known, by crash signature.\n\
             # Give each [[failure]] the issue that tracks it (an http(s) URL) and a note.\n\
             # `dumptriage analyze --baseline FILE --fail-on new` fails only on failures\n\
             # whose signature is not here; the known ones are reported with their issue.\n",
        );
        let _ = writeln!(out, "crash_signature_version = {}", signature::VERSION);
        let quoted = |s: &str| toml::Value::String(s.to_string()).to_string();
        for entry in &self.entries {
            let _ = write!(
                out,
                "\n[[failure]]\nsignature = {}\nissue = {}\nnote = {}\n",
                quoted(&entry.signature),
                quoted(&entry.issue),
                quoted(&entry.note)
            );
        }
        for (signature, note, count) in &added {
            let note = match count {
                1 => note.clone(),
                n => format!("{note} ({n} dumps)"),
            };
            let _ = write!(
                out,
                "\n[[failure]]\nsignature = {}\nissue = \"\"\nnote = {}\n",
                quoted(signature),
                quoted(&note)
            );
        }
        (
            out,
            Added {
                new: added.len(),
                kept: self.entries.len(),
                unsigned,
            },
        )
    }
}

/// What [`Baseline::updated`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Added {
    /// Signatures added.
    pub new: usize,
    /// Entries carried over.
    pub kept: usize,
    /// Failures without a crash signature, left out.
    pub unsigned: usize,
}

impl std::fmt::Display for Added {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} new signature(s), {} kept", self.new, self.kept)?;
        if self.unsigned > 0 {
            write!(
                f,
                "; {} failure(s) without a stack have no signature and were left out",
                self.unsigned
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_baseline_reads_back_and_keeps_its_entries() {
        let base = Baseline::parse(
            "crash_signature_version = 2\n\n[[failure]]\nsignature = \"a | b\"\n\
             issue = \"https://example.com/i/1\"\nnote = \"tracked\"\n",
        )
        .unwrap();
        let (text, added) = base.updated(&[]);
        assert_eq!(
            added,
            Added {
                new: 0,
                kept: 1,
                unsigned: 0
            }
        );
        let again = Baseline::parse(&text).unwrap();
        assert_eq!(again.entries(), base.entries());
    }

    #[test]
    fn bad_baselines_say_what_is_wrong() {
        let err = Baseline::parse("crash_signature_version = 1\n").unwrap_err();
        assert!(
            err.contains("version 1") && err.contains("dumptriage baseline"),
            "{err}"
        );
        let err = Baseline::parse(
            "crash_signature_version = 2\n[[failure]]\nsignature = \"x\"\nissue = \"ftp://a\"\n\
             [[failure]]\nsignature = \"x\"\n",
        )
        .unwrap_err();
        assert!(err.contains("not an http(s) URL"), "{err}");
        assert!(
            err.contains("[[failure]] 2: the signature of [[failure]] 1 again"),
            "{err}"
        );
        let err = Baseline::parse("crash_signature_version = 2\n[[failure]]\nsignatur = \"x\"\n")
            .unwrap_err();
        assert!(err.starts_with("not a dumptriage baseline"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        // Hostile text is quoted back, never run: a signature with quotes
        // and newlines survives a round trip.
        let mut hostile = Baseline::default();
        hostile.entries.push(Entry {
            signature: "a\"b\nc\\d | ]]\n[[failure]]".to_string(),
            issue: String::new(),
            note: "x\"\"\"".to_string(),
        });
        let (text, _) = hostile.updated(&[]);
        let back = Baseline::parse(&text).unwrap();
        assert_eq!(back.entries(), hostile.entries());
    }
}
