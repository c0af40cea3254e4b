//! GitHub Actions annotations: one `::error` or `::warning` workflow
//! command per group of failed dumps, with the group's title, its first
//! dump as the file, the fix, and the issue of a known failure.
//!
//! GitHub shows at most 10 error and 10 warning annotations per step (and
//! 50 per job): past 10 of a kind, the tenth line sums up the rest, so
//! every group is still said once. Failures not in the baseline (or all,
//! without one) are errors; failures the baseline knows and possible
//! findings are warnings. Unreadable inputs are one error line.
//!
//! Workflow-command data is escaped as the runner reads it back: `%`, CR
//! and LF in the message; in property values (`title`, `file`) also `:`
//! and `,`. Everything from a dump is made printable first.

use std::io::{self, Write};

use crate::model::{Report, Summary, SummaryGroup};
use crate::printable::clean;
use crate::summary::summarize;

/// Annotations of one kind GitHub shows per step.
pub(crate) const PER_STEP: usize = 10;
/// Dumps named in one annotation.
const NAMED_DUMPS: usize = 5;

pub(super) fn render(reports: &[Report], out: &mut dyn Write) -> io::Result<()> {
    let summary = summarize(reports);
    writeln!(
        out,
        "dumptriage: {} dump{}, {} analysed, {} unreadable",
        summary.dumps,
        if summary.dumps == 1 { "" } else { "s" },
        summary.analysed,
        summary.failed
    )?;
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    if !summary.errors.is_empty() {
        errors.push(unreadable(&summary));
    }
    for group in summary.groups.iter().filter(|g| failed(g)) {
        let line = annotation(group);
        let known = group.new == Some(0);
        if known || (group.possible && group.new.is_none_or(|n| n == 0)) {
            warnings.push(line);
        } else {
            errors.push(line);
        }
    }
    write_capped(out, "error", &errors)?;
    write_capped(out, "warning", &warnings)
}

/// A group whose dumps failed (not the group of dumps where nothing did).
fn failed(group: &SummaryGroup) -> bool {
    group.kind.is_some()
}

/// One annotation: (title, file, message).
struct Annotation {
    title: String,
    file: String,
    message: String,
}

fn annotation(group: &SummaryGroup) -> Annotation {
    let mut message = format!("{} ({})", clean(&group.title), clean(&group.key));
    message.push_str(&format!(
        "\n{} dump{}: {}",
        group.count,
        if group.count == 1 { "" } else { "s" },
        named(&group.dumps)
    ));
    match group.new {
        Some(0) => message.push_str("\nKnown: every dump's crash signature is in the baseline."),
        Some(n) => message.push_str(&format!(
            "\nNew: {n} dump{} with a crash signature the baseline does not have.",
            if n == 1 { "" } else { "s" }
        )),
        None => {}
    }
    for issue in &group.issues {
        message.push_str(&format!("\nTracked: {}", clean(issue)));
    }
    if let Some(fix) = &group.fix {
        message.push_str(&format!("\nFix: {}", clean(fix)));
    }
    let kind = group.kind.map_or("failure", |k| k.as_str());
    Annotation {
        title: format!(
            "dumptriage: {kind} in {} dump{}: {}",
            group.count,
            if group.count == 1 { "" } else { "s" },
            clean(group.signature.as_deref().unwrap_or(&group.key))
        ),
        file: group.dumps.first().map(|d| clean(d)).unwrap_or_default(),
        message,
    }
}

fn unreadable(summary: &Summary) -> Annotation {
    let paths: Vec<String> = summary.errors.iter().map(|e| e.path.clone()).collect();
    let mut message = format!(
        "{} input{} could not be analysed: {}",
        summary.errors.len(),
        if summary.errors.len() == 1 { "" } else { "s" },
        named(&paths)
    );
    for e in summary.errors.iter().take(NAMED_DUMPS) {
        message.push_str(&format!("\n{}: {}", clean(&e.path), clean(&e.error)));
    }
    Annotation {
        title: "dumptriage: unreadable inputs".to_string(),
        file: paths.first().map(|p| clean(p)).unwrap_or_default(),
        message,
    }
}

/// The first dumps' paths, and how many more.
fn named(dumps: &[String]) -> String {
    let mut text = dumps
        .iter()
        .take(NAMED_DUMPS)
        .map(|d| clean(d))
        .collect::<Vec<_>>()
        .join(", ");
    if dumps.len() > NAMED_DUMPS {
        text.push_str(&format!(" and {} more", dumps.len() - NAMED_DUMPS));
    }
    text
}

/// Writes at most [`PER_STEP`] annotations of a kind; when there are more,
/// the last one allowed sums up the rest.
fn write_capped(out: &mut dyn Write, kind: &str, all: &[Annotation]) -> io::Result<()> {
    let (shown, rest) = if all.len() > PER_STEP {
        all.split_at(PER_STEP - 1)
    } else {
        (all, &[][..])
    };
    for a in shown {
        command(out, kind, a)?;
    }
    if !rest.is_empty() {
        let titles: Vec<&str> = rest.iter().map(|a| a.title.as_str()).collect();
        let summary = Annotation {
            title: format!("dumptriage: {} more {kind} groups", rest.len()),
            file: String::new(),
            message: format!(
                "{} more groups not annotated (GitHub shows {PER_STEP} per step); the full \
                 report (--format markdown or html) has them:\n{}",
                rest.len(),
                titles.join("\n")
            ),
        };
        command(out, kind, &summary)?;
    }
    Ok(())
}

fn command(out: &mut dyn Write, kind: &str, a: &Annotation) -> io::Result<()> {
    let mut properties = Vec::new();
    if !a.file.is_empty() {
        properties.push(format!("file={}", property(&a.file)));
    }
    properties.push(format!("title={}", property(&a.title)));
    writeln!(
        out,
        "::{kind} {}::{}",
        properties.join(","),
        data(&a.message)
    )
}

/// A command's message, as the runner unescapes it.
fn data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property value: the message's escapes plus `:` and `,`.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_command_escapes() {
        assert_eq!(data("50% done\r\nnext"), "50%25 done%0D%0Anext");
        assert_eq!(property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
    }
}
