//! The `dumptriage` binary: argument parsing, dispatch, and the one place
//! that prints errors and picks the exit status.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::Parser;

use dumptriage::baseline::Baseline;
use dumptriage::capture::{self, CaptureError, RunEnd, RunOptions};
mod rules;

use dumptriage::cli::{
    AnalyzeArgs, AttachArgs, Cli, Command, FailOn, MergeArgs, ReportArgs, RunArgs,
};
use dumptriage::dump::DumpError;
use dumptriage::input::Input;
use dumptriage::model::{Report, Status};
use dumptriage::printable;
use dumptriage::report::{self, Format, Paint};
use dumptriage::signatures::{Database, Problem};
use dumptriage::{BatchOptions, Finding};

/// A finding matched `--fail-on` (documented in --help and README).
pub(crate) const EXIT_FINDING: u8 = 1;
/// An input or rule file could not be used.
pub(crate) const EXIT_INPUT_ERROR: u8 = 2;

fn main() -> ExitCode {
    // Any panic is one line: inside a dump's analysis it becomes that dump's
    // error report (naming the file); elsewhere the hook prints it and the
    // status is 2.
    std::panic::set_hook(Box::new(dumptriage::guard::panic_hook));
    let cli = Cli::parse();
    let result = std::panic::catch_unwind(|| match cli.command {
        Command::Analyze(args) => analyze(args),
        Command::Attach(args) => attach(args),
        Command::Run(args) => run(args),
        Command::Signatures(command) => rules::command(command),
        Command::Completions { shell } => completions(shell),
        Command::Man { dir } => man_pages(&dir),
        Command::Baseline(args) => baseline(args),
        Command::Merge(args) => merge(args),
        Command::Convert(args) => artifact(dumptriage::artifact::convert::command(&args)),
        Command::Pack(args) => load_database(&args.signatures)
            .and_then(|db| artifact(dumptriage::artifact::pack::command(&args, &db))),
        Command::Doctor(args) => artifact(dumptriage::artifact::doctor::command(&args)),
    });
    // Indexes of big PDB and DWARF files are written on other threads
    // while the analysis goes on: waited for once the reports are out.
    for warning in dumptriage::symbols::native::index::finish() {
        eprintln!("dumptriage: warning: {warning}");
    }
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

/// How long a process's threads get to stop for a capture:
/// `DUMPTRIAGE_STOP_LIMIT_MS` (tests, slow machines), else 2 s.
fn stop_limit() -> std::time::Duration {
    std::env::var("DUMPTRIAGE_STOP_LIMIT_MS")
        .ok()
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .map_or(
            capture::DEFAULT_STOP_LIMIT,
            std::time::Duration::from_millis,
        )
}

/// What the panic tests set (debug builds only): the file name of a dump
/// whose analysis panics.
fn debug_panic_on() -> Option<std::ffi::OsString> {
    if cfg!(debug_assertions) {
        std::env::var_os("DUMPTRIAGE_DEBUG_PANIC_ON")
    } else {
        None
    }
}

fn analyze(args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let baseline = load_baseline(&args.report)?;
    let mut reports = analyze_all(&args)?;
    if let Some(baseline) = &baseline {
        baseline.apply(&mut reports);
    }
    finish(&reports, &args.report)
}

/// The reports of `analyze`'s inputs.
fn analyze_all(args: &AnalyzeArgs) -> anyhow::Result<Vec<Report>> {
    let database = load_database(&args.report.signatures)?;
    let collected = dumptriage::input::collect_with(&args.paths, args.text);
    for folder in &collected.empty_folders {
        eprintln!(
            "dumptriage: note: {} holds no .dmp or .mdmp files",
            printable::clean(&folder.display().to_string())
        );
    }
    let inputs = collected.inputs;
    let symbols = checked_symbols(&args.report)?;
    let mut batch = BatchOptions {
        progress: !args.report.quiet && io::stderr().is_terminal(),
        debug_panic_on: debug_panic_on(),
        ..BatchOptions::default()
    };
    if let Some(jobs) = args.report.jobs {
        batch.jobs = usize::from(jobs);
    }
    Ok(dumptriage::analyze_inputs(
        &inputs, symbols, &database, &batch,
    ))
}

/// The --baseline file, read and checked before any work.
fn load_baseline(options: &ReportArgs) -> anyhow::Result<Option<Baseline>> {
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
fn baseline(args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let options = &args.report;
    if options.format() != Format::Text {
        bail!("`baseline` writes a TOML baseline: --format and --brief do not apply");
    }
    let kept = Baseline::to_keep(options.baseline.as_deref(), options.output.as_deref())
        .map_err(anyhow::Error::msg)?;
    let reports = analyze_all(&args)?;
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
fn merge(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let baseline = load_baseline(&args.report)?;
    let merged = dumptriage::merge::merge(&args.reports);
    for warning in &merged.warnings {
        eprintln!("dumptriage: warning: {warning}");
    }
    let mut reports = merged.reports;
    if let Some(baseline) = &baseline {
        baseline.apply(&mut reports);
    }
    finish(&reports, &args.report)
}

fn attach(args: AttachArgs) -> anyhow::Result<ExitCode> {
    checked_symbols(&args.report)?;
    let database = load_database(&args.report.signatures)?;
    let baseline = load_baseline(&args.report)?;
    let analyze = analyzer(&args.report, &database, baseline.as_ref());
    let dir = args.dump_dir.unwrap_or_else(|| PathBuf::from("."));
    let pid = match args.target.parse::<u32>() {
        Ok(pid) => pid,
        Err(_) => capture::find_by_name(&args.target).map_err(anyhow::Error::msg)?,
    };
    let captured = capture::attach(pid, &dir, stop_limit(), &analyze)?;
    let mut reports = vec![captured.report];
    if args.tree {
        for below in capture::stuck_below(pid) {
            match capture::attach(below, &dir, stop_limit(), &analyze) {
                Ok(captured) => reports.push(captured.report),
                Err(error) => eprintln!(
                    "dumptriage: process {below} (started by {pid}): no minidump: {error}"
                ),
            }
        }
    }
    finish(&reports, &args.report)
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

/// Runs the command; returns only for a hang or an error: otherwise this
/// process ends the way the command did (`capture::exit_like`).
fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    checked_symbols(&args.report)?;
    // Rules are loaded before the command starts: a bad rule file must not
    // surface only after a long run.
    let database = load_database(&args.report.signatures)?;
    let baseline = load_baseline(&args.report)?;
    let analyze = analyzer(&args.report, &database, baseline.as_ref());
    let options = RunOptions {
        command: args.command.clone(),
        hang_timeout: args.hang_timeout,
        dump_dir: args.dump_dir.clone().unwrap_or_else(|| PathBuf::from(".")),
        no_kill: args.no_kill,
        kill_after: args.kill_after,
        stop_limit: stop_limit(),
    };
    let (end, descendants) = match capture::run(&options, &analyze) {
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
    let others: Vec<Report> = descendants
        .into_iter()
        .map(|captured| {
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
        })
        .collect();
    match end {
        RunEnd::Exited(status) => {
            if !others.is_empty() {
                if let Err(error) = emit_on(&others, &args.report, Console::Stderr) {
                    eprintln!("dumptriage: error: {error:#}");
                }
            }
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
            report_capture(&what, dump, others, &args.report);
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
            let mut reports = others;
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
            if !reports.is_empty() {
                if let Err(error) = emit_on(&reports, &args.report, Console::Stderr) {
                    eprintln!("dumptriage: error: {error:#}");
                }
            }
            Ok(ExitCode::from(capture::EXIT_HANG))
        }
    }
}

/// `run`'s account of a capture, on standard error (standard output is the
/// command's): one line saying what happened, then the report.
/// `others`: the reports of processes the command started that crashed too.
fn report_capture(
    what: &str,
    dump: Result<capture::Captured, CaptureError>,
    mut others: Vec<Report>,
    options: &ReportArgs,
) {
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
    if !others.is_empty() {
        if let Err(error) = emit_on(&others, options, Console::Stderr) {
            eprintln!("dumptriage: error: {error:#}");
        }
    }
}

/// The symbol sources of the flags, checked before any work: a warning per
/// unusable folder, an error for an entry that can never be read.
fn checked_symbols(options: &ReportArgs) -> anyhow::Result<dumptriage::symbols::SymbolConfig> {
    let symbols = options.symbol_config();
    for warning in symbols.check_stores().map_err(anyhow::Error::msg)? {
        eprintln!("dumptriage: warning: {}", printable::clean(&warning));
    }
    Ok(symbols)
}

/// Analyses one dump the way `analyze` does, with the same options.
fn analyzer<'a>(
    options: &'a ReportArgs,
    database: &'a Database,
    baseline: Option<&'a Baseline>,
) -> impl Fn(&Path) -> Report + 'a {
    move |path: &Path| {
        let symbols = options.symbol_config();
        let batch = BatchOptions {
            jobs: 1,
            progress: false,
            debug_panic_on: debug_panic_on(),
        };
        dumptriage::analyze_inputs(
            &[Input::Dump(path.to_path_buf())],
            symbols,
            database,
            &batch,
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

/// The built-in rules plus the user's folders; every problem is printed.
pub(crate) fn load_database(dirs: &[std::path::PathBuf]) -> anyhow::Result<Database> {
    loaded(Database::load(dirs))
}

/// As `load_database`, with the built-in rules' examples.
pub(crate) fn load_database_with_examples(dirs: &[std::path::PathBuf]) -> anyhow::Result<Database> {
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

/// Prints the reports as asked and picks the exit status: shared by every
/// command that ends with a report.
fn finish(reports: &[Report], options: &ReportArgs) -> anyhow::Result<ExitCode> {
    emit(reports, options)?;
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
enum Console {
    Stdout,
    /// `run`: standard output belongs to the command.
    Stderr,
}

fn emit(reports: &[Report], options: &ReportArgs) -> anyhow::Result<()> {
    emit_on(reports, options, Console::Stdout)
}

/// Writes the report where the user asked, and the failed inputs on stderr
/// (unless the text report is already going to the terminal with them).
fn emit_on(reports: &[Report], options: &ReportArgs, console: Console) -> anyhow::Result<()> {
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
            let paint = Paint {
                enabled: report::color_enabled(
                    options.color,
                    terminal,
                    std::env::var_os("NO_COLOR").as_deref(),
                ),
            };
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
fn print_input_errors(reports: &[Report]) {
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
