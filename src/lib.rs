//! dumptriage: tells why a process crashed or hung while it was exiting,
//! from the minidump it left behind.
//!
//! The pipeline: [`input`] finds the dumps, [`dump`] parses and symbolizes
//! them into the typed [`model::Report`], and [`report`] renders it.

// What is `pub` is the library's surface (the binary, the tests and the
// fuzz targets use it); everything else says `pub(crate)` or less.
#![warn(unreachable_pub)]

pub mod artifact;
pub mod baseline;
pub mod capture;
pub(crate) mod cpp_exception;
pub mod dump;
pub(crate) mod elfcore;
pub(crate) mod exit_phase;
pub(crate) mod functions;
pub mod guard;
pub mod input;
pub mod merge;
pub mod model;
pub(crate) mod pattern;
pub mod printable;
pub mod python;
pub mod report;
pub(crate) mod signature;
pub mod signatures;
pub(crate) mod summary;
pub mod symbols;
pub mod text;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use dump::{Analyzer, DumpError};
use input::Input;
use model::Report;
use signatures::Database;
use symbols::SymbolConfig;

/// How a batch runs.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// Dumps analysed at once (at least 1).
    pub jobs: usize,
    /// Show a progress bar on stderr (the caller checks it is a terminal).
    pub progress: bool,
    /// For tests of the panic path only (the binary sets it from
    /// `DUMPTRIAGE_DEBUG_PANIC_ON` in debug builds): the analysis of a dump
    /// with this file name panics.
    #[doc(hidden)]
    pub debug_panic_on: Option<std::ffi::OsString>,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            progress: false,
            debug_panic_on: None,
        }
    }
}

/// Analyses every input, `jobs` at a time, sharing one symbolizer (each
/// symbol file is parsed once per run), then classifies each report's exit
/// phase and matches it against `signatures`. Reports come back in input
/// order. Inputs that are not usable dumps become error reports in their
/// place; one bad dump never stops the others.
pub fn analyze_inputs(
    inputs: &[Input],
    symbols: SymbolConfig,
    signatures: &Database,
    options: &BatchOptions,
) -> Vec<Report> {
    analyze_inputs_using(inputs, symbols, signatures, options).0
}

/// As [`analyze_inputs`], with the symbol files and binaries the analysis
/// used, matched to their modules by identity (what `pack` keeps).
pub fn analyze_inputs_using(
    inputs: &[Input],
    symbols: SymbolConfig,
    signatures: &Database,
    options: &BatchOptions,
) -> (Vec<Report>, Vec<symbols::UsedFile>) {
    let dumps: Vec<&std::path::Path> = inputs.iter().filter_map(Input::file).collect();
    let analyzer = Analyzer::new(
        symbols
            .with_dump_neighbours(dumps.iter().copied())
            .sources(),
    );
    let progress = Progress::new(options.progress, dumps.len());
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Vec<Report>>>> =
        inputs.iter().map(|_| Mutex::new(None)).collect();
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(input) = inputs.get(i) else { break };
        let report = match input {
            Input::Dump(path) | Input::Member { path, .. } => {
                progress.start(path);
                let shown = input.shown();
                // Everything done to one dump is caught here: a panic in
                // the exit-phase tables or the matcher is that dump's error
                // report, and the other dumps go on.
                let reports = guard::catching(path, || {
                    if options.debug_panic_on.as_deref() == path.file_name() {
                        panic!("DUMPTRIAGE_DEBUG_PANIC_ON names this dump");
                    }
                    // What the OS kept in its own formats (apport, WER).
                    if let Some(reports) = input::os_reports(path, &analyzer) {
                        return reports
                            .into_iter()
                            .map(|r| diagnose_text(r, signatures))
                            .collect();
                    }
                    match text_input(path) {
                        Some(text) => text_reports(&shown, &text)
                            .into_iter()
                            .map(|r| diagnose_text(r, signatures))
                            .collect(),
                        None => vec![Report {
                            path: shown.clone(),
                            ..diagnose(analyzer.analyze(path), signatures)
                        }],
                    }
                })
                .unwrap_or_else(|panic| vec![DumpError::Internal(panic).report(shown.clone())]);
                progress.finish_one();
                let mut reports = reports;
                reports.iter_mut().for_each(|r| input.relabel(r));
                reports
            }
            Input::Text { label, text } => guard::catching(std::path::Path::new(label), || {
                text_reports(label, text)
                    .into_iter()
                    .map(|r| diagnose_text(r, signatures))
                    .collect()
            })
            .unwrap_or_else(|panic| vec![DumpError::Internal(panic).report(label.clone())]),
            Input::Invalid { path, error } => vec![Report::failed(
                path.display().to_string(),
                "unreadable",
                error.clone(),
            )],
        };
        if let Ok(mut slot) = results[i].lock() {
            *slot = Some(report);
        }
    };
    let jobs = options.jobs.clamp(1, inputs.len().max(1));
    std::thread::scope(|scope| {
        for _ in 1..jobs {
            scope.spawn(work);
        }
        work();
    });
    progress.done();
    let used = analyzer.used_files();
    analyzer.finish();
    let reports = results
        .into_iter()
        .zip(inputs)
        .flat_map(|(slot, input)| {
            slot.into_inner().ok().flatten().unwrap_or_else(|| {
                let path = input.shown();
                vec![
                    DumpError::Internal("the analysis thread did not finish".to_string())
                        .report(path),
                ]
            })
        })
        .collect();
    (reports, used)
}

