//! Dumps cut short (a full disk, a killed uploader): whatever is still in
//! the file is reported, with a warning naming what is missing.
//!
//! Most writers put the stream directory right after the header and the
//! big streams (memory) last, so a dump cut at 60% still has its directory,
//! thread list and most stacks; Breakpad's and minidump-writer's Linux
//! dumps put the system info stream past the middle, and the processor
//! refuses a dump without it. A truncated dump is copied to a temporary
//! file and patched there, never in place: streams past the end become
//! unused directory entries; the thread, module and memory lists keep the
//! entries that lie in the file (a stack cut in the middle keeps its first
//! part: the top of the stack, where the walk starts); a lost system info
//! stream is replaced by one guessed from the threads' context size and
//! the OS-specific streams. Nothing lost is invented: the warning says
//! what was guessed.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use minidump_common::format::{
    self as md, PlatformId, ProcessorArchitecture, MINIDUMP_STREAM_TYPE as Stream,
};
use scroll::ctx::{SizeWith, TryFromCtx, TryIntoCtx};
use scroll::{Endian, Pread, Pwrite, LE};

/// The stream types the repair knows.
const THREAD_LIST: u32 = Stream::ThreadListStream as u32;
const MODULE_LIST: u32 = Stream::ModuleListStream as u32;
const MEMORY_LIST: u32 = Stream::MemoryListStream as u32;
const EXCEPTION: u32 = Stream::ExceptionStream as u32;
const SYSTEM_INFO: u32 = Stream::SystemInfoStream as u32;
const MEMORY64_LIST: u32 = Stream::Memory64ListStream as u32;

/// The size of a minidump-common structure in the file.
fn size_of<T: SizeWith<Endian>>() -> u64 {
    T::size_with(&LE) as u64
}

/// A repaired copy of a truncated dump, and what the report must say.
pub(super) struct Repaired {
    pub file: tempfile::NamedTempFile,
    pub warning: String,
}

/// Where a stream ends: an RVA and a size are 32-bit, their sum is not.
fn end(entry: &md::MINIDUMP_DIRECTORY) -> u64 {
    location_end(&entry.location)
}

fn location_end(location: &md::MINIDUMP_LOCATION_DESCRIPTOR) -> u64 {
    u64::from(location.rva) + u64::from(location.data_size)
}

