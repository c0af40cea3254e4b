//! What is changed in a dump after it is written: the blamed thread
//! recorded in the exception stream of a dump written on request, and the
//! process environment removed.

use super::types::CaptureError;
use minidump::{
    Minidump, MinidumpException, MinidumpMiscInfo, MinidumpSystemInfo, MinidumpThreadList,
};
use minidump_common::format as md;
use scroll::ctx::{SizeWith, TryFromCtx, TryIntoCtx};
use scroll::{Endian, Pread, Pwrite, LE};
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

/// Exception code a dump written on request (no crash) carries: the
/// exception stream then only names the thread to look at.
pub(super) const DUMP_REQUESTED: u32 = 0xffff_ffff;
/// MINIDUMP_STREAM_TYPE::ExceptionStream.
pub(super) const EXCEPTION_STREAM: u32 = 6;
/// Breakpad's MD_LINUX_ENVIRON stream: the process environment.
pub(super) const LINUX_ENVIRON_STREAM: u32 = 0x4767_0007;
/// Makes the exception stream of a dump written on request (exception code
/// DUMP_REQUESTED, no crash) name `thread_id`, with that thread's own context
/// and instruction address. Returns whether the file changed.
///
/// Why patch in place instead of writing a second dump with the right
/// thread: the blamed thread is only known after the analysis, and a second
/// dump would be a second stop of the process, taken later, whose threads
/// may have moved. Patching keeps the dump that was analysed and changes
/// three fields of one fixed-size record. A dump with a real exception is
/// never touched: its exception is the crash.
pub(crate) fn record_blamed_thread(path: &Path, thread_id: u32) -> Result<bool, CaptureError> {
    let fail = |why: String| CaptureError::Patch {
        path: path.to_path_buf(),
        why,
    };
    let (stream_offset, context, address) = {
        let dump = Minidump::read_path(path).map_err(|e| fail(e.to_string()))?;
        let Ok(exception) = dump.get_stream::<MinidumpException>() else {
            return Ok(false);
        };
        if exception.raw.exception_record.exception_code != DUMP_REQUESTED
            || exception.raw.thread_id == thread_id
        {
            return Ok(false);
        }
        let threads = dump
            .get_stream::<MinidumpThreadList>()
            .map_err(|e| fail(format!("no thread list: {e}")))?;
        let thread = threads
            .get_thread(thread_id)
            .ok_or_else(|| fail(format!("thread {thread_id} is not in the dump")))?;
        let system = dump
            .get_stream::<MinidumpSystemInfo>()
            .map_err(|e| fail(format!("no system info: {e}")))?;
        let misc = dump.get_stream::<MinidumpMiscInfo>().ok();
        let address = thread
            .context(&system, misc.as_ref())
            .map(|c| c.get_instruction_pointer())
            .unwrap_or(0);
        let offset = dump
            .all_streams()
            .find(|entry| entry.stream_type == EXCEPTION_STREAM)
            .map(|entry| u64::from(entry.location.rva))
            .ok_or_else(|| fail("no exception stream directory entry".to_string()))?;
        (offset, thread.raw.thread_context, address)
    };
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| fail(e.to_string()))?;
    let patched = (|| -> std::io::Result<()> {
        let mut stream: md::MINIDUMP_EXCEPTION_STREAM = read_struct(&mut file, stream_offset)?;
        stream.thread_id = thread_id;
        stream.exception_record.exception_address = address;
        stream.thread_context = context;
        write_struct(&mut file, stream_offset, stream)?;
        file.sync_data()
    })();
    patched.map_err(|e| fail(e.to_string()))?;
    Ok(true)
}

/// Reads a minidump-common structure at `at` of the file.
fn read_struct<T>(file: &mut File, at: u64) -> std::io::Result<T>
where
    T: SizeWith<Endian> + for<'a> TryFromCtx<'a, Endian, Error = scroll::Error>,
{
    use std::io::Read;
    let mut raw = vec![0u8; T::size_with(&LE)];
    file.seek(SeekFrom::Start(at))?;
    file.read_exact(&mut raw)?;
    raw.pread_with(0, LE).map_err(std::io::Error::other)
}

/// A minidump-common structure's bytes.
fn bytes_of<T>(value: T) -> std::io::Result<Vec<u8>>
where
    T: SizeWith<Endian> + TryIntoCtx<Endian, Error = scroll::Error>,
{
    let mut raw = vec![0u8; T::size_with(&LE)];
    raw.pwrite_with(value, 0, LE)
        .map_err(std::io::Error::other)?;
    Ok(raw)
}

fn write_struct<T>(file: &mut File, at: u64, value: T) -> std::io::Result<()>
where
    T: SizeWith<Endian> + TryIntoCtx<Endian, Error = scroll::Error>,
{
    file.seek(SeekFrom::Start(at))?;
    file.write_all(&bytes_of(value)?)
}

