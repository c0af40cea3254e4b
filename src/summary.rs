//! The batch summary: dumps grouped by diagnosis, and the dumps no specific
//! signature explains grouped by their crash signature (src/signature.rs),
//! so identical unknown failures group together.

use crate::model::{Kind, Report, Status, Summary, SummaryError, SummaryGroup};

/// The group a report belongs to: its specific signature; else its generic
/// diagnosis or unexplained crash, refined by the crash signature; else a
/// dump in which nothing failed.
fn group_of(report: &Report) -> SummaryGroup {
    let crash_signature = report.crash_signature.as_deref().unwrap_or("no stack");
    let empty = |key: String, title: String| SummaryGroup {
        key,
        signature: None,
        kind: None,
        known: false,
        possible: false,
        title,
        fix: None,
        count: 0,
        dumps: Vec::new(),
        new: None,
        issues: Vec::new(),
    };
    match report.diagnoses.first() {
        Some(d) if !d.generic => SummaryGroup {
            key: d.name(),
            signature: Some(d.signature.clone()),
            kind: Some(d.kind),
            known: d.possible.is_none(),
            possible: d.possible.is_some(),
            title: d.title.clone(),
            fix: Some(d.fix.clone()),
            count: 0,
            dumps: Vec::new(),
            new: None,
            issues: Vec::new(),
        },
        Some(d) => SummaryGroup {
            key: format!("{}: {crash_signature}", d.signature),
            signature: Some(d.signature.clone()),
            kind: Some(d.kind),
            known: false,
            possible: false,
            title: d.title.clone(),
            fix: Some(d.fix.clone()),
            count: 0,
            dumps: Vec::new(),
            new: None,
            issues: Vec::new(),
        },
        None if report.crashed() => SummaryGroup {
            kind: Some(Kind::Crash),
            ..empty(
                format!("unknown crash: {crash_signature}"),
                "Crash matching no known signature".to_string(),
            )
        },
        None => empty(
            "no failure found".to_string(),
            "No crash, and no thread blocked at exit".to_string(),
        ),
    }
}

/// Groups the reports of a run, known failures first, then by count.
pub(crate) fn summarize(reports: &[Report]) -> Summary {
    let mut groups: Vec<SummaryGroup> = Vec::new();
    let mut errors = Vec::new();
    for report in reports {
        if report.status == Status::Error {
            errors.push(SummaryError {
                path: report.path.clone(),
                error: report.error.clone().unwrap_or_default(),
                error_kind: report.error_kind.clone(),
            });
            continue;
        }
        let group = group_of(report);
        let slot = match groups.iter().position(|g| g.key == group.key) {
            Some(i) => &mut groups[i],
            None => {
                groups.push(group);
                groups.last_mut().expect("just pushed")
            }
        };
        slot.count += 1;
        slot.dumps.push(report.path.clone());
        if let Some(baseline) = &report.baseline {
            *slot.new.get_or_insert(0) += usize::from(!baseline.known);
            if let Some(issue) = baseline.issue.as_ref().filter(|_| baseline.known) {
                if !slot.issues.contains(issue) {
                    slot.issues.push(issue.clone());
                }
            }
        }
    }
    groups.sort_by(|a, b| {
        let rank =
            |g: &SummaryGroup| match (g.known, g.kind.is_some() || g.key.starts_with("unknown")) {
                (true, _) => 0,
                (false, true) => 1,
                (false, false) => 2,
            };
        rank(a)
            .cmp(&rank(b))
            .then(b.count.cmp(&a.count))
            .then(a.key.cmp(&b.key))
    });
    Summary {
        dumps: reports.len(),
        analysed: reports.len() - errors.len(),
        failed: errors.len(),
        groups,
        errors,
    }
}
