//! The `dumptriage` binary: argument parsing (cli.rs, turned into the
//! library's option structs in config.rs), dispatch, and the one place
//! that prints errors and picks the exit status.

#![warn(unreachable_pub)]

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context as _};
use clap::Parser;

use dumptriage::artifact::{convert, doctor, pack};
use dumptriage::baseline::Baseline;
use dumptriage::model::{Report, Status};
use dumptriage::printable;
use dumptriage::report::Format;
use dumptriage::signatures::{Database, Problem};

mod capture;
mod cli;
mod config;
mod output;
mod rules;

use cli::{AnalyzeArgs, Cli, Command, FailOn, MergeArgs, PackArgs, ReportArgs};
use config::Context;
use output::{finish, print_input_errors, write_stdout};

/// A finding matched `--fail-on` (documented in --help and README).
pub(crate) const EXIT_FINDING: u8 = 1;
/// An input or rule file could not be used.
pub(crate) const EXIT_INPUT_ERROR: u8 = 2;

fn main() -> ExitCode {
    // Any panic is one line: inside a dump's analysis it becomes that dump's
    // error report (naming the file); elsewhere the hook prints it and the
    // status is 2.
    std::panic::set_hook(Box::new(|info| {
        if let Some(panic) = dumptriage::guard::record_panic(info) {
            eprintln!(
                "dumptriage: error: internal error: {} (please report it)",
                printable::clean(&panic)
            );
        }
    }));
    let cli = Cli::parse();
    let context = Context::from_env();
    let result = std::panic::catch_unwind(|| match cli.command {
        Command::Analyze(args) => analyze(args, &context),
        Command::Attach(args) => capture::attach(args, &context),
        Command::Run(args) => capture::run(args, &context),
        Command::Signatures(command) => rules::command(command),
        Command::Completions { shell } => completions(shell),
        Command::Man { dir } => man_pages(&dir),
        Command::Baseline(args) => baseline(args, &context),
        Command::Merge(args) => merge(args, &context),
        Command::Convert(args) => artifact(convert::command(&context.convert(&args))),
        Command::Pack(args) => pack(args, &context),
        Command::Doctor(args) => {
            let (options, wanted) = context.doctor(&args);
            artifact(doctor::command(&options, &wanted))
        }
    });
    // Indexes of big PDB and DWARF files are written on other threads
    // while the analysis goes on: waited for once the reports are out.
    context.finish_indexes();
    match result {
        Ok(Ok(code)) => code,
        Ok(Err(error)) => {
            eprintln!("dumptriage: error: {error:#}");
            ExitCode::from(EXIT_INPUT_ERROR)
        }
        Err(_) => ExitCode::from(EXIT_INPUT_ERROR),
    }
}

/// `completions SHELL`: the script clap_complete writes from the same
/// definitions that parse the command line.
fn completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    use clap::CommandFactory;
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "dumptriage", &mut script);
    io::stdout()
        .lock()
        .write_all(&script)
        .context("cannot write the completion script")?;
    Ok(ExitCode::SUCCESS)
}

/// `man DIR`: one page for the command and one per visible subcommand.
fn man_pages(dir: &Path) -> anyhow::Result<ExitCode> {
    use clap::CommandFactory;
    let shown = printable::clean(&dir.display().to_string());
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {shown}"))?;
    clap_mangen::generate_to(Cli::command(), dir)
        .with_context(|| format!("cannot write the man pages into {shown}"))?;
    Ok(ExitCode::SUCCESS)
}

fn analyze(args: AnalyzeArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let baseline = load_baseline(&args.report)?;
    let mut reports = analyze_all(&args, context)?;
    if let Some(baseline) = &baseline {
        baseline.apply(&mut reports);
    }
    finish(&reports, &args.report, context)
}

/// The reports of `analyze`'s inputs.
fn analyze_all(args: &AnalyzeArgs, context: &Context) -> anyhow::Result<Vec<Report>> {
    let database = load_database(&args.report.signatures)?;
    let collected = dumptriage::input::collect_with(&args.paths, args.text);
    for folder in &collected.empty_folders {
        eprintln!(
            "dumptriage: note: {} holds no .dmp or .mdmp files",
            printable::clean(&folder.display().to_string())
        );
    }
    let inputs = collected.inputs;
    let symbols = context.checked_symbols(&args.report.symbol)?;
    let progress = !args.report.quiet && io::stderr().is_terminal();
    let batch = context.batch(args.report.jobs, progress);
    Ok(dumptriage::analyze_inputs(
        &inputs, symbols, &database, &batch,
    ))
}

