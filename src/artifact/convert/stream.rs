//! `convert --from-stdin`: a core read once, in order, from a pipe (what
//! the kernel gives a `core_pattern` handler), without ever holding or
//! writing the whole of it.
//!
//! The kernel writes a core in file order: the ELF header, the program
//! headers, the notes (threads, registers, mapped files), then each memory
//! segment. So once the notes are read, what to keep is known before any
//! memory arrives: every thread's stack, the first pages of every mapped
//! file (its ELF headers and build id), the vDSO, the data of the modules
//! (their writable segments and the zero-filled one after them: static
//! mutexes, an interpreter's globals), and other writable memory (the heap)
//! up to a budget. Everything else is read and dropped at once, so the
//! kernel is never kept waiting and memory use stays bounded (the notes,
//! the program headers and a 1 MiB buffer). What is kept is written as a
//! smaller ELF core with the same notes into a temporary file, which the
//! ordinary conversion then reads.

use std::io::{self, Read, Seek, SeekFrom, Write};

const EM_X86_64: u16 = 62;
const EM_AARCH64: u16 = 183;
const PT_LOAD: u32 = 1;
const PT_NOTE: u32 = 4;
const PF_W: u32 = 2;
const NT_PRSTATUS: u32 = 1;
const NT_AUXV: u32 = 6;
const NT_FILE: u32 = 0x4649_4c45;
const AT_SYSINFO_EHDR: u64 = 33;
/// `e_phnum` of a core with more segments than fit in the field; the real
/// count is in a section header the kernel writes after the memory.
const PN_XNUM: u16 = 0xffff;
/// Notes larger than this are refused (a real core's are a few MB even
/// with thousands of threads).
const MAX_NOTES: u64 = 64 << 20;
/// Below the stack pointer, the x86-64 red zone (leaf functions keep data
/// there).
const RED_ZONE: u64 = 128;
/// Most bytes of one thread's stack kept, from its stack pointer up.
pub(crate) const MAX_STACK: u64 = 8 << 20;
/// Bytes kept from the start of each mapped file: its ELF and program
/// headers and, in practice, its build-id note.
const FILE_HEAD: u64 = 8 << 10;
/// Most bytes kept of one module's data segments.
const MAX_MODULE_DATA: u64 = 64 << 20;

/// What the reading kept and left out.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reduced {
    /// Bytes read from the stream.
    pub read: u64,
    /// Memory bytes kept.
    pub kept: u64,
    /// Bytes of other writable memory (the heap) kept, within the budget.
    pub heap: u64,
    /// Writable memory left out because the budget was spent.
    pub over_budget: u64,
    /// Other bytes of the core's memory left out (code and read-only data
    /// of files, which the binaries on disk hold).
    pub dropped: u64,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Copy)]
struct Segment {
    kind: u32,
    flags: u32,
    offset: u64,
    vaddr: u64,
    filesz: u64,
    memsz: u64,
}

/// A range of a segment to keep, `[start, end)` in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Span {
    start: u64,
    end: u64,
}

/// Reads the core on `input` to its end and writes what is kept, as an ELF
/// core, to `out`. `budget`: most bytes of writable memory kept beyond the
/// stacks, file heads and module data.
pub(crate) fn reduce(
    mut input: impl Read,
    out: &mut (impl Write + Seek),
    budget: u64,
) -> Result<Reduced, String> {
    let mut reader = Counted {
        inner: &mut input,
        at: 0,
    };
    let result = reduce_from(&mut reader, out, budget);
    // Whatever happened, the rest of the stream is read: a handler that
    // stops reading would leave the kernel writing into a full pipe.
    let _ = io::copy(&mut reader, &mut io::sink());
    let mut reduced = result?;
    reduced.read = reader.at;
    Ok(reduced)
}

struct Counted<'a, R> {
    inner: &'a mut R,
    at: u64,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.at += n as u64;
        Ok(n)
    }
}