/// `None` when nothing in the directory lies past the end of the file (or
/// the directory itself is not in the file: then nothing can be found, and
/// the reader's own error stands).
pub(super) fn repair_if_truncated(path: &Path, len: u64) -> io::Result<Option<Repaired>> {
    let mut file = File::open(path)?;
    // A directory moved to the end (dumptriage's capture appends its
    // streams and a new directory) is lost with the end: the writer's own,
    // right after the header, is still there.
    let (entries, moved) = match read_directory(&mut file, len)? {
        Some(entries) => (entries, false),
        None => match original_directory(&mut file, len)? {
            Some(entries) => (entries, true),
            None => return Ok(None),
        },
    };
    let expected = entries.iter().map(end).max().unwrap_or(0);
    if expected <= len && !moved {
        return Ok(None);
    }
    let mut copy = tempfile::Builder::new()
        .prefix("dumptriage-truncated-")
        .suffix(".dmp")
        .tempfile()?;
    file.seek(SeekFrom::Start(0))?;
    io::copy(&mut file, copy.as_file_mut())?;
    let mut out = OpenOptions::new()
        .read(true)
        .write(true)
        .open(copy.path())?;
    let mut notes = Notes::default();
    let mut header: md::MINIDUMP_HEADER = read_struct(&mut out, 0)?;
    if moved {
        // At most 64 entries (original_directory), right after the header.
        header.stream_count = entries.len() as u32;
        header.stream_directory_rva = HEADER_END as u32;
        write_struct(&mut out, 0, header.clone())?;
        notes.other.push(
            "the streams dumptriage's capture added (its record and the memory it kept)"
                .to_string(),
        );
    }
    let directory_rva = u64::from(header.stream_directory_rva);
    let mut kept = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        // At most 4096 entries of 12 bytes after a 32-bit RVA.
        let at = directory_rva + index as u64 * size_of::<md::MINIDUMP_DIRECTORY>();
        let rva = u64::from(entry.location.rva);
        let fits_header = |n: u64| rva + n <= len;
        let keep = match entry.stream_type {
            THREAD_LIST if fits_header(4) => trim_threads(&mut out, rva, len, &mut notes)?,
            MODULE_LIST if fits_header(4) => trim_modules(&mut out, rva, len, &mut notes)?,
            MEMORY_LIST if fits_header(4) => trim_memory(&mut out, rva, len)?,
            MEMORY64_LIST if fits_header(16) => trim_memory64(&mut out, rva, len)?,
            _ if end(entry) <= len => Some(entry.location.data_size),
            _ => None,
        };
        match keep {
            Some(data_size) => {
                let trimmed = md::MINIDUMP_DIRECTORY {
                    location: md::MINIDUMP_LOCATION_DESCRIPTOR {
                        data_size,
                        ..entry.location
                    },
                    ..entry.clone()
                };
                write_struct(&mut out, at, trimmed)?;
                kept.push(entry.stream_type);
            }
            None => {
                // An unused entry: type 0, nothing.
                write_struct(&mut out, at, md::MINIDUMP_DIRECTORY::default())?;
                if entry.stream_type != 0 {
                    notes.lost.push(stream_name(entry.stream_type));
                }
            }
        }
        if entry.stream_type == EXCEPTION && end(entry) <= len {
            // The exception's own register context, when the stream holds
            // one and it lies past the end.
            let stream = read_struct::<md::MINIDUMP_EXCEPTION_STREAM>(&mut out, rva);
            if let Ok(mut stream) = stream {
                if location_end(&stream.thread_context) > len {
                    stream.thread_context = md::MINIDUMP_LOCATION_DESCRIPTOR::default();
                    write_struct(&mut out, rva, stream)?;
                    notes
                        .other
                        .push("the exception's register context".to_string());
                }
            }
        }
    }
    // Without a thread list there is nothing to report: the reader's own
    // error (which stream is cut) says it best.
    if !kept.contains(&THREAD_LIST) {
        return Ok(None);
    }
    if !kept.contains(&SYSTEM_INFO) {
        let guess = guess_system(&mut out, &entries, len)?;
        notes.guessed = Some(guess.describe());
        append_system_info(&mut out, &entries, &guess)?;
    }
    out.sync_data()?;
    // Cut short: streams start past the end, where the writer put them.
    // Otherwise a size field is damaged (or absurd): not a length to quote.
    let cut = entries.iter().any(|e| u64::from(e.location.rva) >= len);
    let plausible = entries
        .iter()
        .map(end)
        .filter(|&end| end <= len.saturating_mul(16))
        .max()
        .filter(|_| cut);
    Ok(Some(Repaired {
        file: copy,
        warning: notes.warning(len, plausible),
    }))
}

#[derive(Default)]
struct Notes {
    lost: Vec<String>,
    threads_dropped: u64,
    stacks_cut: usize,
    stacks_lost: usize,
    modules_dropped: u64,
    other: Vec<String>,
    guessed: Option<String>,
}

impl Notes {
    fn warning(&self, len: u64, expected: Option<u64>) -> String {
        let mut parts = vec![match expected {
            Some(expected) => format!(
                "the dump is cut short: {len} of the {expected} bytes its directory describes ({:.0}%); what is in the file is reported",
                len as f64 * 100.0 / expected as f64
            ),
            None => format!(
                "streams extend past the end of the file ({len} bytes): damaged sizes, or a cut dump; what is in the file is reported"
            ),
        }];
        if !self.lost.is_empty() {
            parts.push(format!("lost: {}", self.lost.join(", ")));
        }
        if self.threads_dropped > 0 {
            parts.push(format!(
                "{} thread(s) not listed (past the end, or their registers are)",
                self.threads_dropped
            ));
        }
        if self.stacks_lost > 0 {
            parts.push(format!(
                "{} thread(s) whose stack memory lies past the end (only their registers' frame)",
                self.stacks_lost
            ));
        }
        if self.stacks_cut > 0 {
            parts.push(format!(
                "{} stack(s) cut (the top is kept)",
                self.stacks_cut
            ));
        }
        if self.modules_dropped > 0 {
            parts.push(format!("{} module(s) not listed", self.modules_dropped));
        }
        for other in &self.other {
            parts.push(format!("lost: {other}"));
        }
        if let Some(guess) = &self.guessed {
            parts.push(format!("the system info stream is lost: guessed {guess}"));
        }
        parts.join("; ")
    }
}

