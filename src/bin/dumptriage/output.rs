//! Where reports go: the format and file asked for, the failed inputs on
//! standard error, and the exit status a batch of reports gives.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Context as _;

use dumptriage::model::{Report, Status};
use dumptriage::printable;
use dumptriage::report::{self, Format, Paint};
use dumptriage::Finding;

use crate::cli::{FailOn, ReportArgs};
use crate::config::Context;
use crate::{EXIT_FINDING, EXIT_INPUT_ERROR};

/// Prints the reports as asked and picks the exit status: shared by every
/// command that ends with a report.
pub(crate) fn finish(
    reports: &[Report],
    options: &ReportArgs,
    context: &Context,
) -> anyhow::Result<ExitCode> {
    emit_on(reports, options, Console::Stdout, context)?;
    if reports.iter().any(|r| r.status == Status::Error) {
        return Ok(ExitCode::from(EXIT_INPUT_ERROR));
    }
    let fails = |report: &Report| {
        let finding = dumptriage::finding(report);
        match options.fail_on {
            FailOn::None => false,
            FailOn::Known => finding == Finding::Known,
            FailOn::Possible => matches!(finding, Finding::Known | Finding::Possible),
            FailOn::Unknown => matches!(finding, Finding::Unknown | Finding::Possible),
            FailOn::Any => finding != Finding::None,
            // Not in the baseline (or no baseline given: then every
            // failure is new).
            FailOn::New => {
                finding != Finding::None && report.baseline.as_ref().is_none_or(|b| !b.known)
            }
        }
    };
    Ok(if reports.iter().any(fails) {
        ExitCode::from(EXIT_FINDING)
    } else {
        ExitCode::SUCCESS
    })
}

/// Where a report goes when `--output` is not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Console {
    Stdout,
    /// `run`: standard output belongs to the command.
    Stderr,
}

/// Writes the report where the user asked, and the failed inputs on stderr
/// (unless the text report is already going to the terminal with them).
pub(crate) fn emit_on(
    reports: &[Report],
    options: &ReportArgs,
    console: Console,
    context: &Context,
) -> anyhow::Result<()> {
    // A symbol server that failed is a run-wide problem: said once on
    // stderr, whatever the format, as well as in each report.
    let mut servers = std::collections::BTreeSet::new();
    for warning in reports.iter().flat_map(|r| &r.warnings) {
        if warning.starts_with("symbol server ") && servers.insert(warning) {
            eprintln!("dumptriage: warning: {}", printable::clean(warning));
        }
    }
    let to_console = options.output.is_none();
    if !(to_console && matches!(options.format(), Format::Text | Format::Brief)) {
        print_input_errors(reports);
    }
    match &options.output {
        Some(path) => {
            let file =
                File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            let mut out = BufWriter::new(file);
            report::render(
                reports,
                options.format(),
                Paint { enabled: false },
                &mut out,
            )
            .and_then(|()| out.flush())
            .with_context(|| format!("cannot write {}", path.display()))
        }
        None => {
            let terminal = match console {
                Console::Stdout => io::stdout().is_terminal(),
                Console::Stderr => io::stderr().is_terminal(),
            };
            let paint = context.paint(options.color, terminal);
            match console {
                Console::Stdout => {
                    write_stdout(|out| report::render(reports, options.format(), paint, out))
                }
                Console::Stderr => {
                    let mut err = io::stderr().lock();
                    report::render(reports, options.format(), paint, &mut err)
                        .and_then(|()| err.flush())
                        .context("cannot write to standard error")
                }
            }
        }
    }
}

/// The inputs that could not be analysed, one line each on stderr.
pub(crate) fn print_input_errors(reports: &[Report]) {
    for report in reports.iter().filter(|r| r.status == Status::Error) {
        eprintln!(
            "dumptriage: error: {}: {}",
            printable::clean(&report.path),
            printable::clean(report.error.as_deref().unwrap_or("unknown error"))
        );
    }
}

/// Writes to stdout; a closed pipe (`dumptriage ... | head`) is not an error.
pub(crate) fn write_stdout(
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> anyhow::Result<()> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match write(&mut out).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to standard output"),
    }
}