/// Adds a stream to a written dump: its bytes at the end of the file, and
/// a directory entry for it (an unused entry when the dump has one, as a
/// scrubbed environment leaves; otherwise a new directory, also at the end,
/// that the header then points to). The old content is never rewritten:
/// until the last write, the header still describes the dump as it was.
pub(crate) fn append_stream(
    path: &Path,
    stream_type: u32,
    data: &[u8],
) -> Result<(), CaptureError> {
    let fail = |why: String| CaptureError::Patch {
        path: path.to_path_buf(),
        why,
    };
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| fail(e.to_string()))?;
    let header: md::MINIDUMP_HEADER =
        read_struct(&mut file, 0).map_err(|e| fail(format!("no minidump header: {e}")))?;
    let directory_rva = u64::from(header.stream_directory_rva);
    let entry_size = md::MINIDUMP_DIRECTORY::size_with(&LE) as u64;
    let directory = (0..u64::from(header.stream_count))
        .map(|i| read_struct::<md::MINIDUMP_DIRECTORY>(&mut file, directory_rva + i * entry_size))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| fail(format!("unreadable stream directory: {e}")))?;
    let end = file
        .seek(SeekFrom::End(0))
        .map_err(|e| fail(e.to_string()))?;
    let data_rva = end.next_multiple_of(4);
    let unused = directory.iter().position(|e| e.stream_type == 0);
    let new_directory_rva = (data_rva + data.len() as u64).next_multiple_of(4);
    let count = directory.len() as u64 + 1;
    let last = new_directory_rva + count * entry_size;
    let (Ok(data_rva32), Ok(data_size), Ok(_)) = (
        u32::try_from(data_rva),
        u32::try_from(data.len()),
        u32::try_from(last),
    ) else {
        return Err(fail(
            "the dump is too large for another stream (32-bit offsets)".to_string(),
        ));
    };
    let entry = md::MINIDUMP_DIRECTORY {
        stream_type,
        location: md::MINIDUMP_LOCATION_DESCRIPTOR {
            data_size,
            rva: data_rva32,
        },
    };
    let written = (|| -> std::io::Result<()> {
        file.seek(SeekFrom::Start(end))?;
        file.write_all(&vec![0u8; (data_rva - end) as usize])?;
        file.write_all(data)?;
        match unused {
            Some(index) => {
                write_struct(&mut file, directory_rva + index as u64 * entry_size, entry)?;
            }
            None => {
                let pad = new_directory_rva - (data_rva + data.len() as u64);
                file.write_all(&vec![0u8; pad as usize])?;
                for old in directory {
                    file.write_all(&bytes_of(old)?)?;
                }
                file.write_all(&bytes_of(entry)?)?;
                file.sync_data()?;
                // The header changes last: until then it describes the
                // dump as it was.
                let header = md::MINIDUMP_HEADER {
                    stream_count: count as u32,
                    stream_directory_rva: new_directory_rva as u32,
                    ..header
                };
                write_struct(&mut file, 0, header)?;
            }
        }
        file.sync_data()
    })();
    written.map_err(|e| fail(e.to_string()))
}

/// Shortest environment entry (`KEY=VALUE`) searched for outside the
/// environ stream: shorter byte strings could match unrelated memory.
pub(super) const MIN_SCRUBBED_ENTRY: usize = 6;

/// Blanks the process environment in a written dump: dumps from CI are
/// shared as artifacts, and CI environments carry tokens. The Linux environ
/// stream becomes an unused directory entry with zeroed bytes, and every
/// copy of its `KEY=VALUE` entries elsewhere in the file is zeroed too: the
/// initial environment strings live at the top of the main thread's stack,
/// which the dump holds. (Entries shorter than 6 bytes, and variables set
/// later with a new value, are not searched.)
///
/// The dump is streamed (a full-memory dump can be larger than memory),
/// written to a temporary file beside it, and renamed over it only when
/// complete: a failure leaves the dump as it was, never half scrubbed.
pub(crate) fn scrub_environment(path: &Path) -> Result<(), CaptureError> {
    scrub_environment_in_chunks(path, SCRUB_CHUNK)
}

/// Bytes of the dump read at a time while scrubbing.
pub(super) const SCRUB_CHUNK: usize = 1 << 20;

pub(super) fn scrub_environment_in_chunks(path: &Path, chunk: usize) -> Result<(), CaptureError> {
    let fail = |why: String| CaptureError::Patch {
        path: path.to_path_buf(),
        why,
    };
    let (directory, entries) = environ_entries(path).map_err(fail)?;
    if entries.is_empty() {
        return Ok(());
    }
    let mut source = File::open(path).map_err(|e| fail(e.to_string()))?;
    let (ranges, needles) = scrub_targets(&mut source, directory, &entries).map_err(fail)?;
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut scrubbed = tempfile::Builder::new()
        .prefix(".dumptriage-scrub")
        .tempfile_in(dir)
        .map_err(|e| fail(format!("cannot create a temporary file beside it: {e}")))?;
    copy_scrubbed(
        &mut source,
        scrubbed.as_file_mut(),
        chunk,
        &ranges,
        &needles,
    )
    .map_err(fail)?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = scrubbed.as_file().set_permissions(meta.permissions());
    }
    scrubbed
        .as_file()
        .sync_all()
        .map_err(|e| fail(e.to_string()))?;
    scrubbed
        .persist(path)
        .map(drop)
        .map_err(|e| fail(format!("cannot replace it: {}", e.error)))
}

