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
//! A server that times out, refuses the connection or answers with a server
//! error is given up for the rest of the run: one warning, not a wait per
//! module.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// The largest file a server may send (a big PDB is a few GB).
const MAX_DOWNLOAD: u64 = 8 << 30;

/// One symbol server and the cache its downloads go to.
pub struct Server {
    /// The URL, ending with `/`.
    base: String,
    cache: PathBuf,
    agent: ureq::Agent,
    /// Why the server was given up, once it has been.
    failed: Mutex<Option<String>>,
}

/// The answer to one request.
#[derive(Debug)]
pub enum Fetched {
    /// The file, in the cache; `true` when it was already there.
    File(PathBuf, bool),
    NotFound,
    /// The server could not answer (this time or earlier in the run).
    Failed(String),
}

impl Server {
    pub fn new(url: &str, cache: &Path, timeout: Duration) -> Server {
        let mut base = url.to_string();
        if !base.ends_with('/') {
            base.push('/');
        }
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(timeout)
            .timeout(timeout)
            .user_agent(concat!("dumptriage/", env!("CARGO_PKG_VERSION")))
            .build();
        Server {
            base,
            cache: cache.to_path_buf(),
            agent,
            failed: Mutex::new(None),
        }
    }

    pub fn url(&self) -> &str {
        &self.base
    }

    /// The URL of a relative path on this server.
    pub fn url_of(&self, rel: &[&str]) -> String {
        let encoded: Vec<String> = rel.iter().map(|c| encode(c)).collect();
        format!("{}{}", self.base, encoded.join("/"))
    }

    /// Where `rel` is cached.
    pub fn cache_path(&self, rel: &[&str]) -> PathBuf {
        rel.iter().fold(self.cache.clone(), |p, c| p.join(c))
    }

    /// Gets `rel` (path components already checked by the caller) from the
    /// cache, or else from the server into the cache.
    pub fn fetch(&self, rel: &[&str]) -> Fetched {
        let cached = self.cache_path(rel);
        if cached.is_file() {
            return Fetched::File(cached, true);
        }
        if let Some(why) = self.failed.lock().ok().and_then(|f| f.clone()) {
            return Fetched::Failed(format!("not asked: it failed earlier in this run ({why})"));
        }
        let url = self.url_of(rel);
        match self.agent.get(&url).call() {
            Ok(response) => match self.store(response, &cached) {
                Ok(()) => Fetched::File(cached, false),
                Err(e) => Fetched::Failed(format!("cannot save {url} in the cache: {e}")),
            },
            Err(ureq::Error::Status(code, _)) if code < 500 => Fetched::NotFound,
            Err(ureq::Error::Status(code, _)) => self.give_up(format!("HTTP {code} for {url}")),
            Err(ureq::Error::Transport(t)) => self.give_up(format!("{url}: {t}")),
        }
    }

    fn give_up(&self, why: String) -> Fetched {
        if let Ok(mut failed) = self.failed.lock() {
            failed.get_or_insert_with(|| why.clone());
        }
        Fetched::Failed(why)
    }

    /// Writes a download beside its final place, then renames it there, so
    /// neither a concurrent run nor an interrupted one leaves half a file in
    /// the cache.
    fn store(&self, response: ureq::Response, path: &Path) -> std::io::Result<()> {
        let dir = path.parent().unwrap_or(&self.cache);
        std::fs::create_dir_all(dir)?;
        let mut temp = tempfile::NamedTempFile::new_in(dir)?;
        let copied = std::io::copy(
            &mut response.into_reader().take(MAX_DOWNLOAD),
            temp.as_file_mut(),
        )?;
        if copied == 0 {
            return Err(std::io::Error::other("empty answer"));
        }
        temp.persist(path).map_err(|e| e.error)?;
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
