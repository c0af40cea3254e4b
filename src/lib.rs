//! dumptriage: tells why a process crashed or hung while it was exiting,
//! from the minidump it left behind.
//!
//! The pipeline: [`input`] finds the dumps, [`dump`] parses and symbolizes
//! them into the typed [`model::Report`], and [`report`] renders it.

pub mod capture;
pub mod cli;
pub mod dump;
pub mod exit_phase;
pub mod input;
pub mod model;
pub mod report;
pub mod signatures;
pub mod symbols;

use dump::Analyzer;
use input::Input;
use model::Report;
use signatures::Database;
use symbols::SymbolConfig;

/// Analyses every input in order, then classifies its exit phase and
/// matches it against `signatures`. Inputs that are not usable dumps become
/// error reports in their place; nothing here stops early.
pub fn analyze_inputs(
    inputs: &[Input],
    symbols: SymbolConfig,
    signatures: &Database,
) -> Vec<Report> {
    let dumps: Vec<&std::path::Path> = inputs
        .iter()
        .filter_map(|input| match input {
            Input::Dump(path) => Some(path.as_path()),
            Input::Invalid { .. } => None,
        })
        .collect();
    let analyzer = Analyzer::new(symbols.with_dump_neighbours(dumps).symbolizer());
    inputs
        .iter()
        .map(|input| match input {
            Input::Dump(path) => diagnose(analyzer.analyze(path), signatures),
            Input::Invalid { path, error } => {
                Report::failed(path.display().to_string(), error.clone())
            }
        })
        .collect()
}

/// Adds the exit-phase facts and the diagnoses to an analysed report.
pub fn diagnose(mut report: Report, signatures: &Database) -> Report {
    if report.status == model::Status::Ok {
        exit_phase::classify(&mut report);
        report.diagnoses = signatures.diagnose(&report);
    }
    report
}

/// What a report found, for the `--fail-on` policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finding {
    /// Nothing to report: a healthy live dump.
    None,
    /// A specific signature explains the crash or hang.
    Known,
    /// A crash or hang that no specific signature explains.
    Unknown,
}

/// Classifies a diagnosed report for `--fail-on`.
pub fn finding(report: &Report) -> Finding {
    if report.diagnoses.iter().any(|d| !d.generic) {
        Finding::Known
    } else if report.crashed() || !report.diagnoses.is_empty() {
        Finding::Unknown
    } else {
        Finding::None
    }
}