impl<R: Read> Counted<'_, R> {
    fn exact(&mut self, len: u64, what: &str) -> Result<Vec<u8>, String> {
        let mut bytes = Vec::new();
        (&mut *self)
            .take(len)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read the core's {what}: {e}"))?;
        if (bytes.len() as u64) < len {
            return Err(format!("the stream ends in the core's {what}"));
        }
        Ok(bytes)
    }

    fn skip_to(&mut self, offset: u64) -> Result<(), String> {
        let gap = offset.saturating_sub(self.at);
        let skipped = io::copy(&mut (&mut *self).take(gap), &mut io::sink())
            .map_err(|e| format!("cannot read the core: {e}"))?;
        if skipped < gap {
            return Err("the stream ends before the core's memory".into());
        }
        Ok(())
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn reduce_from<R: Read>(
    input: &mut Counted<'_, R>,
    out: &mut (impl Write + Seek),
    budget: u64,
) -> Result<Reduced, String> {
    let header = input.exact(64, "ELF header")?;
    let sp_word = check_header(&header)?;
    let segments = read_segments(input, &header)?;

    let mut reduced = Reduced::default();
    // The output: the ELF header, the notes, the kept memory, and the
    // program headers last (their number is known only at the end).
    out.seek(SeekFrom::Start(64))
        .map_err(|e| format!("cannot write: {e}"))?;
    let mut written = Written {
        at: 64,
        notes: None,
        loads: Vec::new(),
    };
    let mut facts = Facts::default();
    let mut left = budget;
    let mut buffer = vec![0u8; 1 << 20];
    for segment in &segments {
        if segment.offset < input.at {
            reduced.notes.push(format!(
                "a segment at {:#x} overlaps the one before it: left out",
                segment.vaddr
            ));
            continue;
        }
        input.skip_to(segment.offset)?;
        if segment.kind == PT_NOTE {
            if written.notes.is_some() || segment.filesz > MAX_NOTES {
                return Err(format!(
                    "the core's notes are larger than {} MiB or split: not read from a pipe",
                    MAX_NOTES >> 20
                ));
            }
            let notes = input.exact(segment.filesz, "notes")?;
            facts = Facts::read(&notes, sp_word);
            facts.index(&segments);
            out.write_all(&notes).map_err(write_err)?;
            written.notes = Some((written.at, segment.filesz));
            written.at += segment.filesz;
            continue;
        }
        let spans = facts.keep(segment, &mut left, &mut reduced);
        let mut copy = SpanCopier {
            input: &mut *input,
            out: &mut *out,
            buffer: &mut buffer,
            written: &mut written,
        };
        copy.spans(segment, spans, &mut reduced)?;
    }
    if written.notes.is_none() {
        return Err("the core has no notes (threads, registers)".into());
    }
    write_headers(out, header, &written)?;
    Ok(reduced)
}

fn write_err(e: io::Error) -> String {
    format!("cannot write the kept memory: {e}")
}

/// The stack pointer's word in the prstatus registers of an x86-64 or
/// arm64 ELF64 little-endian core; anything else is refused.
fn check_header(header: &[u8]) -> Result<usize, String> {
    if !header.starts_with(b"\x7fELF") || u16_at(header, 16) != Some(4) {
        return Err("standard input is not an ELF core file".into());
    }
    if header[4] != 2 || header[5] != 1 {
        return Err("32-bit or big-endian core files are not supported".into());
    }
    let machine = u16_at(header, 18).unwrap_or(0);
    match machine {
        EM_X86_64 => Ok(19),
        EM_AARCH64 => Ok(31),
        other => Err(format!(
            "unsupported architecture: ELF machine {other} (x86-64 and arm64 cores are read)"
        )),
    }
}

/// The core's note and load segments, in file order, read from the
/// program headers; the notes must come first.
fn read_segments<R: Read>(
    input: &mut Counted<'_, R>,
    header: &[u8],
) -> Result<Vec<Segment>, String> {
    let phoff = u64_at(header, 32).unwrap_or(0);
    let phentsize = u64::from(u16_at(header, 54).unwrap_or(0));
    let phnum = u16_at(header, 56).unwrap_or(0);
    if phnum == PN_XNUM {
        return Err(
            "the core has more than 65534 segments: their count comes after the memory, \
             which a pipe cannot read back"
                .into(),
        );
    }
    // An ELF64 program header is 56 bytes; anything much larger is no
    // kernel's core, and would only make the table big.
    if !(56..=256).contains(&phentsize) || phoff < 64 {
        return Err("the core's program headers are not where an ELF core has them".into());
    }
    input.skip_to(phoff)?;
    let table = input.exact(phentsize * u64::from(phnum), "program headers")?;
    let mut segments: Vec<Segment> = table
        .chunks_exact(phentsize as usize)
        .filter_map(|h| {
            Some(Segment {
                kind: u32_at(h, 0)?,
                flags: u32_at(h, 4)?,
                offset: u64_at(h, 8)?,
                vaddr: u64_at(h, 16)?,
                filesz: u64_at(h, 32)?,
                memsz: u64_at(h, 40)?,
            })
        })
        .filter(|s| s.kind == PT_LOAD || s.kind == PT_NOTE)
        .collect();
    segments.sort_by_key(|s| s.offset);
    // What to keep is known from the notes: they must come before the
    // memory, as the kernel writes them (gdb's gcore writes them last).
    let notes_first = segments
        .iter()
        .find(|s| s.filesz > 0)
        .is_some_and(|s| s.kind == PT_NOTE);
    if !notes_first {
        return Err(
            "the core's notes do not come before its memory (gdb's gcore writes them \
             last): a core read from a pipe must be laid out as the kernel writes it; \
             convert the file instead"
                .into(),
        );
    }
    Ok(segments)
}

/// What has been written of the reduced core: its length so far, where its
/// notes went, and each kept range with its length.
struct Written {
    at: u64,
    notes: Option<(u64, u64)>,
    loads: Vec<(Segment, u64)>,
}

/// Copying a load segment's kept spans from the input to the output.
struct SpanCopier<'a, 'b, R, W> {
    input: &'a mut Counted<'b, R>,
    out: &'a mut W,
    buffer: &'a mut [u8],
    written: &'a mut Written,
}

impl<R: Read, W: Write> SpanCopier<'_, '_, R, W> {
    /// Copies each span of `segment` and drops the rest of it; a span the
    /// input ends in is kept as far as it goes.
    fn spans(
        &mut self,
        segment: &Segment,
        spans: Vec<Span>,
        reduced: &mut Reduced,
    ) -> Result<(), String> {
        let mut at = segment.vaddr;
        let end = segment.vaddr.saturating_add(segment.filesz);
        for span in spans {
            // Drop what comes before the span, then copy the span.
            let gap = span.start - at;
            let got = io::copy(&mut (&mut *self.input).take(gap), &mut io::sink())
                .map_err(|e| format!("cannot read the core: {e}"))?;
            if got < gap {
                break;
            }
            let want = span.end - span.start;
            let copied = self.copy(want)?;
            if copied > 0 {
                self.written.loads.push((
                    Segment {
                        vaddr: span.start,
                        filesz: copied,
                        offset: self.written.at,
                        ..*segment
                    },
                    copied,
                ));
                self.written.at += copied;
                reduced.kept += copied;
            }
            at = span.start + copied;
            if copied < want {
                break;
            }
        }
        // The rest of the segment.
        let rest = end.saturating_sub(at);
        io::copy(&mut (&mut *self.input).take(rest), &mut io::sink())
            .map_err(|e| format!("cannot read the core: {e}"))?;
        Ok(())
    }

    /// Copies up to `want` bytes; fewer when the input ends first.
    fn copy(&mut self, mut want: u64) -> Result<u64, String> {
        let mut copied = 0u64;
        while want > 0 {
            let n = want.min(self.buffer.len() as u64) as usize;
            let got = self
                .input
                .read(&mut self.buffer[..n])
                .map_err(|e| format!("cannot read the core: {e}"))?;
            if got == 0 {
                break;
            }
            self.out.write_all(&self.buffer[..got]).map_err(write_err)?;
            copied += got as u64;
            want -= got as u64;
        }
        Ok(copied)
    }
}

/// The program headers after the kept memory, then the ELF header
/// pointing at them.
fn write_headers(
    out: &mut (impl Write + Seek),
    header: Vec<u8>,
    written: &Written,
) -> Result<(), String> {
    let phoff_out = written.at.next_multiple_of(8);
    let mut table = vec![0u8; (phoff_out - written.at) as usize];
    let mut push = |kind: u32, flags: u32, offset: u64, vaddr: u64, size: u64| {
        let mut h = [0u8; 56];
        h[0..4].copy_from_slice(&kind.to_le_bytes());
        h[4..8].copy_from_slice(&flags.to_le_bytes());
        h[8..16].copy_from_slice(&offset.to_le_bytes());
        h[16..24].copy_from_slice(&vaddr.to_le_bytes());
        h[32..40].copy_from_slice(&size.to_le_bytes());
        h[40..48].copy_from_slice(&size.to_le_bytes());
        table.extend(h);
    };
    if let Some((offset, size)) = written.notes {
        push(PT_NOTE, 0, offset, 0, size);
    }
    for (segment, len) in &written.loads {
        push(PT_LOAD, segment.flags, segment.offset, segment.vaddr, *len);
    }
    let count = u16::try_from(written.loads.len() + 1)
        .ok()
        .filter(|n| *n < PN_XNUM)
        .ok_or("too many kept ranges for one core file")?;
    out.write_all(&table).map_err(write_err)?;
    let mut elf = header;
    elf[32..40].copy_from_slice(&phoff_out.to_le_bytes());
    elf[40..48].copy_from_slice(&0u64.to_le_bytes()); // no section headers
    elf[54..56].copy_from_slice(&56u16.to_le_bytes());
    elf[56..58].copy_from_slice(&count.to_le_bytes());
    elf[58..64].copy_from_slice(&[0; 6]);
    out.seek(SeekFrom::Start(0)).map_err(write_err)?;
    out.write_all(&elf).map_err(write_err)?;
    out.flush().map_err(write_err)?;
    Ok(())
}

/// What the notes say about the memory to keep.
#[derive(Debug, Default)]
struct Facts {
    /// Every thread's stack pointer.
    stack_pointers: Vec<u64>,
    /// NT_FILE: (start, end, page offset) of each file mapping.
    files: Vec<(u64, u64, u64)>,
    vdso: Option<u64>,
    /// Where each segment that maps a file ends: an anonymous segment
    /// starting there is that file's zero-filled data (.bss).
    file_ends: std::collections::HashSet<u64>,
}

impl Facts {
    fn read(notes: &[u8], sp_word: usize) -> Facts {
        let mut facts = Facts::default();
        let mut at = 0usize;
        while at + 12 <= notes.len() {
            let (Some(namesz), Some(descsz), Some(kind)) = (
                u32_at(notes, at),
                u32_at(notes, at + 4),
                u32_at(notes, at + 8),
            ) else {
                break;
            };
            let desc_at = (at + 12).saturating_add((namesz as usize).next_multiple_of(4));
            let Some(desc) = notes.get(desc_at..desc_at.saturating_add(descsz as usize)) else {
                break;
            };
            match kind {
                // pr_reg starts at 112 in struct elf_prstatus on both.
                NT_PRSTATUS => facts.stack_pointers.extend(u64_at(desc, 112 + sp_word * 8)),
                NT_AUXV => {
                    facts.vdso = desc
                        .chunks_exact(16)
                        .find(|p| u64_at(p, 0) == Some(AT_SYSINFO_EHDR))
                        .and_then(|p| u64_at(p, 8))
                        .filter(|a| *a != 0);
                }
                NT_FILE => {
                    let count = u64_at(desc, 0).unwrap_or(0).min(desc.len() as u64 / 24);
                    facts.files = (0..count as usize)
                        .map_while(|i| {
                            let at = 16 + i * 24;
                            Some((
                                u64_at(desc, at)?,
                                u64_at(desc, at + 8)?,
                                u64_at(desc, at + 16)?,
                            ))
                        })
                        .collect();
                }
                _ => {}
            }
            at = desc_at.saturating_add((descsz as usize).next_multiple_of(4));
        }
        facts
    }

    fn index(&mut self, segments: &[Segment]) {
        self.files.sort_unstable();
        let files = &self.files;
        let is_file = |address: u64| {
            let i = files.partition_point(|(s, _, _)| *s <= address);
            i > 0 && address < files[i - 1].1
        };
        self.file_ends = segments
            .iter()
            .filter(|s| s.kind == PT_LOAD && is_file(s.vaddr))
            .map(|s| s.vaddr.saturating_add(s.memsz))
            .collect();
    }

    /// The spans of `segment` to keep, in order, not overlapping.
    fn keep(&self, segment: &Segment, budget: &mut u64, reduced: &mut Reduced) -> Vec<Span> {
        let start = segment.vaddr;
        let end = segment.vaddr.saturating_add(segment.filesz);
        let mut spans: Vec<Span> = Vec::new();
        let mut add = |from: u64, to: u64| {
            let (from, to) = (from.max(start), to.min(end));
            if from < to {
                spans.push(Span {
                    start: from,
                    end: to,
                });
            }
        };
        let mut stack = false;
        for sp in &self.stack_pointers {
            if *sp >= start && *sp < end {
                add(sp.saturating_sub(RED_ZONE), sp.saturating_add(MAX_STACK));
                stack = true;
            }
        }
        // The files mapped in this segment (sorted by start).
        let first = self.files.partition_point(|(s, _, _)| *s < start);
        let file = first
            .checked_sub(1)
            .map(|i| &self.files[i])
            .filter(|(s, e, _)| start >= *s && start < *e)
            .or_else(|| self.files.get(first).filter(|(s, _, _)| *s == start));
        for (file_start, _, page) in self.files[first..].iter().take_while(|(s, _, _)| *s < end) {
            if *page == 0 {
                add(*file_start, file_start.saturating_add(FILE_HEAD));
            }
        }
        if let Some(vdso) = self.vdso.filter(|v| *v >= start && *v < end) {
            add(vdso, vdso.saturating_add(64 << 10));
        }
        let writable = segment.flags & PF_W != 0;
        // A module's data: a writable mapping of a file, or the anonymous
        // segment right after a file's mappings (its .bss).
        let after_file = file.is_none() && self.file_ends.contains(&start);
        if writable && (file.is_some() || after_file) {
            add(start, start.saturating_add(MAX_MODULE_DATA));
        } else if writable && file.is_none() && !stack {
            let take = segment.filesz.min(*budget);
            *budget -= take;
            reduced.heap += take;
            reduced.over_budget += segment.filesz - take;
            add(start, start + take);
        }
        spans.sort();
        let mut merged: Vec<Span> = Vec::new();
        for span in spans {
            match merged.last_mut() {
                Some(last) if span.start <= last.end => last.end = last.end.max(span.end),
                _ => merged.push(span),
            }
        }
        let kept: u64 = merged.iter().map(|s| s.end - s.start).sum();
        if !writable {
            reduced.dropped += segment.filesz - kept;
        }
        merged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A core of one thread: notes (NT_PRSTATUS with rsp, NT_FILE with one
    /// file, NT_AUXV), a read-only file segment, a stack segment and a heap
    /// segment.
    fn core(heap: u64) -> Vec<u8> {
        let note = |kind: u32, desc: &[u8]| {
            let mut n = Vec::new();
            n.extend(5u32.to_le_bytes());
            n.extend((desc.len() as u32).to_le_bytes());
            n.extend(kind.to_le_bytes());
            n.extend(b"CORE\0\0\0\0");
            n.extend(desc);
            while n.len() % 4 != 0 {
                n.push(0);
            }
            n
        };
        let mut status = vec![0u8; 112 + 27 * 8 + 8];
        status[112 + 19 * 8..112 + 20 * 8].copy_from_slice(&0x7000_0800u64.to_le_bytes());
        let mut files = Vec::new();
        files.extend(1u64.to_le_bytes());
        files.extend(4096u64.to_le_bytes());
        files.extend(0x40_0000u64.to_le_bytes());
        files.extend(0x40_4000u64.to_le_bytes());
        files.extend(0u64.to_le_bytes());
        files.extend(b"/bin/prog\0");
        let mut notes = note(NT_PRSTATUS, &status);
        notes.extend(note(NT_FILE, &files));
        notes.extend(note(NT_AUXV, &[0u8; 16]));
        let loads = [
            (0x40_0000u64, 0x4000u64, 5u32, 1u8),
            (0x7000_0000, 0x1000, 6, 2),
            (0x1000_0000, heap, 6, 3),
        ];
        let phnum = 1 + loads.len();
        let mut offset = (64 + 56 * phnum + notes.len()) as u64;
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf[16..18].copy_from_slice(&4u16.to_le_bytes());
        elf[18..20].copy_from_slice(&EM_X86_64.to_le_bytes());
        elf[32..40].copy_from_slice(&64u64.to_le_bytes());
        elf[54..56].copy_from_slice(&56u16.to_le_bytes());
        elf[56..58].copy_from_slice(&(phnum as u16).to_le_bytes());
        let header = |kind: u32, flags: u32, offset: u64, vaddr: u64, size: u64| {
            let mut h = vec![0u8; 56];
            h[0..4].copy_from_slice(&kind.to_le_bytes());
            h[4..8].copy_from_slice(&flags.to_le_bytes());
            h[8..16].copy_from_slice(&offset.to_le_bytes());
            h[16..24].copy_from_slice(&vaddr.to_le_bytes());
            h[32..40].copy_from_slice(&size.to_le_bytes());
            h[40..48].copy_from_slice(&size.to_le_bytes());
            h
        };
        elf.extend(header(
            PT_NOTE,
            0,
            64 + 56 * phnum as u64,
            0,
            notes.len() as u64,
        ));
        let mut data = Vec::new();
        for (vaddr, size, flags, fill) in loads {
            elf.extend(header(PT_LOAD, flags, offset, vaddr, size));
            data.extend(vec![fill; size as usize]);
            offset += size;
        }
        elf.extend(notes);
        elf.extend(data);
        elf
    }

    fn loads(core: &[u8]) -> Vec<(u64, u64, u8)> {
        let phoff = u64_at(core, 32).unwrap() as usize;
        let phnum = u16_at(core, 56).unwrap() as usize;
        (0..phnum)
            .map(|i| &core[phoff + i * 56..phoff + i * 56 + 56])
            .filter(|h| u32_at(h, 0) == Some(PT_LOAD))
            .map(|h| {
                let offset = u64_at(h, 8).unwrap() as usize;
                (u64_at(h, 16).unwrap(), u64_at(h, 32).unwrap(), core[offset])
            })
            .collect()
    }

    #[test]
    fn stacks_file_heads_and_the_heap_within_budget_are_kept() {
        let mut out = io::Cursor::new(Vec::new());
        let reduced = reduce(&core(0x3000)[..], &mut out, 0x2000).unwrap();
        let kept = loads(out.get_ref());
        // The file's first 8 KiB (read-only, but its headers), the stack
        // from the red zone below rsp, and the heap up to the budget.
        assert_eq!(
            kept,
            vec![
                (0x40_0000, 0x2000, 1),
                (0x7000_0800 - RED_ZONE, 0x800 + RED_ZONE, 2),
                (0x1000_0000, 0x2000, 3),
            ]
        );
        assert_eq!(reduced.over_budget, 0x1000);
        assert_eq!(reduced.dropped, 0x2000);
        assert_eq!(reduced.read, core(0x3000).len() as u64);
    }

    #[test]
    fn a_cut_stream_a_wrong_file_and_a_hostile_header_are_errors() {
        let whole = core(0x1000);
        for cut in [10, 64, 100, 400] {
            let mut out = io::Cursor::new(Vec::new());
            assert!(reduce(&whole[..cut], &mut out, 1 << 20).is_err(), "{cut}");
        }
        let mut out = io::Cursor::new(Vec::new());
        let error = reduce(&b"hello, world"[..], &mut out, 0).unwrap_err();
        assert!(error.contains("ELF header"), "{error}");
        let mut hostile = whole.clone();
        hostile[56..58].copy_from_slice(&PN_XNUM.to_le_bytes());
        let error = reduce(&hostile[..], &mut out, 0).unwrap_err();
        assert!(error.contains("65534"), "{error}");
        // A segment count far beyond the stream ends with the stream.
        let mut hostile = whole;
        hostile[56..58].copy_from_slice(&0xfff0u16.to_le_bytes());
        assert!(reduce(&hostile[..], &mut out, 0).is_err());
    }
}
