//! A symbol reader behind a lock that survives the reader's own panics.
//!
//! The PDB and DWARF readers are third-party parsers fed files from anyone;
//! some corrupt files make them panic (fuzz/read_pdb, fuzz/read_elf). A
//! panic while a look-up held a plain `Mutex` poisoned it, and every later
//! look-up in that file returned nothing, silently, for the rest of the
//! batch. Here a panic is caught where it happens: that one look-up has no
//! answer, the lock is taken back from its poisoned state (the readers fill
//! their caches lazily, so a look-up cut short leaves at most an entry
//! unfilled, to be filled by the next one), and the first failure is kept
//! as a warning naming the file, for the reports of the dumps that use it
//! ([`NativeSymbols::failure`](super::NativeSymbols::failure)).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, OnceLock, PoisonError};

pub(crate) struct Guarded<T> {
    reader: Mutex<T>,
    /// The file, as the warning names it.
    file: String,
    /// Which reader, as the warning names it (`PDB`, `DWARF`).
    kind: &'static str,
    /// The warning about the first look-up that failed.
    failure: OnceLock<String>,
}

impl<T> Guarded<T> {
    pub(crate) fn new(reader: T, kind: &'static str, file: String) -> Guarded<T> {
        Guarded {
            reader: Mutex::new(reader),
            file,
            kind,
            failure: OnceLock::new(),
        }
    }

    /// `look_up` on the reader; `None` when it has no answer or panicked.
    pub(crate) fn with<R>(&self, rva: u64, look_up: impl FnOnce(&mut T) -> Option<R>) -> Option<R> {
        let mut reader = self.reader.lock().unwrap_or_else(PoisonError::into_inner);
        match catch_unwind(AssertUnwindSafe(|| look_up(&mut reader))) {
            Ok(answer) => answer,
            Err(_) => {
                self.failure.get_or_init(|| {
                    format!(
                        "{}: the {} reader failed looking up {rva:#x} (a damaged file?): that \
                         address gets no name from it; the file's other look-ups go on",
                        self.file, self.kind
                    )
                });
                None
            }
        }
    }

    /// The file, as warnings name it.
    pub(crate) fn file(&self) -> &str {
        &self.file
    }

    /// The warning about the first look-up in this file that failed.
    pub(crate) fn failure(&self) -> Option<String> {
        self.failure.get().cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader made to panic on one address: that look-up has no answer,
    /// the next ones still do (the lock is not left poisoned), and the
    /// failure is noted once.
    #[test]
    fn a_panicking_look_up_does_not_disable_the_file() {
        let guarded = Guarded::new(0u32, "test", "broken.pdb".to_string());
        let look_up = |rva: u64| {
            guarded.with(rva, |calls: &mut u32| {
                *calls += 1;
                assert!(rva != 0x666, "the reader's own panic");
                Some(rva + 1)
            })
        };
        assert_eq!(look_up(0x10), Some(0x11));
        assert_eq!(guarded.failure(), None);
        assert_eq!(look_up(0x666), None);
        let failure = guarded.failure().unwrap();
        assert!(failure.starts_with("broken.pdb: the test reader failed looking up 0x666"));
        assert_eq!(look_up(0x20), Some(0x21));
        assert_eq!(look_up(0x666), None);
        assert_eq!(look_up(0x30), Some(0x31));
        // Every look-up reached the reader, the panicking ones included.
        assert_eq!(*guarded.reader.lock().unwrap(), 5);
    }
}
