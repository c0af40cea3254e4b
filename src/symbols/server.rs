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
//! Microsoft-style servers answer the way symstore left the store:
//!
//! - a file stored with `/compress` is a CAB archive under the name with
//!   its last character replaced by `_` (`ntdll.pd_`, `ntdll.dl_`,
//!   `ntdll.sy_`); it is asked for when the plain name is not there, and
//!   unpacked (MSZIP or LZX, through the `cab` crate) before the check;
//! - a pointer store answers `file.ptr`: `PATH:` followed to a local
//!   absolute path only (never a network share: the same rule as module
//!   paths from a dump), `MSG:` reported as a warning;
//! - a two-tier store (`index2.txt` at its root) keeps `NAME/ID/FILE` under
//!   `NA/`, the first two characters of the name lower-cased; the root is
//!   asked for `index2.txt` once per run.
//!
//! debuginfod servers are the same client asked for
//! `buildid/BUILD_ID/debuginfo` and `.../executable`, with no such variants.
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

use super::log::{Outage, Refusal};
use super::paths::Rel;

/// The largest file a server may send by default (a big PDB is a few GB).
pub(crate) const DEFAULT_MAX_DOWNLOAD: u64 = 4 << 30;

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
    /// Whether the server is a two-tier store, once asked.
    two_tier: Mutex<Option<bool>>,
}

/// The largest `file.ptr` read (a path or a message).
const MAX_POINTER: u64 = 4096;

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
    Failed(Outage),
}

/// A transport error with the URL said once (ureq's own message may
/// start with it).
fn transport(url: &str, error: &ureq::Transport) -> String {
    let text = error.to_string();
    let why = text.strip_prefix(&format!("{url}: ")).unwrap_or(&text);
    format!("{url}: {why}")
}

