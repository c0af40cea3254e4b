//! Renderers: each turns the same typed reports into one output format.

mod github;
mod html;
mod json;
mod junit;
mod markdown;
mod sarif;
mod text;

use std::io::{self, Write};

use crate::model::Report;

pub use text::Paint;

/// The output formats (`--format`; the binary's cli.rs describes each to
/// the user).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// For a person: the exception, then every thread's stack.
    Text,
    /// For a person in a hurry: the diagnosis and the thread it is about.
    Brief,
    /// For tools: the versioned schema of docs/json-schema.md.
    Json,
    /// For a CI job summary: a table of diagnoses, each dump collapsed.
    Markdown,
    /// For CI test reporters: one test case per dump, failed when a crash
    /// or hang was diagnosed.
    Junit,
    /// For GitHub Actions: workflow-command annotations, one per group.
    Github,
    /// For code scanning: SARIF 2.1.0.
    Sarif,
    /// For a person triaging: one self-contained HTML page.
    Html,
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
        Format::Brief => text::render_brief(reports, paint, out),
        Format::Json => json::render(reports, out),
        Format::Markdown => markdown::render(reports, out),
        Format::Junit => junit::render(reports, out),
        Format::Github => github::render(reports, out),
        Format::Sarif => sarif::render(reports, out),
        Format::Html => html::render(reports, out),
    }
}
