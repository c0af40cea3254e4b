//! The text format, for a person at a terminal or reading a CI log.
//!
//! Every string that came from a dump or a file name goes through [`clean`]
//! first: a hostile dump must not be able to move the cursor or recolour the
//! user's terminal.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::model::{
    hex, Diagnosis, Process, Report, Source, SourceKind, Status, Summary, System, Thread,
};
use crate::printable::clean;
use crate::summary::summarize;

mod frames;
mod modules;
mod paint;
pub(crate) use frames::frame_text;
use frames::render_thread;
use modules::{render_modules, render_registers};
pub use paint::Paint;

/// The summary table first (when there is more than one dump), then each
/// dump's report.
pub(super) fn render(reports: &[Report], paint: Paint, out: &mut dyn Write) -> io::Result<()> {
    render_each(reports, paint, out, render_report)
}

/// As [`render`], each dump only with its diagnosis, exception and the
/// thread the diagnosis is about (`--brief`): what a person reads first.
pub(super) fn render_brief(
    reports: &[Report],
    paint: Paint,
    out: &mut dyn Write,
) -> io::Result<()> {
    render_each(reports, paint, out, render_brief_report)
}

fn render_each(
    reports: &[Report],
    paint: Paint,
    out: &mut dyn Write,
    one: fn(&Report, Paint) -> String,
) -> io::Result<()> {
    // No dumps at all (an empty folder: nothing crashed) still says so.
    if reports.len() != 1 {
        out.write_all(render_summary(&summarize(reports), paint).as_bytes())?;
    }
    for (i, report) in reports.iter().enumerate() {
        if i > 0 || reports.len() > 1 {
            writeln!(out)?;
        }
        out.write_all(one(report, paint).as_bytes())?;
    }
    Ok(())
}

fn render_brief_report(report: &Report, p: Paint) -> String {
    let mut s = String::new();
    let path = clean(&report.path);
    if report.status == Status::Error {
        let error = clean(report.error.as_deref().unwrap_or("unknown error"));
        let _ = writeln!(s, "{} {path}: {error}", p.red("error:"));
        return s;
    }
    let _ = writeln!(s, "{}", p.bold(&format!("== {path}")));
    render_diagnoses(&mut s, report, p);
    render_exception(&mut s, report, p);
    let about = report
        .diagnoses
        .first()
        .and_then(|d| report.threads.iter().find(|t| t.id == d.thread_id))
        .or_else(|| report.crashing_thread())
        .or_else(|| report.blamed_thread());
    // The thread the answer is about, then the threads its wait leads to.
    let shown: Vec<u32> = about.map(|t| report.wait_chain(t.id)).unwrap_or_default();
    for id in &shown {
        if let Some(thread) = report.threads.iter().find(|t| t.id == *id) {
            s.push('\n');
            render_thread(&mut s, thread, &report.threads, p);
        }
    }
    let others = report.threads.len().saturating_sub(shown.len());
    if others > 0 {
        let _ = writeln!(
            s,
            "\n{}",
            p.dim(&format!(
                "({others} other thread{} not shown: without --brief, every thread)",
                if others == 1 { "" } else { "s" }
            ))
        );
    }
    s
}

/// Dumps shown per group before "and N more".
const SUMMARY_DUMPS: usize = 5;

fn render_summary(summary: &Summary, p: Paint) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}",
        p.bold(&format!(
            "Summary: {} dumps, {} analysed, {} unreadable",
            summary.dumps, summary.analysed, summary.failed
        ))
    );
    for g in &summary.groups {
        let label = match (&g.signature, g.known) {
            (Some(id), true) => format!("{} - {}", p.red(id), clean(&g.title)),
            _ => clean(&g.key),
        };
        let baseline = match g.new {
            None => String::new(),
            Some(0) => format!("  [{}]", p.green("known")),
            Some(n) => format!("  [{}]", p.red(&format!("{n} new"))),
        };
        let _ = writeln!(s, "  {:>5}  {label}{baseline}", g.count);
        for issue in &g.issues {
            let _ = writeln!(s, "         tracked at {}", clean(issue));
        }
        if let Some(fix) = &g.fix {
            if g.known {
                wrap_into(&mut s, "         fix: ", fix);
            }
        }
        for dump in g.dumps.iter().take(SUMMARY_DUMPS) {
            let _ = writeln!(s, "         {}", p.dim(&clean(dump)));
        }
        if g.dumps.len() > SUMMARY_DUMPS {
            let _ = writeln!(
                s,
                "         {}",
                p.dim(&format!("... and {} more", g.dumps.len() - SUMMARY_DUMPS))
            );
        }
    }
    for e in &summary.errors {
        let _ = writeln!(
            s,
            "  {}  {}: {}",
            p.red("error"),
            clean(&e.path),
            clean(&e.error)
        );
    }
    s
}

