//! The command line, as clap structs (config.rs turns them into the
//! library's plain option structs; the library knows nothing of clap).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use dumptriage::report::Format;

const EXIT_STATUS_HELP: &str = "\
Exit status:
  0  every input was analysed (and no finding matched --fail-on)
  1  a finding matched --fail-on (known or unknown crash or hang)
  2  an input could not be analysed (not a minidump, truncated, corrupt,
     unreadable), a rule file was invalid, or the command line was wrong;
     the other inputs are still analysed and reported";

const RUN_EXIT_STATUS_HELP: &str = "\
Exit status:
  the command's own: its exit code, or death by the same signal when it
       was killed or crashed (the crash is captured and reported first)
  124  the command was still running at --hang-timeout: captured, reported,
       and killed (or left running with --no-kill)
  126  the command was found but could not be executed
  127  the command was not found
  2    dumptriage itself failed before running the command (bad options,
       unreadable rule files, a --dump-dir that cannot be created or
       written)";

/// What `attach` and `run` read from the environment (config.rs).
fn capture_environment_help() -> String {
    format!(
        "Environment:\n  \
         DUMPTRIAGE_STOP_LIMIT_MS  how long, in milliseconds, every thread of the\n    \
         process gets to stop for a capture (default: {}); when one has not\n    \
         stopped by then, the capture is abandoned with a message naming it",
        dumptriage::capture::DEFAULT_STOP_LIMIT.as_millis()
    )
}

/// Tells why a process crashed or hung while it was exiting, from its minidump.
#[derive(Debug, Parser)]
#[command(name = "dumptriage", version, after_help = EXIT_STATUS_HELP)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Analyse minidumps: symbolize every thread and report the crash or hang.
    #[command(after_help = EXIT_STATUS_HELP)]
    Analyze(AnalyzeArgs),
    /// Write a minidump of a running process and analyse it at once. The
    /// process keeps running.
    #[command(after_help = format!("{EXIT_STATUS_HELP}\n\n{}", capture_environment_help()))]
    Attach(AttachArgs),
    /// Run a command; when it crashes or hangs, write a minidump and
    /// diagnose it (the report goes to standard error).
    #[command(after_help = format!("{RUN_EXIT_STATUS_HELP}\n\n{}", capture_environment_help()))]
    Run(RunArgs),
    /// List, show, lint and test the signature database.
    #[command(subcommand)]
    Signatures(SignaturesCommand),
    /// Analyse dumps and write their failures' crash signatures as a
    /// baseline (TOML, to -o FILE or standard output) for `--baseline`. The
    /// entries of the --baseline file given (by default -o FILE, when it
    /// exists) are kept with their issues and notes. See docs/ci.md.
    #[command(after_help = EXIT_STATUS_HELP)]
    Baseline(AnalyzeArgs),
    /// Combine the JSON reports of several runs (`analyze --format json`,
    /// one per shard of a folder) into one report in any format, as one
    /// run over every dump would give it. See docs/ci.md.
    #[command(after_help = EXIT_STATUS_HELP)]
    Merge(MergeArgs),
    /// Write a small minidump of a Linux core that gives the same report:
    /// every thread's registers and stack, the modules with their build
    /// ids, and the memory the diagnosis reads.
    #[command(after_help = CONVERT_EXIT_STATUS_HELP)]
    Convert(ConvertArgs),
    /// Pack dumps or cores with every binary and symbol file their analysis
    /// used, and the report, into one .tar.zst that `analyze` reads on any
    /// machine with no symbol options.
    Pack(PackArgs),
    /// Check that a crash or a hang on this machine would leave something to
    /// analyse (core_pattern, ulimit -c, ptrace, WER LocalDumps, the dump
    /// folder, symbol servers), each finding with how to fix it.
    #[command(after_help = DOCTOR_EXIT_STATUS_HELP)]
    Doctor(DoctorArgs),
    /// Print the completion script for SHELL, generated from this command
    /// line (bash: `source <(dumptriage completions bash)`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write the man pages (dumptriage.1, and dumptriage-SUBCOMMAND.1 for
    /// each subcommand) into DIR, generated from this command line.
    #[command(hide = true)]
    Man { dir: PathBuf },
}

