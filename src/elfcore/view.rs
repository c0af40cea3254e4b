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
    pub(crate) fn new(streams: &[u8], head: u64, core: &File, len: u64) -> io::Result<View> {
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

    // SAFETY: the raw pointer is the only thing that keeps `Inner` from
    // being Send: it points to a mapping this value alone owns (unmapped
    // once, in `drop`), and no thread-local state is tied to it, so the
    // value may move to and be dropped on another thread.
    unsafe impl Send for Inner {}
    // SAFETY: after `new` returns, nothing writes through the pointer
    // (the head is made read-only and the core is mapped read-only), and
    // `&Inner` only hands out `&[u8]`: shared reads from several threads.
    unsafe impl Sync for Inner {}

    impl Inner {
        pub(super) fn new(streams: &[u8], head: u64, core: &File, len: u64) -> io::Result<Inner> {
            let head = usize::try_from(head).map_err(io::Error::other)?;
            let len = usize::try_from(len).map_err(io::Error::other)?;
            let total = head
                .checked_add(len)
                .ok_or_else(|| io::Error::other("core too large to map"))?;
            if streams.len() > head {
                return Err(io::Error::other("streams larger than their area"));
            }
            // SAFETY: asks for a fresh anonymous mapping (no address hint,
            // no file); it touches no memory of ours, and MAP_FAILED is
            // checked below.
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
            // SAFETY: the destination is the start of our own writable
            // mapping of `total` bytes and `streams.len() <= head <= total`
            // (checked above); a fresh mapping cannot overlap `streams`.
            unsafe { std::ptr::copy_nonoverlapping(streams.as_ptr(), inner.ptr, streams.len()) };
            if len > 0 {
                // SAFETY: MAP_FIXED replaces only `[ptr + head, ptr +
                // total)`, the tail of the mapping made above and owned by
                // `inner` (no other value points into it), with the file,
                // read-only. `ptr.add(head)` stays inside that mapping
                // since `head <= total`. A `head` that is not a multiple of
                // the page size makes the call fail (checked), not map
                // elsewhere.
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
            // SAFETY: changes the protection of our own mapping's first
            // `head` bytes only; nothing holds a mutable reference into
            // them. A failure would leave them writable, which is harmless.
            unsafe { libc::mprotect(inner.ptr.cast(), head, libc::PROT_READ) };
            Ok(inner)
        }

        pub(super) fn bytes(&self) -> &[u8] {
            // SAFETY: `ptr` is the non-null start of `len` bytes mapped
            // readable (and initialized: zero-filled or the file's) for the
            // life of `self`, which the slice borrows; nothing writes them.
            // The one condition outside our control: another process
            // truncating or rewriting the core while it is mapped (a read
            // past a shrunk file's end faults; a rewrite changes bytes
            // under a shared slice). Cores are not rewritten while
            // analysed: the assumption every memory-mapped reader makes.
            unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
        }
    }

    impl Drop for Inner {
        fn drop(&mut self) {
            // SAFETY: unmaps exactly the range `new` mapped, once; no slice
            // of it outlives `self` (`bytes` borrows `self`).
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
            // SAFETY: the map's bytes must not change while it lives: the
            // file is an anonymous temporary file of our own (deleted on
            // close, never written again after the copy), so nothing else
            // writes or truncates it.
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