/// One dump's report, as a string.
pub(crate) fn render_report(report: &Report, p: Paint) -> String {
    let mut s = String::new();
    let path = clean(&report.path);
    if report.status == Status::Error {
        let error = clean(report.error.as_deref().unwrap_or("unknown error"));
        let _ = writeln!(s, "{} {path}: {error}", p.red("error:"));
        return s;
    }
    let _ = writeln!(s, "{}", p.bold(&format!("== {path}")));
    render_diagnoses(&mut s, report, p);
    if report.source.kind == SourceKind::Text {
        render_text_source(&mut s, &report.source);
    } else if let Some(process) = &report.process {
        render_process(&mut s, report, process);
    }
    if let Some(capture) = &report.capture {
        let _ = writeln!(s, "Captured:  {}", clean(&capture.describe()));
    }
    if let Some(sys) = report
        .system
        .as_ref()
        .filter(|_| report.source.kind != SourceKind::Text)
    {
        render_system(&mut s, sys, p);
    }
    render_exception(&mut s, report, p);
    render_signature(&mut s, report, p);
    for warning in &report.warnings {
        let _ = writeln!(s, "{} {}", p.yellow("warning:"), clean(warning));
    }
    if let Some(cycle) = &report.exit_phase.deadlock {
        let _ = writeln!(
            s,
            "{} each waits for the next: {}",
            p.red("Deadlock:"),
            crate::model::describe_cycle(cycle)
        );
    }
    for thread in &report.threads {
        s.push('\n');
        render_thread(&mut s, thread, &report.threads, p);
        render_registers(&mut s, thread);
    }
    render_modules(&mut s, report);
    s
}

/// A text trace has no process or system record: what it is, what decided
/// exit, and what the log said around it.
fn render_text_source(s: &mut String, source: &Source) {
    if source.messages_only {
        let _ = writeln!(
            s,
            "Source:    the messages of a text log, from line {} (no stack trace)",
            source.line.unwrap_or(1)
        );
    } else {
        let _ = writeln!(
            s,
            "Source:    a {} trace in text, from line {}",
            source.format.as_deref().unwrap_or("stack"),
            source.line.unwrap_or(1)
        );
    }
    if let Some(said) = &source.exit_evidence {
        wrap_into(
            s,
            "Exit:      ",
            &format!("the log shows the process exiting: {said}"),
        );
    } else if let Some(why) = &source.exit_ruled_out {
        wrap_into(s, "Exit:      ", &format!("ruled out: {why}"));
    } else if let Some(said) = &source.exit_suggested {
        wrap_into(s, "Exit:      ", &format!("suggested, not shown: {said}"));
    }
    for m in &source.messages {
        let meaning = m
            .meaning
            .as_deref()
            .map(|w| format!(" ({w})"))
            .unwrap_or_default();
        wrap_into(
            s,
            "Message:   ",
            &format!("line {}, {}: {}{meaning}", m.line, m.kind.name(), m.text),
        );
    }
}

/// The process the dump records: its name and pid, its command line, what
/// kind of file recorded it, and when.
fn render_process(s: &mut String, report: &Report, process: &Process) {
    let name = clean(process.name.as_deref().unwrap_or("(unknown)"));
    let pid = process
        .pid
        .map_or_else(|| "pid unknown".to_string(), |pid| format!("pid {pid}"));
    let _ = writeln!(s, "Process:   {name} ({pid})");
    let command = report
        .capture
        .as_ref()
        .filter(|c| !c.command.is_empty())
        .map(|c| crate::printable::shell_words(&c.command))
        .or_else(|| process.command_line.clone());
    if let Some(command) = command {
        let _ = writeln!(s, "Command:   {}", clean(&command));
    }
    if report.source.kind == SourceKind::Core {
        let _ = writeln!(
            s,
            "Source:    a Linux core file ({})",
            clean(report.source.format.as_deref().unwrap_or("ELF core"))
        );
    } else if report.source.kind == SourceKind::Wer {
        let _ = writeln!(
            s,
            "Source:    a Windows Error Reporting report ({}), without a dump",
            clean(report.source.format.as_deref().unwrap_or("Report.wer"))
        );
    } else if let Some(format) = (report.source.kind == SourceKind::Minidump)
        .then_some(report.source.format.as_ref())
        .flatten()
    {
        // A minidump that says what it was made from (`convert`).
        let _ = writeln!(s, "Source:    a minidump, {}", clean(format));
    }
    if let Some(time) = &process.dump_time {
        let _ = write!(s, "Dumped:    {}", clean(time));
        if let (Some(start), Some(up)) = (&process.start_time, process.uptime_seconds) {
            let _ = write!(s, " (started {}, up {})", clean(start), duration(up));
        }
        s.push('\n');
    }
}