/// The --baseline file, read and checked before any work.
pub(crate) fn load_baseline(options: &ReportArgs) -> anyhow::Result<Option<Baseline>> {
    let baseline = options
        .baseline
        .as_deref()
        .map(Baseline::load)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    if baseline.is_none() && options.fail_on == FailOn::New {
        eprintln!(
            "dumptriage: note: --fail-on new without --baseline: every failure is new \
             (write a baseline with `dumptriage baseline`)"
        );
    }
    Ok(baseline)
}

/// `dumptriage baseline`: analyses, then writes the baseline file.
fn baseline(args: AnalyzeArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let options = &args.report;
    if options.format() != Format::Text {
        bail!("`baseline` writes a TOML baseline: --format and --brief do not apply");
    }
    let kept = Baseline::to_keep(options.baseline.as_deref(), options.output.as_deref())
        .map_err(anyhow::Error::msg)?;
    let reports = analyze_all(&args, context)?;
    print_input_errors(&reports);
    let (text, added) = kept.updated(&reports);
    match &options.output {
        Some(path) => std::fs::write(path, &text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => write_stdout(|out| out.write_all(text.as_bytes()))?,
    }
    eprintln!("dumptriage: baseline: {added}");
    let error = reports.iter().any(|r| r.status == Status::Error);
    Ok(ExitCode::from(if error { EXIT_INPUT_ERROR } else { 0 }))
}

/// `dumptriage merge`: the shards' reports as one run's.
fn merge(args: MergeArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let baseline = load_baseline(&args.report)?;
    let merged = dumptriage::merge::merge(&args.reports);
    for warning in &merged.warnings {
        eprintln!("dumptriage: warning: {warning}");
    }
    let mut reports = merged.reports;
    if let Some(baseline) = &baseline {
        baseline.apply(&mut reports);
    }
    finish(&reports, &args.report, context)
}

/// `dumptriage pack`: the inputs, packed with the files their analysis
/// used and the report.
fn pack(args: PackArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let database = load_database(&args.signatures)?;
    let symbols = context.symbols(&args.symbols);
    let mut said: Vec<String> = match symbols.check_stores() {
        Ok(warnings) => warnings.iter().map(|w| format!("warning: {w}")).collect(),
        Err(error) => return artifact(Err(error)),
    };
    // The packs among the inputs are taken out for as long as this lives.
    let collected = dumptriage::input::collect_with(&args.paths, args.text);
    let options = pack::PackOptions {
        inputs: collected.inputs.clone(),
        output: args.output.clone(),
        symbols,
        max_symbols: args.max_symbols,
        convert: args.convert,
        jobs: context.batch(args.jobs, false).jobs,
    };
    let outcome = pack::command(&options, &database).map(|mut done| {
        said.append(&mut done.said);
        done.said = said;
        done
    });
    drop(collected);
    artifact(outcome)
}

/// What `convert`, `pack` and `doctor` said, printed; their exit status
/// (1: the minidump's report differs, or a capture would capture nothing).
fn artifact(result: Result<dumptriage::artifact::Outcome, String>) -> anyhow::Result<ExitCode> {
    let done = result.map_err(anyhow::Error::msg)?;
    if !done.report.is_empty() {
        write_stdout(|out| out.write_all(done.report.as_bytes()))?;
    }
    for line in &done.said {
        eprintln!("dumptriage: {}", printable::clean(line));
    }
    Ok(ExitCode::from(if done.failed { EXIT_FINDING } else { 0 }))
}

/// The built-in rules plus the user's folders; every problem is printed.
pub(crate) fn load_database(dirs: &[PathBuf]) -> anyhow::Result<Database> {
    loaded(Database::load(dirs))
}

/// As `load_database`, with the built-in rules' examples.
pub(crate) fn load_database_with_examples(dirs: &[PathBuf]) -> anyhow::Result<Database> {
    loaded(Database::load_with_examples(dirs))
}

fn loaded(result: Result<Database, Vec<Problem>>) -> anyhow::Result<Database> {
    result.or_else(|problems| {
        print_problems(&problems);
        bail!("{} problem(s) in the signature rules", problems.len())
    })
}

pub(crate) fn print_problems(problems: &[Problem]) {
    for problem in problems {
        eprintln!("{}", printable::clean(&problem.to_string()));
    }
}