/// Where writers put the stream directory: right after the header.
const HEADER_END: u64 = 32;

/// The directory the writer left after the header when the header points
/// to another one past the end of the file: entries up to the first
/// stream's data (Wine's unaligned ones too), fewer than the moved
/// directory has, with a thread list among them.
fn original_directory(
    file: &mut File,
    len: u64,
) -> io::Result<Option<Vec<md::MINIDUMP_DIRECTORY>>> {
    let Ok(header) = read_struct::<md::MINIDUMP_HEADER>(file, 0) else {
        return Ok(None);
    };
    let rva = u64::from(header.stream_directory_rva);
    if header.signature != md::MINIDUMP_SIGNATURE || rva == HEADER_END {
        return Ok(None);
    }
    let entry_size = size_of::<md::MINIDUMP_DIRECTORY>();
    let mut entries = Vec::new();
    let mut first_data = u64::MAX;
    let mut at = HEADER_END;
    // `at` stays below the first stream's RVA (32-bit): no overflow.
    while at + entry_size <= first_data.min(len) && entries.len() < 64 {
        let entry: md::MINIDUMP_DIRECTORY = read_struct(file, at)?;
        let next = at + entry_size;
        if u64::from(entry.location.rva) < next || entry.location.data_size > 1 << 30 {
            // Unused entries (type 0, nothing) may follow: kept as such.
            let unused =
                entry.stream_type == 0 && entry.location.data_size == 0 && entry.location.rva == 0;
            if unused {
                entries.push(entry);
                at = next;
                continue;
            }
            break;
        }
        if entry.stream_type != 0 {
            first_data = first_data.min(u64::from(entry.location.rva));
        }
        entries.push(entry);
        at = next;
    }
    let has_threads = entries.iter().any(|e| e.stream_type == THREAD_LIST);
    // The header's count is the moved directory's: the writer's has fewer.
    let fewer = (entries.len() as u64) < u64::from(header.stream_count);
    Ok((has_threads && fewer).then_some(entries))
}

fn read_directory(file: &mut File, len: u64) -> io::Result<Option<Vec<md::MINIDUMP_DIRECTORY>>> {
    if len < HEADER_END {
        return Ok(None);
    }
    let header: md::MINIDUMP_HEADER = read_struct(file, 0)?;
    if header.signature != md::MINIDUMP_SIGNATURE {
        return Ok(None);
    }
    let (count, rva) = (header.stream_count, u64::from(header.stream_directory_rva));
    // A directory that is not whole in the file, or absurd, is not ours to
    // guess at.
    if count == 0 || count > 4096 {
        return Ok(None);
    }
    let entry_size = size_of::<md::MINIDUMP_DIRECTORY>();
    if rva + u64::from(count) * entry_size > len {
        return Ok(None);
    }
    (0..u64::from(count))
        .map(|i| read_struct(file, rva + i * entry_size))
        .collect::<io::Result<Vec<_>>>()
        .map(Some)
}

/// Keeps the threads whose entry and registers are in the file; a stack
/// past the end is cut to what is there (or emptied). Returns the list's
/// new size.
fn trim_threads(out: &mut File, rva: u64, len: u64, notes: &mut Notes) -> io::Result<Option<u32>> {
    let (threads, missing) = list_entries::<md::MINIDUMP_THREAD>(out, rva, len)?;
    notes.threads_dropped += missing;
    let mut kept = Vec::new();
    for mut thread in threads {
        let context = thread.thread_context;
        if location_end(&context) > len || context.data_size == 0 {
            notes.threads_dropped += 1;
            continue;
        }
        let stack = thread.stack.memory;
        if location_end(&stack) > len {
            let stack_rva = u64::from(stack.rva);
            let left = len.saturating_sub(stack_rva);
            if left == 0 {
                thread.stack.memory = md::MINIDUMP_LOCATION_DESCRIPTOR::default();
                notes.stacks_lost += 1;
            } else {
                // Less than the stack's own 32-bit size.
                thread.stack.memory.data_size = left as u32;
                notes.stacks_cut += 1;
            }
        }
        kept.push(thread);
    }
    rewrite_list(out, rva, kept)
}

