//! Writing a .sym file's index: from the whole-file parse (which record
//! text it kept for each range) and the scan (where each record's text is),
//! checked before it is written.

use super::super::scan::{Record, Scan};
use super::layout::{
    CFI, FILES, FUNCS, KIND, ORIGINS, PUBLICS, SECTIONS, SOURCE_CRCS, STRINGS, WIN_FPO,
    WIN_FRAMEDATA,
};
use crate::symbols::indexfile::SourceStamp;
use crate::symbols::indexfile::{self};
use minidump_unwind::SymbolFile;
use range_map::Range;
use std::collections::HashMap;
use std::path::Path;

/// Section contents being written.
#[derive(Default)]
pub(super) struct Sections {
    pub(super) data: [Vec<u8>; SECTIONS],
}

impl Sections {
    fn put_range(
        &mut self,
        section: usize,
        range: &Range<u64>,
        record: &Record,
    ) -> Result<(), String> {
        let size = range
            .end
            .checked_sub(range.start)
            .and_then(|last| last.checked_add(1))
            .and_then(|size| u32::try_from(size).ok())
            .ok_or_else(|| format!("range at {:#x} too big", range.start))?;
        let out = &mut self.data[section];
        out.extend_from_slice(&range.start.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&record.len.to_le_bytes());
        out.extend_from_slice(&record.offset.to_le_bytes());
        Ok(())
    }

    fn put_string(&mut self, text: &str) -> (u64, u32) {
        let at = self.data[STRINGS].len() as u64;
        self.data[STRINGS].extend_from_slice(text.as_bytes());
        (at, text.len() as u32)
    }

    fn put_names(&mut self, section: usize, names: &HashMap<u32, String>) {
        let mut ids: Vec<&u32> = names.keys().collect();
        ids.sort_unstable();
        for id in ids {
            let (offset, len) = self.put_string(&names[id]);
            let out = &mut self.data[section];
            out.extend_from_slice(&id.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&offset.to_le_bytes());
        }
    }
}

/// The scanned record of each range the parse kept: the first one at the
/// range's start (in file order) of the value's size, when `size` says it.
pub(super) fn matched<'r, V>(
    kept: impl Iterator<Item = &'r (Range<u64>, V)>,
    scanned: &[Record],
    what: &str,
    size: impl Fn(&V) -> Option<u64>,
    start: impl Fn(&V) -> u64,
) -> Result<Vec<(Range<u64>, Record, bool)>, String>
where
    V: 'r,
{
    let mut out = Vec::new();
    let mut next = 0;
    for (range, value) in kept {
        let address = start(value);
        if address != range.start {
            return Err(format!(
                "{what} at {address:#x} kept for range {:#x}",
                range.start
            ));
        }
        while next < scanned.len() && scanned[next].address < address {
            next += 1;
        }
        let same: Vec<usize> = (next..scanned.len())
            .take_while(|&n| scanned[n].address == address)
            .collect();
        let wanted = size(value);
        let Some(&found) = same
            .iter()
            .find(|&&n| wanted.is_none_or(|s| scanned[n].size == s))
        else {
            return Err(format!("no {what} text found for {address:#x}"));
        };
        out.push((*range, scanned[found], same.len() > 1));
        next = same.last().map_or(next, |&n| n + 1);
    }
    Ok(out)
}

/// Whether entry `n` of `count` is among those checked at writing: about
/// 512 spread over the table, and the last.
pub(super) fn sampled(n: usize, count: usize) -> bool {
    n.is_multiple_of((count / 512).max(1)) || n + 1 == count
}

/// Puts the kept text of every range of a FUNC or CFI table (`kept`, the
/// parse's values; `extent` gives a value's address and size); a sample of
/// them, parsed alone (`alone` takes the one value from that parse), must
/// read as the whole parse kept them.
#[allow(clippy::too_many_arguments)]
pub(super) fn put_kept<'p, V: PartialEq + 'p>(
    sections: &mut Sections,
    section: usize,
    kept: std::slice::Iter<'p, (Range<u64>, V)>,
    scanned: &[Record],
    what: &str,
    extent: impl Fn(&V) -> (u64, u64),
    alone: impl Fn(&SymbolFile) -> Option<&V>,
    reparse: &dyn Fn(&Record) -> Result<SymbolFile, String>,
) -> Result<(), String> {
    let entries = matched(
        kept.clone(),
        scanned,
        what,
        |v| Some(extent(v).1),
        |v| extent(v).0,
    )?;
    for (n, ((range, record, _), (_, value))) in entries.iter().zip(kept).enumerate() {
        if sampled(n, entries.len()) && alone(&reparse(record)?) != Some(value) {
            return Err(format!(
                "{what} at {:#x} reads differently alone",
                range.start
            ));
        }
        sections.put_range(section, range, record)?;
    }
    Ok(())
}

