//! The Linux facts: /proc/sys settings, this process's core limit, the
//! core_pattern handler's program, systemd-coredump's and apport's
//! settings, and ptrace, tried for real on a child and on a process that
//! is not one.

use std::path::{Path, PathBuf};

use super::facts::{can_write, Limit, LinuxFacts};

/// Probes; files are read under `root` (`/`, or a test's folder).
pub(super) fn probe(root: &Path, no_ptrace: bool, config_dir: Option<&Path>) -> LinuxFacts {
    let read = |rel: &str| std::fs::read_to_string(root.join(rel)).ok();
    let core_pattern = read("proc/sys/kernel/core_pattern").map(|p| p.trim_end().to_string());
    let mut facts = LinuxFacts {
        core_limit: core_limit(),
        ptrace_scope: read("proc/sys/kernel/yama/ptrace_scope").and_then(|s| s.trim().parse().ok()),
        may_ptrace_any: may_ptrace_any(),
        container: in_container(root),
        ..LinuxFacts::default()
    };
    if let Some(pattern) = &core_pattern {
        if let Some(command) = pattern.strip_prefix('|') {
            let program = command.split_whitespace().next().unwrap_or("");
            let path = root.join(program.trim_start_matches('/'));
            facts.handler_ok = Some(is_executable(&path));
            facts.coredump_storage = coredump_storage(root);
            facts.apport_enabled = read("etc/default/apport").map(|text| {
                !text
                    .lines()
                    .any(|l| l.trim().replace(' ', "") == "enabled=0")
            });
            facts.apport_unpackaged = apport_unpackaged(config_dir);
        } else if let Some((dir, _)) = pattern.rsplit_once('/') {
            // A folder with % specifiers is made per crash: not checked.
            if !dir.contains('%') {
                let dir = if dir.is_empty() { "/" } else { dir };
                let path = PathBuf::from(dir);
                let probed = if path.is_absolute() {
                    root.join(dir.trim_start_matches('/'))
                } else {
                    path.clone()
                };
                facts.pattern_dir = Some((path, can_write(&probed)));
            }
        } else {
            facts.cwd_writable = Some(can_write(Path::new(".")));
        }
    }
    facts.core_pattern = core_pattern;
    if !no_ptrace {
        facts.ptrace_child = Some(ptrace_child());
        facts.ptrace_other = Some(ptrace_other());
    }
    facts
}

fn core_limit() -> Option<(Limit, Limit)> {
    let (soft, hard) =
        nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_CORE).ok()?;
    let limit = |v: u64| {
        if v == nix::sys::resource::RLIM_INFINITY {
            Limit::Unlimited
        } else {
            Limit::Bytes(v)
        }
    };
    Some((limit(soft), limit(hard)))
}

/// Root, or CAP_SYS_PTRACE (bit 19) in the effective set.
fn may_ptrace_any() -> bool {
    // SAFETY: geteuid cannot fail and touches no memory of ours.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let caps = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
            u64::from_str_radix(caps.trim(), 16).ok()
        })
        .is_some_and(|caps| caps & (1 << 19) != 0)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn in_container(root: &Path) -> bool {
    root.join(".dockerenv").exists()
        || root.join("run/.containerenv").exists()
        || std::fs::read_to_string(root.join("proc/1/cgroup"))
            .is_ok_and(|c| c.contains("docker") || c.contains("kubepods") || c.contains("lxc"))
}

/// `Storage=` of systemd-coredump: coredump.conf, then its .d files in
/// order (the last one set wins).
fn coredump_storage(root: &Path) -> Option<String> {
    let mut files = vec![root.join("etc/systemd/coredump.conf")];
    for dir in [
        "etc/systemd/coredump.conf.d",
        "usr/lib/systemd/coredump.conf.d",
    ] {
        if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
            let mut more: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
            more.sort();
            files.extend(more);
        }
    }
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| {
            text.lines()
                .filter_map(|l| l.trim().strip_prefix("Storage="))
                .map(|v| v.trim().to_string())
                .collect::<Vec<_>>()
        })
        .last()
}

/// apport's `unpackaged=true` in the user's settings (in `config_dir`).
fn apport_unpackaged(config_dir: Option<&Path>) -> bool {
    config_dir
        .map(|dir| dir.join("apport/settings"))
        .and_then(|path| std::fs::read_to_string(path).ok())
        .is_some_and(|text| {
            text.lines().any(|l| {
                l.trim()
                    .replace(' ', "")
                    .eq_ignore_ascii_case("unpackaged=true")
            })
        })
}

/// Seizes a child of this process (what `run` does), then lets it go.
fn ptrace_child() -> Result<(), String> {
    use nix::sys::{ptrace, signal, wait};
    use nix::unistd::{fork, ForkResult};
    // SAFETY: the child calls only async-signal-safe functions (pause,
    // _exit) before it is killed.
    match unsafe { fork() }.map_err(|e| format!("fork: {e}"))? {
        ForkResult::Child => loop {
            // SAFETY: async-signal-safe.
            unsafe { libc::pause() };
        },
        ForkResult::Parent { child } => {
            let result =
                ptrace::seize(child, ptrace::Options::empty()).map_err(|e| e.desc().to_string());
            if result.is_ok() {
                let _ = ptrace::detach(child, None);
            }
            let _ = signal::kill(child, signal::Signal::SIGKILL);
            let _ = wait::waitpid(child, None);
            result
        }
    }
}

/// Seizes a process that is not a child of this one (what `attach` does
/// to a test's process): a grandchild whose parent has exited, so it is no
/// descendant of this process any more.
fn ptrace_other() -> Result<(), String> {
    use nix::sys::{ptrace, signal, wait};
    use nix::unistd::{fork, pipe, read, write, ForkResult, Pid};
    let (from, to) = pipe().map_err(|e| format!("pipe: {e}"))?;
    // SAFETY: the child and grandchild call only async-signal-safe
    // functions (fork, getpid, write, pause, _exit).
    match unsafe { fork() }.map_err(|e| format!("fork: {e}"))? {
        ForkResult::Child => {
            // SAFETY: as above.
            match unsafe { fork() } {
                Ok(ForkResult::Child) => loop {
                    // SAFETY: async-signal-safe.
                    unsafe { libc::pause() };
                },
                Ok(ForkResult::Parent { child }) => {
                    let _ = write(&to, &child.as_raw().to_le_bytes());
                    // SAFETY: leaves at once, running no destructors.
                    unsafe { libc::_exit(0) }
                }
                // SAFETY: as above.
                Err(_) => unsafe { libc::_exit(1) },
            }
        }
        ForkResult::Parent { child } => {
            drop(to);
            let mut buf = [0u8; 4];
            let got = read(&from, &mut buf).map_err(|e| format!("read: {e}"))?;
            let _ = wait::waitpid(child, None);
            if got != 4 {
                return Err("the test process could not be started".into());
            }
            let other = Pid::from_raw(i32::from_le_bytes(buf));
            let result =
                ptrace::seize(other, ptrace::Options::empty()).map_err(|e| e.desc().to_string());
            if result.is_ok() {
                let _ = ptrace::detach(other, None);
            }
            let _ = signal::kill(other, signal::Signal::SIGKILL);
            result
        }
    }
}
