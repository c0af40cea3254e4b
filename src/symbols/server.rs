//! HTTP symbol servers, with an on-disk cache.
//!
//! A server is asked for files by path relative to its URL, in the layouts
//! minidump-processor's HTTP supplier and Microsoft's symbol servers use:
//! `DEBUG_FILE/DEBUG_ID/NAME.sym`, `NAME.pdb/DEBUG_ID/NAME.pdb`,
//! `NAME.dll/CODE_ID/NAME.dll`, and `CODE_FILE/CODE_ID/NAME.sym` (a code-id
//! lookup, which Tecken answers with a redirect to the debug-id path). A
//! download is written to the cache under the same relative path, so the
//! cache is itself a symbol store that later runs read without the network.
//!
//! The client is ureq, blocking and with a timeout on every request, rather
//! than minidump-unwind's `http` feature: that supplier reports every
//! failure as "not found" (so a dead server could not be told from a
//! missing file, and no warning given), needs a tokio runtime around the
//! whole analysis, and sends its code-id lookups without a timeout.
//!
//! A server that cannot be reached, stops sending in the middle of an
//! answer, or answers with a server error is given up for the rest of the
//! run: one warning, not a wait per module. The connect and read limits are
//! separate, and the read limit is per read: a big PDB that keeps arriving
//! is never cut, a server that goes silent is.
//!
//! A download is written to a temporary file in the cache folder, checked
//! against the identity of the module it was asked for, and only then
//! renamed into place, under the path built from that module's own ids:
//! nothing in a server's answer chooses where it is kept, so one server
//! cannot put files in a shared cache for modules it was not asked about.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use super::log::Refusal;
use super::paths::Rel;

/// The largest file a server may send by default (a big PDB is a few GB).
pub const DEFAULT_MAX_DOWNLOAD: u64 = 4 << 30;

/// How servers are asked.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Longest wait for a connection.
    pub connect_timeout: Duration,
    /// Longest silence while waiting for an answer or between two reads
    /// of it.
    pub read_timeout: Duration,
    /// Largest file downloaded.
    pub max_download: u64,
}

/// Checks a file against the identity of the module it was asked for.
pub(super) type Check<'a> = &'a dyn Fn(&Path) -> Result<(), Refusal>;

/// One symbol server and the cache its downloads go to.
pub struct Server {
    /// The URL, ending with `/`.
    base: String,
    cache: PathBuf,
    agent: ureq::Agent,
    max_download: u64,
    /// Why the server was given up, once it has been.
    failed: Mutex<Option<String>>,
}

/// The answer to one request.
#[derive(Debug)]
pub(super) enum Fetched {
    /// The file, in the cache and checked; `true` when it was already there.
    File(PathBuf, bool),
    NotFound,
    /// The server sent a file that is not the module's (or too large); it
    /// was not kept.
    Refused(Refusal),
    /// The server could not answer (this time or earlier in the run).
    Failed(String),
}

/// Why a download did not end in the cache.
enum Failure {
    /// The server stopped sending or the connection broke.
    Server(String),
    Refused(Refusal),
    /// The cache folder could not be written.
    Cache(std::io::Error),
}

impl Server {
    pub fn new(url: &str, cache: &Path, limits: Limits) -> Server {
        let mut base = url.to_string();
        if !base.ends_with('/') {
            base.push('/');
        }
        // No overall limit: ureq's `timeout` would cut a big download that
        // is still arriving. The read limit applies to every read.
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(limits.connect_timeout)
            .timeout_read(limits.read_timeout)
            .timeout_write(limits.read_timeout)
            .user_agent(concat!("dumptriage/", env!("CARGO_PKG_VERSION")))
            .build();
        Server {
            base,
            cache: cache.to_path_buf(),
            agent,
            max_download: limits.max_download,
            failed: Mutex::new(None),
        }
    }

    pub fn url(&self) -> &str {
        &self.base
    }

    /// The URL of a relative path on this server.
    pub(super) fn url_of(&self, rel: &Rel) -> String {
        let encoded: Vec<String> = rel.parts().map(encode).collect();
        format!("{}{}", self.base, encoded.join("/"))
    }

