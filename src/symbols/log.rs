//! What a symbol search tried and what went wrong, for the report.

/// Notes made while searching, and what went wrong.
#[derive(Default, Clone)]
pub(super) struct Log {
    pub tried: Vec<String>,
    pub warnings: Vec<String>,
    pub mismatched: bool,
    pub corrupt: bool,
    pub file: Option<String>,
    /// The local copy of `file` (a download's, in the cache).
    pub local: Option<std::path::PathBuf>,
}

impl Log {
    /// Names came from `shown` (a path or URL), read from `path`.
    pub(super) fn named_by(&mut self, shown: String, path: &std::path::Path) {
        self.file = Some(shown);
        self.local = Some(path.to_path_buf());
    }
    pub(super) fn tried(&mut self, line: String) {
        self.tried.push(line);
    }
    pub(crate) fn mismatch(&mut self, path: &str, what: &str, file_has: &str, module_has: &str) {
        let line = format!(
            "{path}: {what} {file_has} differs from the module's {module_has}: file ignored"
        );
        self.tried.push(line.clone());
        self.warnings.push(line);
        self.mismatched = true;
    }
    pub(super) fn corrupt(&mut self, path: &str, why: &str) {
        let line = format!("{path}: unreadable or corrupt ({why}): file ignored");
        self.tried.push(line.clone());
        self.warnings.push(line);
        self.corrupt = true;
    }
    /// A server that could not answer: tried, and one warning that names
    /// it and why (the same words whether it failed now or earlier in the
    /// run, so a report says it once).
    pub(crate) fn server_failed(&mut self, url: &str, outage: Outage) {
        let why = &outage.why;
        self.tried.push(if outage.earlier {
            format!("{url}: not asked, it failed earlier in this run")
        } else {
            format!("{url}: {why}")
        });
        self.warnings.push(format!(
            "symbol server {url} failed: {why}; continuing without it"
        ));
    }
}

/// Why a server could not answer.
#[derive(Debug)]
pub(super) struct Outage {
    /// The reason, once (the file asked for and the error).
    pub why: String,
    /// It failed earlier in the run and was not asked again.
    pub earlier: bool,
}

/// Why a file found for a module is not used.
#[derive(Debug, Clone)]
pub(super) enum Refusal {
    /// It belongs to another build: `what` (GUID+age, timestamp+size,
    /// debug id, build id) is `found` in the file, not the module's.
    Mismatch {
        what: &'static str,
        found: String,
        expected: String,
    },
    /// Unreadable or not the kind of file it should be.
    Corrupt(String),
    /// Larger than the download limit.
    TooLarge { limit: u64 },
    /// A pointer store's `file.ptr` that is not followed: its message, or
    /// a path that is not a local absolute one.
    Pointer(String),
}

impl Log {
    /// Notes a refused file under the name it is shown by.
    pub(super) fn refused(&mut self, shown: &str, refusal: &Refusal) {
        match refusal {
            Refusal::Mismatch {
                what,
                found,
                expected,
            } => self.mismatch(shown, what, found, expected),
            Refusal::Corrupt(why) => self.corrupt(shown, why),
            Refusal::Pointer(why) => {
                let line = format!("{shown}: {why}");
                self.tried.push(line.clone());
                self.warnings.push(line);
            }
            Refusal::TooLarge { limit } => {
                let line = format!(
                    "{shown}: larger than the download limit of {limit} bytes \
                     (--max-download-size): not downloaded"
                );
                self.tried.push(line.clone());
                self.warnings.push(line);
            }
        }
    }

    /// Notes a name from the dump that cannot be a file name, so nothing
    /// was looked up by it.
    pub(crate) fn unusable_name(&mut self, what: &str, name: &str) {
        let line = format!(
            "{what} {} is not a plain file name: no file is looked up by it",
            super::safe_name::shown(name)
        );
        self.tried.push(line.clone());
        if !self.warnings.contains(&line) {
            self.warnings.push(line);
        }
    }
}
