//! Where frame names come from.
//!
//! Users have different things: a Breakpad symbol store, a symbol server,
//! the build's PDBs and binaries, Debian's -dbg packages, or nothing but the
//! dump. Every one of them is a source here, tried best first (see
//! [`sources`] for the order and the identity checks), and every frame says
//! which source named it.
//!
//! - [`SymbolConfig`]: the user's `--symbols` entries, `_NT_SYMBOL_PATH`, the
//!   cache; turned into the run's shared [`Sources`].
//! - [`provider::DumpSymbols`]: the stack walker's symbol provider for one
//!   dump, over the shared sources.
//! - [`native`]: PDB, DWARF, export-table readers; [`server`]: HTTP.
//!
//! Nothing here touches the network unless a URL was given (on the command
//! line or in `_NT_SYMBOL_PATH`).

mod breakpad;
mod find;
mod finder;
pub(crate) mod identity;
mod index_writes;
mod indexfile;
mod location;
mod log;
pub mod native;
pub(crate) mod ntpath;
mod paths;
mod places;
pub(crate) mod provider;
mod safe_name;
pub(crate) mod server;
pub(crate) mod sources;
mod symfile;
pub(crate) mod unwind;
mod used;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use index_writes::IndexWrites;
pub(crate) use location::Location;
pub(crate) use provider::DumpSymbols;
pub use server::Limits;
pub(crate) use server::DEFAULT_MAX_DOWNLOAD;
pub(crate) use sources::Sources;
pub use symfile::DEFAULT_MIN_SIZE as DEFAULT_INDEX_MIN_SIZE;
pub use used::UsedFile;

use server::{is_url, Server};

/// How long a symbol server may stay silent (before answering, or between
/// two reads of its answer) by default.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

/// How long connecting to a symbol server may take by default.
pub(crate) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The symbol sources of one run, as the user gave them.
#[derive(Debug, Clone)]
pub struct SymbolConfig {
    /// `--symbols` entries in order: folders (any layout) and http(s) URLs.
    pub stores: Vec<PathBuf>,
    /// Where downloads are kept (`--symbols-cache`).
    pub cache: Option<PathBuf>,
    /// The user's own cache directory (`~/.cache` on Linux), the default
    /// home of the download cache; `None` when the user has none.
    pub user_cache: Option<PathBuf>,
    /// Timeouts and the download size limit for symbol servers.
    pub limits: Limits,
    /// The value of `_NT_SYMBOL_PATH`, searched after `stores`.
    pub nt_symbol_path: Option<String>,
    /// The value of `DEBUGINFOD_URLS`: debuginfod servers, separated by
    /// spaces as elfutils reads it, asked after `--symbols`' own.
    pub debuginfod_urls: Option<String>,
    /// The value of `DEBUGINFOD_CACHE_PATH`: where debuginfod downloads are
    /// kept, in elfutils' layout (`BUILD_ID/debuginfo`), instead of
    /// `debuginfod/` in the download cache.
    pub debuginfod_cache: Option<PathBuf>,
    /// Also look where the dump says each module was loaded from (when that
    /// is a local absolute path of this OS), and in this machine's debug
    /// directories (/usr/lib/debug): what makes dumps of this machine's own
    /// processes symbolize with no set-up. Every file found there is still
    /// checked against the module's identity. `--no-system-symbols` turns
    /// it off.
    pub system: bool,
    /// The folders holding the dumps: separate debug files there
    /// (`NAME.debug`, as `objcopy --only-keep-debug` names them) are used
    /// for the module whose build id they carry.
    pub dump_dirs: Vec<PathBuf>,
    /// Index big .sym files in the cache (`index/`) and read them through
    /// their index on later runs; `--no-symbol-index` turns it off.
    pub symbol_index: bool,
    /// The smallest .sym file indexed, in bytes
    /// (`DUMPTRIAGE_SYMBOL_INDEX_MIN`).
    pub index_min_size: u64,
    /// The indexes of big PDB and DWARF files the run is making on other
    /// threads: shared by the config's clones, for its owner to wait for
    /// once the reports are out.
    pub index_writes: IndexWrites,
}

impl Default for SymbolConfig {
    fn default() -> Self {
        SymbolConfig {
            stores: Vec::new(),
            cache: None,
            user_cache: None,
            limits: Limits {
                connect_timeout: DEFAULT_CONNECT_TIMEOUT,
                read_timeout: DEFAULT_TIMEOUT,
                max_download: DEFAULT_MAX_DOWNLOAD,
            },
            nt_symbol_path: None,
            debuginfod_urls: None,
            debuginfod_cache: None,
            dump_dirs: Vec::new(),
            system: true,
            symbol_index: true,
            index_min_size: symfile::DEFAULT_MIN_SIZE,
            index_writes: IndexWrites::default(),
        }
    }
}

