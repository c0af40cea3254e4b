//! The one place the command line and the environment become the
//! library's plain option structs. The library reads no environment
//! variable: what it needs of the environment is read here, once, at start
//! ([`Context::from_env`]), and handed to it in those structs.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use dumptriage::artifact::convert::ConvertOptions;
use dumptriage::artifact::doctor::{DoctorOptions, Way};
use dumptriage::capture::{RunOptions, StopOptions, DEFAULT_STOP_LIMIT};
use dumptriage::printable;
use dumptriage::report::Paint;
use dumptriage::symbols::{IndexWrites, Limits, SymbolConfig};
use dumptriage::BatchOptions;

use crate::cli::{CaptureWay, ColorChoice, ConvertArgs, DoctorArgs, RunArgs, SymbolArgs};

/// What the environment says, read once, and what the run shares between
/// its parts (the symbol indexes still being written at the end).
#[derive(Debug)]
pub(crate) struct Context {
    /// `NO_COLOR`, as set (https://no-color.org).
    no_color: Option<OsString>,
    /// `DUMPTRIAGE_STOP_LIMIT_MS` and `DUMPTRIAGE_NO_PYTHON_MEMORY`.
    stop: StopOptions,
    /// `DUMPTRIAGE_DEBUG_PANIC_ON`, debug builds only (tests of the panic
    /// path): the file name of a dump whose analysis panics.
    debug_panic_on: Option<OsString>,
    /// `DUMPTRIAGE_DOCTOR_ROOT`, debug builds only (tests): `doctor` reads
    /// /proc and /etc under this folder.
    doctor_root: Option<PathBuf>,
    /// The whole environment, for `doctor` (`PATH`, and on Windows what
    /// WER's dump folder names).
    environment: Vec<(OsString, OsString)>,
    /// The indexes of big symbol files the run is writing on other
    /// threads: every symbol configuration of the run shares this list.
    index_writes: IndexWrites,
}

impl Context {
    /// Reads the environment.
    pub(crate) fn from_env() -> Context {
        let debug = cfg!(debug_assertions);
        Context {
            no_color: std::env::var_os("NO_COLOR"),
            stop: StopOptions {
                limit: stop_limit(std::env::var("DUMPTRIAGE_STOP_LIMIT_MS").ok().as_deref()),
                // For measuring what keeping costs (scripts/bench-python.sh).
                python_memory: std::env::var_os("DUMPTRIAGE_NO_PYTHON_MEMORY").is_none(),
            },
            debug_panic_on: debug
                .then(|| std::env::var_os("DUMPTRIAGE_DEBUG_PANIC_ON"))
                .flatten(),
            doctor_root: debug
                .then(|| std::env::var_os("DUMPTRIAGE_DOCTOR_ROOT").map(PathBuf::from))
                .flatten(),
            environment: std::env::vars_os().collect(),
            index_writes: IndexWrites::default(),
        }
    }

    /// The symbol sources the flags name (`_NT_SYMBOL_PATH` and the
    /// debuginfod variables come through clap as the flags' defaults).
    pub(crate) fn symbols(&self, args: &SymbolArgs) -> SymbolConfig {
        SymbolConfig {
            stores: args.symbols.clone(),
            cache: args.symbols_cache.clone(),
            user_cache: dirs::cache_dir(),
            limits: Limits {
                connect_timeout: Duration::from_secs(args.symbols_connect_timeout),
                read_timeout: Duration::from_secs(args.symbols_timeout),
                max_download: args.max_download_size,
            },
            nt_symbol_path: args.nt_symbol_path.clone().filter(|v| !v.trim().is_empty()),
            debuginfod_urls: args.debuginfod_urls.clone(),
            debuginfod_cache: args.debuginfod_cache.clone(),
            dump_dirs: Vec::new(),
            system: !args.no_system_symbols,
            symbol_index: !args.no_symbol_index,
            index_min_size: args.symbol_index_min,
            index_writes: self.index_writes.clone(),
        }
    }

