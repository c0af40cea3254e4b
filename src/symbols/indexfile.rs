//! The file format shared by the persistent symbol indexes: a checked
//! container of sections, memory-mapped by later runs.
//!
//! Layout (little-endian): a 512-byte header, then the sections, each
//! 8-byte aligned, then a CRC-32 of every 4 KiB page of what lies between
//! the header and those checksums. The header holds a magic naming the
//! kind of index, its version, the source file's size and mtime, the
//! identity text (debug id or build id) it was made for, the place of each
//! section, a checksum of the page checksums and, last, its own checksum.
//!
//! Opening checks the header whole; every other page is checked the first
//! time it is read. A failed check makes the file unusable for the rest of
//! the run: the caller falls back on the source, and the next run makes
//! the index again.

use std::fs;
use std::io::{Seek as _, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::UNIX_EPOCH;

use memmap2::Mmap;

use super::index_writes::IndexWrites;

/// Where indexes are kept and which files get one.
#[derive(Clone, Debug, Default)]
pub struct IndexSettings {
    /// The folder of indexes (`index/` in the symbols cache); `None`: no
    /// index (`--no-symbol-index`, or no cache).
    pub dir: Option<PathBuf>,
    /// Files smaller than this are read without an index: one would save
    /// little.
    pub min_size: u64,
    /// The indexes being made on other threads, waited for by whoever
    /// owns the run.
    pub writes: IndexWrites,
}

impl IndexSettings {
    /// Whether the file at `path` should have an index: the folder of
    /// indexes, and a key naming the file by its full path (one index per
    /// copy of the file).
    pub(crate) fn wants(&self, path: &Path) -> Option<(&Path, u64)> {
        let dir = self.dir.as_ref()?;
        let size = fs::metadata(path).ok()?.len();
        if size < self.min_size {
            return None;
        }
        let full = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        Some((dir, fnv(full.as_os_str().as_encoded_bytes())))
    }
}

/// FNV-1a: a name for an index file that stays the same across builds
/// and Rust versions.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The unit of the page checksums.
pub(crate) const PAGE: usize = 4096;
const HEADER: usize = 512;
const ID_FIELD: usize = 64;

// Header fields.
const H_VERSION: usize = 8;
const H_SOURCE_SIZE: usize = 16;
const H_MTIME_SECS: usize = 24;
const H_MTIME_NANOS: usize = 32;
const H_FILE_LEN: usize = 40;
const H_ID: usize = 48;
const H_SECTION_COUNT: usize = H_ID + ID_FIELD;
const H_CRCS_CRC: usize = H_SECTION_COUNT + 4;
const H_SECTIONS: usize = H_CRCS_CRC + 4;
const H_CRC: usize = HEADER - 4;
/// The most sections a header has room for.
const MAX_SECTIONS: usize = (H_CRC - H_SECTIONS) / 16;

pub(crate) fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default())
}

pub(crate) fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default())
}

/// What identifies the source an index was made from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SourceStamp {
    pub size: u64,
    pub mtime_secs: i64,
    pub mtime_nanos: u32,
}

impl SourceStamp {
    pub fn of(meta: &fs::Metadata) -> Option<SourceStamp> {
        let mtime = meta.modified().ok()?;
        let (secs, nanos) = match mtime.duration_since(UNIX_EPOCH) {
            Ok(d) => (i64::try_from(d.as_secs()).ok()?, d.subsec_nanos()),
            Err(e) => (
                -i64::try_from(e.duration().as_secs()).ok()?,
                e.duration().subsec_nanos(),
            ),
        };
        Some(SourceStamp {
            size: meta.len(),
            mtime_secs: secs,
            mtime_nanos: nanos,
        })
    }

    /// The stamp of the file at `path` now.
    pub(crate) fn of_path(path: &Path) -> Option<SourceStamp> {
        fs::metadata(path).ok().as_ref().and_then(SourceStamp::of)
    }
}

/// What a header names: which kind of index, made from what.
#[derive(Clone, Copy, Debug)]
pub(super) struct Kind<'a> {
    pub magic: &'a [u8; 8],
    pub version: u32,
    pub sections: usize,
}

/// A failed check: the index must not be used.
#[derive(Debug)]
pub(crate) struct Broken(pub String);

