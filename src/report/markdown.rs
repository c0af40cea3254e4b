//! Markdown for a CI job summary (GitHub's $GITHUB_STEP_SUMMARY and the
//! like): the table of signatures with counts and fixes first, each dump's
//! full report collapsed below it, as many as fit in a job summary.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::text;
use crate::model::{Report, Status};
use crate::summary::summarize;

/// The most a job summary holds: GitHub refuses a step summary over 1 MiB
/// (and shows none of it). Dump sections that would pass it are left out,
/// with a note; the table above them still counts every dump.
const SUMMARY_LIMIT: usize = 1 << 20;
/// Room kept for the note that says what was left out.
const NOTE_ROOM: usize = 1024;

pub(super) fn render(reports: &[Report], out: &mut dyn Write) -> io::Result<()> {
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
        // A baseline column only when a baseline was given.
        let baselined = summary.groups.iter().any(|g| g.new.is_some());
        if baselined {
            s.push_str(
                "| Diagnosis | Kind | Dumps | Baseline | Fix |\n| --- | --- | ---: | --- | --- |\n",
            );
        } else {
            s.push_str("| Diagnosis | Kind | Dumps | Fix |\n| --- | --- | ---: | --- |\n");
        }
        for g in &summary.groups {
            let name = match (&g.signature, g.known) {
                (Some(id), true) => format!("**`{}`** {}", cell(id), cell(&g.title)),
                _ => format!("{} <br>`{}`", cell(&g.title), cell(&g.key)),
            };
            let kind = g.kind.map_or("", |k| k.as_str());
            let fix = g.fix.as_deref().map(cell).unwrap_or_default();
            if baselined {
                let mut standing = match g.new {
                    None => String::new(),
                    Some(0) => "known".to_string(),
                    Some(n) => format!("**{n} new**"),
                };
                for issue in &g.issues {
                    standing.push_str(&format!(" <br>{}", cell(issue)));
                }
                let _ = writeln!(s, "| {name} | {kind} | {} | {standing} | {fix} |", g.count);
            } else {
                let _ = writeln!(s, "| {name} | {kind} | {} | {fix} |", g.count);
            }
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
    for (shown, report) in reports.iter().enumerate() {
        let headline = match (&report.status, report.diagnoses.first()) {
            (Status::Error, _) => "unreadable".to_string(),
            (_, Some(d)) => format!("{} ({})", d.name(), d.kind.as_str()),
            (_, None) if report.crashed() => "crash, no known signature".to_string(),
            (_, None) => "no failure found".to_string(),
        };
        let headline = match &report.baseline {
            Some(b) if b.known => match &b.issue {
                Some(issue) => format!("{headline}: known, {issue}"),
                None => format!("{headline}: known"),
            },
            Some(_) => format!("{headline}: NEW"),
            None => headline,
        };
        let body = text::render_report(report, text::Paint { enabled: false });
        let fence = fence_for(&body);
        let section = format!(
            "<details><summary><code>{}</code>: {}</summary>\n\n{fence}text\n{body}{fence}\n\n</details>\n\n",
            html(&report.path),
            html(&headline)
        );
        if s.len() + section.len() + NOTE_ROOM > SUMMARY_LIMIT {
            let left = reports.len() - shown;
            let _ = writeln!(
                s,
                "_{left} more dump{} not shown: a job summary holds at most 1 MiB. The table \
                 above counts every dump; for each one's report, keep the full report as an \
                 artifact (`dumptriage analyze --format json -o report.json ...`)._",
                if left == 1 { " is" } else { "s are" }
            );
            break;
        }
        s.push_str(&section);
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