/// Why a download did not end in the cache.
pub(super) enum Failure {
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
            two_tier: Mutex::new(None),
        }
    }

    pub fn url(&self) -> &str {
        &self.base
    }

    /// The URL of a relative path on this server (in its two-tier
    /// spelling once the server is known to be one).
    pub(super) fn url_of(&self, rel: &Rel) -> String {
        let two_tier = self.two_tier.lock().ok().and_then(|t| *t) == Some(true);
        self.url_of_exactly(&rel.in_store(two_tier))
    }

    fn url_of_exactly(&self, rel: &Rel) -> String {
        let encoded: Vec<String> = rel.parts().map(encode).collect();
        format!("{}{}", self.base, encoded.join("/"))
    }

    /// Gets `rel` from the cache, or else from the server into the cache:
    /// the file, else its CAB-compressed form, else its `file.ptr` (see
    /// the module's notes). `check` is the identity check of the module
    /// `rel` was built from: a file that fails it is neither used nor kept
    /// (one already in the cache is replaced by a good download).
    pub(super) fn fetch(&self, rel: &Rel, check: Check<'_>) -> Fetched {
        self.fetch_as(rel, rel, true, check)
    }

    /// Gets `remote` from a debuginfod server, kept in the cache as
    /// `cached` (elfutils' layout, `BUILD_ID/debuginfo`).
    pub(super) fn fetch_debuginfod(&self, remote: &Rel, cached: &Rel, check: Check<'_>) -> Fetched {
        self.fetch_as(remote, cached, false, check)
    }

    fn fetch_as(&self, remote: &Rel, cached: &Rel, symstore: bool, check: Check<'_>) -> Fetched {
        let cached = cached.under(&self.cache);
        if cached.is_file() && check(&cached).is_ok() {
            return Fetched::File(cached, true);
        }
        if let Some(why) = self.failed.lock().ok().and_then(|f| f.clone()) {
            return Fetched::Failed(Outage { why, earlier: true });
        }
        if !symstore {
            return self.get(remote, &cached, false, check);
        }
        let two_tier = match self.is_two_tier(remote) {
            Ok(two_tier) => two_tier,
            Err(failed) => return failed,
        };
        let remote = remote.in_store(two_tier);
        match self.get(&remote, &cached, false, check) {
            Fetched::NotFound => {}
            answer => return answer,
        }
        if let Some(cab) = remote.compressed() {
            match self.get(&cab, &cached, true, check) {
                Fetched::NotFound => {}
                answer => return answer,
            }
        }
        match remote.pointer() {
            Some(pointer) => self.follow_pointer(&pointer, check),
            None => Fetched::NotFound,
        }
    }

    /// Whether the server is a two-tier store, asking for `index2.txt` the
    /// first time a store path is fetched.
    fn is_two_tier(&self, rel: &Rel) -> Result<bool, Fetched> {
        if rel.two_tier().is_none() {
            return Ok(false);
        }
        if let Some(known) = self.two_tier.lock().ok().and_then(|t| *t) {
            return Ok(known);
        }
        let url = format!("{}index2.txt", self.base);
        let two_tier = match self.agent.get(&url).call() {
            Ok(_) => true,
            Err(ureq::Error::Status(code, _)) if code < 500 => false,
            Err(ureq::Error::Status(code, _)) => {
                return Err(self.give_up(format!("HTTP {code} for {url}")))
            }
            Err(ureq::Error::Transport(t)) => return Err(self.give_up(transport(&url, &t))),
        };
        if let Ok(mut known) = self.two_tier.lock() {
            *known = Some(two_tier);
        }
        Ok(two_tier)
    }

    /// Asks for `remote` exactly; a file is checked and kept at `cached`
    /// (unpacked first when `cab`).
    fn get(&self, remote: &Rel, cached: &Path, cab: bool, check: Check<'_>) -> Fetched {
        let url = self.url_of_exactly(remote);
        let response = match self.request(&url) {
            Ok(response) => response,
            Err(answer) => return answer,
        };
        match self.download(response, cached, cab, check) {
            Ok(()) => Fetched::File(cached.to_path_buf(), false),
            Err(Failure::Server(why)) => self.give_up(format!("{url}: {why}")),
            Err(Failure::Refused(refusal)) => Fetched::Refused(refusal),
            Err(Failure::Cache(e)) => Fetched::Failed(Outage {
                why: format!(
                    "cannot save {url} in the cache {}: {e}",
                    self.cache.display()
                ),
                earlier: false,
            }),
        }
    }

    /// One GET: the answer, or what a failure means for the search.
    fn request(&self, url: &str) -> Result<ureq::Response, Fetched> {
        match self.agent.get(url).call() {
            Ok(response) => Ok(response),
            Err(ureq::Error::Status(code, _)) if code < 500 => Err(Fetched::NotFound),
            Err(ureq::Error::Status(code, _)) => {
                Err(self.give_up(format!("HTTP {code} for {url}")))
            }
            Err(ureq::Error::Transport(t)) => Err(self.give_up(transport(url, &t))),
        }
    }

    /// A pointer store's `file.ptr`: `PATH:` to a local absolute path is
    /// opened where it is (and checked, never copied); any other path
    /// (`\\server\share\...`, relative) is not followed, and `MSG:` is
    /// the server's reason for not having the file.
    fn follow_pointer(&self, pointer: &Rel, check: Check<'_>) -> Fetched {
        let url = self.url_of_exactly(pointer);
        let response = match self.request(&url) {
            Ok(response) => response,
            Err(answer) => return answer,
        };
        let mut text = Vec::new();
        if let Err(e) = response
            .into_reader()
            .take(MAX_POINTER)
            .read_to_end(&mut text)
        {
            return self.give_up(format!("{url}: the answer stopped ({e})"));
        }
        let text = String::from_utf8_lossy(&text);
        let text = text.trim();
        let (kind, rest) = text.split_once(':').unwrap_or(("", text));
        let rest = rest.trim();
        let refused = |why: String| Fetched::Refused(Refusal::Pointer(why));
        match kind.trim().to_ascii_uppercase().as_str() {
            "PATH" => match super::safe_name::local_file(rest) {
                Some(path) if path.is_file() => match check(&path) {
                    Ok(()) => Fetched::File(path, false),
                    Err(refusal) => Fetched::Refused(refusal),
                },
                Some(path) => refused(format!(
                    "file.ptr points to {}, which is not there",
                    path.display()
                )),
                None => refused(format!(
                    "file.ptr points to {}, not a local absolute path: not followed",
                    super::safe_name::shown(rest)
                )),
            },
            "MSG" => refused(format!(
                "file.ptr says: {}",
                super::safe_name::shown(rest).trim_matches('"')
            )),
            _ => Fetched::Refused(Refusal::Corrupt(
                "file.ptr is neither PATH: nor MSG:".to_string(),
            )),
        }
    }

    fn give_up(&self, why: String) -> Fetched {
        if let Ok(mut failed) = self.failed.lock() {
            failed.get_or_insert_with(|| why.clone());
        }
        Fetched::Failed(Outage {
            why,
            earlier: false,
        })
    }

    /// Writes the answer to a temporary file in the cache folder (so a
    /// concurrent or interrupted run never sees half a file), at most
    /// `max_download` bytes, checks it, and renames it into place.
    fn download(
        &self,
        response: ureq::Response,
        path: &Path,
        cab: bool,
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
        let total = copy_bounded(&mut body, temp.as_file_mut(), limit, |total, e| {
            Failure::Server(format!("the answer stopped after {total} bytes ({e})"))
        })?;
        if total == 0 {
            return Err(Failure::Refused(Refusal::Corrupt(
                "empty answer".to_string(),
            )));
        }
        temp.as_file_mut().flush().map_err(Failure::Cache)?;
        if cab {
            temp = self.unpack(temp.path(), path)?;
        }
        check(temp.path()).map_err(Failure::Refused)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(Failure::Cache)?;
        }
        temp.persist(path).map_err(|e| Failure::Cache(e.error))?;
        Ok(())
    }
}