/// Most bytes of a text input read: a CI log larger than this is read up
/// to it, with a warning.
const MAX_TEXT: u64 = 1 << 30;

/// The text of `path` when it is a text file rather than a minidump: it
/// does not start with the minidump signature, and its start is text.
fn text_input(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    // Only a regular file: opening a FIFO would block until a writer
    // comes (the dump reader then refuses it with its own message).
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut file = std::fs::File::open(path).ok()?;
    // The signature first: a minidump (or a prefix of one, or nothing) is
    // left to the dump reader after 4 bytes, so a batch of dumps pays no
    // more for this check.
    let mut head = Vec::new();
    file.by_ref().take(4).read_to_end(&mut head).ok()?;
    if b"MDMP".starts_with(&head) || head.starts_with(b"MDMP") {
        return None;
    }
    file.by_ref().take(64 * 1024).read_to_end(&mut head).ok()?;
    if !text::looks_like_text(&head) {
        return None;
    }
    file.take(MAX_TEXT).read_to_end(&mut head).ok()?;
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// The reports of every trace in a text, or its one error.
fn text_reports(label: &str, text: &str) -> Vec<Report> {
    match text::read_traces(label, text) {
        Ok(reports) => reports,
        Err(error) => vec![Report::failed(label.to_string(), "not_minidump", error)],
    }
}

/// A text trace's report, diagnosed like a dump's.
fn diagnose_text(report: Report, signatures: &Database) -> Report {
    let path = report.path.clone();
    Report {
        path,
        ..diagnose(report, signatures)
    }
}

/// The progress bar of a batch: dumps done of total, the current file,
/// elapsed time and ETA. Hidden unless asked for.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    fn new(enabled: bool, total: usize) -> Self {
        let bar = (enabled && total > 1).then(|| {
            let bar = indicatif::ProgressBar::new(total as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:30}] {pos}/{len} dumps, ETA {eta} {wide_msg}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar
        });
        Progress { bar }
    }
    fn start(&self, path: &std::path::Path) {
        if let Some(bar) = &self.bar {
            bar.set_message(printable::clean(&path.display().to_string()));
        }
    }
    fn finish_one(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }
    fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Adds the exit-phase facts and the diagnoses to an analysed report.
pub fn diagnose(report: Report, signatures: &Database) -> Report {
    if report.status != model::Status::Ok {
        return report;
    }
    let classified = exit_phase::classify(report);
    let diagnoses = signatures.diagnose(&classified);
    let mut report = classified.into_report();
    report.diagnoses = diagnoses;
    let signature = signature::crash_signature(&report);
    report.crash_signature_offsets = signature.as_ref().is_some_and(|s| s.offsets);
    report.crash_signature = signature.map(|s| s.text);
    report
}

/// What a report found, for the `--fail-on` policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finding {
    /// Nothing to report: a healthy live dump.
    None,
    /// A specific signature explains the crash or hang.
    Known,
    /// A specific signature would explain it, but the exit it asks for is
    /// not established: a possible finding only.
    Possible,
    /// A crash or hang that no specific signature explains.
    Unknown,
}

/// Classifies a diagnosed report for `--fail-on`.
pub fn finding(report: &Report) -> Finding {
    let specific = |possible: bool| {
        report
            .diagnoses
            .iter()
            .any(|d| !d.generic && d.possible.is_some() == possible)
    };
    if specific(false) {
        Finding::Known
    } else if specific(true) {
        Finding::Possible
    } else if report.crashed() || !report.diagnoses.is_empty() {
        Finding::Unknown
    } else {
        Finding::None
    }
}