/// One bit per page: whether its checksum was checked already.
pub(crate) struct PageBits(Vec<AtomicU64>);

impl PageBits {
    pub(super) fn new(pages: usize) -> PageBits {
        PageBits((0..pages.div_ceil(64)).map(|_| AtomicU64::new(0)).collect())
    }

    /// Whether page `n` of `data` (pages counted from `base`) matches its
    /// checksum, checked once.
    pub(crate) fn page_ok(&self, data: &[u8], base: usize, n: usize, crc: u32) -> bool {
        let (word, bit) = (n / 64, 1u64 << (n % 64));
        let Some(cell) = self.0.get(word) else {
            return false;
        };
        if cell.load(Ordering::Relaxed) & bit != 0 {
            return true;
        }
        let start = base + n * PAGE;
        let end = (start + PAGE).min(data.len());
        if start >= end || crc32fast::hash(&data[start..end]) != crc {
            return false;
        }
        cell.fetch_or(bit, Ordering::Relaxed);
        true
    }
}

/// An index file open for reading, its header checked.
pub(crate) struct Mapped {
    map: Mmap,
    sections: Vec<(usize, usize)>,
    /// Where the page checksums start: the end of the checked pages.
    crcs_at: usize,
    checked: PageBits,
    /// Set by the first failed check: nothing more is read.
    broken: AtomicBool,
}

impl Mapped {
    /// Opens the index at `path` of kind `kind`, made for a source stamped
    /// `stamp` with identity `id`. `Err` says why it cannot be used
    /// (stale, truncated, corrupt, another version or kind).
    pub(super) fn open(
        path: &Path,
        kind: Kind<'_>,
        stamp: SourceStamp,
        id: &str,
    ) -> Result<Mapped, Broken> {
        let broken = |why: &str| Broken(why.to_string());
        let file = fs::File::open(path).map_err(|e| Broken(e.to_string()))?;
        // SAFETY: sound while nobody truncates or writes the index during
        // the map's life. Indexes are only ever written under a temporary
        // name and renamed into place (`write` below), so a run making a
        // new one replaces the name, not the bytes mapped here. (The page
        // checksums catch a corrupt or stale file, not a concurrent
        // writer.)
        let map = unsafe { Mmap::map(&file) }.map_err(|e| Broken(e.to_string()))?;
        if map.len() < HEADER || &map[..8] != kind.magic {
            return Err(broken("not an index file"));
        }
        if crc32fast::hash(&map[..H_CRC]) != u32_at(&map, H_CRC) {
            return Err(broken("header checksum differs"));
        }
        if u32_at(&map, H_VERSION) != kind.version {
            return Err(broken("made by another version"));
        }
        if u64_at(&map, H_FILE_LEN) != map.len() as u64 {
            return Err(broken("truncated"));
        }
        let recorded = SourceStamp {
            size: u64_at(&map, H_SOURCE_SIZE),
            mtime_secs: u64_at(&map, H_MTIME_SECS) as i64,
            mtime_nanos: u32_at(&map, H_MTIME_NANOS),
        };
        if recorded != stamp {
            return Err(broken("the symbol file changed since"));
        }
        let id_len = usize::from(map[H_ID]).min(ID_FIELD - 1);
        if &map[H_ID + 1..H_ID + 1 + id_len] != id.as_bytes() {
            return Err(broken("made for another module id"));
        }
        if u32_at(&map, H_SECTION_COUNT) as usize != kind.sections {
            return Err(broken("another number of sections"));
        }
        let mut sections = Vec::with_capacity(kind.sections + 1);
        for n in 0..=kind.sections {
            let at = H_SECTIONS + n * 16;
            let (offset, len) = (u64_at(&map, at), u64_at(&map, at + 8));
            let end = offset.checked_add(len).filter(|&e| e <= map.len() as u64);
            if offset < HEADER as u64 || end.is_none() {
                return Err(broken("a section lies outside the file"));
            }
            sections.push((offset as usize, len as usize));
        }
        let (crcs_at, crcs_len) = sections.pop().unwrap_or_default();
        if crc32fast::hash(&map[crcs_at..crcs_at + crcs_len]) != u32_at(&map, H_CRCS_CRC) {
            return Err(broken("page checksums differ"));
        }
        let covered = crcs_at - HEADER;
        if crcs_len != covered.div_ceil(PAGE) * 4
            || sections.iter().any(|&(at, len)| at + len > crcs_at)
        {
            return Err(broken("page checksums do not cover the file"));
        }
        Ok(Mapped {
            checked: PageBits::new(covered.div_ceil(PAGE)),
            map,
            sections,
            crcs_at,
            broken: AtomicBool::new(false),
        })
    }

