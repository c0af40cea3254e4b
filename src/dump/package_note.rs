//! The version an ELF module's `.note.package` gives (the package metadata
//! some distributions and build systems stamp into binaries: an `FDO`
//! note of type 0xcafe1a7e holding JSON such as
//! `{"type":"deb","name":"libfoo","version":"2.4.1"}`), read from the
//! module's file on this machine when its build id is the dump's.

use object::{Object, ObjectSection};

const NOTE_TYPE: u32 = 0xcafe_1a7e;
/// Notes larger than this are not package metadata.
const MAX_NOTE: usize = 64 << 10;

/// The package version of the ELF file at `path`, when it has the note and
/// its build id is `code_id` (hex, as the dump records it).
pub(super) fn package_version(path: &str, code_id: Option<&str>) -> Option<String> {
    let want = code_id?;
    let file = std::fs::File::open(path).ok()?;
    // SAFETY: a read-only map of a file we opened.
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    let elf = object::File::parse(&*map).ok()?;
    let have: String = elf
        .build_id()
        .ok()??
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if !have.eq_ignore_ascii_case(want) {
        return None;
    }
    let data = elf.section_by_name(".note.package")?.data().ok()?;
    version_in_note(data.get(..data.len().min(MAX_NOTE))?)
}

/// The `version` of the first FDO package note in a note section.
fn version_in_note(mut data: &[u8]) -> Option<String> {
    let u32_at = |d: &[u8], at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
    };
    let align = |n: usize| n.checked_add(3).map(|n| n & !3);
    while data.len() >= 12 {
        let name_size = u32_at(data, 0)? as usize;
        let desc_size = u32_at(data, 4)? as usize;
        let kind = u32_at(data, 8)?;
        let name_end = 12usize.checked_add(name_size)?;
        let desc_start = align(name_end)?;
        let desc_end = desc_start.checked_add(desc_size)?;
        let name = data.get(12..name_end)?;
        let desc = data.get(desc_start..desc_end)?;
        if kind == NOTE_TYPE && name == b"FDO\0" {
            let text = std::str::from_utf8(desc).ok()?.trim_end_matches('\0');
            let json: serde_json::Value = serde_json::from_str(text).ok()?;
            return json["version"].as_str().map(str::to_string);
        }
        data = data.get(align(desc_end)?..)?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(name: &[u8], kind: u32, desc: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend((name.len() as u32).to_le_bytes());
        out.extend((desc.len() as u32).to_le_bytes());
        out.extend(kind.to_le_bytes());
        out.extend(name);
        while out.len() % 4 != 0 {
            out.push(0);
        }
        out.extend(desc);
        while out.len() % 4 != 0 {
            out.push(0);
        }
        out
    }

    #[test]
    fn the_package_note_gives_its_version_and_nothing_else_does() {
        let json = br#"{"type":"deb","name":"libdemo","version":"2.4.1"}"#;
        let mut section = note(b"GNU\0", 3, &[1, 2, 3, 4]);
        section.extend(note(b"FDO\0", NOTE_TYPE, json));
        assert_eq!(version_in_note(&section), Some("2.4.1".into()));
        // Another owner, another type, no version, bad JSON, cut short.
        assert_eq!(version_in_note(&note(b"XYZ\0", NOTE_TYPE, json)), None);
        assert_eq!(version_in_note(&note(b"FDO\0", 1, json)), None);
        assert_eq!(
            version_in_note(&note(b"FDO\0", NOTE_TYPE, br#"{"name":"x"}"#)),
            None
        );
        assert_eq!(
            version_in_note(&note(b"FDO\0", NOTE_TYPE, b"{not json")),
            None
        );
        let whole = note(b"FDO\0", NOTE_TYPE, json);
        assert_eq!(version_in_note(&whole[..whole.len() - 8]), None);
        let mut huge = whole.clone();
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(version_in_note(&huge), None);
    }
}