impl SymbolConfig {
    /// Adds the `symbols` folder beside each dump, after the user's own stores,
    /// so `analyze sample-dumps/` needs no flags. Symbol files are matched by
    /// module identity (debug file + debug id), so a store beside one dump
    /// cannot give wrong names to another.
    pub(crate) fn with_dump_neighbours<'a>(
        mut self,
        dumps: impl IntoIterator<Item = &'a Path>,
    ) -> Self {
        for dump in dumps {
            let Some(dir) = dump.parent() else { continue };
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            if !self.dump_dirs.iter().any(|d| d == dir) {
                self.dump_dirs.push(dir.to_path_buf());
            }
            let candidate = dir.join("symbols");
            if candidate.is_dir() && !self.stores.contains(&candidate) {
                self.stores.push(candidate);
            }
        }
        self
    }

    /// The download cache: `--symbols-cache`, else the first cache named in
    /// `_NT_SYMBOL_PATH`, else `dumptriage/symbols` in the user's cache
    /// directory. Never a shared folder such as /tmp, where anyone could
    /// put files in first: with no user cache directory, `None`.
    fn default_cache(&self, nt: &[ntpath::Element]) -> Option<PathBuf> {
        if let Some(cache) = &self.cache {
            return Some(cache.clone());
        }
        for element in nt {
            if let ntpath::Element::Cache(dir) = element {
                return Some(dir.clone());
            }
        }
        self.user_cache
            .as_ref()
            .map(|dir| dir.join("dumptriage").join("symbols"))
    }

    /// Checks the `--symbols` entries before anything is read: an entry of
    /// a scheme this tool does not speak (`ftp://`, `s3://`, a typo of
    /// `https`) is an error, since it can never be used; a folder that does
    /// not exist, or a path that is not a folder, is a warning (a CI job
    /// may legitimately have produced no symbols), returned to be shown.
    pub fn check_stores(&self) -> Result<Vec<String>, String> {
        let mut warnings = Vec::new();
        for entry in &self.stores {
            let text = entry.to_string_lossy();
            if let Some(url) = debuginfod_url(&text) {
                if !is_url(url) {
                    return Err(format!(
                        "--symbols {text}: a debuginfod server must be an http(s) URL"
                    ));
                }
                continue;
            }
            if is_url(&text) {
                continue;
            }
            if let Some((scheme, _)) = text.split_once("://") {
                return Err(format!(
                    "--symbols {text}: {scheme:?} is not a scheme dumptriage reads \
                     (a folder, an http(s) URL, or debuginfod+URL)"
                ));
            }
            match std::fs::metadata(entry) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => warnings.push(format!("--symbols {text}: not a folder; not searched")),
                Err(e) => warnings.push(format!("--symbols {text}: {e}; not searched")),
            }
        }
        Ok(warnings)
    }

    /// Every symbol server these settings name: `--symbols` URLs (and
    /// `debuginfod+URL`), `_NT_SYMBOL_PATH`'s servers, `DEBUGINFOD_URLS`
    /// (what `doctor` asks whether they answer).
    pub fn server_urls(&self) -> Vec<String> {
        let mut urls: Vec<String> = Vec::new();
        for entry in &self.stores {
            let text = entry.to_string_lossy();
            let url = debuginfod_url(&text).unwrap_or(&text);
            if is_url(url) {
                urls.push(url.to_string());
            }
        }
        for element in self
            .nt_symbol_path
            .as_deref()
            .map(ntpath::parse)
            .unwrap_or_default()
        {
            if let ntpath::Element::Server { url, .. } = element {
                urls.push(url);
            }
        }
        urls.extend(
            self.debuginfod_urls
                .as_deref()
                .unwrap_or("")
                .split_whitespace()
                .filter(|u| is_url(u))
                .map(str::to_string),
        );
        urls.dedup();
        urls
    }

    /// Builds the sources shared by every dump of the run. Each symbol file
    /// is loaded at most once, whichever dump needs it first.
    pub fn sources(&self) -> Sources {
        let nt = self
            .nt_symbol_path
            .as_deref()
            .map(ntpath::parse)
            .unwrap_or_default();
        let mut cache = self.default_cache(&nt);
        let mut stores = self.stores_named(nt, cache.as_ref());
        let cache_unusable = self.check_cache(&mut cache, &mut stores);
        let Stores {
            mut locations,
            servers,
            debuginfod,
            mut notes,
        } = stores;
        let debuginfod_cache = self
            .debuginfod_cache
            .clone()
            .filter(|dir| !dir.as_os_str().is_empty())
            .or_else(|| cache.as_ref().map(|dir| dir.join("debuginfod")));
        // Downloads are read back from the cache before any server is asked,
        // so a cache folder is also searched as a store (first among servers).
        for (_, server_cache) in &servers {
            if let Some(dir) = server_cache {
                add_folder(&mut locations, dir.clone());
            }
        }
        let needs_scratch = servers.iter().any(|(_, c)| c.is_none())
            || (!debuginfod.is_empty() && debuginfod_cache.is_none());
        let scratch = needs_scratch
            .then(|| scratch_folder(cache_unusable, &mut notes))
            .flatten();
        for (url, server_cache) in servers {
            let Some(dir) =
                server_cache.or_else(|| scratch.as_ref().map(|d| d.path().to_path_buf()))
            else {
                continue;
            };
            locations.push(Location::Server(Arc::new(Server::new(
                &url,
                &dir,
                self.limits,
            ))));
        }
        for url in debuginfod {
            let Some(dir) = debuginfod_cache
                .clone()
                .or_else(|| scratch.as_ref().map(|d| d.path().join("debuginfod")))
            else {
                continue;
            };
            locations.push(Location::Debuginfod(Arc::new(Server::new(
                &url,
                &dir,
                self.limits,
            ))));
        }
        // Indexes live in the cache, never in the run's scratch folder:
        // one that disappears with the run would only cost its writing.
        let index = symfile::IndexSettings {
            dir: cache
                .as_ref()
                .filter(|_| self.symbol_index)
                .map(|dir| dir.to_path_buf()),
            min_size: self.index_min_size,
            writes: self.index_writes.clone(),
        };
        Sources::new(locations, self.system, notes, scratch, index)
            .with_debug_dirs(self.dump_dirs.clone())
    }

    /// The stores the options name, in order: `--symbols` entries, then
    /// DEBUGINFOD_URLS, then _NT_SYMBOL_PATH. Symbol servers without a cache
    /// of their own download into `cache`.
    fn stores_named(&self, nt: Vec<ntpath::Element>, cache: Option<&PathBuf>) -> Stores {
        let mut stores = Stores::default();
        // debuginfod servers: `--symbols debuginfod+URL`, then
        // DEBUGINFOD_URLS. Their downloads go to DEBUGINFOD_CACHE_PATH
        // when set, else to `debuginfod/` in the download cache.
        for entry in &self.stores {
            let text = entry.to_string_lossy();
            if let Some(url) = debuginfod_url(&text) {
                stores.add_debuginfod(url);
            } else if is_url(&text) {
                stores.servers.push((text.into_owned(), cache.cloned()));
            } else {
                add_folder(&mut stores.locations, entry.clone());
            }
        }
        for url in self
            .debuginfod_urls
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
        {
            stores.add_debuginfod(url);
        }
        for element in nt {
            match element {
                ntpath::Element::Folder(dir) | ntpath::Element::Cache(dir) => {
                    add_folder(&mut stores.locations, dir)
                }
                ntpath::Element::Server { url, cache: own } => {
                    stores.servers.push((url, own.or_else(|| cache.cloned())))
                }
            }
        }
        stores
    }

    /// A cache that cannot be written (a read-only home in a container, a
    /// mistyped --symbols-cache naming a file) would make every download
    /// fail: its servers download into a private folder of the run
    /// instead, and say so once. True when the cache was given up.
    fn check_cache(&self, cache: &mut Option<PathBuf>, stores: &mut Stores) -> bool {
        let Some(dir) = cache.clone() else {
            return false;
        };
        let used = stores.servers.iter().any(|(_, c)| c.as_ref() == Some(&dir))
            || (!stores.debuginfod.is_empty() && self.debuginfod_cache.is_none());
        let Err(e) = (if used { writable(&dir) } else { Ok(()) }) else {
            return false;
        };
        stores.notes.push(format!(
            "the symbols cache {} cannot be used ({e}): files from symbol servers \
             are used for this run only, and big symbol files are not indexed",
            dir.display()
        ));
        for (_, server_cache) in &mut stores.servers {
            if server_cache.as_ref() == Some(&dir) {
                *server_cache = None;
            }
        }
        *cache = None;
        true
    }
}