const CONVERT_EXIT_STATUS_HELP: &str = "\
Exit status:
  0  the minidump was written, and its report is the core's
  1  the minidump was written, but its report differs from the core's (the
     differences are listed on standard error)
  2  the core could not be read or the minidump not written";

const DOCTOR_EXIT_STATUS_HELP: &str = "\
Exit status:
  0  every way of capture checked (those of --for, else all of this OS's)
     would capture
  1  one of them would capture nothing: the findings marked PROBLEM say why
     and how to fix it
  2  the command line was wrong";

/// A way a crash or hang is captured, for `doctor --for`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CaptureWay {
    /// The kernel's core files (Linux).
    Cores,
    /// `dumptriage run` (Linux: ptrace of its own child).
    Run,
    /// `dumptriage attach` (Linux: ptrace of another process).
    Attach,
    /// Windows Error Reporting's LocalDumps (Windows).
    Wer,
}

#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Only these ways of capture decide the exit status (repeatable):
    /// `cores`, `run`, `attach` (Linux), `wer` (Windows).
    #[arg(long = "for", value_enum, value_name = "WAY")]
    pub(crate) ways: Vec<CaptureWay>,

    /// The folder `run` or `attach` would write dumps to (default: the
    /// current folder).
    #[arg(long, value_name = "DIR")]
    pub(crate) dump_dir: Option<PathBuf>,

    #[command(flatten)]
    pub(crate) symbols: SymbolArgs,
}

#[derive(Debug, Args)]
pub(crate) struct PackArgs {
    /// Dumps, cores, text traces, OS crash reports or folders, as `analyze`
    /// takes them.
    #[arg(required = true, value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,

    /// Folders are searched for *.txt and *.log files too.
    #[arg(long)]
    pub(crate) text: bool,

    /// The archive to write (FILE.tar.zst).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output: PathBuf,

    /// Pack each core as the small minidump `convert` makes of it (the core
    /// itself when that minidump's report differs).
    #[arg(long)]
    pub(crate) convert: bool,

    /// Most bytes of binaries and symbol files packed: the rest is left
    /// out, and listed.
    #[arg(long, value_name = "SIZE", default_value = "4G", value_parser = parse_size)]
    pub(crate) max_symbols: u64,

    /// Folder of rule files added to the built-in rules for the pack's
    /// report; repeatable (the rules are not packed).
    #[arg(long = "signatures", value_name = "DIR")]
    pub(crate) signatures: Vec<PathBuf>,

    /// Dumps analysed in parallel (default: the number of cores).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) jobs: Option<u16>,

    #[command(flatten)]
    pub(crate) symbols: SymbolArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ConvertArgs {
    /// The core file (plain, or compressed as systemd-coredump keeps it).
    #[arg(
        value_name = "CORE",
        required_unless_present = "from_stdin",
        conflicts_with = "from_stdin"
    )]
    pub(crate) core: Option<PathBuf>,

    /// Read the core from standard input, once and in order, as a
    /// `core_pattern` pipe gives it (see docs/artifacts.md); never replaces
    /// an existing file.
    #[arg(long)]
    pub(crate) from_stdin: bool,

    /// The minidump to write.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output: PathBuf,

    /// With --from-stdin: most bytes of writable memory (the heap) kept
    /// from the stream beyond the stacks and the modules' data, for the
    /// wait and Python readers.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = parse_size)]
    pub(crate) heap_budget: u64,

    #[command(flatten)]
    pub(crate) symbols: SymbolArgs,
}

