//! Writes the small minidump: the streams of a core's minidump view
//! (threads with their registers, modules with their build ids, the
//! signal, system, command line, maps), copied as they are, and a new
//! memory list holding only the ranges chosen.
//!
//! The view (src/elfcore/view.rs) is a minidump whose streams come first
//! and whose memory list's data is the core file itself. Everything the
//! streams refer to (thread contexts, module names, build-id records) lies
//! before the first byte of memory, so the bytes up to the end of the last
//! thing referred to are copied unchanged and every offset in them stays
//! right. Then come a new stream directory (the old one, with the memory
//! list pointing at the new one and the conversion record added), the
//! record, the new Memory64List, and the kept bytes. Each thread's stack
//! descriptor is pointed at its kept stack, as Breakpad's writers do, so
//! other minidump readers find the stacks without searching.

use std::io::{self, Write};

use minidump::{
    Minidump, MinidumpException, MinidumpModuleList, MinidumpSystemInfo, MinidumpThreadList,
};
use minidump_common::format as md;

/// Size of MINIDUMP_HEADER.
const HEADER_SIZE: u64 = 32;
/// Size of a MINIDUMP_DIRECTORY entry.
const DIRECTORY_ENTRY: u64 = 12;
/// Size of a MINIDUMP_THREAD, and where its stack descriptor starts in it.
const THREAD_SIZE: u64 = 48;
const THREAD_STACK_AT: u64 = 24;
/// Offset of `stream_directory_rva` in the header.
const HEADER_DIRECTORY_AT: usize = 12;
/// Offset of `stream_count` in the header.
const HEADER_COUNT_AT: usize = 8;

/// A range of memory to keep: `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Range {
    pub start: u64,
    pub end: u64,
}

impl Range {
    pub(super) fn len(&self) -> u64 {
        self.end - self.start
    }
}

/// What was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Written {
    pub bytes: u64,
    pub ranges: usize,
    pub memory: u64,
}