    /// Marks the index unusable and says why.
    pub(super) fn fail(&self, why: String) -> Broken {
        self.broken.store(true, Ordering::Relaxed);
        Broken(why)
    }

    /// Where section `n` lies in the file, and its length.
    pub(super) fn section(&self, n: usize) -> (usize, usize) {
        self.sections.get(n).copied().unwrap_or_default()
    }

    /// The number of `size`-byte entries of section `n`.
    pub(super) fn count(&self, n: usize, size: usize) -> usize {
        self.section(n).1 / size
    }

    /// `len` bytes at `offset` of the file, their pages checked.
    pub(super) fn bytes(&self, offset: usize, len: usize) -> Result<&[u8], Broken> {
        if self.broken.load(Ordering::Relaxed) {
            return Err(Broken("already found corrupt".into()));
        }
        let end = offset
            .checked_add(len)
            .filter(|&end| offset >= HEADER && end <= self.crcs_at)
            .ok_or_else(|| self.fail(format!("read outside the index at {offset:#x}")))?;
        if len > 0 {
            for page in (offset - HEADER) / PAGE..=(end - 1 - HEADER) / PAGE {
                let crc = u32_at(&self.map, self.crcs_at + page * 4);
                if !self
                    .checked
                    .page_ok(&self.map[..self.crcs_at], HEADER, page, crc)
                {
                    return Err(self.fail(format!("index page {page} checksum differs")));
                }
            }
        }
        Ok(&self.map[offset..end])
    }

    /// Entry `n` of section `section`, whose entries are `size` bytes.
    pub(super) fn entry(&self, section: usize, size: usize, n: usize) -> Result<&[u8], Broken> {
        if n >= self.count(section, size) {
            return Err(self.fail(format!("entry {n} past the end of section {section}")));
        }
        self.bytes(self.section(section).0 + n * size, size)
    }

    /// `len` bytes at `offset` of section `section`.
    pub(super) fn within(&self, section: usize, offset: u64, len: usize) -> Result<&[u8], Broken> {
        let (at, size) = self.section(section);
        let offset = usize::try_from(offset)
            .ok()
            .filter(|&o| o.checked_add(len).is_some_and(|end| end <= size));
        let offset = offset.ok_or_else(|| self.fail(format!("read outside section {section}")))?;
        self.bytes(at + offset, len)
    }

