//! Reading a pack (`analyze FILE.tar.zst`): its files are taken out into a
//! private temporary folder, which lives as long as the run and is removed
//! after it, and its inputs are analysed from there with its `symbols/`
//! folder beside them.
//!
//! A pack comes from another machine, so it is read as hostile: only plain
//! files and folders are taken (no links, devices or other entry kinds),
//! every path must be a relative path of plain names (no `..`, no root, no
//! drive, no backslash or colon), no file is written twice or outside the
//! folder, and the total size, the number of entries and the manifest's
//! size are bounded, so a decompression bomb or a cut stream ends in one
//! line of error naming the file.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use super::manifest::{Manifest, FORMAT, MANIFEST, VERSION};

/// Most bytes a pack may unpack to.
pub(crate) const MAX_TOTAL: u64 = 64 << 30;
/// Most entries a pack may hold.
const MAX_ENTRIES: u64 = 100_000;
/// Most bytes of the manifest.
const MAX_MANIFEST: u64 = 16 << 20;
/// Most components of one path inside a pack.
const MAX_DEPTH: usize = 32;

/// Whether the file at `path` is a pack: a zstd stream whose first tar
/// entry is the manifest, or one named `*.tar.zst` (whose reading then
/// says what is wrong with it, rather than the core reader).
pub(crate) fn is_pack(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let mut magic = [0u8; 4];
    if file.take(4).read_exact(&mut magic).is_err() || magic != [0x28, 0xb5, 0x2f, 0xfd] {
        return false;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name.ends_with(".tar.zst") || name.ends_with(".tzst") {
        return true;
    }
    let Ok(file) = File::open(path) else {
        return false;
    };
    let Ok(decoder) = zstd::stream::read::Decoder::new(file) else {
        return false;
    };
    let mut header = [0u8; 512];
    if decoder.take(512).read_exact(&mut header).is_err() {
        return false;
    }
    let name = &header[..100];
    let end = name.iter().position(|b| *b == 0).unwrap_or(100);
    &name[..end] == MANIFEST.as_bytes() && &header[257..262] == b"ustar"
}

/// A pack taken out: its folder (removed when this is dropped), and its
/// inputs as (path in the folder, label to show).
pub(crate) struct Unpacked {
    pub dir: tempfile::TempDir,
    pub inputs: Vec<(PathBuf, String)>,
}

/// Takes the pack at `path` out into a new private temporary folder.
pub(crate) fn unpack(path: &Path) -> Result<Unpacked, String> {
    let dir = tempfile::Builder::new()
        .prefix("dumptriage-pack-")
        .tempdir()
        .map_err(|e| format!("no temporary folder to unpack into: {e}"))?;
    let file = File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let decoder =
        zstd::stream::read::Decoder::new(file).map_err(|e| format!("not a zstd stream: {e}"))?;
    // Never more than the temporary folder's free space, less a margin:
    // a pack that claims more must not fill the disk first.
    let limit =
        free_space(dir.path()).map_or(MAX_TOTAL, |free| MAX_TOTAL.min(free.saturating_sub(MARGIN)));
    let manifest = take_out(decoder, dir.path(), limit)?;
    let shown = path.display().to_string();
    let mut inputs = Vec::new();
    for input in &manifest.inputs {
        let rel = checked(Path::new(&input.name))
            .filter(|parts| parts.len() == 1)
            .ok_or_else(|| format!("the manifest names an input {:?}: refused", input.name))?;
        let at = dir.path().join(&rel[0]);
        if !at.is_file() {
            return Err(format!(
                "the manifest names an input {:?} the pack does not hold",
                input.name
            ));
        }
        inputs.push((at, format!("{shown}/{}", input.name)));
    }
    Ok(Unpacked { dir, inputs })
}

/// Writes every entry of the tar stream `from` under `into`; returns the
/// manifest (the first entry).
fn take_out(from: impl Read, into: &Path, max_total: u64) -> Result<Manifest, String> {
    let mut archive = tar::Archive::new(from);
    let entries = archive
        .entries()
        .map_err(|e| format!("not a tar archive: {e}"))?;
    let mut manifest: Option<Manifest> = None;
    let mut total = 0u64;
    for (count, entry) in entries.enumerate() {
        let mut entry = entry.map_err(|e| format!("corrupt or cut archive: {e}"))?;
        if count as u64 >= MAX_ENTRIES {
            return Err(format!("more than {MAX_ENTRIES} entries: refused"));
        }
        let raw = entry
            .path()
            .map_err(|e| format!("an entry's name is unreadable: {e}"))?
            .into_owned();
        let shown = crate::printable::clean(&raw.display().to_string());
        let parts = checked(&raw)
            .ok_or_else(|| format!("entry {shown:?}: not a plain relative path: refused"))?;
        let kind = entry.header().entry_type();
        let size = entry
            .header()
            .size()
            .map_err(|e| format!("entry {shown:?}: {e}"))?;
        if count == 0 && (parts.len() != 1 || parts[0] != MANIFEST || !kind.is_file()) {
            return Err("not a dumptriage pack (its first entry is not the manifest)".into());
        }
        let target = parts.iter().fold(into.to_path_buf(), |p, c| p.join(c));
        if kind.is_dir() {
            std::fs::create_dir_all(&target)
                .map_err(|e| format!("cannot unpack {shown:?}: {e}"))?;
            continue;
        }
        if !kind.is_file() {
            return Err(format!(
                "entry {shown:?} is not a plain file or folder (tar type {:?}): refused",
                kind.as_byte() as char
            ));
        }
        total = total.saturating_add(size);
        if total > max_total {
            return Err(format!(
                "unpacks to more than {} MiB (at most 64 GiB, and the free space of the \
                 temporary folder less 1 GiB): refused",
                max_total >> 20
            ));
        }
        if count == 0 {
            if size > MAX_MANIFEST {
                return Err(format!(
                    "the manifest is larger than {} MiB: refused",
                    MAX_MANIFEST >> 20
                ));
            }
            let mut text = Vec::new();
            (&mut entry)
                .take(MAX_MANIFEST)
                .read_to_end(&mut text)
                .map_err(|e| format!("corrupt or cut archive: {e}"))?;
            let read: Manifest =
                serde_json::from_slice(&text).map_err(|e| format!("unreadable manifest: {e}"))?;
            if read.format != FORMAT {
                return Err(format!("not a dumptriage pack (format {:?})", read.format));
            }
            if read.version > VERSION {
                return Err(format!(
                    "a pack of version {} (this dumptriage reads up to {}): update dumptriage",
                    read.version, VERSION
                ));
            }
            manifest = Some(read);
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot unpack {shown:?}: {e}"))?;
        }
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
            .map_err(|e| match e.kind() {
                io::ErrorKind::AlreadyExists => format!("entry {shown:?} appears twice: refused"),
                _ => format!("cannot unpack {shown:?}: {e}"),
            })?;
        if let Some(read) = manifest.as_ref().filter(|_| count == 0) {
            let text = serde_json::to_vec_pretty(read).map_err(|e| e.to_string())?;
            io::Write::write_all(&mut out, &text)
                .map_err(|e| format!("cannot unpack {shown:?}: {e}"))?;
        } else {
            let copied = io::copy(&mut (&mut entry).take(size), &mut out)
                .map_err(|e| format!("corrupt or cut archive at {shown:?}: {e}"))?;
            if copied < size {
                return Err(format!("the archive is cut in {shown:?}"));
            }
        }
    }
    manifest.ok_or_else(|| "an empty archive: not a dumptriage pack".to_string())
}

/// Free space kept when a pack is taken out.
const MARGIN: u64 = 1 << 30;

/// The bytes free for this user in the file system of `dir`.
#[cfg(unix)]
fn free_space(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: a NUL-terminated path and a zeroed struct statvfs fills.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above; the result is checked.
    if unsafe { libc::statvfs(path.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    // The field types differ between systems (u32 on macOS): widened.
    #[allow(clippy::useless_conversion)]
    let (blocks, size) = (u64::from(stat.f_bavail), u64::from(stat.f_frsize));
    Some(blocks.saturating_mul(size))
}

#[cfg(not(unix))]
fn free_space(_: &Path) -> Option<u64> {
    None
}

/// The plain names of a relative path, or `None` when any part is not one
/// (a root, `..`, `.`, a drive, a backslash or colon, an empty name).
fn checked(path: &Path) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    for component in path.components() {
        let Component::Normal(name) = component else {
            return None;
        };
        let name = name.to_str()?;
        if name.is_empty() || name.contains(['\\', ':', '\0']) {
            return None;
        }
        parts.push(name.to_string());
    }
    (!parts.is_empty() && parts.len() <= MAX_DEPTH).then_some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Vec<u8> {
        serde_json::to_vec(&Manifest {
            format: super::FORMAT.into(),
            version: 1,
            tool: "test".into(),
            created: String::new(),
            inputs: Vec::new(),
            files: Vec::new(),
            left_out: Vec::new(),
        })
        .unwrap()
    }

    /// A tar stream with the manifest, then `entries` as (name, type, data):
    /// names are written into the header raw, as a hostile writer would.
    fn archive(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        let text = manifest();
        let mut header = tar::Header::new_ustar();
        header.set_size(text.len() as u64);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_path(MANIFEST).unwrap();
        header.set_cksum();
        builder.append(&header, &text[..]).unwrap();
        for (name, kind, data) in entries {
            let mut header = tar::Header::new_ustar();
            header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
            header.set_size(data.len() as u64);
            header.set_entry_type(*kind);
            if kind.is_symlink() {
                header.set_link_name("/etc/passwd").unwrap();
            }
            header.set_cksum();
            builder.append(&header, *data).unwrap();
        }
        builder.into_inner().unwrap()
    }

    #[test]
    fn hostile_entries_are_refused_and_nothing_is_written_outside() {
        let regular = tar::EntryType::Regular;
        for (name, kind) in [
            ("../escape", regular),
            ("/etc/escape", regular),
            ("a/../../escape", regular),
            ("a\\..\\escape", regular),
            ("c:escape", regular),
            ("link", tar::EntryType::Symlink),
            ("hard", tar::EntryType::Link),
            ("fifo", tar::EntryType::Fifo),
        ] {
            let outer = tempfile::tempdir().unwrap();
            let into = outer.path().join("in");
            std::fs::create_dir(&into).unwrap();
            let bytes = archive(&[(name, kind, b"x")]);
            let error = take_out(&bytes[..], &into, 1 << 20).unwrap_err();
            assert!(error.contains("refused"), "{name}: {error}");
            assert!(!outer.path().join("escape").exists(), "{name}");
        }
    }

    #[test]
    fn twice_the_same_name_too_much_data_and_a_cut_stream_are_errors() {
        let into = tempfile::tempdir().unwrap();
        let regular = tar::EntryType::Regular;
        let twice = archive(&[("a", regular, b"1"), ("a", regular, b"2")]);
        let error = take_out(&twice[..], into.path(), 1 << 20).unwrap_err();
        assert!(error.contains("twice"), "{error}");

        let into = tempfile::tempdir().unwrap();
        let big = vec![7u8; 4096];
        let bomb = archive(&[("a", regular, &big), ("b", regular, &big)]);
        let error = take_out(&bomb[..], into.path(), 6000).unwrap_err();
        assert!(error.contains("more than"), "{error}");

        let into = tempfile::tempdir().unwrap();
        let whole = archive(&[("a", regular, &big)]);
        let cut = &whole[..2048];
        assert!(take_out(cut, into.path(), 1 << 20).is_err());

        let into = tempfile::tempdir().unwrap();
        let ok = archive(&[("sub/a", regular, b"data")]);
        take_out(&ok[..], into.path(), 1 << 20).unwrap();
        assert_eq!(std::fs::read(into.path().join("sub/a")).unwrap(), b"data");
    }

    #[test]
    fn an_archive_that_does_not_start_with_the_manifest_is_no_pack() {
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_ustar();
        header.set_size(1);
        header.set_path("core").unwrap();
        header.set_cksum();
        builder.append(&header, &b"x"[..]).unwrap();
        let bytes = builder.into_inner().unwrap();
        let into = tempfile::tempdir().unwrap();
        let error = take_out(&bytes[..], into.path(), 1 << 20).unwrap_err();
        assert!(error.contains("not a dumptriage pack"), "{error}");
    }
}