/// Writes the index of the .sym file `text` (stamped `stamp`, MODULE id
/// `id`) to `path`, from `scan` of its text and `parsed`, breakpad-symbols'
/// parse of it. Checks before writing that the recorded text of a sample of
/// records (and of every ambiguous one) parses to what the whole parse
/// kept; `Err` says why no index was written.
pub(crate) fn build(
    path: &Path,
    text: &[u8],
    stamp: SourceStamp,
    id: &str,
    scan: &Scan,
    parsed: &SymbolFile,
) -> Result<(), String> {
    let mut sections = Sections::default();
    let reparse = |record: &Record| -> Result<SymbolFile, String> {
        let start = record.offset as usize;
        let slice = text
            .get(start..start + record.len as usize)
            .ok_or("record outside the text")?;
        SymbolFile::from_bytes(&[slice, b"\n"].concat()).map_err(|e| e.to_string())
    };

    put_kept(
        &mut sections,
        FUNCS,
        parsed.functions.ranges_values(),
        &scan.functions,
        "FUNC",
        |f| (f.address, u64::from(f.size)),
        |file| file.functions.ranges_values().next().map(|(_, f)| f),
        &reparse,
    )?;
    put_kept(
        &mut sections,
        CFI,
        parsed.cfi_stack_info.ranges_values(),
        &scan.cfi,
        "STACK CFI INIT",
        |c| (c.init.address, u64::from(c.size)),
        |file| file.cfi_stack_info.ranges_values().next().map(|(_, c)| c),
        &reparse,
    )?;
    for (section, table, scanned) in [
        (
            WIN_FRAMEDATA,
            &parsed.win_stack_framedata_info,
            &scan.win_framedata,
        ),
        (WIN_FPO, &parsed.win_stack_fpo_info, &scan.win_fpo),
    ] {
        let entries = matched(
            table.ranges_values(),
            scanned,
            "STACK WIN",
            |_| None,
            |w| w.address,
        )?;
        for (n, ((range, record, ambiguous), (_, kept))) in
            entries.iter().zip(table.ranges_values()).enumerate()
        {
            let mut record = *record;
            if *ambiguous || sampled(n, entries.len()) {
                // Several records at one address: the one that reads as
                // the kept value (its size aside: the parse may shorten it).
                let candidates = scanned.iter().filter(|r| r.address == range.start);
                let mut found = None;
                for candidate in candidates {
                    let again = reparse(candidate)?;
                    let alone = if section == WIN_FPO {
                        &again.win_stack_fpo_info
                    } else {
                        &again.win_stack_framedata_info
                    };
                    if let Some((_, mut value)) = alone.ranges_values().next().cloned() {
                        value.size = kept.size;
                        if value == *kept {
                            found = Some(*candidate);
                            break;
                        }
                    }
                }
                record = found.ok_or_else(|| {
                    format!("STACK WIN at {:#x} reads differently alone", range.start)
                })?;
            }
            sections.put_range(section, range, &record)?;
        }
    }
    for public in &parsed.publics {
        let (offset, len) = sections.put_string(&public.name);
        let out = &mut sections.data[PUBLICS];
        out.extend_from_slice(&public.address.to_le_bytes());
        out.extend_from_slice(&public.parameter_size.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&offset.to_le_bytes());
    }
    sections.put_names(FILES, &parsed.files);
    sections.put_names(ORIGINS, &parsed.inline_origins);
    for crc in &scan.page_crcs {
        sections.data[SOURCE_CRCS].extend_from_slice(&crc.to_le_bytes());
    }

    indexfile::write(path, KIND, stamp, id, &sections.data)
}
