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

/// The output formats (`--format`; cli.rs describes each to the user).
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

/// Whether the text report is coloured (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
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

/// Whether the text report is coloured: `auto` colours only a terminal, and
/// never when NO_COLOR is set to a non-empty value (https://no-color.org).
pub fn color_enabled(
    choice: ColorChoice,
    terminal: bool,
    no_color: Option<&std::ffi::OsStr>,
) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal && no_color.is_none_or(|v| v.is_empty()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(color_enabled(ColorChoice::Auto, true, None));
        assert!(color_enabled(ColorChoice::Auto, true, Some(OsStr::new(""))));
        assert!(!color_enabled(
            ColorChoice::Auto,
            true,
            Some(OsStr::new("1"))
        ));
        assert!(!color_enabled(ColorChoice::Auto, false, None));
        assert!(color_enabled(
            ColorChoice::Always,
            false,
            Some(OsStr::new("1"))
        ));
        assert!(!color_enabled(ColorChoice::Never, true, None));
    }
}