/// Keeps the modules whose entry and name are in the file; a debug record
/// past the end is dropped (the module keeps its name and range).
fn trim_modules(out: &mut File, rva: u64, len: u64, notes: &mut Notes) -> io::Result<Option<u32>> {
    let (modules, missing) = list_entries::<md::MINIDUMP_MODULE>(out, rva, len)?;
    notes.modules_dropped += missing;
    let mut kept = Vec::new();
    for mut module in modules {
        let name_rva = u64::from(module.module_name_rva);
        // MINIDUMP_STRING: a u32 byte length, then UTF-16.
        let name_in_file = name_rva + 4 <= len
            && name_rva + 4 + u64::from(read_struct::<u32>(out, name_rva)?) <= len;
        if !name_in_file {
            notes.modules_dropped += 1;
            continue;
        }
        for record in [&mut module.cv_record, &mut module.misc_record] {
            if location_end(record) > len {
                *record = md::MINIDUMP_LOCATION_DESCRIPTOR::default();
            }
        }
        kept.push(module);
    }
    rewrite_list(out, rva, kept)
}

/// Keeps the memory ranges in the file, the one cut by the end shortened.
fn trim_memory(out: &mut File, rva: u64, len: u64) -> io::Result<Option<u32>> {
    let (ranges, _) = list_entries::<md::MINIDUMP_MEMORY_DESCRIPTOR>(out, rva, len)?;
    let mut kept = Vec::new();
    for mut range in ranges {
        let data = u64::from(range.memory.rva);
        if data >= len {
            continue;
        }
        if location_end(&range.memory) > len {
            // Less than the range's own 32-bit size.
            range.memory.data_size = (len - data) as u32;
        }
        kept.push(range);
    }
    rewrite_list(out, rva, kept)
}

/// Memory64List: the ranges' bytes follow each other from one base; the
/// ranges wholly in the file are kept (a cut one shortened). minidump-common
/// declares the ranges but not the list's head (a u64 count and the u64 RVA
/// of the first range's bytes), which is read here.
fn trim_memory64(out: &mut File, rva: u64, len: u64) -> io::Result<Option<u32>> {
    let count: u64 = read_struct(out, rva)?;
    let mut data: u64 = read_struct(out, rva + 8)?;
    let range_size = size_of::<md::MINIDUMP_MEMORY_DESCRIPTOR64>();
    let mut kept = 0u64;
    // `kept` stays below 2^24 and `rva` is 32-bit: no overflow.
    while kept < count.min(1 << 24) {
        let at = rva + 16 + kept * range_size;
        if at + range_size > len || data >= len {
            break;
        }
        let mut range: md::MINIDUMP_MEMORY_DESCRIPTOR64 = read_struct(out, at)?;
        kept += 1;
        // A hostile size can reach past the end of u64 itself.
        match data.checked_add(range.data_size) {
            Some(next) if next <= len => data = next,
            _ => {
                range.data_size = len - data;
                write_struct(out, at, range)?;
                break;
            }
        }
    }
    write_struct(out, rva, kept)?;
    Ok(u32::try_from(16 + kept * range_size).ok())
}

/// The entries of a list stream (a u32 count, then the entries) that lie
/// whole in the file, and how many of the count do not.
fn list_entries<T>(out: &mut File, rva: u64, len: u64) -> io::Result<(Vec<T>, u64)>
where
    T: SizeWith<Endian> + for<'a> TryFromCtx<'a, Endian, Error = scroll::Error>,
{
    let count = u64::from(read_struct::<u32>(out, rva)?);
    let size = size_of::<T>();
    let whole = (len.saturating_sub(rva + 4) / size).min(count);
    let mut reader = io::BufReader::new(&mut *out);
    reader.seek(SeekFrom::Start(rva + 4))?;
    let mut raw = vec![0u8; size as usize];
    let mut entries = Vec::new();
    for _ in 0..whole {
        reader.read_exact(&mut raw)?;
        entries.push(raw.pread_with(0, LE).map_err(io::Error::other)?);
    }
    Ok((entries, count - whole))
}

