//! What a symbol search tried and what went wrong, for the report.

/// Notes made while searching, and what went wrong.
#[derive(Default, Clone)]
pub(super) struct Log {
    pub tried: Vec<String>,
    pub warnings: Vec<String>,
    pub mismatched: bool,
    pub corrupt: bool,
    pub file: Option<String>,
}

impl Log {
    pub fn tried(&mut self, line: String) {
        self.tried.push(line);
    }
    pub fn mismatch(&mut self, path: &str, what: &str, file_has: &str, module_has: &str) {
        let line = format!(
            "{path}: {what} {file_has} differs from the module's {module_has}: file ignored"
        );
        self.tried.push(line.clone());
        self.warnings.push(line);
        self.mismatched = true;
    }
    pub fn corrupt(&mut self, path: &str, why: &str) {
        let line = format!("{path}: unreadable or corrupt ({why}): file ignored");
        self.tried.push(line.clone());
        self.warnings.push(line);
        self.corrupt = true;
    }
    pub fn server_failed(&mut self, url: &str, why: String) {
        self.tried.push(format!("{url}: {why}"));
        self.warnings.push(format!(
            "symbol server {url} failed ({why}); continuing without it"
        ));
    }
    pub fn merge(&mut self, other: Log) {
        self.tried.extend(other.tried);
        self.warnings.extend(other.warnings);
        self.mismatched |= other.mismatched;
        self.corrupt |= other.corrupt;
        if self.file.is_none() {
            self.file = other.file;
        }
    }
}