#[derive(Debug, Args)]
pub(crate) struct MergeArgs {
    /// JSON reports written by `dumptriage analyze --format json`.
    #[arg(required = true, value_name = "REPORT.json")]
    pub(crate) reports: Vec<PathBuf>,

    #[command(flatten)]
    pub(crate) report: ReportArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum SignaturesCommand {
    /// The ids, kinds and titles of every rule.
    List(SignatureDirs),
    /// The full text of one rule.
    Show {
        id: String,
        #[command(flatten)]
        dirs: SignatureDirs,
    },
    /// Check rule files: schema, unique ids, id = file name, valid patterns,
    /// https references, non-empty fix. Every problem is reported.
    Lint {
        /// Folder of rule files (default: the built-in rules).
        dir: Option<PathBuf>,
    },
    /// Run every rule's inline examples against the whole database.
    Test {
        /// Folder of rule files added to the built-in ones (default: none).
        dir: Option<PathBuf>,
    },
    /// Write one Markdown page per rule, and an index, into DIR.
    Docs {
        dir: PathBuf,
        /// Also the table of rules in this README, between its marker lines
        /// (ids linking to the pages in DIR).
        #[arg(long, value_name = "FILE")]
        readme: Option<PathBuf>,
        /// Do not write: fail if the pages in DIR (or the README's table) differ from the rules.
        #[arg(long)]
        check: bool,
    },
}

#[derive(Debug, Args)]
pub(crate) struct SignatureDirs {
    /// Folder of rule files that add to, or override by id, the built-in rules; repeatable.
    #[arg(long = "signatures", value_name = "DIR")]
    pub(crate) signatures: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct AnalyzeArgs {
    /// Minidumps, Linux cores, packs (`dumptriage pack`), apport .crash
    /// files, Report.wer, text files holding stack traces (CI logs, bug
    /// reports: any name, read as text when they are none of those), `-`
    /// for standard input, or folders searched recursively for *.dmp,
    /// *.mdmp, *.hdmp and core files, and for cores, packs and OS crash
    /// reports by content (and *.txt and *.log with --text).
    #[arg(required = true, value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,

    /// Folders are searched for *.txt and *.log files too, read for stack
    /// traces (without it, a folder of dumps is never scanned for logs).
    #[arg(long)]
    pub(crate) text: bool,

    #[command(flatten)]
    pub(crate) report: ReportArgs,
}

#[derive(Debug, Args)]
pub(crate) struct AttachArgs {
    /// The process to dump: its PID, or its name (Linux: the one process
    /// whose name or program file name is NAME; several are an error that
    /// lists them).
    #[arg(value_name = "PID|NAME")]
    pub(crate) target: String,

    /// Also dump the processes it started that are stuck (Linux: the
    /// deepest that are not just waiting for a child, at most 8), as `run`
    /// does at a hang; none is killed.
    #[arg(long)]
    pub(crate) tree: bool,

    /// Folder for the dump (default: the current folder). The file is named
    /// PROCESSNAME_PID_YYMMDD_HHMMSS.dmp.
    #[arg(long, value_name = "DIR")]
    pub(crate) dump_dir: Option<PathBuf>,

    #[command(flatten)]
    pub(crate) report: ReportArgs,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// Capture, report and end the command when it is still running after
    /// DURATION (a hang): `90` or `90s`, `500ms`, `2m`, `1h`. The stuck
    /// processes of its tree are dumped (the deepest not just waiting for a
    /// child, at most 8), then the whole tree is ended. Without it, only
    /// crashes are captured.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) hang_timeout: Option<std::time::Duration>,

    /// Folder for dumps (default: the current folder).
    #[arg(long, value_name = "DIR")]
    pub(crate) dump_dir: Option<PathBuf>,

    /// After capturing a hang, leave the command running (no longer traced)
    /// instead of killing it.
    #[arg(long)]
    pub(crate) no_kill: bool,

