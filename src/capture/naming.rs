//! Where a dump goes and what it is called: `PROCESSNAME_PID_YYMMDD_HHMMSS.dmp`
//! in a folder that is made if needed, never overwriting a file.

use super::types::CaptureError;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// A local date and time, to the second: the stamp in a dump's file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LocalTime {
    pub year: i32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

/// The procdump-like file name of a dump: `PROCESSNAME_PID_YYMMDD_HHMMSS.dmp`.
/// Characters a file name should not carry become `_`, so a process called
/// `../x` or `a b` cannot place the dump elsewhere or need quoting.
pub(crate) fn dump_file_name(process_name: &str, pid: u32, at: LocalTime) -> String {
    let mut name: String = process_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() || name.chars().all(|c| c == '.') {
        name = "process".to_string();
    }
    format!(
        "{name}_{pid}_{:02}{:02}{:02}_{:02}{:02}{:02}.dmp",
        at.year.rem_euclid(100),
        at.month,
        at.day,
        at.hour,
        at.minute,
        at.second
    )
}

/// Creates the dump file in `dir` without ever replacing a file: a second
/// dump of the same process in the same second gets `-2`, `-3`, ... before
/// `.dmp`.
pub(crate) fn create_dump_file(
    dir: &Path,
    file_name: &str,
) -> Result<(File, PathBuf), CaptureError> {
    let stem = file_name.strip_suffix(".dmp").unwrap_or(file_name);
    let mut attempt = 1;
    loop {
        let path = if attempt == 1 {
            dir.join(file_name)
        } else {
            dir.join(format!("{stem}-{attempt}.dmp"))
        };
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((file, path)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 1000 => {
                attempt += 1;
            }
            Err(source) => return Err(CaptureError::CreateDump { path, source }),
        }
    }
}

/// Makes sure dumps can be written into `dir` before anything is stopped or
/// started: creates it and its parents when missing, then creates and
/// removes a probe file in it. A folder that cannot be used is an error now,
/// not after a long run has hung (issue 11).
pub(crate) fn prepare_dump_dir(dir: &Path) -> Result<(), CaptureError> {
    let fail = |why: String| CaptureError::DumpDir {
        path: dir.to_path_buf(),
        why,
    };
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create it: {e}")))?;
    if !dir.is_dir() {
        return Err(fail("it is not a folder".to_string()));
    }
    tempfile::Builder::new()
        .prefix(".dumptriage-probe")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| fail(format!("cannot write in it: {e}")))
}

impl LocalTime {
    /// This machine's local time now (the time zone of `TZ` or
    /// /etc/localtime; UTC when neither can be read).
    pub(super) fn now() -> LocalTime {
        let now = jiff::Zoned::now();
        LocalTime {
            year: i32::from(now.year()),
            month: now.month() as u32,
            day: now.day() as u32,
            hour: now.hour() as u32,
            minute: now.minute() as u32,
            second: now.second() as u32,
        }
    }
}

/// Creates the file for a dump of `pid`, named after the process, in `dir`.
pub(in crate::capture) fn new_dump_file(
    dir: &Path,
    pid: u32,
    process_name: &str,
) -> Result<(File, PathBuf), CaptureError> {
    let name = dump_file_name(process_name, pid, LocalTime::now());
    create_dump_file(dir, &name)
}
