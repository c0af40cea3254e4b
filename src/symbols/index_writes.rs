//! The indexes of big symbol files being written on other threads while
//! the analysis goes on, owned by the run rather than by the process: the
//! run's symbol settings hold the list, and whoever owns the run waits for
//! it once the reports are out.

/// An index being made: the file it is made of, as shown, and its thread.
type Write = (String, std::thread::JoinHandle<Result<usize, String>>);

/// The indexes of big PDB and DWARF files being made on other threads
/// while the analysis goes on (`native::index`). Clones share one list:
/// the run's [`SymbolConfig`](super::SymbolConfig) holds it, and its owner
/// waits for the writes once the reports are out ([`IndexWrites::wait`]).
#[derive(Clone, Debug, Default)]
pub struct IndexWrites(std::sync::Arc<std::sync::Mutex<Vec<Write>>>);

impl IndexWrites {
    /// Adds the write of the index of `shown` on its thread.
    pub(crate) fn push(
        &self,
        shown: String,
        handle: std::thread::JoinHandle<Result<usize, String>>,
    ) {
        if let Ok(mut writes) = self.0.lock() {
            writes.push((shown, handle));
        }
    }

    /// How many writes are still going on (to say why a wait comes).
    pub fn unfinished(&self) -> usize {
        self.0
            .lock()
            .map(|writes| writes.iter().filter(|(_, h)| !h.is_finished()).count())
            .unwrap_or(0)
    }

    /// Waits for every write and says, one line each, why any index could
    /// not be written.
    pub fn wait(&self) -> Vec<String> {
        let writes = self
            .0
            .lock()
            .map(|mut w| std::mem::take(&mut *w))
            .unwrap_or_default();
        writes
            .into_iter()
            .filter_map(|(shown, handle)| match handle.join() {
                Ok(Ok(_)) => None,
                Ok(Err(why)) => Some(format!(
                    "{shown}: no symbol index written ({why}); later runs read it whole"
                )),
                Err(_) => Some(format!(
                    "{shown}: no symbol index written (the indexer failed); later runs read it whole"
                )),
            })
            .collect()
    }
}