/// An environ stream: its directory entry's index, its offset and size.
type EnvironEntry = (u64, u64, u64);

/// The stream directory's offset, and each environ stream
/// (memory-mapped: only the header and directory are touched).
fn environ_entries(path: &Path) -> Result<(u64, Vec<EnvironEntry>), String> {
    let dump = Minidump::read_path(path).map_err(|e| e.to_string())?;
    let entries: Vec<EnvironEntry> = dump
        .all_streams()
        .enumerate()
        .filter(|(_, entry)| entry.stream_type == LINUX_ENVIRON_STREAM)
        .map(|(i, entry)| {
            (
                i as u64,
                u64::from(entry.location.rva),
                u64::from(entry.location.data_size),
            )
        })
        .collect();
    Ok((u64::from(dump.header.stream_directory_rva), entries))
}

/// What to zero: the byte ranges zeroed whole (each environ stream and, as
/// a MINIDUMP_DIRECTORY is 12 bytes (StreamType, DataSize, Rva), its
/// entry), and the `KEY=VALUE` entries zeroed wherever they occur.
type ScrubTargets = (Vec<(u64, u64)>, Vec<Vec<u8>>);

/// The [`ScrubTargets`] of the environ streams `entries`.
fn scrub_targets(
    source: &mut File,
    directory: u64,
    entries: &[EnvironEntry],
) -> Result<ScrubTargets, String> {
    use std::io::Read;
    let size = source.metadata().map_err(|e| e.to_string())?.len();
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    let mut needles: Vec<Vec<u8>> = Vec::new();
    for &(index, rva, len) in entries {
        if rva.saturating_add(len) > size {
            return Err("the environ stream lies outside the file".to_string());
        }
        let mut environ = vec![0; len as usize];
        source
            .seek(SeekFrom::Start(rva))
            .and_then(|_| source.read_exact(&mut environ))
            .map_err(|e| e.to_string())?;
        for entry in environ.split(|&b| b == 0) {
            if entry.len() >= MIN_SCRUBBED_ENTRY
                && entry.contains(&b'=')
                && !needles.iter().any(|n| n == entry)
            {
                needles.push(entry.to_vec());
            }
        }
        ranges.push((rva, rva + len));
        let slot = directory + 12 * index;
        ranges.push((slot, slot + 12));
    }
    Ok((ranges, needles))
}

/// Copies `source` to `out` `chunk` bytes at a time, zeroing `ranges` and
/// every occurrence of each of `needles`.
fn copy_scrubbed(
    source: &mut File,
    out: &mut File,
    chunk: usize,
    ranges: &[(u64, u64)],
    needles: &[Vec<u8>],
) -> Result<(), String> {
    let finders: Vec<memchr::memmem::Finder> =
        needles.iter().map(memchr::memmem::Finder::new).collect();
    // A match can straddle two reads: the last `longest - 1` bytes of a
    // window are kept and searched again with the next read.
    let keep = needles.iter().map(Vec::len).max().unwrap_or(1) - 1;
    source.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
    let mut window: Vec<u8> = Vec::with_capacity(chunk + keep);
    let mut window_start = 0u64;
    loop {
        let at_end = read_more(source, &mut window, chunk)?;
        for (finder, needle) in finders.iter().zip(needles) {
            let found: Vec<usize> = finder.find_iter(&window).collect();
            for at in found {
                window[at..at + needle.len()].fill(0);
            }
        }
        let window_end = window_start + window.len() as u64;
        for &(from, to) in ranges {
            let (from, to) = (from.max(window_start), to.min(window_end));
            if from < to {
                window[(from - window_start) as usize..(to - window_start) as usize].fill(0);
            }
        }
        let emit = if at_end {
            window.len()
        } else {
            window.len().saturating_sub(keep)
        };
        out.write_all(&window[..emit]).map_err(|e| e.to_string())?;
        window.drain(..emit);
        window_start += emit as u64;
        if at_end {
            return Ok(());
        }
    }
}

/// Appends up to `chunk` bytes of `source` to `window`; true when the
/// source ended before that.
fn read_more(source: &mut File, window: &mut Vec<u8>, chunk: usize) -> Result<bool, String> {
    use std::io::Read;
    let before = window.len();
    window.resize(before + chunk, 0);
    let mut filled = before;
    while filled < window.len() {
        match source.read(&mut window[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    let at_end = filled < window.len();
    window.truncate(filled);
    Ok(at_end)
}

/// A dump with no thread means every ptrace attach failed (another tracer,
/// or a ptrace policy): minidump-writer still writes it, but it is useless.
pub(in crate::capture) fn check_has_threads(
    path: &Path,
    why_not: impl FnOnce() -> CaptureError,
) -> Result<(), CaptureError> {
    let count = Minidump::read_path(path).ok().map_or(0, |dump| {
        dump.get_stream::<MinidumpThreadList>()
            .map_or(0, |list| list.threads.len())
    });
    if count > 0 {
        return Ok(());
    }
    Err(why_not())
}
