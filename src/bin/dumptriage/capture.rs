//! `attach` and `run`: the capture, then the account of it and its reports
//! (on standard error for `run`: standard output is the command's).

use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use dumptriage::baseline::Baseline;
use dumptriage::capture::{self, CaptureError, Captured, Notice, RunEnd};
use dumptriage::dump::DumpError;
use dumptriage::input::Input;
use dumptriage::model::Report;
use dumptriage::printable;
use dumptriage::signatures::Database;
use dumptriage::symbols::SymbolConfig;

use crate::cli::{AttachArgs, RunArgs};
use crate::config::Context;
use crate::output::{emit_on, finish, Console};
use crate::{load_baseline, load_database};

pub(crate) fn attach(args: AttachArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let symbols = context.checked_symbols(&args.report.symbol)?;
    let database = load_database(&args.report.signatures)?;
    let baseline = load_baseline(&args.report)?;
    let analyze = analyzer(symbols, context, &database, baseline.as_ref());
    let dir = args.dump_dir.unwrap_or_else(|| PathBuf::from("."));
    let pid = match args.target.parse::<u32>() {
        Ok(pid) => pid,
        Err(_) => capture::find_by_name(&args.target).map_err(anyhow::Error::msg)?,
    };
    let captured = capture::attach(pid, &dir, context.stop(), &analyze)?;
    let mut reports = vec![captured.report];
    if args.tree {
        for below in capture::stuck_below(pid) {
            match capture::attach(below, &dir, context.stop(), &analyze) {
                Ok(captured) => reports.push(captured.report),
                Err(error) => eprintln!(
                    "dumptriage: process {below} (started by {pid}): no minidump: {error}"
                ),
            }
        }
    }
    finish(&reports, &args.report, context)
}

/// Runs the command; returns only for a hang or an error: otherwise this
/// process ends the way the command did (`capture::exit_like`).
pub(crate) fn run(args: RunArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let symbols = context.checked_symbols(&args.report.symbol)?;
    // Rules are loaded before the command starts: a bad rule file must not
    // surface only after a long run.
    let database = load_database(&args.report.signatures)?;
    let baseline = load_baseline(&args.report)?;
    let analyze = analyzer(symbols, context, &database, baseline.as_ref());
    let notice = |notice: Notice| match notice {
        Notice::Warning(warning) => {
            eprintln!("dumptriage: warning: {}", printable::clean(&warning));
        }
        Notice::Note(note) => eprintln!("dumptriage: {}", printable::clean(&note)),
    };
    let (end, descendants) = match capture::run(&context.run(&args), &analyze, &notice) {
        Ok(end) => end,
        Err(error @ CaptureError::Spawn { .. }) => {
            eprintln!("dumptriage: error: {error}");
            let not_found = matches!(&error, CaptureError::Spawn { source, .. }
                if source.kind() == io::ErrorKind::NotFound);
            return Ok(ExitCode::from(if not_found {
                capture::EXIT_NOT_FOUND
            } else {
                capture::EXIT_NOT_EXECUTABLE
            }));
        }
        Err(error) => return Err(error.into()),
    };
    // Crashes of processes the command started, from their core files.
    let others: Vec<Report> = descendants.into_iter().map(descendant_crashed).collect();
    let report = |reports: &[Report]| {
        if !reports.is_empty() {
            if let Err(error) = emit_on(reports, &args.report, Console::Stderr, context) {
                eprintln!("dumptriage: error: {error:#}");
            }
        }
    };
    match end {
        RunEnd::Exited(status) => {
            report(&others);
            capture::exit_like(status)
        }
        RunEnd::Crashed {
            pid,
            signal,
            status,
            dump,
        } => {
            let what = format!(
                "process {pid} crashed with {}",
                capture::signal_name(signal)
            );
            report(&crashed(&what, dump, others));
            capture::exit_like(status)
        }
        RunEnd::Hung {
            pid,
            after,
            killed,
            dumps,
        } => {
            let then = if killed {
                "ended it and every process it started"
            } else {
                "left it running (--no-kill)"
            };
            eprintln!(
                "dumptriage: process {pid} still running after {:.1} s (hang timeout); {then}",
                after.as_secs_f64()
            );
            report(&hung(pid, dumps, others));
            Ok(ExitCode::from(capture::EXIT_HANG))
        }
    }
}

/// A process the command started crashed and left a core: said, and its
/// report.
fn descendant_crashed(captured: Captured) -> Report {
    let (pid, signal) = captured
        .report
        .capture
        .as_ref()
        .map(|c| (c.pid, c.signal.clone().unwrap_or_default()))
        .unwrap_or_default();
    eprintln!(
        "dumptriage: process {pid} (started by the command) crashed with {signal}; core file: {}",
        printable::clean(&captured.path.display().to_string())
    );
    captured.report
}

/// `run`'s account of a crash's capture: one line saying what happened;
/// the reports, the crash's first, then `others` (processes the command
/// started that crashed too).
fn crashed(
    what: &str,
    dump: Result<Captured, CaptureError>,
    mut others: Vec<Report>,
) -> Vec<Report> {
    match dump {
        Ok(captured) => {
            eprintln!(
                "dumptriage: {what}; minidump: {}",
                printable::clean(&captured.path.display().to_string())
            );
            others.insert(0, captured.report);
        }
        Err(error) => eprintln!("dumptriage: {what}; no minidump: {error}"),
    }
    others
}

/// `run`'s account of a hang's dumps (of the command `pid` and the stuck
/// processes of its tree), one line each; the reports, after `others`.
fn hung(
    pid: u32,
    dumps: Vec<(u32, Result<Captured, CaptureError>)>,
    mut reports: Vec<Report>,
) -> Vec<Report> {
    for (process, dump) in dumps {
        let what = if process == pid {
            format!("process {pid} (the command)")
        } else {
            format!("process {process} (started by the command)")
        };
        match dump {
            Ok(captured) => {
                eprintln!(
                    "dumptriage: {what}: minidump {}",
                    printable::clean(&captured.path.display().to_string())
                );
                reports.push(captured.report);
            }
            Err(error) => eprintln!("dumptriage: {what}: no minidump: {error}"),
        }
    }
    reports
}

/// Analyses one dump the way `analyze` does, with the same options.
fn analyzer<'a>(
    symbols: SymbolConfig,
    context: &'a Context,
    database: &'a Database,
    baseline: Option<&'a Baseline>,
) -> impl Fn(&Path) -> Report + 'a {
    move |path: &Path| {
        dumptriage::analyze_inputs(
            &[Input::Dump(path.to_path_buf())],
            symbols.clone(),
            database,
            &context.batch(Some(1), false),
        )
        .pop()
        .map(|mut report| {
            if let Some(baseline) = baseline {
                report.baseline = baseline.check(&report);
            }
            report
        })
        .unwrap_or_else(|| {
            DumpError::Internal("not analysed".to_string()).report(path.display().to_string())
        })
    }
}