/// The system the dump was written on. What the dump does not record (a
/// core file records neither the kernel's version nor the CPU count) is
/// said to be unknown.
fn render_system(s: &mut String, sys: &System, p: Paint) {
    let version = sys
        .os_version
        .as_deref()
        .map_or_else(|| "(version unknown)".to_string(), clean);
    let cpus = match sys.cpu_count {
        0 => "CPU count unknown".to_string(),
        1 => "1 CPU".to_string(),
        n => format!("{n} CPUs"),
    };
    let _ = write!(
        s,
        "System:    {} {version}, {} ({cpus})",
        clean(&sys.os),
        clean(&sys.cpu),
    );
    if let Some(info) = &sys.cpu_info {
        let _ = write!(s, " {}", p.dim(&clean(info)));
    }
    s.push('\n');
}

/// The crash signature, and where the baseline has it: the issue that
/// tracks it, or that it is new.
fn render_signature(s: &mut String, report: &Report, p: Paint) {
    if let Some(signature) = &report.crash_signature {
        let _ = writeln!(s, "Signature: {}", clean(signature));
        if report.crash_signature_offsets {
            let _ = writeln!(
                s,
                "           {}",
                p.dim("frames without a name are module+offset: a rebuild changes this signature")
            );
        }
    }
    if let Some(b) = &report.baseline {
        let line = if b.known {
            let mut line = p.green("known").to_string();
            if let Some(issue) = &b.issue {
                line.push_str(&format!(", tracked at {}", clean(issue)));
            }
            if let Some(note) = &b.note {
                line.push_str(&format!(": {}", clean(note)));
            }
            line
        } else {
            format!("{}: its signature is not in the baseline", p.red("new"))
        };
        let _ = writeln!(s, "Baseline:  {line}");
    }
}

/// Seconds as people read them: `42.0 s`, `3 min 12 s`, `5 h 3 min`.
fn duration(seconds: f64) -> String {
    let whole = seconds as u64;
    match whole {
        0..60 => format!("{seconds:.1} s"),
        60..3600 => format!("{} min {} s", whole / 60, whole % 60),
        _ => format!("{} h {} min", whole / 3600, whole % 3600 / 60),
    }
}

/// The exception line (or that there is none), the C++ exception thrown or
/// in flight, and why the exception is not a crash when it is not.
fn render_exception(s: &mut String, report: &Report, p: Paint) {
    match &report.exception {
        Some(e) => {
            let thread = report
                .threads
                .iter()
                .find(|t| t.id == e.thread_id)
                .and_then(|t| t.name.as_deref())
                .map(|n| format!(" \"{}\"", clean(n)))
                .unwrap_or_default();
            // A text trace names the crash, not where it happened.
            let at = match report.source.kind {
                SourceKind::Text | SourceKind::Wer => String::new(),
                SourceKind::Minidump | SourceKind::Core => format!(" at {}", hex(e.address)),
            };
            let _ = writeln!(
                s,
                "Exception: {}{at} on thread {}{thread}",
                p.red(&format!("{:#x} {}", e.code, clean(&e.name))),
                e.thread_id
            );
            if e.ip_in_no_module && e.crash {
                let _ = writeln!(
                    s,
                    "           the instruction pointer {} lies in no mapped module: a call into unmapped memory (a library already unloaded or dlclose'd, or a freed or corrupt function pointer)",
                    report
                        .crashing_thread()
                        .and_then(|t| t.frames.first())
                        .map_or_else(|| hex(e.address), |f| hex(f.instruction))
                );
            }
            if let Some(thrown) = &e.cpp_type {
                let _ = writeln!(s, "           C++ exception of type {}", clean(thrown));
            }
            if let Some(f) = &e.cpp_in_flight {
                let _ = writeln!(
                    s,
                    "           while a C++ exception of type {} was being dispatched (record at {})",
                    clean(&f.cpp_type),
                    hex(f.record_address)
                );
            }
        }
        None => {
            let _ = writeln!(s, "Exception: none: live or hang dump");
        }
    }
    if let Some(why) = report
        .exception
        .as_ref()
        .and_then(|e| e.not_a_crash.as_deref())
    {
        let _ = writeln!(s, "           not a crash: {}", clean(why));
    }
}