    /// The number of entries of `section` (`size` bytes each, starting
    /// with a u64 address) whose address is at most `address` (or below
    /// it, with `strict`).
    pub(crate) fn partition(
        &self,
        section: usize,
        size: usize,
        address: u64,
        strict: bool,
    ) -> Result<usize, Broken> {
        let (mut low, mut high) = (0, self.count(section, size));
        while low < high {
            let mid = low + (high - low) / 2;
            let start = u64_at(self.entry(section, size, mid)?, 0);
            let before = if strict {
                start < address
            } else {
                start <= address
            };
            if before {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        Ok(low)
    }
}

/// Writes an index of kind `kind` with `sections` (made for a source
/// stamped `stamp` with identity `id`) to `path`: beside its final name,
/// then renamed, so a reader never sees a half-written index and two runs
/// building it do not mix their bytes.
pub(super) fn write(
    path: &Path,
    kind: Kind<'_>,
    stamp: SourceStamp,
    id: &str,
    sections: &[Vec<u8>],
) -> Result<(), String> {
    if id.len() >= ID_FIELD {
        return Err("module id too long".into());
    }
    if sections.len() != kind.sections || sections.len() >= MAX_SECTIONS {
        return Err(format!("{} sections", sections.len()));
    }
    let dir = path.parent().ok_or("no folder")?;
    let at_dir = |e: std::io::Error| format!("{}: {e}", dir.display());
    fs::create_dir_all(dir).map_err(at_dir)?;
    remove_abandoned(dir);
    let mut temp = tempfile::Builder::new()
        .prefix(".index-")
        .tempfile_in(dir)
        .map_err(at_dir)?;
    // The sections are written as they are, with the checksum of each page
    // taken on the way: the file is never assembled in memory.
    let mut out = Checksummed {
        to: std::io::BufWriter::new(temp.as_file_mut()),
        page: Vec::with_capacity(PAGE),
        crcs: Vec::new(),
        written: HEADER as u64,
    };
    out.to.write_all(&[0u8; HEADER]).map_err(at_dir)?;
    let mut placed = Vec::with_capacity(sections.len() + 1);
    for data in sections {
        out.pad().map_err(at_dir)?;
        placed.push((out.written, data.len() as u64));
        out.put(data).map_err(at_dir)?;
    }
    out.pad().map_err(at_dir)?;
    let crcs_at = out.written;
    if !out.page.is_empty() {
        out.crcs
            .extend_from_slice(&crc32fast::hash(&out.page).to_le_bytes());
    }
    let crcs = std::mem::take(&mut out.crcs);
    out.to.write_all(&crcs).map_err(at_dir)?;
    placed.push((crcs_at, crcs.len() as u64));

    let mut header = [0u8; HEADER];
    let mut put = |at: usize, bytes: &[u8]| header[at..at + bytes.len()].copy_from_slice(bytes);
    put(0, kind.magic);
    put(H_VERSION, &kind.version.to_le_bytes());
    put(12, &(HEADER as u32).to_le_bytes());
    put(H_SOURCE_SIZE, &stamp.size.to_le_bytes());
    put(H_MTIME_SECS, &stamp.mtime_secs.to_le_bytes());
    put(H_MTIME_NANOS, &stamp.mtime_nanos.to_le_bytes());
    put(36, &(PAGE as u32).to_le_bytes());
    put(H_FILE_LEN, &(crcs_at + crcs.len() as u64).to_le_bytes());
    put(H_ID, &[id.len() as u8]);
    put(H_ID + 1, id.as_bytes());
    put(H_SECTION_COUNT, &(sections.len() as u32).to_le_bytes());
    put(H_CRCS_CRC, &crc32fast::hash(&crcs).to_le_bytes());
    for (n, (offset, len)) in placed.iter().enumerate() {
        put(H_SECTIONS + n * 16, &offset.to_le_bytes());
        put(H_SECTIONS + n * 16 + 8, &len.to_le_bytes());
    }
    let crc = crc32fast::hash(&header[..H_CRC]);
    header[H_CRC..].copy_from_slice(&crc.to_le_bytes());
    out.to.flush().map_err(at_dir)?;
    drop(out);
    let file = temp.as_file_mut();
    file.seek(std::io::SeekFrom::Start(0)).map_err(at_dir)?;
    file.write_all(&header).map_err(at_dir)?;
    temp.persist(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

/// Removes the half-written indexes a run interrupted while writing left
/// in `dir` (a day old or more: another run may be writing one now).
fn remove_abandoned(dir: &Path) {
    let day = std::time::Duration::from_secs(24 * 60 * 60);
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let abandoned = entry.file_name().to_string_lossy().starts_with(".index-")
            && entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age >= day));
        if abandoned {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Writes bytes, taking the checksum of each page after the header.
struct Checksummed<W: Write> {
    to: W,
    /// The part of the current page written so far.
    page: Vec<u8>,
    crcs: Vec<u8>,
    written: u64,
}

impl<W: Write> Checksummed<W> {
    fn put(&mut self, mut data: &[u8]) -> std::io::Result<()> {
        self.to.write_all(data)?;
        self.written += data.len() as u64;
        while !data.is_empty() {
            let take = (PAGE - self.page.len()).min(data.len());
            self.page.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.page.len() == PAGE {
                self.crcs
                    .extend_from_slice(&crc32fast::hash(&self.page).to_le_bytes());
                self.page.clear();
            }
        }
        Ok(())
    }

    /// Zeros up to the next multiple of 8.
    fn pad(&mut self) -> std::io::Result<()> {
        let pad = (8 - self.written % 8) % 8;
        self.put(&[0u8; 8][..pad as usize])
    }
}

/// The strings of an index being written, each kept once: a string is
/// named by its number, which leads to its place in the bytes. A hash of
/// each leads to its number (checked byte for byte; a string whose hash
/// another one has is kept again).
#[derive(Default)]
pub(crate) struct Strings {
    numbers: foldhash::HashMap<u64, u32>,
    hasher: foldhash::fast::FixedState,
    /// (offset, length) of each, 16 bytes per entry.
    pub table: Vec<u8>,
    pub bytes: Vec<u8>,
}

/// The number standing for "no string" (and "none" in other tables).
pub(crate) const NONE: u32 = u32::MAX;

/// Bytes of one entry of a string table.
pub(crate) const STRING_ENTRY: usize = 16;

impl Strings {
    /// The number of `text`, added if new.
    pub(crate) fn number(&mut self, text: &str) -> u32 {
        let hash = std::hash::BuildHasher::hash_one(&self.hasher, text.as_bytes());
        if let Some(&n) = self.numbers.get(&hash) {
            let at = n as usize * STRING_ENTRY;
            let (offset, len) = (
                u64_at(&self.table, at) as usize,
                u64_at(&self.table, at + 8) as usize,
            );
            if self.bytes.get(offset..offset + len) == Some(text.as_bytes()) {
                return n;
            }
        }
        let n = (self.table.len() / STRING_ENTRY) as u32;
        self.table
            .extend_from_slice(&(self.bytes.len() as u64).to_le_bytes());
        self.table
            .extend_from_slice(&(text.len() as u64).to_le_bytes());
        self.bytes.extend_from_slice(text.as_bytes());
        self.numbers.entry(hash).or_insert(n);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIND: Kind<'static> = Kind {
        magic: b"TESTIDX1",
        version: 1,
        sections: 2,
    };

    #[test]
    fn written_sections_read_back_and_damage_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.idx");
        let stamp = SourceStamp {
            size: 10,
            mtime_secs: 20,
            mtime_nanos: 30,
        };
        // A section spanning pages, and one ending mid-page.
        let big: Vec<u8> = (0..3 * PAGE + 17).map(|n| n as u8).collect();
        write(&path, KIND, stamp, "id", &[big.clone(), b"tail".to_vec()]).unwrap();
        let file = Mapped::open(&path, KIND, stamp, "id").unwrap();
        assert_eq!(file.within(0, 0, big.len()).unwrap(), &big[..]);
        assert_eq!(file.within(1, 0, 4).unwrap(), b"tail");
        assert!(file.within(1, 2, 4).is_err(), "past the section");
        // Another stamp, id, kind or version: not opened.
        let other = SourceStamp { size: 11, ..stamp };
        assert!(Mapped::open(&path, KIND, other, "id").is_err());
        assert!(Mapped::open(&path, KIND, stamp, "other").is_err());
        let kind = Kind { version: 2, ..KIND };
        assert!(Mapped::open(&path, kind, stamp, "id").is_err());
        // A byte changed in the second page: found when that page is read.
        let mut bytes = fs::read(&path).unwrap();
        bytes[HEADER + PAGE + 5] ^= 1;
        fs::write(&path, &bytes).unwrap();
        let file = Mapped::open(&path, KIND, stamp, "id").unwrap();
        assert!(file.within(0, 0, 16).is_ok());
        assert!(file.within(0, PAGE as u64, 16).is_err());
        assert!(
            file.within(0, 0, 16).is_err(),
            "broken for the rest of the run"
        );
    }

    #[test]
    fn half_written_indexes_of_interrupted_runs_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let (old, new) = (dir.path().join(".index-old"), dir.path().join(".index-new"));
        fs::write(&old, b"x").unwrap();
        fs::write(&new, b"x").unwrap();
        let two_days = std::time::Duration::from_secs(2 * 24 * 60 * 60);
        fs::File::options()
            .append(true)
            .open(&old)
            .unwrap()
            .set_modified(std::time::SystemTime::now() - two_days)
            .unwrap();
        let stamp = SourceStamp {
            size: 1,
            mtime_secs: 1,
            mtime_nanos: 1,
        };
        write(
            &dir.path().join("x.idx"),
            KIND,
            stamp,
            "id",
            &[vec![1], vec![2]],
        )
        .unwrap();
        assert!(!old.exists());
        assert!(new.exists(), "another run may be writing it");
    }
}
