//! The `dumptriage` binary: argument parsing, dispatch, and the one place
//! that prints errors and picks the exit status.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use dumptriage::cli::{AnalyzeArgs, Cli, Command, ReportArgs};
use dumptriage::model::{Report, Status};
use dumptriage::report::{self, Format, Paint};
use dumptriage::symbols::SymbolConfig;

/// An input could not be analysed (documented in --help and README).
const EXIT_INPUT_ERROR: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Analyze(args) => analyze(args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("dumptriage: error: {error:#}");
            ExitCode::from(EXIT_INPUT_ERROR)
        }
    }
}

fn analyze(args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let inputs = dumptriage::input::collect(&args.paths);
    let symbols = SymbolConfig::from_args(&args.report);
    let reports = dumptriage::analyze_inputs(&inputs, symbols);
    finish(&reports, &args.report)
}

/// Prints the reports as asked and picks the exit status: shared by every
/// command that ends with a report.
fn finish(reports: &[Report], options: &ReportArgs) -> anyhow::Result<ExitCode> {
    emit(reports, options)?;
    let failed = reports.iter().any(|r| r.status == Status::Error);
    Ok(if failed {
        ExitCode::from(EXIT_INPUT_ERROR)
    } else {
        ExitCode::SUCCESS
    })
}

/// Writes the report where the user asked, and the failed inputs on stderr
/// (unless the text report is already going to the terminal with them).
fn emit(reports: &[Report], options: &ReportArgs) -> anyhow::Result<()> {
    let to_stdout = options.output.is_none();
    if !(to_stdout && options.format == Format::Text) {
        for report in reports.iter().filter(|r| r.status == Status::Error) {
            eprintln!(
                "dumptriage: error: {}: {}",
                report::clean(&report.path),
                report::clean(report.error.as_deref().unwrap_or("unknown error"))
            );
        }
    }
    match &options.output {
        Some(path) => {
            let file =
                File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            let mut out = BufWriter::new(file);
            report::render(reports, options.format, Paint { enabled: false }, &mut out)
                .and_then(|()| out.flush())
                .with_context(|| format!("cannot write {}", path.display()))
        }
        None => {
            let stdout = io::stdout();
            let paint = Paint {
                enabled: report::color_enabled(
                    options.color,
                    stdout.is_terminal(),
                    std::env::var_os("NO_COLOR").as_deref(),
                ),
            };
            let mut out = BufWriter::new(stdout.lock());
            match report::render(reports, options.format, paint, &mut out)
                .and_then(|()| out.flush())
            {
                // A closed pipe (`dumptriage analyze ... | head`) is not an error.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
                other => other.context("cannot write the report"),
            }
        }
    }
}
