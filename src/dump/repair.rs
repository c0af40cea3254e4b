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
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// MINIDUMP_STREAM_TYPE values the repair knows.
const THREAD_LIST: u32 = 3;
const MODULE_LIST: u32 = 4;
const MEMORY_LIST: u32 = 5;
const EXCEPTION: u32 = 6;
const SYSTEM_INFO: u32 = 7;
const MEMORY64_LIST: u32 = 9;

const THREAD_SIZE: u64 = 48;
const MODULE_SIZE: u64 = 108;
const MEMORY_DESCRIPTOR_SIZE: u64 = 16;
const SYSTEM_INFO_SIZE: usize = 56;

/// A repaired copy of a truncated dump, and what the report must say.
pub(super) struct Repaired {
    pub file: tempfile::NamedTempFile,
    pub warning: String,
}

struct Entry {
    stream_type: u32,
    size: u32,
    rva: u32,
}

impl Entry {
    /// A MINIDUMP_DIRECTORY: type, size, RVA.
    fn read(raw: &[u8]) -> Entry {
        let word = |at: usize| u32::from_le_bytes(raw[at..at + 4].try_into().expect("4 bytes"));
        Entry {
            stream_type: word(0),
            size: word(4),
            rva: word(8),
        }
    }

    fn end(&self) -> u64 {
        u64::from(self.rva) + u64::from(self.size)
    }
}

