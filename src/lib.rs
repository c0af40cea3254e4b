//! dumptriage: tells why a process crashed or hung while it was exiting,
//! from the minidump it left behind.
//!
//! The pipeline: [`input`] finds the dumps, [`dump`] parses and symbolizes
//! them into the typed [`model::Report`], and [`report`] renders it.

pub mod cli;
pub mod dump;
pub mod input;
pub mod model;
pub mod report;
pub mod symbols;

use dump::Analyzer;
use input::Input;
use model::Report;
use symbols::SymbolConfig;

/// Analyses every input in order. Inputs that are not usable dumps become
/// error reports in their place; nothing here stops early.
pub fn analyze_inputs(inputs: &[Input], symbols: SymbolConfig) -> Vec<Report> {
    let dumps: Vec<&std::path::Path> = inputs
        .iter()
        .filter_map(|input| match input {
            Input::Dump(path) => Some(path.as_path()),
            Input::Invalid { .. } => None,
        })
        .collect();
    let analyzer = Analyzer::new(symbols.with_dump_neighbours(dumps).sources());
    inputs
        .iter()
        .map(|input| match input {
            Input::Dump(path) => analyzer.analyze(path),
            Input::Invalid { path, error } => {
                Report::failed(path.display().to_string(), error.clone())
            }
        })
        .collect()
}