/// Writes the small minidump of `view` to `out`, keeping `keep` (sorted,
/// not overlapping, each inside one region of the view's memory), with
/// `record` (the conversion record) as one more stream.
pub(crate) fn write(
    view: &[u8],
    keep: &[Range],
    record: &[u8],
    out: &mut impl Write,
) -> Result<Written, String> {
    let dump = Minidump::read(view).map_err(|e| format!("the core's minidump view: {e}"))?;
    let memory = dump
        .get_memory()
        .ok_or("the core's minidump view has no memory list")?;
    let mut head = view
        .get(..usize::try_from(extent(&dump)?).map_err(|e| e.to_string())?)
        .ok_or("the core's minidump view is shorter than its streams")?
        .to_vec();
    pad(&mut head);

    // The new directory: every stream but the old memory list, then the
    // record and the new memory list (filled in below).
    let mut entries: Vec<md::MINIDUMP_DIRECTORY> = dump
        .all_streams()
        .filter(|d| {
            d.stream_type != md::MINIDUMP_STREAM_TYPE::Memory64ListStream as u32
                && d.stream_type != md::MINIDUMP_STREAM_TYPE::MemoryListStream as u32
                && d.stream_type != crate::model::CONVERTED_STREAM
                && d.stream_type != md::MINIDUMP_STREAM_TYPE::UnusedStream as u32
        })
        .cloned()
        .collect();
    let directory_at = head.len() as u64;
    let count = entries.len() as u64 + 2;
    let record_at = directory_at + count * DIRECTORY_ENTRY;
    let list_at = (record_at + record.len() as u64).next_multiple_of(8);
    let list_len = 16 + 16 * keep.len() as u64;
    let data_at = list_at + list_len;
    entries.push(location(
        crate::model::CONVERTED_STREAM,
        record_at,
        record.len() as u64,
    )?);
    entries.push(location(
        md::MINIDUMP_STREAM_TYPE::Memory64ListStream as u32,
        list_at,
        list_len,
    )?);

    point_stacks(&dump, &mut head, keep, data_at)?;
    put(
        &mut head,
        HEADER_COUNT_AT as u64,
        &u32::try_from(count)
            .map_err(|e| e.to_string())?
            .to_le_bytes(),
    )?;
    put(
        &mut head,
        HEADER_DIRECTORY_AT as u64,
        &u32::try_from(directory_at)
            .map_err(|e| e.to_string())?
            .to_le_bytes(),
    )?;

    let mut written = 0u64;
    let mut emit = |bytes: &[u8], out: &mut dyn Write| -> io::Result<()> {
        written += bytes.len() as u64;
        out.write_all(bytes)
    };
    let io = |e: io::Error| e.to_string();
    emit(&head, out).map_err(io)?;
    for entry in &entries {
        let mut raw = Vec::with_capacity(12);
        raw.extend(entry.stream_type.to_le_bytes());
        raw.extend(entry.location.data_size.to_le_bytes());
        raw.extend(entry.location.rva.to_le_bytes());
        emit(&raw, out).map_err(io)?;
    }
    emit(record, out).map_err(io)?;
    emit(
        &vec![0u8; (list_at - record_at) as usize - record.len()],
        out,
    )
    .map_err(io)?;
    emit(&memory_list(keep, data_at), out).map_err(io)?;
    let mut kept = 0u64;
    for range in keep {
        let region = memory
            .memory_at_address(range.start)
            .ok_or_else(|| format!("no memory at {:#x} in the core", range.start))?;
        let from =
            usize::try_from(range.start - region.base_address()).map_err(|e| e.to_string())?;
        let len = usize::try_from(range.len()).map_err(|e| e.to_string())?;
        let bytes = region
            .bytes()
            .get(from..from.saturating_add(len))
            .ok_or_else(|| format!("the core holds less than {len} bytes at {:#x}", range.start))?;
        emit(bytes, out).map_err(io)?;
        kept += range.len();
    }
    Ok(Written {
        bytes: written,
        ranges: keep.len(),
        memory: kept,
    })
}

/// Points each thread's stack descriptor in `head` at where its kept
/// range lands in the new file (ranges are written in order from
/// `data_at`), or at nothing when no kept range holds its stack pointer.
fn point_stacks<T: std::ops::Deref<Target = [u8]>>(
    dump: &Minidump<'_, T>,
    head: &mut [u8],
    keep: &[Range],
    data_at: u64,
) -> Result<(), String> {
    let Ok(threads) = dump.get_stream::<MinidumpThreadList>() else {
        return Ok(());
    };
    let mut rvas = Vec::with_capacity(keep.len());
    let mut at = data_at;
    for range in keep {
        rvas.push(at);
        at += range.len();
    }
    let list = dump
        .all_streams()
        .find(|d| d.stream_type == md::MINIDUMP_STREAM_TYPE::ThreadListStream as u32)
        .map(|d| u64::from(d.location.rva))
        .ok_or("no thread list")?;
    for (i, thread) in threads.threads.iter().enumerate() {
        let sp = thread.raw.stack.start_of_memory_range;
        let found = keep
            .iter()
            .zip(&rvas)
            .find(|(r, _)| sp >= r.start && sp < r.end);
        let (start, size, rva) = match found {
            Some((r, rva)) => match (u32::try_from(r.len()), u32::try_from(*rva)) {
                (Ok(size), Ok(rva)) => (r.start, size, rva),
                _ => (sp, 0, 0),
            },
            None => (sp, 0, 0),
        };
        let field = list + 4 + i as u64 * THREAD_SIZE + THREAD_STACK_AT;
        put(head, field, &start.to_le_bytes())?;
        put(head, field + 8, &size.to_le_bytes())?;
        put(head, field + 12, &rva.to_le_bytes())?;
    }
    Ok(())
}

