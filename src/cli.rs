//! The command line, as clap structs. Turned into library calls in main.rs.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::report::Format;

const EXIT_STATUS_HELP: &str = "\
Exit status:
  0  every input was analysed
  2  an input could not be analysed (not a minidump, truncated, corrupt,
     unreadable), or the command line was wrong; the other inputs are
     still analysed and reported";

/// Tells why a process crashed or hung while it was exiting, from its minidump.
#[derive(Debug, Parser)]
#[command(name = "dumptriage", version, after_help = EXIT_STATUS_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Analyse minidumps: symbolize every thread and report the crash or hang.
    #[command(after_help = EXIT_STATUS_HELP)]
    Analyze(AnalyzeArgs),
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Minidump files, or folders searched recursively for *.dmp and *.mdmp.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    #[command(flatten)]
    pub report: ReportArgs,
}

/// Options shared by every command that prints a report.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Where symbols are looked for, in order; repeatable. A folder (Breakpad
    /// store, Microsoft-style store, build-id tree, or PDBs and binaries side
    /// by side) or an http(s) symbol server URL. `_NT_SYMBOL_PATH` is searched
    /// next, then a `symbols` folder beside each dump.
    #[arg(long = "symbols", value_name = "DIR|URL")]
    pub symbols: Vec<PathBuf>,

    /// Where files downloaded from symbol servers are kept
    /// [default: dumptriage/symbols in the user's cache directory].
    #[arg(long = "symbols-cache", value_name = "DIR")]
    pub symbols_cache: Option<PathBuf>,

    /// Seconds one request to a symbol server may take before the server is
    /// given up for the run (with a warning).
    #[arg(long = "symbols-timeout", value_name = "SECS", default_value_t = 20)]
    pub symbols_timeout: u64,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Write the report to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Colour in the text report: `auto` colours a terminal unless NO_COLOR is set.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}
