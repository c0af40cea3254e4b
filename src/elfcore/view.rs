//! One contiguous view of "minidump streams, then the whole core file",
//! which the minidump reader takes as a minidump whose memory list points
//! into the core's segments.
//!
//! Why a view and not minidump-processor's traits: the processor takes a
//! `Minidump` (there is no trait for "a source of threads, modules and
//! memory"), so a core either becomes a minidump or gets its own walker,
//! symbolizer glue and report builder. Becoming one reuses every step we
//! already test (unwinding, stack search, wait chains, exit phase); and a
//! minidump's Memory64List, like a core, keeps its memory as one run of
//! bytes in address-list order, so the core's own bytes can *be* that run.
//!
//! On Unix the core is mapped (read-only, private) right after an
//! anonymous mapping holding the streams: no byte of the core is copied,
//! and a 4 GB core costs only the pages the analysis touches. Elsewhere the
//! streams and the core are copied into one temporary file, then mapped.

use std::fs::File;
use std::io;
use std::ops::Deref;

/// Where the core's bytes start: a multiple of every page size in use
/// (4, 16 and 64 KiB).
pub(crate) fn head_size(streams: usize) -> u64 {
    (streams as u64).next_multiple_of(64 << 10)
}

pub(crate) struct View {
    inner: imp::Inner,
}

impl Deref for View {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.inner.bytes()
    }
}

impl View {
    /// `streams` (at most `head` bytes, padded with zeros), then the first
    /// `len` bytes of `core`.
    pub fn new(streams: &[u8], head: u64, core: &File, len: u64) -> io::Result<View> {
        Ok(View {
            inner: imp::Inner::new(streams, head, core, len)?,
        })
    }
}

#[cfg(unix)]
mod imp {
    use std::fs::File;
    use std::io;
    use std::os::fd::AsRawFd;

    pub(super) struct Inner {
        ptr: *mut u8,
        len: usize,
    }

    // SAFETY: the mapping is read-only after construction and owned by
    // this value alone.
    unsafe impl Send for Inner {}
    unsafe impl Sync for Inner {}

    impl Inner {
        pub fn new(streams: &[u8], head: u64, core: &File, len: u64) -> io::Result<Inner> {
            let head = usize::try_from(head).map_err(io::Error::other)?;
            let len = usize::try_from(len).map_err(io::Error::other)?;
            let total = head
                .checked_add(len)
                .ok_or_else(|| io::Error::other("core too large to map"))?;
            if streams.len() > head {
                return Err(io::Error::other("streams larger than their area"));
            }
            // SAFETY: a fresh anonymous mapping of `total` bytes, checked.
            let ptr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    total,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if ptr == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            let inner = Inner {
                ptr: ptr.cast(),
                len: total,
            };
            // SAFETY: `streams.len() <= head <= total` bytes of our own
            // writable mapping.
            unsafe { std::ptr::copy_nonoverlapping(streams.as_ptr(), inner.ptr, streams.len()) };
            if len > 0 {
                // SAFETY: replaces the tail of our own mapping (MAP_FIXED
                // inside a range we hold) with the file, read-only; `head`
                // is a multiple of the page size.
                let at = unsafe {
                    libc::mmap(
                        inner.ptr.add(head).cast(),
                        len,
                        libc::PROT_READ,
                        libc::MAP_PRIVATE | libc::MAP_FIXED,
                        core.as_raw_fd(),
                        0,
                    )
                };
                if at == libc::MAP_FAILED {
                    return Err(io::Error::last_os_error());
                }
            }
            // SAFETY: our own mapping's first `head` bytes.
            unsafe { libc::mprotect(inner.ptr.cast(), head, libc::PROT_READ) };
            Ok(inner)
        }

        pub fn bytes(&self) -> &[u8] {
            // SAFETY: `len` bytes mapped readable for the life of `self`.
            // Reading past the end of a file that shrank after it was
            // mapped would fault: cores are not rewritten while analysed,
            // the same assumption every memory-mapped reader makes.
            unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
        }
    }

    impl Drop for Inner {
        fn drop(&mut self) {
            // SAFETY: unmaps exactly what `new` mapped.
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
        }
    }
}

#[cfg(not(unix))]
mod imp {
    use std::fs::File;
    use std::io::{self, Read, Seek, SeekFrom, Write};

    pub(super) struct Inner {
        map: memmap2::Mmap,
    }

    impl Inner {
        pub fn new(streams: &[u8], head: u64, core: &File, len: u64) -> io::Result<Inner> {
            let mut copy = tempfile::tempfile()?;
            copy.write_all(streams)?;
            copy.set_len(head)?;
            copy.seek(SeekFrom::Start(head))?;
            let mut source = core.try_clone()?;
            source.seek(SeekFrom::Start(0))?;
            io::copy(&mut source.take(len), &mut copy)?;
            // SAFETY: a private temporary file nobody else writes.
            let map = unsafe { memmap2::Mmap::map(&copy)? };
            Ok(Inner { map })
        }

        pub fn bytes(&self) -> &[u8] {
            &self.map
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_view_is_the_streams_then_the_file() {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(b"core bytes").unwrap();
        let head = head_size(5);
        let view = View::new(b"MDMP!", head, &file, 10).unwrap();
        assert_eq!(&view[..5], b"MDMP!");
        assert!(view[5..head as usize].iter().all(|b| *b == 0));
        assert_eq!(&view[head as usize..], b"core bytes");
    }
}
