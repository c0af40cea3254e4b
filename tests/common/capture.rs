//! `dumptriage run` and `dumptriage attach` as the capture tests write
//! them: the options by name, then the command after `--` (`run`) or the
//! process (`attach`), so a test says only what it sets.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::bin;

/// One `run` or `attach` command line.
pub struct Capture {
    subcommand: &'static str,
    options: Vec<OsString>,
    /// `run`: `--`, the program and its arguments; `attach`: the process.
    target: Vec<OsString>,
}

impl Capture {
    /// `dumptriage run ... -- PROGRAM`; [`Capture::args`] adds the
    /// program's arguments.
    pub fn run(program: impl AsRef<OsStr>) -> Capture {
        Capture {
            subcommand: "run",
            options: Vec::new(),
            target: vec!["--".into(), program.as_ref().to_owned()],
        }
    }

    /// `dumptriage run ... -- sh -c SCRIPT`: a command behind a shell, as
    /// CI steps run them.
    pub fn shell(script: &str) -> Capture {
        Capture::run("sh").args(["-c", script])
    }

    /// `dumptriage attach ... PROCESS` (a pid or a process name).
    pub fn attach(process: impl ToString) -> Capture {
        Capture {
            subcommand: "attach",
            options: Vec::new(),
            target: vec![process.to_string().into()],
        }
    }

    /// Arguments of the program `run` starts.
    pub fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Capture {
        assert_eq!(self.subcommand, "run", "only `run` starts a program");
        self.target
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// An option of dumptriage's (`--no-kill`, `--tree`, `--brief`, ...).
    pub fn option(mut self, option: impl AsRef<OsStr>) -> Capture {
        self.options.push(option.as_ref().to_owned());
        self
    }

    /// `--hang-timeout SECONDS`.
    pub fn hang_timeout(self, seconds: u32) -> Capture {
        self.option("--hang-timeout").option(seconds.to_string())
    }

    /// `--format json`.
    pub fn json(self) -> Capture {
        self.option("--format").option("json")
    }

    /// `--quiet`.
    pub fn quiet(self) -> Capture {
        self.option("--quiet")
    }

    /// `--symbols SOURCE`.
    pub fn symbols(self, source: impl AsRef<OsStr>) -> Capture {
        self.option("--symbols").option(source)
    }

    /// `--dump-dir DIR`.
    pub fn dump_dir(self, dir: impl AsRef<OsStr>) -> Capture {
        self.option("--dump-dir").option(dir)
    }

    /// `--output FILE`: where the report goes.
    pub fn report_to(self, file: &Path) -> Capture {
        self.option("--output").option(file)
    }

    /// The binary with this command line, for a test that sets its
    /// environment, folder or streams, or starts it without waiting.
    pub fn command(&self) -> Command {
        let mut cmd = bin();
        cmd.arg(self.subcommand)
            .args(&self.options)
            .args(&self.target);
        cmd
    }

    /// Runs it to its end; its status and output.
    pub fn output(&self) -> Output {
        self.command().output().expect("run dumptriage")
    }
}

/// Runs `command`, a `run` of a program that crashes with SIGSEGV, to its
/// end: `run` ends as the command did, killed by the signal. The dump it
/// left in `dumps`.
pub fn segv_dump(command: &mut Command, dumps: &Path) -> PathBuf {
    use std::os::unix::process::ExitStatusExt;
    let out = command.output().expect("run dumptriage");
    assert_eq!(
        out.status.signal(),
        Some(11),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    super::dumps_in(dumps).pop().expect("a dump")
}
