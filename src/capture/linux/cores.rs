//! Crashes of the command's descendants under `run`, seen through the core
//! files the kernel writes for them.
//!
//! `run` traces the command itself (trace.rs); the processes it starts are
//! not traced (a tracer of every fork would stand between each of them and
//! its own parent, and between a debugger and them). Instead the command
//! starts with the core size limit raised to its hard limit, which its
//! descendants inherit, and when the run ends the core files written since
//! it started by processes of its process group are moved into the dump
//! folder and analysed. This sees what the kernel writes as a file: a
//! `core_pattern` that is relative (`core`, `core.%p`: the crashing
//! process's folder; the command's folder is searched) or names a folder.
//! A pattern that pipes cores to a program (systemd-coredump, apport) keeps
//! them out of reach: `run` says so once, at the start. The command's own
//! crash is dumped by the tracer, and gets back the limit it had before it
//! dies, so no core of it is left behind.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use libc::{pid_t, rlimit};

use crate::capture::types::DescendantCore;

/// Gives the command back the core limit it would have had: its crash is
/// dumped by the tracer, and a core of it would be a second copy.
pub(super) fn restore(pid: pid_t, limit: &rlimit) {
    // SAFETY: prlimit with a valid struct and no old-limit out pointer.
    unsafe { libc::prlimit(pid, libc::RLIMIT_CORE, limit, std::ptr::null_mut()) };
}

/// Where the kernel writes cores, and which files are cores written since
/// the run started.
pub(super) struct CoreWatch {
    started: SystemTime,
    /// The folder the kernel writes cores to, and how their names start.
    dir: PathBuf,
    prefix: String,
    /// The limit the command was given, before it was raised.
    original: rlimit,
}

/// More core files than this in one run are left where they are.
const MAX_CORES: usize = 8;

impl CoreWatch {
    /// Reads kernel.core_pattern. `None` (with the reason) when cores do
    /// not land in a folder `run` can search.
    pub(super) fn new(cwd: &Path) -> Result<CoreWatch, String> {
        let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern")
            .map_err(|e| format!("cannot read kernel.core_pattern: {e}"))?;
        let pattern = pattern.trim();
        if let Some(program) = pattern.strip_prefix('|') {
            return Err(format!(
                "kernel.core_pattern pipes cores to {}",
                program.split_whitespace().next().unwrap_or("a program")
            ));
        }
        let (dir, name) = match pattern.rsplit_once('/') {
            Some((dir, name)) if !dir.contains('%') => (PathBuf::from(dir), name),
            Some(_) => return Err("kernel.core_pattern has a per-process folder".to_string()),
            None => (cwd.to_path_buf(), pattern),
        };
        let prefix = name.split('%').next().unwrap_or("").to_string();
        let mut original = rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct we pass.
        unsafe { libc::getrlimit(libc::RLIMIT_CORE, &mut original) };
        Ok(CoreWatch {
            // File times come from the kernel's coarse clock, which can lag
            // the precise one by a tick: a second of slack (a core of this
            // process group cannot be older than the group anyway).
            started: SystemTime::now() - std::time::Duration::from_secs(1),
            dir,
            prefix,
            original,
        })
    }

    /// The limit the command starts with: its hard limit (in the child,
    /// before exec).
    pub(super) fn raised(&self) -> rlimit {
        rlimit {
            rlim_cur: self.original.rlim_max,
            rlim_max: self.original.rlim_max,
        }
    }

    /// The limit the command would have had.
    pub(super) fn original(&self) -> rlimit {
        self.original
    }

    /// The cores written since the start by processes of process group
    /// `pgrp` other than `command`, moved into `dump_dir` as
    /// `NAME_PID_YYMMDD_HHMMSS.core`.
    pub(super) fn collect(&self, pgrp: u32, command: u32, dump_dir: &Path) -> Vec<DescendantCore> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut candidates: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(self.prefix.as_str())
            })
            .filter(|e| {
                e.metadata()
                    .is_ok_and(|m| m.is_file() && m.modified().is_ok_and(|t| t >= self.started))
            })
            .map(|e| e.path())
            .collect();
        candidates.sort();
        let mut found = Vec::new();
        for path in candidates {
            if found.len() == MAX_CORES {
                break;
            }
            let Some(owner) = crate::elfcore::owner(&path) else {
                continue;
            };
            if owner.pgrp != pgrp || owner.pid == command {
                continue;
            }
            let name = crate::capture::naming::dump_file_name(
                &owner.name,
                owner.pid,
                crate::capture::naming::LocalTime::now(),
            );
            let mut to = dump_dir.join(name.replace(".dmp", ".core"));
            if to.exists() {
                to = to.with_extension("2.core");
            }
            let kept = std::fs::rename(&path, &to)
                .or_else(|_| std::fs::copy(&path, &to).map(drop))
                .map(|()| to)
                .unwrap_or(path);
            found.push((owner.pid, owner.signal, kept, command));
        }
        found
    }
}
