//! Renderers: each turns the same typed reports into one output format.

mod json;
mod text;

use std::io::{self, Write};

use crate::model::Report;

pub use text::{clean, Paint};

/// The output formats `--format` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For a person: the exception, then every thread's stack.
    Text,
    /// For tools: the versioned schema of docs/json-schema.md.
    Json,
}

/// Writes `reports` in `format`. `paint` only affects the text format.
pub fn render(
    reports: &[Report],
    format: Format,
    paint: Paint,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Text => text::render(reports, paint, out),
        Format::Json => json::render(reports, out),
    }
}
