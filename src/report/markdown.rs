//! Markdown for a CI job summary (GitHub's $GITHUB_STEP_SUMMARY and the
//! like): the table of signatures with counts and fixes first, each dump's
//! full report collapsed below it.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::text;
use crate::model::{Report, Status};
use crate::summary::summarize;

pub fn render(reports: &[Report], out: &mut dyn Write) -> io::Result<()> {
    let summary = summarize(reports);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## dumptriage: {} dump{}, {} analysed, {} unreadable\n",
        summary.dumps,
        if summary.dumps == 1 { "" } else { "s" },
        summary.analysed,
        summary.failed
    );
    if !summary.groups.is_empty() {
        s.push_str("| Diagnosis | Kind | Dumps | Fix |\n| --- | --- | ---: | --- |\n");
        for g in &summary.groups {
            let name = match (&g.signature, g.known) {
                (Some(id), true) => format!("**`{}`** {}", cell(id), cell(&g.title)),
                _ => format!("{} <br>`{}`", cell(&g.title), cell(&g.key)),
            };
            let kind = g.kind.map_or("", |k| k.as_str());
            let fix = g.fix.as_deref().map(cell).unwrap_or_default();
            let _ = writeln!(s, "| {name} | {kind} | {} | {fix} |", g.count);
        }
        s.push('\n');
    }
    if !summary.errors.is_empty() {
        s.push_str("### Unreadable dumps\n\n");
        for e in &summary.errors {
            let _ = writeln!(s, "- `{}`: {}", cell(&e.path), cell(&e.error));
        }
        s.push('\n');
    }
    if reports.is_empty() {
        s.push_str("No dumps: nothing crashed or hung.\n");
        return out.write_all(s.as_bytes());
    }
    s.push_str("### Dumps\n\n");
    for report in reports {
        let headline = match (&report.status, report.diagnoses.first()) {
            (Status::Error, _) => "unreadable".to_string(),
            (_, Some(d)) => format!("{} ({})", d.signature, d.kind.as_str()),
            (_, None) if report.crashed() => "crash, no known signature".to_string(),
            (_, None) => "no failure found".to_string(),
        };
        let body = text::render_report(report, text::Paint { enabled: false });
        let fence = fence_for(&body);
        let _ = writeln!(
            s,
            "<details><summary><code>{}</code>: {}</summary>\n\n{fence}text\n{body}{fence}\n\n</details>\n",
            html(&report.path),
            html(&headline)
        );
    }
    out.write_all(s.as_bytes())
}

/// Text for a table cell: one line, no cell separators, no raw HTML.
fn cell(text: &str) -> String {
    html(&crate::printable::clean(text))
        .replace('|', "\\|")
        .replace('`', "'")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn html(text: &str) -> String {
    crate::printable::clean(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A code fence longer than any run of backticks in the body.
fn fence_for(body: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}