/// `None` when nothing in the directory lies past the end of the file (or
/// the directory itself is not in the file: then nothing can be found, and
/// the reader's own error stands).
pub(super) fn repair_if_truncated(path: &Path, len: u64) -> std::io::Result<Option<Repaired>> {
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
    let expected = entries.iter().map(Entry::end).max().unwrap_or(0);
    if expected <= len && !moved {
        return Ok(None);
    }
    let mut copy = tempfile::Builder::new()
        .prefix("dumptriage-truncated-")
        .suffix(".dmp")
        .tempfile()?;
    file.seek(SeekFrom::Start(0))?;
    std::io::copy(&mut file, copy.as_file_mut())?;
    let mut out = OpenOptions::new()
        .read(true)
        .write(true)
        .open(copy.path())?;
    let mut notes = Notes::default();
    if moved {
        write_at(&mut out, 8, &(entries.len() as u32).to_le_bytes())?;
        write_at(&mut out, 12, &(HEADER_END as u32).to_le_bytes())?;
        notes.other.push(
            "the streams dumptriage's capture added (its record and the memory it kept)"
                .to_string(),
        );
    }
    let directory_rva = u64::from(read_u32(&mut out, 12)?);
    let mut kept = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let at = directory_rva + index as u64 * 12;
        let fits_header = |n: u64| u64::from(entry.rva) + n <= len;
        let keep = match entry.stream_type {
            THREAD_LIST if fits_header(4) => trim_threads(&mut out, entry, len, &mut notes)?,
            MODULE_LIST if fits_header(4) => trim_modules(&mut out, entry, len, &mut notes)?,
            MEMORY_LIST if fits_header(4) => trim_memory(&mut out, entry, len)?,
            MEMORY64_LIST if fits_header(16) => trim_memory64(&mut out, entry, len)?,
            _ if entry.end() <= len => Some(entry.size),
            _ => None,
        };
        match keep {
            Some(size) => {
                write_at(&mut out, at + 4, &size.to_le_bytes())?;
                kept.push(entry.stream_type);
            }
            None => {
                // An unused entry: type 0, nothing.
                write_at(&mut out, at, &[0; 12])?;
                if entry.stream_type != 0 {
                    notes.lost.push(stream_name(entry.stream_type));
                }
            }
        }
        if entry.stream_type == EXCEPTION && entry.end() <= len {
            // The exception's own context (ThreadContext at 160).
            let context = read_location(&mut out, u64::from(entry.rva) + 160)?;
            if context.1 as u64 + u64::from(context.0) > len {
                write_at(&mut out, u64::from(entry.rva) + 160, &[0; 8])?;
                notes
                    .other
                    .push("the exception's register context".to_string());
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
    let cut = entries.iter().any(|e| u64::from(e.rva) >= len);
    let plausible = entries
        .iter()
        .map(Entry::end)
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
    threads_dropped: usize,
    stacks_cut: usize,
    stacks_lost: usize,
    modules_dropped: usize,
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

/// Where writers put the stream directory: right after the 32-byte header.
const HEADER_END: u64 = 32;

/// The directory the writer left after the header when the header points
/// to another one past the end of the file: entries up to the first
/// stream's data (Wine's unaligned ones too), fewer than the moved
/// directory has, with a thread list among them.
fn original_directory(file: &mut File, len: u64) -> std::io::Result<Option<Vec<Entry>>> {
    let mut header = [0u8; 16];
    file.seek(SeekFrom::Start(0))?;
    if file.read_exact(&mut header).is_err() || &header[..4] != b"MDMP" {
        return Ok(None);
    }
    let rva = u64::from(u32::from_le_bytes(
        header[12..16].try_into().expect("4 bytes"),
    ));
    if rva == HEADER_END || len < HEADER_END + 12 {
        return Ok(None);
    }
    // The header's count is the moved directory's: the writer's has fewer.
    let moved_count = u64::from(u32::from_le_bytes(
        header[8..12].try_into().expect("4 bytes"),
    ));
    let mut entries = Vec::new();
    let mut first_data = u64::MAX;
    let mut at = HEADER_END;
    while at + 12 <= first_data.min(len) && entries.len() < 64 {
        let mut raw = [0u8; 12];
        file.seek(SeekFrom::Start(at))?;
        file.read_exact(&mut raw)?;
        let entry = Entry::read(&raw);
        if u64::from(entry.rva) < at + 12 || entry.size > 1 << 30 {
            // Unused entries (type 0, nothing) may follow: kept as such.
            if entry.stream_type == 0 && entry.size == 0 && entry.rva == 0 {
                entries.push(entry);
                at += 12;
                continue;
            }
            break;
        }
        if entry.stream_type != 0 {
            first_data = first_data.min(u64::from(entry.rva));
        }
        entries.push(entry);
        at += 12;
    }
    let has_threads = entries.iter().any(|e| e.stream_type == THREAD_LIST);
    let fewer = (entries.len() as u64) < moved_count;
    Ok((has_threads && fewer).then_some(entries))
}

fn read_directory(file: &mut File, len: u64) -> std::io::Result<Option<Vec<Entry>>> {
    if len < 32 {
        return Ok(None);
    }
    let mut header = [0u8; 32];
    file.read_exact(&mut header)?;
    if &header[..4] != b"MDMP" {
        return Ok(None);
    }
    let count = u32::from_le_bytes(header[8..12].try_into().expect("4 bytes"));
    let rva = u32::from_le_bytes(header[12..16].try_into().expect("4 bytes"));
    let bytes = u64::from(count) * 12;
    // A directory that is not whole in the file, or absurd, is not ours to
    // guess at.
    if count == 0 || count > 4096 || u64::from(rva) + bytes > len {
        return Ok(None);
    }
    let mut raw = vec![0u8; bytes as usize];
    file.seek(SeekFrom::Start(u64::from(rva)))?;
    file.read_exact(&mut raw)?;
    Ok(Some(raw.chunks(12).map(Entry::read).collect()))
}

/// Keeps the threads whose entry and registers are in the file; a stack
/// past the end is cut to what is there (or emptied). Returns the list's
/// new size.
fn trim_threads(
    out: &mut File,
    entry: &Entry,
    len: u64,
    notes: &mut Notes,
) -> std::io::Result<Option<u32>> {
    let rva = u64::from(entry.rva);
    let (entries, missing) = list_entries(out, rva, THREAD_SIZE, len)?;
    notes.threads_dropped += missing;
    let mut kept = Vec::new();
    for mut thread in entries {
        let (context_size, context_rva) = (word(&thread, 40), word(&thread, 44));
        if context_rva + context_size > len || context_size == 0 {
            notes.threads_dropped += 1;
            continue;
        }
        let (stack_size, stack_rva) = (word(&thread, 32), word(&thread, 36));
        if stack_rva + stack_size > len {
            let left = len.saturating_sub(stack_rva);
            if stack_rva >= len || left == 0 {
                thread[32..40].copy_from_slice(&[0; 8]);
                notes.stacks_lost += 1;
            } else {
                thread[32..36].copy_from_slice(&(left as u32).to_le_bytes());
                notes.stacks_cut += 1;
            }
        }
        kept.push(thread);
    }
    rewrite_list(out, rva, &kept)?;
    Ok(Some(4 + (kept.len() as u64 * THREAD_SIZE) as u32))
}

/// Keeps the modules whose entry and name are in the file; a debug record
/// past the end is dropped (the module keeps its name and range).
fn trim_modules(
    out: &mut File,
    entry: &Entry,
    len: u64,
    notes: &mut Notes,
) -> std::io::Result<Option<u32>> {
    let rva = u64::from(entry.rva);
    let (entries, missing) = list_entries(out, rva, MODULE_SIZE, len)?;
    notes.modules_dropped += missing;
    let mut kept = Vec::new();
    for mut module in entries {
        let name_rva = word(&module, 20);
        // MINIDUMP_STRING: a u32 byte length, then UTF-16.
        let name_len = if name_rva + 4 <= len {
            u64::from(read_u32(out, name_rva)?)
        } else {
            u64::MAX / 2
        };
        if name_rva + 4 + name_len > len {
            notes.modules_dropped += 1;
            continue;
        }
        for record in [76usize, 84] {
            let size = u64::from(u32::from_le_bytes(
                module[record..record + 4].try_into().expect("4"),
            ));
            let at = u64::from(u32::from_le_bytes(
                module[record + 4..record + 8].try_into().expect("4"),
            ));
            if at + size > len {
                module[record..record + 8].copy_from_slice(&[0; 8]);
            }
        }
        kept.push(module);
    }
    rewrite_list(out, rva, &kept)?;
    Ok(Some(4 + (kept.len() as u64 * MODULE_SIZE) as u32))
}

/// Keeps the memory ranges in the file, the one cut by the end shortened.
fn trim_memory(out: &mut File, entry: &Entry, len: u64) -> std::io::Result<Option<u32>> {
    let rva = u64::from(entry.rva);
    let (entries, _) = list_entries(out, rva, MEMORY_DESCRIPTOR_SIZE, len)?;
    let mut kept = Vec::new();
    for mut range in entries {
        let (size, data) = (word(&range, 8), word(&range, 12));
        if data >= len {
            continue;
        }
        if data + size > len {
            range[8..12].copy_from_slice(&((len - data) as u32).to_le_bytes());
        }
        kept.push(range);
    }
    rewrite_list(out, rva, &kept)?;
    Ok(Some(
        4 + (kept.len() as u64 * MEMORY_DESCRIPTOR_SIZE) as u32,
    ))
}

/// Memory64List: the ranges' bytes follow each other from one base; the
/// ranges wholly in the file are kept (a cut one shortened).
fn trim_memory64(out: &mut File, entry: &Entry, len: u64) -> std::io::Result<Option<u32>> {
    let rva = u64::from(entry.rva);
    let mut head = [0u8; 16];
    out.seek(SeekFrom::Start(rva))?;
    out.read_exact(&mut head)?;
    let count = u64::from_le_bytes(head[0..8].try_into().expect("8"));
    let mut data = u64::from_le_bytes(head[8..16].try_into().expect("8"));
    let mut kept = 0u64;
    for i in 0..count.min(1 << 24) {
        let at = rva + 16 + i * 16;
        if at + 16 > len || data >= len {
            break;
        }
        let mut range = [0u8; 16];
        out.seek(SeekFrom::Start(at))?;
        out.read_exact(&mut range)?;
        let size = u64::from_le_bytes(range[8..16].try_into().expect("8"));
        if data + size > len {
            write_at(out, at + 8, &(len - data).to_le_bytes())?;
            kept += 1;
            break;
        }
        data += size;
        kept += 1;
    }
    write_at(out, rva, &kept.to_le_bytes())?;
    Ok(Some((16 + kept * 16) as u32))
}

/// The entries of a list stream (a u32 count, then `size`-byte entries)
/// that lie whole in the file, and how many of the count do not.
fn list_entries(
    out: &mut File,
    rva: u64,
    size: u64,
    len: u64,
) -> std::io::Result<(Vec<Vec<u8>>, usize)> {
    let count = u64::from(read_u32(out, rva)?);
    let whole = (len.saturating_sub(rva + 4) / size).min(count);
    let mut entries = Vec::with_capacity(whole as usize);
    out.seek(SeekFrom::Start(rva + 4))?;
    for _ in 0..whole {
        let mut entry = vec![0u8; size as usize];
        out.read_exact(&mut entry)?;
        entries.push(entry);
    }
    Ok((entries, (count - whole) as usize))
}

/// The u32 at `at` of an entry, widened.
fn word(entry: &[u8], at: usize) -> u64 {
    u64::from(u32::from_le_bytes(
        entry[at..at + 4].try_into().expect("4 bytes"),
    ))
}

fn rewrite_list(out: &mut File, rva: u64, items: &[Vec<u8>]) -> std::io::Result<()> {
    write_at(out, rva, &(items.len() as u32).to_le_bytes())?;
    let mut at = rva + 4;
    for item in items {
        write_at(out, at, item)?;
        at += item.len() as u64;
    }
    Ok(())
}

/// What the lost system info stream is taken to have said.
struct Guess {
    /// PROCESSOR_ARCHITECTURE_*.
    arch: u16,
    arch_name: &'static str,
    /// VER_PLATFORM_WIN32_NT, or Breakpad's Linux / macOS platform ids.
    platform: u32,
    os_name: &'static str,
}

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
fn guess_system(out: &mut File, entries: &[Entry], len: u64) -> std::io::Result<Guess> {
    let mut context_size = 0u64;
    if let Some(threads) = entries.iter().find(|e| e.stream_type == THREAD_LIST) {
        let at = u64::from(threads.rva) + 4;
        if at + THREAD_SIZE <= len {
            context_size = u64::from(read_u32(out, at + 40)?);
        }
    }
    let (arch, arch_name) = match context_size {
        716 => (0, "x86"),
        912 => (12, "arm64"),
        _ => (9, "amd64"),
    };
    let linux = entries
        .iter()
        .any(|e| (0x4767_0000..=0x4767_ffff).contains(&e.stream_type));
    let (platform, os_name) = if linux {
        (0x8201, "Linux")
    } else {
        (2, "Windows")
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
fn append_system_info(out: &mut File, entries: &[Entry], guess: &Guess) -> std::io::Result<()> {
    let end = out.seek(SeekFrom::End(0))?;
    let info_rva = end.next_multiple_of(4);
    let csd_rva = info_rva + SYSTEM_INFO_SIZE as u64;
    let mut info = [0u8; SYSTEM_INFO_SIZE];
    info[0..2].copy_from_slice(&guess.arch.to_le_bytes());
    info[6] = 1; // NumberOfProcessors
    info[20..24].copy_from_slice(&guess.platform.to_le_bytes());
    info[24..28].copy_from_slice(&(csd_rva as u32).to_le_bytes());
    let directory_rva = csd_rva + 4;
    // Re-read the patched directory (trimmed sizes, unused entries).
    let old_rva = u64::from(read_u32(out, 12)?);
    let mut directory = vec![0u8; entries.len() * 12];
    out.seek(SeekFrom::Start(old_rva))?;
    out.read_exact(&mut directory)?;
    // Replace a lost system info entry (now unused) or add one.
    directory.extend_from_slice(&SYSTEM_INFO.to_le_bytes());
    directory.extend_from_slice(&(SYSTEM_INFO_SIZE as u32).to_le_bytes());
    directory.extend_from_slice(&(info_rva as u32).to_le_bytes());
    out.seek(SeekFrom::Start(end))?;
    out.write_all(&vec![0u8; (info_rva - end) as usize])?;
    out.write_all(&info)?;
    out.write_all(&0u32.to_le_bytes())?; // empty CSD version string
    out.write_all(&directory)?;
    write_at(out, 8, &((entries.len() + 1) as u32).to_le_bytes())?;
    write_at(out, 12, &(directory_rva as u32).to_le_bytes())?;
    Ok(())
}

fn read_u32(file: &mut File, at: u64) -> std::io::Result<u32> {
    let mut bytes = [0u8; 4];
    file.seek(SeekFrom::Start(at))?;
    file.read_exact(&mut bytes)?;
    Ok(u32::from_le_bytes(bytes))
}

/// A MINIDUMP_LOCATION_DESCRIPTOR: (DataSize, Rva).
fn read_location(file: &mut File, at: u64) -> std::io::Result<(u32, u32)> {
    Ok((read_u32(file, at)?, read_u32(file, at + 4)?))
}

fn write_at(file: &mut File, at: u64, bytes: &[u8]) -> std::io::Result<()> {
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
