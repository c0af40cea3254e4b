//! Compressed cores (systemd-coredump keeps them as `.zst`, `.lz4` or
//! `.xz`), recognised by their content, decompressed once into a private
//! temporary file that the system removes when it is closed (it has no
//! name: nothing is left behind, even if the run is killed).

use std::fs::File;
use std::io::{self, Read, Write};

/// A core larger than this once decompressed is refused: a hostile or
/// corrupt stream must not fill the disk.
pub(crate) const MAX_UNPACKED: u64 = 64 << 30;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Packing {
    Zstd,
    Lz4,
    Xz,
}

impl Packing {
    pub(super) fn sniff(head: &[u8]) -> Option<Packing> {
        match head {
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Some(Packing::Zstd),
            [0x04, 0x22, 0x4d, 0x18, ..] => Some(Packing::Lz4),
            [0xfd, b'7', b'z', b'X', b'Z', 0, ..] => Some(Packing::Xz),
            _ => None,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Packing::Zstd => "zstd",
            Packing::Lz4 => "lz4",
            Packing::Xz => "xz",
        }
    }
}

/// What decompression gave: the file, and whether the stream ended early
/// (a corrupt or cut archive: what came out before is kept).
pub(crate) struct Unpacked {
    pub file: File,
    pub len: u64,
    pub broken: Option<String>,
}

pub(crate) fn unpack(source: File, packing: Packing) -> io::Result<Unpacked> {
    let source = io::BufReader::with_capacity(1 << 20, source);
    let decoder: Box<dyn Read> = match packing {
        Packing::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(source)?),
        Packing::Lz4 => Box::new(lz4_flex::frame::FrameDecoder::new(source)),
        Packing::Xz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(source)),
    };
    let mut out = tempfile::tempfile()?;
    let mut writer = io::BufWriter::with_capacity(1 << 20, &mut out);
    let (len, broken) = copy_bounded(decoder, &mut writer, MAX_UNPACKED)?;
    writer.flush()?;
    drop(writer);
    Ok(Unpacked {
        file: out,
        len,
        broken,
    })
}

/// Copies at most `limit` bytes; a read error ends the copy (the error is
/// returned as text, the bytes before it are kept); a write error (a full
/// disk) is an error.
fn copy_bounded(
    mut from: impl Read,
    to: &mut impl Write,
    limit: u64,
) -> io::Result<(u64, Option<String>)> {
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok((total, None)),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Ok((total, Some(e.to_string()))),
        };
        total += n as u64;
        if total > limit {
            return Err(io::Error::other(format!(
                "decompresses to more than {} GiB: refused",
                limit >> 30
            )));
        }
        to.write_all(&buf[..n])?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_stops_a_stream_that_never_ends() {
        let endless = io::repeat(0);
        let mut sink = io::sink();
        let err = copy_bounded(endless, &mut sink, 4 << 20).unwrap_err();
        assert!(err.to_string().contains("more than"), "{err}");
    }

    #[test]
    fn a_corrupt_stream_keeps_what_came_before() {
        let mut packed = zstd::encode_all(&[7u8; 100_000][..], 3).unwrap();
        let cut = packed.len() / 2;
        packed.truncate(cut);
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&packed).unwrap();
        use std::io::Seek;
        file.rewind().unwrap();
        let unpacked = unpack(file, Packing::Zstd).unwrap();
        assert!(unpacked.broken.is_some());
        assert!(unpacked.len < 100_000);
    }
}