/// The stores the options name, before the cache is checked: folders
/// (and, later, servers) in the order they are searched, symbol servers
/// with the folder each downloads into, and debuginfod servers.
#[derive(Default)]
struct Stores {
    locations: Vec<Location>,
    servers: Vec<(String, Option<PathBuf>)>,
    debuginfod: Vec<String>,
    notes: Vec<String>,
}

impl Stores {
    fn add_debuginfod(&mut self, url: &str) {
        if !is_url(url) {
            self.notes.push(format!(
                "debuginfod server {url:?} is not an http(s) URL: not asked"
            ));
        } else if !self.debuginfod.iter().any(|u| u == url) {
            self.debuginfod.push(url.to_string());
        }
    }
}

/// A folder to search, once.
fn add_folder(locations: &mut Vec<Location>, dir: PathBuf) {
    if !locations
        .iter()
        .any(|l| matches!(l, Location::Folder(d) if *d == dir))
    {
        locations.push(Location::Folder(dir));
    }
}

/// No cache to keep downloads in: they go to a folder of this run's own
/// (created private, removed at the end), and are not kept.
fn scratch_folder(cache_unusable: bool, notes: &mut Vec<String>) -> Option<tempfile::TempDir> {
    match tempfile::Builder::new().prefix("dumptriage-").tempdir() {
        Ok(dir) => {
            if !cache_unusable {
                notes.push(
                    "no user cache directory and no --symbols-cache: files from symbol \
                     servers are used for this run only (caching is off)"
                        .to_string(),
                );
            }
            Some(dir)
        }
        Err(e) => {
            notes.push(format!(
                "no user cache directory and no --symbols-cache, and no private folder \
                 for downloads ({e}): symbol servers without a cache are not asked"
            ));
            None
        }
    }
}

