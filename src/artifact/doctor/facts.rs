//! What `doctor` probes and finds: the facts of this machine (filled by
//! linux.rs and windows.rs), and the findings the checks (checks.rs) make
//! of them.

use std::path::{Path, PathBuf};

/// A way a crash or hang gets captured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Way {
    /// The kernel's core files (Linux).
    Cores,
    /// `dumptriage run` (ptrace of its own child, Linux).
    Run,
    /// `dumptriage attach` (ptrace of any process of the user, Linux).
    Attach,
    /// Windows Error Reporting's LocalDumps.
    WerDumps,
}

impl Way {
    pub fn name(self) -> &'static str {
        match self {
            Way::Cores => "core files",
            Way::Run => "dumptriage run",
            Way::Attach => "dumptriage attach",
            Way::WerDumps => "WER LocalDumps",
        }
    }
}

/// How a finding stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// Worth knowing; nothing fails because of it.
    Note,
    /// The way it names would capture nothing.
    Problem(Way),
}

/// One thing found, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub status: Status,
    /// What was looked at (`core_pattern`, `ulimit -c`).
    pub topic: String,
    pub what: String,
    pub fix: Option<String>,
}

/// A resource limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Unlimited,
    Bytes(u64),
}

/// What was probed: everything the checks read.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    pub linux: Option<LinuxFacts>,
    pub windows: Option<WindowsFacts>,
    /// The dump folder (`--dump-dir`, default the current one), and
    /// whether a file can be made there.
    pub dump_dir: Option<(PathBuf, Result<(), String>)>,
    /// Each symbol server named, and how it answered (`Ok`: any HTTP
    /// answer).
    pub servers: Vec<(String, Result<String, String>)>,
    /// Tools looked for on the PATH, and where found.
    pub tools: Vec<(String, Option<PathBuf>)>,
    /// `DEBUGINFOD_URLS` as set.
    pub debuginfod_urls: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct LinuxFacts {
    /// /proc/sys/kernel/core_pattern (None: unreadable).
    pub core_pattern: Option<String>,
    /// The soft and hard RLIMIT_CORE of this process (what the shell that
    /// started it gives its children).
    pub core_limit: Option<(Limit, Limit)>,
    /// /proc/sys/kernel/yama/ptrace_scope (None: no Yama).
    pub ptrace_scope: Option<u32>,
    /// Root or CAP_SYS_PTRACE.
    pub may_ptrace_any: bool,
    /// Attaching to a child of this process, tried for real.
    pub ptrace_child: Option<Result<(), String>>,
    /// Attaching to a process that is not a child of this one, tried.
    pub ptrace_other: Option<Result<(), String>>,
    /// For a pipe: whether the handler program exists and is executable.
    pub handler_ok: Option<bool>,
    /// For a file pattern with a folder: whether a file can be made there.
    pub pattern_dir: Option<(PathBuf, Result<(), String>)>,
    /// The current folder (where a relative pattern writes): writable?
    pub cwd_writable: Option<Result<(), String>>,
    /// systemd-coredump's `Storage=` (coredump.conf and its .d files).
    pub coredump_storage: Option<String>,
    /// apport: `enabled=` of /etc/default/apport, and whether the user's
    /// settings let it keep crashes of programs of no package.
    pub apport_enabled: Option<bool>,
    pub apport_unpackaged: bool,
    /// Inside a container: `core_pattern` is the host's, and its pipe
    /// handler runs on the host.
    pub container: bool,
}

#[derive(Debug, Clone, Default)]
pub struct WindowsFacts {
    /// HKLM\SOFTWARE\Microsoft\Windows\Windows Error Reporting\LocalDumps:
    /// present, and its values.
    pub local_dumps: bool,
    pub dump_folder: Option<String>,
    pub dump_type: Option<u32>,
    pub dump_count: Option<u32>,
    /// `Disabled` of the Windows Error Reporting key.
    pub wer_disabled: bool,
    /// The DumpFolder (expanded): can a file be made there?
    pub dump_folder_writable: Option<Result<(), String>>,
}

/// Whether a file can be made in `dir` (and removed).
pub(crate) fn can_write(dir: &Path) -> Result<(), String> {
    match std::fs::metadata(dir) {
        Err(e) => return Err(e.to_string()),
        Ok(meta) if !meta.is_dir() => return Err("not a folder".into()),
        Ok(_) => {}
    }
    tempfile::Builder::new()
        .prefix(".dumptriage-doctor-")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| e.to_string())
}
