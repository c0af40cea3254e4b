//! `_NT_SYMBOL_PATH`, the symbol path Windows debuggers read, so that a
//! machine already set up for WinDbg or Visual Studio needs nothing more.
//!
//! Elements are separated by `;`. Understood forms:
//! - `srv*URL`, `srv*CACHE*URL`, `srv*CACHE1*CACHE2*URL` (and `symsrv*DLL*...`):
//!   a symbol server and the folder its downloads are kept in (the first);
//!   every folder named is searched too. `srv*DIR` without a URL is a store.
//! - `cache*DIR`: where downloads go, for the servers of the path; searched.
//! - a plain folder: searched (as a symbol store, or flat).
//!
//! Anything else (`symsrv*` with an unknown DLL, empty elements) is skipped.

use std::path::PathBuf;

use super::server::is_url;

/// One element of the path, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Element {
    Folder(PathBuf),
    Server { url: String, cache: Option<PathBuf> },
    Cache(PathBuf),
}

pub(crate) fn parse(value: &str) -> Vec<Element> {
    let mut out = Vec::new();
    for raw in value.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let parts: Vec<&str> = raw.split('*').collect();
        let head = parts[0].to_ascii_lowercase();
        let rest: Vec<&str> = match head.as_str() {
            "srv" => parts[1..].to_vec(),
            // symsrv*symsrv.dll*CACHE*URL: the DLL is Windows' own client.
            "symsrv" => parts.get(2..).map(<[&str]>::to_vec).unwrap_or_default(),
            "cache" => {
                if let Some(dir) = parts.get(1).filter(|d| !d.is_empty()) {
                    out.push(Element::Cache(PathBuf::from(dir)));
                }
                continue;
            }
            _ if parts.len() == 1 => {
                out.push(Element::Folder(PathBuf::from(raw)));
                continue;
            }
            _ => continue,
        };
        let rest: Vec<&str> = rest.into_iter().filter(|p| !p.is_empty()).collect();
        let (urls, folders): (Vec<&str>, Vec<&str>) = rest.into_iter().partition(|p| is_url(p));
        // An empty cache field (`srv**URL`) means the debugger's default
        // cache; ours is the --symbols-cache default.
        let cache = folders.first().map(PathBuf::from);
        for folder in &folders {
            out.push(Element::Folder(PathBuf::from(folder)));
        }
        for url in urls {
            out.push(Element::Server {
                url: url.to_string(),
                cache: cache.clone(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_debuggers_accept() {
        let parsed = parse(
            "srv*C:\\symcache*https://msdl.example/download/symbols;\
             cache*/tmp/cache; /srv/local ;;srv*https://sym.example;srv*/only/store;\
             symsrv*symsrv.dll*/c2*http://x.example/s;weird*thing",
        );
        assert_eq!(
            parsed,
            vec![
                Element::Folder("C:\\symcache".into()),
                Element::Server {
                    url: "https://msdl.example/download/symbols".into(),
                    cache: Some("C:\\symcache".into())
                },
                Element::Cache("/tmp/cache".into()),
                Element::Folder("/srv/local".into()),
                Element::Server {
                    url: "https://sym.example".into(),
                    cache: None
                },
                Element::Folder("/only/store".into()),
                Element::Folder("/c2".into()),
                Element::Server {
                    url: "http://x.example/s".into(),
                    cache: Some("/c2".into())
                },
            ]
        );
    }
}