/// Whether files can be written in `dir` (made if missing).
fn writable(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    tempfile::tempfile_in(dir).map(drop)
}

/// The URL of a `--symbols debuginfod+URL` entry.
fn debuginfod_url(entry: &str) -> Option<&str> {
    const PREFIX: &str = "debuginfod+";
    entry
        .get(..PREFIX.len())
        .filter(|p| p.eq_ignore_ascii_case(PREFIX))
        .map(|_| &entry[PREFIX.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_url_means_no_network_source() {
        let config = SymbolConfig {
            stores: vec!["/srv/symbols".into()],
            nt_symbol_path: Some("cache*/tmp/c;/srv/other".into()),
            ..SymbolConfig::default()
        };
        assert!(!config.sources().uses_network());

        let config = SymbolConfig {
            stores: vec!["http://127.0.0.1:1/".into()],
            ..SymbolConfig::default()
        };
        assert!(config.sources().uses_network());

        // debuginfod: only a URL given makes a network source.
        let config = SymbolConfig {
            debuginfod_urls: Some("  ".into()),
            ..SymbolConfig::default()
        };
        assert!(!config.sources().uses_network());
        for config in [
            SymbolConfig {
                debuginfod_urls: Some("http://127.0.0.1:1 https://127.0.0.1:2/".into()),
                ..SymbolConfig::default()
            },
            SymbolConfig {
                stores: vec!["DebugInfoD+http://127.0.0.1:1/".into()],
                ..SymbolConfig::default()
            },
        ] {
            let sources = config.sources();
            assert!(sources.uses_network());
            assert!(!sources
                .places
                .locations
                .iter()
                .any(|l| matches!(l, Location::Server(_) | Location::Folder(_))));
        }
        let sources = SymbolConfig {
            debuginfod_urls: Some("/srv/debug ftp://x".into()),
            ..SymbolConfig::default()
        }
        .sources();
        assert!(!sources.uses_network());
        assert_eq!(sources.notes().len(), 2, "{:?}", sources.notes());
    }

    /// Without a user cache directory nothing falls back to a shared
    /// folder: downloads are kept for the run only, and the report says so.
    #[test]
    fn no_user_cache_means_no_cache() {
        let config = SymbolConfig {
            stores: vec!["http://127.0.0.1:1/".into()],
            ..SymbolConfig::default()
        };
        let sources = config.sources();
        assert!(!sources
            .places
            .locations
            .iter()
            .any(|l| matches!(l, Location::Folder(_))));
        assert_eq!(sources.notes().len(), 1);
        assert!(sources.notes()[0].contains("caching is off"));

        let config = SymbolConfig {
            user_cache: Some("/home/u/.cache".into()),
            ..config
        };
        let sources = config.sources();
        assert!(sources.notes().is_empty());
        assert!(sources.places.locations.iter().any(|l| matches!(l,
            Location::Folder(d) if *d == Path::new("/home/u/.cache/dumptriage/symbols"))));
    }
}