    /// After a hang's dumps, the command's processes get SIGTERM, and
    /// SIGKILL when still running after DURATION (as `timeout -k`).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "2s")]
    pub(crate) kill_after: std::time::Duration,

    #[command(flatten)]
    pub(crate) report: ReportArgs,

    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub(crate) command: Vec<OsString>,
}

/// A positive number of seconds, fractions allowed (`1.5`).
/// A duration: a number with a unit (`500ms`, `90s`, `2m`, `1.5h`), or a
/// bare number of seconds (`90`), as timeout(1) takes it.
fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "s" | "sec" | "secs" => 1.0,
        "ms" => 0.001,
        "m" | "min" | "mins" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(format!(
                "`{text}`: unknown unit `{other}` (use ms, s, m or h; a bare number is seconds)"
            ))
        }
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a duration (`90`, `90s`, `500ms`, `2m`, `1h`)"))?;
    let seconds = value * scale;
    if !(seconds > 0.0 && seconds.is_finite()) {
        return Err(format!("`{text}` must be a positive duration"));
    }
    std::time::Duration::try_from_secs_f64(seconds).map_err(|e| e.to_string())
}

/// `--symbol-index-min`: a size, or `0` for every file.
fn parse_index_min(text: &str) -> Result<u64, String> {
    match text.trim() {
        "0" => Ok(0),
        size => parse_size(size),
    }
}

/// A size in bytes: `4096`, `512K`, `512M`, `4G`, `1T` (powers of 1024; a
/// trailing `B` or `iB` is allowed, case does not matter).
fn parse_size(text: &str) -> Result<u64, String> {
    let lower = text.trim().to_ascii_lowercase();
    let unit = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (digits, shift) = match unit.char_indices().last() {
        Some((i, 'k')) => (&unit[..i], 10),
        Some((i, 'm')) => (&unit[..i], 20),
        Some((i, 'g')) => (&unit[..i], 30),
        Some((i, 't')) => (&unit[..i], 40),
        _ => (unit, 0),
    };
    let number: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a size (examples: 4096, 512M, 4G)"))?;
    if number == 0 {
        return Err(format!("`{text}` must be more than 0 bytes"));
    }
    number
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("`{text}` is too large"))
}

/// Where symbols come from: part of the report options, and what `pack`
/// and `convert` take of them (they write files, not reports).
#[derive(Debug, Args)]
pub(crate) struct SymbolArgs {
    /// Where symbols are looked for, in order; repeatable. A folder (Breakpad
    /// store, Microsoft-style store, build-id tree, or PDBs and binaries side
    /// by side), an http(s) symbol server URL, or `debuginfod+URL` for a
    /// debuginfod server (ELF files by build id). `_NT_SYMBOL_PATH` and
    /// `DEBUGINFOD_URLS` are searched next, then a `symbols` folder beside
    /// each dump. Downloads from debuginfod go to `DEBUGINFOD_CACHE_PATH`
    /// when it is set.
    #[arg(long = "symbols", value_name = "DIR|URL")]
    pub(crate) symbols: Vec<PathBuf>,

    /// Where files downloaded from symbol servers are kept, and the
    /// indexes of big .sym, PDB and DWARF files (`index/`)
    /// [default: dumptriage/symbols in the user's cache directory; with
    /// none, downloads are used for the run only and nothing is indexed].
    #[arg(long = "symbols-cache", value_name = "DIR")]
    pub(crate) symbols_cache: Option<PathBuf>,

    /// Read every symbol file itself, on every run: neither read big ones
    /// through their index in the symbols cache nor write one. (Files from
    /// --symbol-index-min bytes up are indexed: a .sym file on its first
    /// use, a PDB or DWARF file on its second.)
    #[arg(long = "no-symbol-index")]
    pub(crate) no_symbol_index: bool,