/// Writes a list stream back with `items` (at most as many as it had), and
/// returns its new size.
fn rewrite_list<T>(out: &mut File, rva: u64, items: Vec<T>) -> io::Result<Option<u32>>
where
    T: SizeWith<Endian> + TryIntoCtx<Endian, Error = scroll::Error>,
{
    let size = size_of::<T>();
    let count = items.len() as u64;
    write_struct(out, rva, count as u32)?;
    for (i, item) in items.into_iter().enumerate() {
        write_struct(out, rva + 4 + i as u64 * size, item)?;
    }
    Ok(u32::try_from(4 + count * size).ok())
}

/// What the lost system info stream is taken to have said.
struct Guess {
    arch: ProcessorArchitecture,
    arch_name: &'static str,
    /// Microsoft's VER_PLATFORM_WIN32_NT, or Breakpad's Linux platform id.
    platform: u32,
    os_name: &'static str,
}

/// VER_PLATFORM_WIN32_NT as Windows writes it (2): minidump-common's
/// PlatformId numbers its Windows variants one higher, and its reader
/// takes 2 and 3 as Windows alike.
const WIN32_NT: u32 = 2;

impl Guess {
    fn describe(&self) -> String {
        format!(
            "{} {} (from the threads' register context size and the dump's other streams)",
            self.os_name, self.arch_name
        )
    }
}

/// The CPU from the first thread's register context size (AMD64 CONTEXT
/// 1232 bytes, x86 716, ARM64 912); the OS from Breakpad's Linux streams
/// (0x4767xxxx), else Windows.
fn guess_system(out: &mut File, entries: &[md::MINIDUMP_DIRECTORY], len: u64) -> io::Result<Guess> {
    let mut context_size = 0;
    if let Some(threads) = entries.iter().find(|e| e.stream_type == THREAD_LIST) {
        let at = u64::from(threads.location.rva) + 4;
        if at + size_of::<md::MINIDUMP_THREAD>() <= len {
            let first: md::MINIDUMP_THREAD = read_struct(out, at)?;
            context_size = first.thread_context.data_size;
        }
    }
    use ProcessorArchitecture::*;
    let (arch, arch_name) = match context_size {
        716 => (PROCESSOR_ARCHITECTURE_INTEL, "x86"),
        912 => (PROCESSOR_ARCHITECTURE_ARM64, "arm64"),
        _ => (PROCESSOR_ARCHITECTURE_AMD64, "amd64"),
    };
    let linux = entries
        .iter()
        .any(|e| (0x4767_0000..=0x4767_ffff).contains(&e.stream_type));
    let (platform, os_name) = if linux {
        (PlatformId::Linux as u32, "Linux")
    } else {
        (WIN32_NT, "Windows")
    };
    Ok(Guess {
        arch,
        arch_name,
        platform,
        os_name,
    })
}

