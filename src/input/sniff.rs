//! What a file is, by its first bytes: what the OS kept is often named in
//! ways no extension tells (systemd-coredump's `core.NAME.UID.BOOT.PID.TIME.zst`,
//! a core copied out as `crash-1234`, apport's `_usr_bin_python3.1000.crash`,
//! WER's `Report.wer`), so folders are searched by content too.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// A kind of input recognised by content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An ELF core, plain or compressed (zstd, lz4, xz) as
    /// systemd-coredump keeps it.
    Core,
    /// A `dumptriage pack` archive.
    Pack,
    /// An apport crash report (`/var/crash/*.crash`).
    Apport,
    /// A Windows Error Reporting `Report.wer`.
    Wer,
}

/// Bytes read to tell: an ELF header, apport's first field, or a
/// `Report.wer` first line in UTF-16.
const HEAD: usize = 64;

/// The kind of the file at `path`, or `None` for anything else (including
/// minidumps and text, which have their own ways in).
pub(crate) fn kind(path: &Path) -> Option<Kind> {
    // Only regular files: opening a FIFO would wait for a writer.
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut head = Vec::with_capacity(HEAD);
    File::open(path)
        .ok()?
        .take(HEAD as u64)
        .read_to_end(&mut head)
        .ok()?;
    if is_apport(&head) {
        return Some(Kind::Apport);
    }
    if is_wer(&head) {
        return Some(Kind::Wer);
    }
    if is_elf_core(&head) {
        return Some(Kind::Core);
    }
    if !crate::elfcore::looks_like_core(&head) {
        return None;
    }
    // Compressed: a pack, or a core, or neither (only the content tells).
    if crate::artifact::unpack::is_pack(path) {
        return Some(Kind::Pack);
    }
    is_elf_core(&unpacked_head(path, &head)?).then_some(Kind::Core)
}

/// An apport report starts `ProblemType: WORD` (Crash, Package,
/// KernelOops, ...), then another `Key: value` field.
fn is_apport(head: &[u8]) -> bool {
    let Some(rest) = head.strip_prefix(b"ProblemType: ") else {
        return false;
    };
    let word = rest
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    let Some(next) = rest[word..].strip_prefix(b"\n") else {
        return false;
    };
    let key = next
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count();
    word > 0 && key > 0 && next.get(key) == Some(&b':')
}

/// `Report.wer` starts with `Version=` in UTF-16LE after a byte-order
/// mark (as Windows writes it), or in plain text.
fn is_wer(head: &[u8]) -> bool {
    const UTF16: &[u8] = b"\xff\xfeV\0e\0r\0s\0i\0o\0n\0=\0";
    head.starts_with(UTF16)
        || head.starts_with(b"Version=")
        || head.starts_with(b"\xef\xbb\xbfVersion=")
}

/// An ELF file of type ET_CORE, either byte order.
fn is_elf_core(head: &[u8]) -> bool {
    head.starts_with(b"\x7fELF")
        && match head.get(5) {
            Some(1) => head.get(16..18) == Some(&[4, 0]),
            Some(2) => head.get(16..18) == Some(&[0, 4]),
            _ => false,
        }
}

/// The first bytes of a compressed file, decompressed.
fn unpacked_head(path: &Path, head: &[u8]) -> Option<Vec<u8>> {
    let file = std::io::BufReader::new(File::open(path).ok()?);
    let decoder: Box<dyn Read> = match head {
        [0x28, 0xb5, 0x2f, 0xfd, ..] => {
            Box::new(zstd::stream::read::Decoder::with_buffer(file).ok()?)
        }
        [0x04, 0x22, 0x4d, 0x18, ..] => Box::new(lz4_flex::frame::FrameDecoder::new(file)),
        [0xfd, b'7', b'z', b'X', b'Z', 0, ..] => Box::new(liblzma::read::XzDecoder::new(file)),
        _ => return None,
    };
    let mut out = Vec::with_capacity(HEAD);
    decoder.take(HEAD as u64).read_to_end(&mut out).ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn kinds_by_content_and_look_alikes_that_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let mut core = vec![0u8; 64];
        core[..4].copy_from_slice(b"\x7fELF");
        core[4] = 2;
        core[5] = 1;
        core[16] = 4;
        let mut executable = core.clone();
        executable[16] = 3; // ET_DYN: a library, not a core
        let wer: Vec<u8> = "\u{feff}Version=1\r\nEventType=APPCRASH\r\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let cases: Vec<(&str, Vec<u8>, Option<Kind>)> = vec![
            ("crash-1234", core.clone(), Some(Kind::Core)),
            ("lib.so", executable, None),
            (
                "c.zst",
                zstd::encode_all(&core[..], 3).unwrap(),
                Some(Kind::Core),
            ),
            (
                "t.zst",
                zstd::encode_all(&b"just text, compressed"[..], 3).unwrap(),
                None,
            ),
            (
                "_usr_bin_x.0.crash",
                b"ProblemType: Crash\nDate: x\n".to_vec(),
                Some(Kind::Apport),
            ),
            ("notes.txt", b"ProblemType is a word\n".to_vec(), None),
            (
                "n.txt",
                b"ProblemType: a word in a note\nDate: x\n".to_vec(),
                None,
            ),
            ("Report.wer", wer, Some(Kind::Wer)),
            ("x.dmp", b"MDMP\x93\xa7".to_vec(), None),
            ("empty", Vec::new(), None),
        ];
        for (name, bytes, want) in cases {
            let path = dir.path().join(name);
            std::fs::File::create(&path)
                .unwrap()
                .write_all(&bytes)
                .unwrap();
            assert_eq!(kind(&path), want, "{name}");
        }
        let mut lz4 = lz4_flex::frame::FrameEncoder::new(Vec::new());
        lz4.write_all(&core).unwrap();
        let path = dir.path().join("c.lz4");
        std::fs::write(&path, lz4.finish().unwrap()).unwrap();
        assert_eq!(kind(&path), Some(Kind::Core));
    }
}
