//! ANSI styling of the text report.

/// ANSI styling, on only when the output is a terminal and NO_COLOR is unset
/// (decided by the caller).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paint {
    pub enabled: bool,
}

impl Paint {
    fn wrap(self, code: &str, text: &str) -> String {
        if self.enabled {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
    pub(super) fn bold(self, text: &str) -> String {
        self.wrap("1", text)
    }
    pub(super) fn red(self, text: &str) -> String {
        self.wrap("1;31", text)
    }
    pub(super) fn dim(self, text: &str) -> String {
        self.wrap("2", text)
    }
    pub(super) fn yellow(self, text: &str) -> String {
        self.wrap("33", text)
    }
    pub(super) fn green(self, text: &str) -> String {
        self.wrap("32", text)
    }
}