    /// The symbol sources of the flags, checked before any work: a warning
    /// per unusable folder (printed), an error for an entry that can never
    /// be read.
    pub(crate) fn checked_symbols(&self, args: &SymbolArgs) -> anyhow::Result<SymbolConfig> {
        let symbols = self.symbols(args);
        for warning in symbols.check_stores().map_err(anyhow::Error::msg)? {
            eprintln!("dumptriage: warning: {}", printable::clean(&warning));
        }
        Ok(symbols)
    }

    /// How a batch runs: `jobs` dumps at a time (default: the number of
    /// cores), with a progress bar when asked for.
    pub(crate) fn batch(&self, jobs: Option<u16>, progress: bool) -> BatchOptions {
        let mut batch = BatchOptions {
            progress,
            debug_panic_on: self.debug_panic_on.clone(),
            ..BatchOptions::default()
        };
        if let Some(jobs) = jobs {
            batch.jobs = usize::from(jobs);
        }
        batch
    }

    /// How `attach` and `run` stop a process for its dump.
    pub(crate) fn stop(&self) -> StopOptions {
        self.stop
    }

    /// Whether the text report written to a terminal (or not) is coloured.
    pub(crate) fn paint(&self, color: ColorChoice, terminal: bool) -> Paint {
        Paint {
            enabled: color.enabled(terminal, self.no_color.as_deref()),
        }
    }

    /// What `run` is asked to do.
    pub(crate) fn run(&self, args: &RunArgs) -> RunOptions {
        RunOptions {
            command: args.command.clone(),
            hang_timeout: args.hang_timeout,
            dump_dir: args.dump_dir.clone().unwrap_or_else(|| PathBuf::from(".")),
            no_kill: args.no_kill,
            kill_after: args.kill_after,
            stop: self.stop,
        }
    }

    /// What `convert` is asked to do.
    pub(crate) fn convert(&self, args: &ConvertArgs) -> ConvertOptions {
        ConvertOptions {
            core: args.core.clone().filter(|_| !args.from_stdin),
            output: args.output.clone(),
            symbols: self.symbols(&args.symbols),
            heap_budget: args.heap_budget,
        }
    }

    /// What `doctor` checks, and the ways of capture that decide its exit
    /// status.
    pub(crate) fn doctor(&self, args: &DoctorArgs) -> (DoctorOptions, Vec<Way>) {
        let symbols = self.symbols(&args.symbols);
        let options = DoctorOptions {
            dump_dir: args.dump_dir.clone(),
            servers: symbols.server_urls(),
            debuginfod_urls: symbols.debuginfod_urls.clone(),
            root: self.doctor_root.clone(),
            no_ptrace_probe: false,
            config_dir: dirs::config_dir(),
            environment: self.environment.clone(),
        };
        let wanted = args
            .ways
            .iter()
            .map(|w| match w {
                CaptureWay::Cores => Way::Cores,
                CaptureWay::Run => Way::Run,
                CaptureWay::Attach => Way::Attach,
                CaptureWay::Wer => Way::WerDumps,
            })
            .collect();
        (options, wanted)
    }

    /// Waits for the symbol indexes still being written (the reports are
    /// out by then), saying so first, and prints why any could not be.
    pub(crate) fn finish_indexes(&self) {
        let unfinished = self.index_writes.unfinished();
        if unfinished > 0 {
            eprintln!(
                "dumptriage: finishing the symbol index of {unfinished} big file(s) for later \
                 runs (interrupting it is safe: it is made again)"
            );
        }
        for warning in self.index_writes.wait() {
            eprintln!("dumptriage: warning: {warning}");
        }
    }
}

/// How long a process's threads get to stop for a capture:
/// `DUMPTRIAGE_STOP_LIMIT_MS` (tests, slow machines), else 2 s.
fn stop_limit(ms: Option<&str>) -> Duration {
    ms.and_then(|ms| ms.trim().parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .map_or(DEFAULT_STOP_LIMIT, Duration::from_millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stop_limit_is_positive_milliseconds_or_the_default() {
        assert_eq!(stop_limit(Some(" 250 ")), Duration::from_millis(250));
        for ignored in [None, Some("0"), Some("-5"), Some("2s"), Some("")] {
            assert_eq!(stop_limit(ignored), DEFAULT_STOP_LIMIT, "{ignored:?}");
        }
    }
}