/// Appends a system info stream (and an empty CSD version string) and a
/// new directory with an entry for it, at the end of the copy.
fn append_system_info(
    out: &mut File,
    entries: &[md::MINIDUMP_DIRECTORY],
    guess: &Guess,
) -> io::Result<()> {
    let end = out.seek(SeekFrom::End(0))?;
    let info_rva = end.next_multiple_of(4);
    let csd_rva = info_rva + size_of::<md::MINIDUMP_SYSTEM_INFO>();
    let directory_rva = csd_rva + 4;
    let entry_size = size_of::<md::MINIDUMP_DIRECTORY>();
    let count = entries.len() as u64 + 1;
    // RVAs are 32-bit: a dump cut past 4 GB cannot be given a new stream.
    let rva32 = |rva: u64| {
        u32::try_from(rva).map_err(|_| io::Error::other("the dump is too large for a new stream"))
    };
    rva32(directory_rva + count * entry_size)?;
    let info = md::MINIDUMP_SYSTEM_INFO {
        processor_architecture: guess.arch as u16,
        processor_level: 0,
        processor_revision: 0,
        number_of_processors: 1,
        product_type: 0,
        major_version: 0,
        minor_version: 0,
        build_number: 0,
        platform_id: guess.platform,
        csd_version_rva: rva32(csd_rva)?,
        suite_mask: 0,
        reserved2: 0,
        cpu: md::CPU_INFORMATION { data: [0; 24] },
    };
    // Re-read the patched directory (trimmed sizes, unused entries), then
    // add an entry for the new stream (the lost one's is unused now).
    let header: md::MINIDUMP_HEADER = read_struct(out, 0)?;
    let old_rva = u64::from(header.stream_directory_rva);
    let mut directory = (0..entries.len() as u64)
        .map(|i| read_struct::<md::MINIDUMP_DIRECTORY>(out, old_rva + i * entry_size))
        .collect::<io::Result<Vec<_>>>()?;
    directory.push(md::MINIDUMP_DIRECTORY {
        stream_type: SYSTEM_INFO,
        location: md::MINIDUMP_LOCATION_DESCRIPTOR {
            data_size: size_of::<md::MINIDUMP_SYSTEM_INFO>() as u32,
            rva: rva32(info_rva)?,
        },
    });
    write_at(out, end, &vec![0u8; (info_rva - end) as usize])?;
    write_struct(out, info_rva, info)?;
    write_struct(out, csd_rva, 0u32)?; // an empty CSD version string
    for (i, entry) in directory.into_iter().enumerate() {
        write_struct(out, directory_rva + i as u64 * entry_size, entry)?;
    }
    write_struct(
        out,
        0,
        md::MINIDUMP_HEADER {
            stream_count: count as u32,
            stream_directory_rva: rva32(directory_rva)?,
            ..header
        },
    )
}

/// Reads a `T` at `at` of the file: a minidump-common structure or a
/// little-endian number.
fn read_struct<T>(file: &mut File, at: u64) -> io::Result<T>
where
    T: SizeWith<Endian> + for<'a> TryFromCtx<'a, Endian, Error = scroll::Error>,
{
    let mut raw = vec![0u8; T::size_with(&LE)];
    file.seek(SeekFrom::Start(at))?;
    file.read_exact(&mut raw)?;
    raw.pread_with(0, LE).map_err(io::Error::other)
}

fn write_struct<T>(file: &mut File, at: u64, value: T) -> io::Result<()>
where
    T: SizeWith<Endian> + TryIntoCtx<Endian, Error = scroll::Error>,
{
    let mut raw = vec![0u8; T::size_with(&LE)];
    raw.pwrite_with(value, 0, LE).map_err(io::Error::other)?;
    write_at(file, at, &raw)
}

fn write_at(file: &mut File, at: u64, bytes: &[u8]) -> io::Result<()> {
    file.seek(SeekFrom::Start(at))?;
    file.write_all(bytes)
}

fn stream_name(stream_type: u32) -> String {
    match stream_type {
        THREAD_LIST => "the thread list".to_string(),
        MODULE_LIST => "the module list".to_string(),
        MEMORY_LIST => "the memory list".to_string(),
        EXCEPTION => "the exception record".to_string(),
        SYSTEM_INFO => "the system info".to_string(),
        MEMORY64_LIST => "the full memory list".to_string(),
        8 => "the thread extended info".to_string(),
        14 => "the unloaded module list".to_string(),
        15 => "the misc info".to_string(),
        16 => "the memory info list".to_string(),
        17 => "the thread info list".to_string(),
        24 => "the thread names".to_string(),
        0x4767_0003 => "the Linux CPU info".to_string(),
        0x4767_0004 => "the Linux process status".to_string(),
        0x4767_0005 => "the Linux LSB release".to_string(),
        0x4767_0006 => "the Linux command line".to_string(),
        0x4767_0007 => "the Linux environment".to_string(),
        0x4767_0008 => "the Linux auxv".to_string(),
        0x4767_0009 => "the Linux memory maps".to_string(),
        0x4767_000a => "the Linux DSO debug info".to_string(),
        other => format!("stream {other:#x}"),
    }
}