/// The answer first: the best diagnosis with its evidence and fix, then the
/// other matches; or a plain statement that nothing matched, with the
/// exit-phase facts that were found.
fn render_diagnoses(s: &mut String, report: &Report, p: Paint) {
    let Some(best) = report.diagnoses.first() else {
        let _ = writeln!(
            s,
            "Diagnosis: {}",
            p.bold("no known exit-time failure matched")
        );
        render_exit_phase(s, report);
        return;
    };
    let _ = writeln!(
        s,
        "Diagnosis: {} {}",
        p.red(&best.name()),
        p.bold(&format!("- {}", clean(&best.title)))
    );
    // The thread its wait leads to, on the same line: the one to fix.
    let waits_for = best
        .waits_for
        .as_ref()
        .map(|w| format!(" {}", clean(&w.summary)))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "    {}{}, confidence {:.2}, {}{waits_for}",
        best.kind.as_str(),
        if best.generic { " (generic)" } else { "" },
        best.confidence,
        thread_label(report, best.thread_id)
    );
    render_why(s, best);
    render_advice(s, best);
    if report.diagnoses.len() > 1 {
        let others: Vec<String> = report.diagnoses[1..]
            .iter()
            .map(|d| format!("{} ({:.2})", d.name(), d.confidence))
            .collect();
        let _ = writeln!(s, "    Also matches: {}", others.join(", "));
    }
}

/// `thread 7 "name"`: a thread as the diagnosis names it.
fn thread_label(report: &Report, id: u32) -> String {
    let name = report
        .threads
        .iter()
        .find(|t| t.id == id)
        .and_then(|t| t.name.as_deref())
        .map(|n| format!(" \"{}\"", clean(n)))
        .unwrap_or_default();
    format!("thread {id}{name}")
}

/// When nothing matched: the exit-phase facts that were found (which
/// threads exit or start up, and which one is blamed).
fn render_exit_phase(s: &mut String, report: &Report) {
    let marked = |marker: fn(&Thread) -> Option<String>| -> Vec<String> {
        report
            .threads
            .iter()
            .filter_map(|t| {
                marker(t).map(|stage| format!("{} ({stage})", thread_label(report, t.id)))
            })
            .collect()
    };
    let exiting = marked(|t| t.exiting.as_ref().map(|m| m.stage.to_string()));
    let starting = marked(|t| t.starting.as_ref().map(|m| m.stage.to_string()));
    let mut facts = if exiting.is_empty() {
        "no thread is exiting".to_string()
    } else {
        format!("exiting: {}", exiting.join(", "))
    };
    if !starting.is_empty() {
        facts.push_str(&format!("; starting: {}", starting.join(", ")));
    }
    let blamed = report
        .exit_phase
        .blamed_thread
        .map(|id| format!("; blamed: {}", thread_label(report, id)))
        .unwrap_or_default();
    let _ = writeln!(s, "Exit phase: {facts}{blamed}");
}

/// Why the diagnosis holds: how sure it is, the rule's alternative that
/// matched, and the evidence, each fact with the thread and frame it was
/// seen in.
fn render_why(s: &mut String, best: &Diagnosis) {
    if best.thread_exit {
        wrap_into(
            s,
            "    At a thread's exit: ",
            "the teardown ran as one thread ended, not the process (its thread-local destructors); the same failure at process exit is the rule's",
        );
    }
    if let Some(why) = best.not_established() {
        wrap_into(s, "    Possible only: ", &why);
    }
    let _ = writeln!(
        s,
        "    Matched by [[match]] {} of the rule: {}",
        best.alternative.index + 1,
        clean(&best.alternative.label)
    );
    let _ = writeln!(s, "    Evidence:");
    for e in &best.evidence {
        let place = match (e.thread_id, e.frame_index) {
            (Some(t), Some(f)) => format!("[thread {t} frame {f}] "),
            (Some(t), None) => format!("[thread {t}] "),
            _ => String::new(),
        };
        let _ = writeln!(s, "      - {place}{}", clean(&e.fact));
    }
}

/// What to do about it: what happens, the fix, the versions that have it,
/// a workaround and the references.
fn render_advice(s: &mut String, best: &Diagnosis) {
    wrap_into(s, "    What happens: ", &best.summary);
    wrap_into(s, "    Fix: ", &best.fix);
    if let Some(check) = &best.version_check {
        wrap_into(s, "    Version: ", &check.summary);
        if let Some(source) = &check.source {
            let _ = writeln!(s, "      (release: {})", clean(source));
        }
    }
    if let Some(workaround) = &best.workaround {
        wrap_into(s, "    Workaround: ", workaround);
    }
    for reference in &best.references {
        let _ = writeln!(s, "    See: {}", clean(reference));
    }
}

/// Writes `text` after `label`, wrapped at 100 columns; continuation lines
/// are indented two columns deeper than the label.
fn wrap_into(s: &mut String, label: &str, text: &str) {
    const WIDTH: usize = 100;
    let indent = " ".repeat(label.len() - label.trim_start().len() + 2);
    let mut line = label.to_string();
    let mut empty = true;
    for word in clean(text).split_whitespace() {
        if !empty && line.len() + 1 + word.len() > WIDTH {
            s.push_str(&line);
            s.push('\n');
            line = indent.clone();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    s.push_str(&line);
    s.push('\n');
}
