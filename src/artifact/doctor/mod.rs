//! `dumptriage doctor`: would a crash or a hang on this machine leave
//! something to analyse? The capture set-up fails silently (a
//! `core_pattern` piping to a handler that is not installed, `ulimit -c 0`,
//! a restrictive `ptrace_scope`, WER's LocalDumps not set), and the first
//! sign is a failure with no artifact. This says so beforehand, each
//! finding with how to fix it.
//!
//! The probing (linux.rs, windows.rs) only gathers [`Facts`]; the checks
//! are plain functions of them, so every setting is tested here by
//! injecting its facts, on any OS.

mod checks;
mod facts;
#[cfg(target_os = "linux")]
mod linux;
mod options;
#[cfg(windows)]
mod windows;

use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Duration;

pub use checks::{check, ways};
use facts::can_write;
pub use facts::{Facts, Finding, Limit, LinuxFacts, Status, Way, WindowsFacts};
pub use options::DoctorOptions;

/// `dumptriage doctor`: the probe, the checks, and whether the ways of
/// capture `wanted` (all of this OS's, when none is) would capture.
pub fn command(options: &DoctorOptions, wanted: &[Way]) -> Result<super::Outcome, String> {
    let facts = probe(options);
    let findings = check(&facts);
    let ways = ways(&facts, &findings);
    if let Some(way) = wanted.iter().find(|w| !ways.iter().any(|(x, _)| x == *w)) {
        return Err(format!(
            "--for: {} is not checked on this operating system",
            way.name()
        ));
    }
    Ok(super::Outcome {
        report: render(&findings, &ways),
        said: Vec::new(),
        failed: ways
            .iter()
            .any(|(way, works)| !works && (wanted.is_empty() || wanted.contains(way))),
    })
}

/// Probes this machine.
pub fn probe(options: &DoctorOptions) -> Facts {
    let root = options.root.clone().unwrap_or_else(|| PathBuf::from("/"));
    let dump_dir = options
        .dump_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let writable = can_write(&dump_dir);
    let mut tools: Vec<(String, Option<PathBuf>)> = Vec::new();
    #[cfg(target_os = "linux")]
    let linux = Some(linux::probe(
        &root,
        options.no_ptrace_probe,
        options.config_dir.as_deref(),
    ));
    #[cfg(not(target_os = "linux"))]
    let linux: Option<LinuxFacts> = {
        let _ = &root;
        None
    };
    #[cfg(windows)]
    let windows = Some(windows::probe(options));
    #[cfg(not(windows))]
    let windows: Option<WindowsFacts> = None;
    let names: &[&str] = if windows.is_some() {
        &["procdump64.exe", "procdump.exe", "cdb.exe"]
    } else {
        &["gdb", "debuginfod-find", "coredumpctl"]
    };
    for name in names {
        tools.push((name.to_string(), on_path(name, options.var("PATH"))));
    }
    Facts {
        linux,
        windows,
        dump_dir: Some((dump_dir, writable)),
        servers: options
            .servers
            .iter()
            .map(|url| (url.clone(), ask(url)))
            .collect(),
        tools,
        debuginfod_urls: options.debuginfod_urls.clone(),
    }
}

/// The file `name` in one of the folders of `path` (a `PATH` value).
fn on_path(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    path.and_then(|path| {
        std::env::split_paths(path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// Any HTTP answer from the server's base URL (a 404 is an answer).
fn ask(url: &str) -> Result<String, String> {
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(5))
        .timeout_read(Duration::from_secs(10))
        .build();
    match agent.get(url).call() {
        Ok(response) => Ok(format!("HTTP {}", response.status())),
        Err(ureq::Error::Status(code, _)) => Ok(format!("HTTP {code}")),
        Err(ureq::Error::Transport(e)) => Err(e.to_string()),
    }
}

/// The report, for people: each finding, then each way's verdict.
pub fn render(findings: &[Finding], ways: &[(Way, bool)]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for f in findings {
        let mark = match f.status {
            Status::Ok => "ok",
            Status::Note => "note",
            Status::Problem(_) => "PROBLEM",
        };
        let _ = writeln!(s, "{mark:<8} {}: {}", f.topic, f.what);
        if let (Some(fix), false) = (&f.fix, f.status == Status::Ok) {
            let _ = writeln!(s, "{:<8}   fix: {fix}", "");
        }
    }
    s.push('\n');
    for (way, works) in ways {
        let _ = writeln!(
            s,
            "{:<18} {}",
            format!("{}:", way.name()),
            if *works {
                "would capture"
            } else {
                "would capture NOTHING"
            }
        );
    }
    s
}