    /// Gets `rel` from the cache, or else from the server into the cache.
    /// `check` is the identity check of the module `rel` was built from: a
    /// file that fails it is neither used nor kept (one already in the
    /// cache is replaced by a good download).
    pub(super) fn fetch(&self, rel: &Rel, check: Check<'_>) -> Fetched {
        let cached = rel.under(&self.cache);
        if cached.is_file() && check(&cached).is_ok() {
            return Fetched::File(cached, true);
        }
        if let Some(why) = self.failed.lock().ok().and_then(|f| f.clone()) {
            return Fetched::Failed(format!("not asked: it failed earlier in this run ({why})"));
        }
        let url = self.url_of(rel);
        let response = match self.agent.get(&url).call() {
            Ok(response) => response,
            Err(ureq::Error::Status(code, _)) if code < 500 => return Fetched::NotFound,
            Err(ureq::Error::Status(code, _)) => {
                return self.give_up(format!("HTTP {code} for {url}"))
            }
            Err(ureq::Error::Transport(t)) => return self.give_up(format!("{url}: {t}")),
        };
        match self.download(response, &cached, check) {
            Ok(()) => Fetched::File(cached, false),
            Err(Failure::Server(why)) => self.give_up(format!("{url}: {why}")),
            Err(Failure::Refused(refusal)) => Fetched::Refused(refusal),
            Err(Failure::Cache(e)) => Fetched::Failed(format!(
                "cannot save {url} in the cache {}: {e}",
                self.cache.display()
            )),
        }
    }

    fn give_up(&self, why: String) -> Fetched {
        if let Ok(mut failed) = self.failed.lock() {
            failed.get_or_insert_with(|| why.clone());
        }
        Fetched::Failed(why)
    }

    /// Writes the answer to a temporary file in the cache folder (so a
    /// concurrent or interrupted run never sees half a file), at most
    /// `max_download` bytes, checks it, and renames it into place.
    fn download(
        &self,
        response: ureq::Response,
        path: &Path,
        check: Check<'_>,
    ) -> Result<(), Failure> {
        let limit = self.max_download;
        let too_large = || Failure::Refused(Refusal::TooLarge { limit });
        let announced = response
            .header("Content-Length")
            .and_then(|n| n.trim().parse::<u64>().ok());
        if announced.is_some_and(|n| n > limit) {
            return Err(too_large());
        }
        // In the cache's top folder (the same file system as its final
        // place); the file's own folders are made only for a file kept.
        std::fs::create_dir_all(&self.cache).map_err(Failure::Cache)?;
        let mut temp = tempfile::Builder::new()
            .prefix(".dumptriage-download-")
            .tempfile_in(&self.cache)
            .map_err(Failure::Cache)?;
        let mut body = response.into_reader();
        let mut buffer = vec![0u8; 64 * 1024];
        let mut total: u64 = 0;
        loop {
            let n = match body.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(Failure::Server(format!(
                        "the answer stopped after {total} bytes ({e})"
                    )))
                }
            };
            total += n as u64;
            if total > limit {
                return Err(too_large());
            }
            temp.write_all(&buffer[..n]).map_err(Failure::Cache)?;
        }
        if total == 0 {
            return Err(Failure::Refused(Refusal::Corrupt(
                "empty answer".to_string(),
            )));
        }
        temp.as_file_mut().flush().map_err(Failure::Cache)?;
        check(temp.path()).map_err(Failure::Refused)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(Failure::Cache)?;
        }
        temp.persist(path).map_err(|e| Failure::Cache(e.error))?;
        Ok(())
    }
}

/// Bytes of a path component sent as they are: RFC 3986's unreserved
/// characters and `+`; everything else (separators, spaces, `?`, ...) is
/// percent-encoded, so a name from a dump stays one path component.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'+');

fn encode(component: &str) -> String {
    utf8_percent_encode(component, COMPONENT).to_string()
}

/// Whether `s` is a URL this module can ask (`--symbols` takes folders and
/// URLs alike).
pub fn is_url(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_a_dump_cannot_leave_their_path_component() {
        assert_eq!(encode("a b/../c?.pdb"), "a%20b%2F..%2Fc%3F.pdb");
        assert!(is_url("HTTPS://symbols.example/"));
        assert!(!is_url("/srv/symbols"));
    }
}
