//! Why a file is not an analysable dump, said in one line: the error
//! taxonomy (each kind with a stable short name) and the reading of the
//! reader's terse errors into sentences naming what is wrong.

use crate::model::Report;
use minidump::Minidump;
use minidump_processor::ProcessError;
use std::path::Path;

/// Size of MINIDUMP_HEADER: anything shorter cannot be a minidump.
pub(super) const HEADER_SIZE: u64 = 32;

/// Why a dump could not be analysed. Each variant has a stable short name
/// ([`DumpError::name`]) for tools that group errors.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    #[error("cannot read file: {0}")]
    Unreadable(std::io::Error),
    #[error("empty file (0 bytes): not a minidump")]
    Empty,
    #[error("not a regular file ({0}): not a minidump")]
    NotAFile(&'static str),
    /// The file's first bytes.
    #[error("not a minidump: file starts with {0} instead of the MDMP signature")]
    NotMinidump(String),
    #[error("truncated minidump: {0}")]
    Truncated(String),
    #[error("unsupported minidump version")]
    UnsupportedVersion,
    #[error("corrupt minidump: {0}")]
    Corrupt(String),
    /// A Linux core file that could not be read.
    #[error("core file: {0}")]
    Core(String),
    #[error("internal error while analysing this dump: {0} (please report it with the dump)")]
    Internal(String),
}

impl DumpError {
    /// A stable, machine-friendly name for the kind of failure.
    pub fn name(&self) -> &'static str {
        match self {
            DumpError::Unreadable(_) => "unreadable",
            DumpError::Empty => "empty",
            DumpError::NotAFile(_) => "not_a_file",
            DumpError::NotMinidump(..) => "not_minidump",
            DumpError::Truncated(_) => "truncated",
            DumpError::UnsupportedVersion => "unsupported_version",
            DumpError::Corrupt(_) => "corrupt",
            DumpError::Core(_) => "core",
            DumpError::Internal(_) => "internal",
        }
    }

    /// The error report of the dump at `path`.
    pub fn report(&self, path: String) -> Report {
        Report::failed(path, self.name(), self.to_string())
    }
}

pub(super) fn file_kind(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
    }
    if kind.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

/// Turns the reader's terse errors into a sentence naming what is wrong.
pub(super) fn read_error(error: minidump::Error, path: &Path, size: u64) -> DumpError {
    use minidump::Error as E;
    match error {
        E::FileNotFound | E::IoError => match std::fs::File::open(path) {
            Err(io) => DumpError::Unreadable(io),
            Ok(_) => DumpError::Corrupt(format!("could not map the file ({size} bytes)")),
        },
        // Too short for a header: only a prefix of the signature can tell a
        // cut-off minidump from some other small file.
        E::MissingHeader if !starts_like_minidump(path) => not_minidump(path),
        E::MissingHeader => DumpError::Truncated(format!(
            "{size} bytes, shorter than the {HEADER_SIZE}-byte minidump header"
        )),
        E::HeaderMismatch => not_minidump(path),
        E::VersionMismatch => DumpError::UnsupportedVersion,
        E::MissingDirectory => DumpError::Truncated(format!(
            "the stream directory lies outside the file ({size} bytes)"
        )),
        other => DumpError::Corrupt(other.to_string()),
    }
}

pub(super) fn process_error<T>(error: ProcessError, dump: &Minidump<'_, T>, size: u64) -> DumpError
where
    T: std::ops::Deref<Target = [u8]>,
{
    // The processor only says a required stream is missing; asking the
    // reader again tells whether it is absent or present but damaged.
    let why = |stream: &str, stream_type: u32, found: Result<(), minidump::Error>| match found {
        Err(_) if extends_past_end(dump, stream_type, size) => DumpError::Truncated(format!(
            "the {stream} stream extends past the end of the file ({size} bytes)"
        )),
        Err(minidump::Error::StreamNotFound) | Ok(()) => {
            let damage = directory_damage(dump, size)
                .map(|d| format!("; {d}"))
                .unwrap_or_default();
            DumpError::Corrupt(format!(
                "the dump has no {stream} stream (file is {size} bytes{damage})"
            ))
        }
        Err(e) => DumpError::Corrupt(format!(
            "the {stream} stream is damaged: {e} (file is {size} bytes)"
        )),
    };
    match error {
        ProcessError::MissingThreadList => why(
            "thread list",
            minidump_common::format::MINIDUMP_STREAM_TYPE::ThreadListStream as u32,
            dump.get_stream::<minidump::MinidumpThreadList>().map(drop),
        ),
        ProcessError::MissingSystemInfo => why(
            "system info",
            minidump_common::format::MINIDUMP_STREAM_TYPE::SystemInfoStream as u32,
            dump.get_stream::<minidump::MinidumpSystemInfo>().map(drop),
        ),
        ProcessError::MinidumpReadError(e) => DumpError::Corrupt(e.to_string()),
        ProcessError::UnknownError => DumpError::Corrupt("unknown processing error".to_string()),
    }
}

pub(super) fn extends_past_end<T>(dump: &Minidump<'_, T>, stream_type: u32, size: u64) -> bool
where
    T: std::ops::Deref<Target = [u8]>,
{
    dump.all_streams().any(|entry| {
        entry.stream_type == stream_type
            && u64::from(entry.location.rva) + u64::from(entry.location.data_size) > size
    })
}

/// Counts stream directory entries that point past the end of the file: the
/// usual sign of a damaged or fuzzed dump, worth saying in the error.
pub(super) fn directory_damage<T>(dump: &Minidump<'_, T>, size: u64) -> Option<String>
where
    T: std::ops::Deref<Target = [u8]>,
{
    let (mut seen, mut outside) = (0usize, 0usize);
    for entry in dump.all_streams() {
        seen += 1;
        if u64::from(entry.location.rva) + u64::from(entry.location.data_size) > size {
            outside += 1;
        }
    }
    (outside > 0).then(|| format!("{outside} of {seen} stream directory entries point outside it"))
}

pub(super) fn starts_like_minidump(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    n > 0 && b"MDMP".starts_with(&head[..n])
}

/// The error for a file that is not a minidump: its first bytes, printable
/// and short. (Core files, plain or compressed, never get here: they are
/// read by elfcore.)
fn not_minidump(path: &Path) -> DumpError {
    use std::io::Read;
    let mut head = [0u8; 4];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    let text: String = head[..n]
        .iter()
        .flat_map(|b| std::ascii::escape_default(*b))
        .map(char::from)
        .collect();
    DumpError::NotMinidump(format!("\"{text}\""))
}
