//! What `doctor` checks, and the environment it checks it for.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct DoctorOptions {
    /// `--dump-dir` (default: the current folder).
    pub dump_dir: Option<PathBuf>,
    /// Symbol servers to ask: http(s) URLs.
    pub servers: Vec<String>,
    pub debuginfod_urls: Option<String>,
    /// Tests only: read /proc and /etc under this folder instead.
    pub root: Option<PathBuf>,
    /// Tests only: do not try ptrace for real.
    pub no_ptrace_probe: bool,
    /// The user's configuration folder (apport's own settings are there).
    pub config_dir: Option<PathBuf>,
    /// The environment of the process the check is for, as the caller read
    /// it: `PATH` (the tools found), and on Windows what WER's dump folder
    /// names (`%LOCALAPPDATA%`, ...).
    pub environment: Vec<(OsString, OsString)>,
}

impl DoctorOptions {
    /// The variable `name` of [`DoctorOptions::environment`] (names of
    /// any case on Windows, as the OS reads them).
    pub(crate) fn var(&self, name: &str) -> Option<&OsStr> {
        self.environment
            .iter()
            .find(|(key, _)| {
                if cfg!(windows) {
                    key.eq_ignore_ascii_case(name)
                } else {
                    key == name
                }
            })
            .map(|(_, value)| value.as_os_str())
    }
}