impl Server {
    /// The one file of a CAB archive (the one named as `path`, else the
    /// only one), written to a new temporary file in the cache folder, at
    /// most `max_download` bytes.
    fn unpack(&self, archive: &Path, path: &Path) -> Result<tempfile::NamedTempFile, Failure> {
        let want = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        unpack(archive, want, &self.cache, self.max_download)
    }
}

/// The file `want` of the CAB archive at `archive` (else its only file),
/// unpacked into a new temporary file in `into`, at most `limit` bytes.
pub(super) fn unpack(
    archive: &Path,
    want: &str,
    into: &Path,
    limit: u64,
) -> Result<tempfile::NamedTempFile, Failure> {
    let corrupt = |why: String| Failure::Refused(Refusal::Corrupt(why));
    let file = std::fs::File::open(archive).map_err(Failure::Cache)?;
    let mut cabinet = cab::Cabinet::new(std::io::BufReader::new(file))
        .map_err(|e| corrupt(format!("not a CAB archive ({e})")))?;
    let entries: Vec<(String, u32)> = cabinet
        .folder_entries()
        .flat_map(|folder| folder.file_entries())
        .map(|entry| (entry.name().to_string(), entry.uncompressed_size()))
        .collect();
    let chosen = entries
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(want))
        .or(if entries.len() == 1 {
            entries.first()
        } else {
            None
        });
    let Some((name, size)) = chosen else {
        return Err(corrupt(format!(
            "the CAB archive holds {} files, none of them {want}",
            entries.len()
        )));
    };
    if u64::from(*size) > limit {
        return Err(Failure::Refused(Refusal::TooLarge { limit }));
    }
    let mut reader = cabinet
        .read_file(name)
        .map_err(|e| corrupt(format!("cannot unpack {name} from the CAB archive ({e})")))?;
    let mut out = tempfile::Builder::new()
        .prefix(".dumptriage-unpacked-")
        .tempfile_in(into)
        .map_err(Failure::Cache)?;
    copy_bounded(&mut reader, out.as_file_mut(), limit, |_, e| {
        corrupt(format!("cannot unpack {name} from the CAB archive ({e})"))
    })?;
    out.as_file_mut().flush().map_err(Failure::Cache)?;
    Ok(out)
}

/// Copies `from` into `to` and returns how many bytes it copied, refusing
/// more than `limit` bytes; a read error becomes `failed(bytes so far,
/// error)`.
fn copy_bounded(
    from: &mut impl std::io::Read,
    to: &mut impl std::io::Write,
    limit: u64,
    failed: impl Fn(u64, std::io::Error) -> Failure,
) -> Result<u64, Failure> {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut total: u64 = 0;
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(failed(total, e)),
        };
        total += n as u64;
        if total > limit {
            return Err(Failure::Refused(Refusal::TooLarge { limit }));
        }
        to.write_all(&buffer[..n]).map_err(Failure::Cache)?;
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
pub(crate) fn is_url(s: &str) -> bool {
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