    /// The size from which a symbol file is indexed (`0`: every file).
    #[arg(
        long = "symbol-index-min",
        value_name = "SIZE",
        env = "DUMPTRIAGE_SYMBOL_INDEX_MIN",
        default_value_t = dumptriage::symbols::DEFAULT_INDEX_MIN_SIZE,
        value_parser = parse_index_min
    )]
    pub(crate) symbol_index_min: u64,

    /// A Microsoft symbol path, searched after --symbols, as WinDbg reads
    /// it: `srv*CACHE*URL`, `cache*DIR` and folders, `;`-separated.
    #[arg(long = "nt-symbol-path", value_name = "PATH", env = "_NT_SYMBOL_PATH")]
    pub(crate) nt_symbol_path: Option<String>,

    /// debuginfod servers for ELF modules this machine has no files for,
    /// separated by spaces, as elfutils reads them (set it empty to stay
    /// off the network).
    #[arg(long = "debuginfod-urls", value_name = "URLS", env = "DEBUGINFOD_URLS")]
    pub(crate) debuginfod_urls: Option<String>,

    /// Where files from debuginfod servers are kept, in elfutils' layout
    /// [default: debuginfod/ in the symbols cache].
    #[arg(
        long = "debuginfod-cache",
        value_name = "DIR",
        env = "DEBUGINFOD_CACHE_PATH"
    )]
    pub(crate) debuginfod_cache: Option<PathBuf>,

    /// Seconds a symbol server may stay silent, before it answers or
    /// between two reads of its answer (a big file that keeps arriving is
    /// never cut), before it is given up for the run (with a warning).
    #[arg(long = "symbols-timeout", value_name = "SECS", default_value_t = 20)]
    pub(crate) symbols_timeout: u64,

    /// Seconds connecting to a symbol server may take before it is given
    /// up for the run.
    #[arg(
        long = "symbols-connect-timeout",
        value_name = "SECS",
        default_value_t = 10
    )]
    pub(crate) symbols_connect_timeout: u64,

    /// Largest file downloaded from a symbol server: bytes, or with a
    /// K, M, G or T suffix (powers of 1024: 512M, 4G).
    #[arg(long = "max-download-size", value_name = "SIZE", default_value = "4G", value_parser = parse_size)]
    pub(crate) max_download_size: u64,

    /// Do not look at this machine's own files: neither the module paths
    /// the dump records nor /usr/lib/debug. Only --symbols, _NT_SYMBOL_PATH
    /// and the symbols folder beside each dump are searched.
    #[arg(long = "no-system-symbols")]
    pub(crate) no_system_symbols: bool,
}

/// Options shared by every command that prints a report: `analyze`,
/// `attach` and `run` flatten this one struct, so each accepts the same
/// flags with the same meaning, listed under the same heading in `--help`
/// (issue 11).
#[derive(Debug, Args)]
#[command(next_help_heading = "Report options")]
pub(crate) struct ReportArgs {
    #[command(flatten)]
    pub(crate) symbol: SymbolArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub(crate) format: OutputFormat,

    /// The diagnosis and the thread it is about only: `--format brief`.
    #[arg(long, conflicts_with = "format")]
    pub(crate) brief: bool,

    /// Write the report to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,

    /// Colour in the text report: `auto` colours a terminal unless NO_COLOR is set.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub(crate) color: ColorChoice,

    /// Folder of rule files that add to, or override by id, the built-in rules; repeatable.
    #[arg(long = "signatures", value_name = "DIR")]
    pub(crate) signatures: Vec<PathBuf>,

    /// Which findings make the exit status 1: `known` (a specific signature
    /// matched, its exit established), `possible` (a specific signature
    /// matched, established or only possible), `unknown` (a crash or hang no
    /// established signature explains: possible findings count), `any`,
    /// `new` (any finding whose crash signature the --baseline file does
    /// not have), or `none`.
    #[arg(long, value_enum, default_value_t = FailOn::None)]
    pub(crate) fail_on: FailOn,

