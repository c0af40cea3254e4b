//! One pass over a .sym file's text that notes where each range record
//! (a `FUNC` with its lines and inlines, a `STACK CFI INIT` with its rows,
//! a `STACK WIN`) starts and ends, and a checksum of every page. It runs
//! beside breakpad-symbols' parse of the same file; the index is then made
//! from both (see [`super::index::build`]): the parse says which records it
//! kept and with what ranges, this scan says where their text is.

use memchr::memchr;

/// The size of the pages the source's checksums cover.
pub(crate) use crate::symbols::indexfile::PAGE;

/// Where one record's text is in the file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Record {
    pub address: u64,
    pub size: u64,
    pub offset: u64,
    pub len: u32,
}

/// The range records of one file, by kind, each sorted by address (records
/// at the same address stay in file order), and the pages' checksums.
#[derive(Default)]
pub(crate) struct Scan {
    pub functions: Vec<Record>,
    pub cfi: Vec<Record>,
    pub win_framedata: Vec<Record>,
    pub win_fpo: Vec<Record>,
    pub page_crcs: Vec<u32>,
}

/// The kind of record a line starts.
enum Start {
    Function,
    Cfi,
    /// `STACK WIN` of this frame type.
    Win(u8),
    Other,
}

fn start_of(line: &[u8]) -> Start {
    if line.starts_with(b"FUNC ") {
        Start::Function
    } else if line.starts_with(b"STACK CFI INIT ") {
        Start::Cfi
    } else if let Some(rest) = line.strip_prefix(b"STACK WIN ") {
        Start::Win(rest.first().copied().unwrap_or(0))
    } else {
        Start::Other
    }
}

/// Whether `line` continues the record `kind` began: a FUNC's line records
/// (hex digits then a space: no record keyword is all hex digits), INLINE
/// and INLINE_ORIGIN lines; a CFI INIT's `STACK CFI` rows. The parser ends a
/// record at the first line that is not one of these (an empty one too).
fn continues(kind: &Start, line: &[u8]) -> bool {
    match kind {
        Start::Function => {
            let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
            (digits > 0 && line.get(digits) == Some(&b' '))
                || line.starts_with(b"INLINE ")
                || line.starts_with(b"INLINE_ORIGIN ")
        }
        Start::Cfi => line.starts_with(b"STACK CFI ") && !line.starts_with(b"STACK CFI INIT "),
        _ => false,
    }
}

/// The hex number at the start of `text`, and the text after it and the
/// spaces that follow.
fn hex(text: &[u8]) -> Option<(u64, &[u8])> {
    let digits = text.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 || digits > 16 {
        return None;
    }
    let value = u64::from_str_radix(std::str::from_utf8(&text[..digits]).ok()?, 16).ok()?;
    let rest = &text[digits..];
    let spaces = rest.iter().take_while(|&&b| b == b' ').count();
    Some((value, &rest[spaces..]))
}

/// Address and size of a record's first line.
fn range_of(kind: &Start, line: &[u8]) -> Option<(u64, u64)> {
    let rest = match kind {
        Start::Function => {
            let rest = line.strip_prefix(b"FUNC ")?;
            rest.strip_prefix(b"m ").unwrap_or(rest)
        }
        Start::Cfi => line.strip_prefix(b"STACK CFI INIT ")?,
        Start::Win(_) => {
            // STACK WIN TYPE ADDRESS SIZE ...
            let rest = line.strip_prefix(b"STACK WIN ")?;
            hex(rest)?.1
        }
        Start::Other => return None,
    };
    let (address, rest) = hex(rest)?;
    let (size, _) = hex(rest)?;
    Some((address, size))
}

/// A record whose first line has been read.
struct Open {
    kind: Start,
    range: Option<(u64, u64)>,
    start: usize,
}

impl Scan {
    /// Notes the record that ends at `end` (without a readable range the
    /// parser rejects the file anyway).
    fn close(&mut self, open: Open, end: usize) {
        let (Some((address, size)), Ok(len)) = (open.range, u32::try_from(end - open.start)) else {
            return;
        };
        let record = Record {
            address,
            size,
            offset: open.start as u64,
            len,
        };
        match open.kind {
            Start::Function => self.functions.push(record),
            Start::Cfi => self.cfi.push(record),
            Start::Win(b'4') => self.win_framedata.push(record),
            Start::Win(b'0') => self.win_fpo.push(record),
            Start::Win(_) | Start::Other => {}
        }
    }
}

/// Scans `text`, a whole .sym file.
pub(super) fn scan(text: &[u8]) -> Scan {
    let mut out = Scan {
        page_crcs: text.chunks(PAGE).map(crc32fast::hash).collect(),
        ..Scan::default()
    };
    let mut at = 0usize;
    let mut open: Option<Open> = None;
    while at < text.len() {
        let end = memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i + 1);
        let line = &text[at..end];
        if let Some(record) = open.take() {
            if continues(&record.kind, line) {
                open = Some(record);
                at = end;
                continue;
            }
            out.close(record, at);
        }
        let kind = start_of(line);
        let range = range_of(&kind, line);
        match kind {
            Start::Other => {}
            Start::Win(_) => out.close(
                Open {
                    kind,
                    range,
                    start: at,
                },
                end,
            ),
            Start::Function | Start::Cfi => {
                open = Some(Open {
                    kind,
                    range,
                    start: at,
                })
            }
        }
        at = end;
    }
    if let Some(record) = open {
        out.close(record, text.len());
    }
    for records in [
        &mut out.functions,
        &mut out.cfi,
        &mut out.win_framedata,
        &mut out.win_fpo,
    ] {
        // Stable: records at one address stay in file order.
        records.sort_by_key(|r| r.address);
    }
    out
}