/// The new MINIDUMP_MEMORY64_LIST: the kept ranges, their bytes written in
/// order from `data_at`.
fn memory_list(keep: &[Range], data_at: u64) -> Vec<u8> {
    let mut list = Vec::with_capacity(16 + 16 * keep.len());
    list.extend((keep.len() as u64).to_le_bytes());
    list.extend(data_at.to_le_bytes());
    for range in keep {
        list.extend(range.start.to_le_bytes());
        list.extend(range.len().to_le_bytes());
    }
    list
}

/// The end of the last byte the view's streams refer to: the header, the
/// directory, each stream, and what the thread, module, exception and
/// system streams point at. The old memory list is left out: its data is
/// the core.
fn extent<T: std::ops::Deref<Target = [u8]>>(dump: &Minidump<'_, T>) -> Result<u64, String> {
    let mut end = HEADER_SIZE;
    let mut reach = |rva: u32, size: u64| end = end.max(u64::from(rva) + size);
    let directory = dump.header.stream_directory_rva;
    reach(
        directory,
        u64::from(dump.header.stream_count) * DIRECTORY_ENTRY,
    );
    for entry in dump.all_streams() {
        let kind = entry.stream_type;
        if kind != md::MINIDUMP_STREAM_TYPE::Memory64ListStream as u32
            && kind != md::MINIDUMP_STREAM_TYPE::MemoryListStream as u32
        {
            reach(entry.location.rva, u64::from(entry.location.data_size));
        }
    }
    let location = |l: &md::MINIDUMP_LOCATION_DESCRIPTOR| (l.rva, u64::from(l.data_size));
    if let Ok(threads) = dump.get_stream::<MinidumpThreadList>() {
        for thread in &threads.threads {
            let (rva, size) = location(&thread.raw.thread_context);
            reach(rva, size);
            if thread.raw.stack.memory.data_size > 0 {
                return Err("the thread list holds stack copies: not a core's view".into());
            }
        }
    }
    if let Ok(modules) = dump.get_stream::<MinidumpModuleList>() {
        for module in modules.iter() {
            // A MINIDUMP_STRING: its byte length, the UTF-16 text, a NUL.
            let name = (module.name.encode_utf16().count() as u64) * 2 + 6;
            reach(module.raw.module_name_rva, name);
            let (rva, size) = location(&module.raw.cv_record);
            reach(rva, size);
            let (rva, size) = location(&module.raw.misc_record);
            reach(rva, size);
        }
    }
    if let Ok(exception) = dump.get_stream::<MinidumpException>() {
        let (rva, size) = location(&exception.raw.thread_context);
        reach(rva, size);
    }
    if let Ok(system) = dump.get_stream::<MinidumpSystemInfo>() {
        // The service-pack string: empty in a core's view (length, NUL).
        reach(system.raw.csd_version_rva, 6);
    }
    Ok(end)
}

fn location(kind: u32, rva: u64, size: u64) -> Result<md::MINIDUMP_DIRECTORY, String> {
    Ok(md::MINIDUMP_DIRECTORY {
        stream_type: kind,
        location: md::MINIDUMP_LOCATION_DESCRIPTOR {
            data_size: u32::try_from(size).map_err(|e| e.to_string())?,
            rva: u32::try_from(rva).map_err(|_| "the minidump's streams pass 4 GiB".to_string())?,
        },
    })
}

fn put(bytes: &mut [u8], at: u64, value: &[u8]) -> Result<(), String> {
    let at = usize::try_from(at).map_err(|e| e.to_string())?;
    bytes
        .get_mut(at..at + value.len())
        .ok_or_else(|| format!("offset {at:#x} outside the copied streams"))?
        .copy_from_slice(value);
    Ok(())
}

fn pad(bytes: &mut Vec<u8>) {
    while !bytes.len().is_multiple_of(8) {
        bytes.push(0);
    }
}