    /// Known failures (TOML: crash signature -> issue URL and note, written
    /// by `dumptriage baseline`): each failure is reported as known, with
    /// its issue, or new; `--fail-on new` fails on new ones only.
    #[arg(long, value_name = "FILE")]
    pub(crate) baseline: Option<PathBuf>,

    /// Dumps analysed in parallel (default: the number of cores; `attach`
    /// and `run` analyse one dump).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) jobs: Option<u16>,

    /// No progress bar (it is shown only when stderr is a terminal, and only
    /// for more than one dump, anyway).
    #[arg(long, short = 'q')]
    pub(crate) quiet: bool,
}

impl ReportArgs {
    /// The output format, `--brief` included.
    pub(crate) fn format(&self) -> Format {
        if self.brief {
            Format::Brief
        } else {
            self.format.into()
        }
    }
}

/// The findings policy for CI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FailOn {
    None,
    Known,
    Possible,
    Unknown,
    Any,
    New,
}

/// `--format`: the library's output formats, each described to the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    #[value(help = "For a person: the exception, then every thread's stack")]
    Text,
    #[value(help = "For a person in a hurry: the diagnosis and the thread it is about (--brief)")]
    Brief,
    #[value(help = "For tools: the versioned schema of docs/json-schema.md")]
    Json,
    #[value(help = "For a CI job summary: a table of diagnoses, each dump collapsed")]
    Markdown,
    #[value(
        help = "For CI test reporters: one test case per dump, failed when a crash or hang \
                was diagnosed"
    )]
    Junit,
    #[value(
        help = "For GitHub Actions: one error or warning annotation per group (workflow \
                commands)"
    )]
    Github,
    #[value(
        help = "For code scanning: SARIF 2.1.0, one result per dump, the signature as its \
                fingerprint"
    )]
    Sarif,
    #[value(help = "For a person triaging: one self-contained HTML file to open in a browser")]
    Html,
}

impl From<OutputFormat> for Format {
    fn from(format: OutputFormat) -> Format {
        match format {
            OutputFormat::Text => Format::Text,
            OutputFormat::Brief => Format::Brief,
            OutputFormat::Json => Format::Json,
            OutputFormat::Markdown => Format::Markdown,
            OutputFormat::Junit => Format::Junit,
            OutputFormat::Github => Format::Github,
            OutputFormat::Sarif => Format::Sarif,
            OutputFormat::Html => Format::Html,
        }
    }
}

/// Whether the text report is coloured (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether the text report is coloured: `auto` colours only a terminal,
    /// and never when NO_COLOR is set to a non-empty value
    /// (https://no-color.org).
    pub(crate) fn enabled(self, terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal && no_color.is_none_or(|v| v.is_empty()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_with_units() {
        use std::time::Duration;
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2.5"), Ok(Duration::from_millis(2500)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration(" 2M "), Ok(Duration::from_secs(120)));
        for bad in ["", "0", "-1s", "1d", "m", "1e999", "NaN", "inf"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        use std::ffi::OsStr;
        assert!(ColorChoice::Auto.enabled(true, None));
        assert!(ColorChoice::Auto.enabled(true, Some(OsStr::new(""))));
        assert!(!ColorChoice::Auto.enabled(true, Some(OsStr::new("1"))));
        assert!(!ColorChoice::Auto.enabled(false, None));
        assert!(ColorChoice::Always.enabled(false, Some(OsStr::new("1"))));
        assert!(!ColorChoice::Never.enabled(true, None));
    }

    #[test]
    fn sizes_with_units() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("1K"), Ok(1024));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("4GiB"), Ok(4 << 30));
        assert_eq!(parse_size("2gb"), Ok(2 << 30));
        assert_eq!(parse_size("1t"), Ok(1 << 40));
        assert!(parse_size("0").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("4X").is_err());
        assert!(parse_size("-1G").is_err());
        assert!(parse_size("99999999999T").is_err());
    }
}
