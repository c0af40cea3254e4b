//! The checks: plain functions of the probed [`Facts`], so every setting
//! is tested by injecting its facts, on any OS.

use super::facts::{Facts, Finding, Limit, LinuxFacts, Status, Way, WindowsFacts};

/// Every finding, in order: core files, ptrace, dump folder, WER,
/// symbol servers, tools.
pub fn check(facts: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(linux) = &facts.linux {
        check_linux(linux, &mut out);
    }
    if let Some((dir, writable)) = &facts.dump_dir {
        let shown = dir.display();
        out.push(match writable {
            Ok(()) => finding(
                Status::Ok,
                "dump folder",
                format!("{shown} is writable"),
                None,
            ),
            Err(e) => finding(
                Status::Problem(Way::Run),
                "dump folder",
                format!(
                    "{shown} cannot be written ({e}): `run` and `attach` could write no dump there"
                ),
                Some("create it and make it writable, or pass another with --dump-dir".to_string()),
            ),
        });
    }
    if let Some(windows) = &facts.windows {
        check_windows(windows, &mut out);
    }
    for (url, answer) in &facts.servers {
        out.push(match answer {
            Ok(how) => finding(
                Status::Ok,
                "symbol server",
                format!("{url} answers ({how})"),
                None,
            ),
            Err(e) => finding(
                Status::Note,
                "symbol server",
                format!(
                    "{url} does not answer ({e}): frames of modules only it has would go unnamed"
                ),
                Some(
                    "check the URL and the network from this machine (a proxy, a firewall)".into(),
                ),
            ),
        });
    }
    match facts.debuginfod_urls.as_deref().map(str::trim) {
        Some(urls) if !urls.is_empty() => out.push(finding(
            Status::Ok,
            "debuginfod",
            format!("DEBUGINFOD_URLS names {urls}: missing debug files are downloaded by build id"),
            None,
        )),
        _ if facts.linux.is_some() => out.push(finding(
            Status::Note,
            "debuginfod",
            "DEBUGINFOD_URLS is not set: only this machine's own debug files name frames".into(),
            Some(
                "set DEBUGINFOD_URLS to your distribution's server (https://debuginfod.debian.net, \
                 https://debuginfod.ubuntu.com, https://debuginfod.fedoraproject.org)"
                    .into(),
            ),
        )),
        _ => {}
    }
    for (tool, found) in &facts.tools {
        out.push(match found {
            Some(path) => finding(
                Status::Ok,
                "tool",
                format!("{tool}: {}", path.display()),
                None,
            ),
            None => finding(
                Status::Note,
                "tool",
                format!("{tool}: not on the PATH"),
                tool_fix(tool),
            ),
        });
    }
    out
}

fn finding(status: Status, topic: &str, what: String, fix: Option<String>) -> Finding {
    Finding {
        status,
        topic: topic.to_string(),
        what,
        fix,
    }
}

fn tool_fix(tool: &str) -> Option<String> {
    Some(match tool {
        "gdb" => "not needed by dumptriage; to look at a core yourself: apt-get install gdb".into(),
        "debuginfod-find" => "not needed by dumptriage (it asks debuginfod servers itself): apt-get install debuginfod".into(),
        "coredumpctl" => "only where systemd-coredump keeps cores: apt-get install systemd-coredump".into(),
        "procdump64.exe" | "procdump.exe" => "for dumps of hangs and of crashes WER does not see: https://learn.microsoft.com/sysinternals/downloads/procdump".into(),
        "cdb.exe" => "not needed by dumptriage; part of the Debugging Tools for Windows".into(),
        _ => return None,
    })
}

fn check_linux(facts: &LinuxFacts, out: &mut Vec<Finding>) {
    let set_pattern = "sudo sysctl -w kernel.core_pattern=core (the kernel's default: a file \
                       `core` in the crashing process's folder), or a folder: \
                       kernel.core_pattern=/var/cores/core.%e.%p";
    let host = if facts.container {
        " (in a container this is the host's setting: change it on the host)"
    } else {
        ""
    };
    let limit_off = matches!(facts.core_limit, Some((Limit::Bytes(0), _)));
    match facts.core_pattern.as_deref() {
        None => out.push(finding(
            Status::Note,
            "core_pattern",
            "/proc/sys/kernel/core_pattern cannot be read: where cores go is unknown".into(),
            None,
        )),
        Some(pattern) if pattern.starts_with('|') => {
            let program = pattern[1..].split_whitespace().next().unwrap_or("");
            let name = program.rsplit('/').next().unwrap_or(program);
            let handler = if name.contains("systemd-coredump") {
                "systemd-coredump"
            } else if name.contains("apport") {
                "apport"
            } else if name.contains("dumptriage") {
                "dumptriage"
            } else {
                "a handler"
            };
            out.push(finding(
                Status::Ok,
                "core_pattern",
                format!("{pattern:?}: cores are piped to {handler} ({program})"),
                None,
            ));
            if facts.handler_ok == Some(false) {
                let why = if facts.container {
                    " here; in a container the handler runs on the host, which may have it"
                } else {
                    ": the kernel drops every core"
                };
                out.push(finding(
                    if facts.container {
                        Status::Note
                    } else {
                        Status::Problem(Way::Cores)
                    },
                    "core_pattern",
                    format!("the handler {program} does not exist or cannot be run{why}"),
                    Some(format!("install {handler}, or {set_pattern}{host}")),
                ));
            }
            match handler {
                "systemd-coredump" => {
                    let storage = facts.coredump_storage.as_deref().unwrap_or("external");
                    if storage.eq_ignore_ascii_case("none") {
                        out.push(finding(
                            Status::Problem(Way::Cores),
                            "systemd-coredump",
                            "Storage=none: crashes are logged, their cores are not kept".into(),
                            Some("set Storage=external in /etc/systemd/coredump.conf".into()),
                        ));
                    } else {
                        out.push(finding(
                            Status::Ok,
                            "systemd-coredump",
                            format!(
                                "Storage={storage}: cores are kept in /var/lib/systemd/coredump \
                                 (dumptriage reads that folder; `coredumpctl dump -o FILE PID` \
                                 writes one out)"
                            ),
                            None,
                        ));
                    }
                    if limit_off {
                        out.push(finding(
                            Status::Problem(Way::Cores),
                            "ulimit -c",
                            "0: systemd-coredump keeps no core of a process whose core limit is 0".into(),
                            Some("ulimit -c unlimited in the shell that starts the program (in CI: in the same step)".into()),
                        ));
                    }
                }
                "apport" => {
                    if facts.apport_enabled == Some(false) {
                        out.push(finding(
                            Status::Problem(Way::Cores),
                            "apport",
                            "apport is turned off (enabled=0 in /etc/default/apport): the kernel hands it every core and nothing is kept".into(),
                            Some(format!("{set_pattern}{host}, or set enabled=1 in /etc/default/apport")),
                        ));
                    } else if !facts.apport_unpackaged {
                        out.push(finding(
                            Status::Problem(Way::Cores),
                            "apport",
                            "apport keeps crash reports (/var/crash/*.crash, which dumptriage reads) only of programs from the distribution's packages: the crash of a program you built leaves nothing".into(),
                            Some(format!(
                                "{set_pattern}{host}, or add `[main]` `unpackaged=true` to ~/.config/apport/settings"
                            )),
                        ));
                    } else {
                        out.push(finding(
                            Status::Ok,
                            "apport",
                            "apport keeps crash reports in /var/crash (dumptriage reads *.crash)"
                                .into(),
                            None,
                        ));
                    }
                }
                _ => {}
            }
        }
        Some(pattern) => {
            let dir = pattern.rsplit_once('/').map(|(dir, _)| dir);
            match (dir, &facts.pattern_dir, &facts.cwd_writable) {
                (Some(_), Some((dir, Err(e))), _) => out.push(finding(
                    Status::Problem(Way::Cores),
                    "core_pattern",
                    format!("{pattern:?}: cores go to {} , which cannot be written ({e})", dir.display()),
                    Some(format!("create it, writable by the users whose programs crash: mkdir -p {} && chmod 1777 {}", dir.display(), dir.display())),
                )),
                (Some(_), _, _) => out.push(finding(
                    Status::Ok,
                    "core_pattern",
                    format!("{pattern:?}: cores are written into that folder"),
                    None,
                )),
                (None, _, Some(Err(e))) => out.push(finding(
                    Status::Problem(Way::Cores),
                    "core_pattern",
                    format!("{pattern:?}: cores are written into the crashing process's current folder, and this one cannot be written ({e})"),
                    Some(format!("run the program from a writable folder, or {set_pattern}")),
                )),
                (None, _, _) => out.push(finding(
                    Status::Ok,
                    "core_pattern",
                    format!("{pattern:?}: cores are written into the crashing process's current folder"),
                    None,
                )),
            }
            if limit_off {
                out.push(finding(
                    Status::Problem(Way::Cores),
                    "ulimit -c",
                    "0: the kernel writes no core file".into(),
                    Some(
                        "ulimit -c unlimited in the shell that starts the program (in CI: in the \
                         same step; each step is a new shell)"
                            .into(),
                    ),
                ));
            }
        }
    }
    match facts.core_limit {
        Some((Limit::Bytes(0), Limit::Bytes(0))) => out.push(finding(
            Status::Note,
            "ulimit -c",
            "the hard limit is 0 too: only root can raise it".into(),
            Some(
                "raise it in /etc/security/limits.conf (`* hard core unlimited`) or the \
                 container's --ulimit core=-1"
                    .into(),
            ),
        )),
        Some((Limit::Bytes(0), _)) => {}
        Some((Limit::Bytes(bytes), _)) if bytes < (1 << 30) => out.push(finding(
            Status::Note,
            "ulimit -c",
            format!("{} KiB: cores larger than this are cut short (dumptriage reads what is there, with a warning)", bytes / 1024),
            Some("ulimit -c unlimited".into()),
        )),
        Some((soft, _)) => out.push(finding(
            Status::Ok,
            "ulimit -c",
            match soft {
                Limit::Unlimited => "unlimited".into(),
                Limit::Bytes(b) => format!("{} MiB", b >> 20),
            },
            None,
        )),
        None => {}
    }
    check_ptrace(facts, out);
}

fn check_ptrace(facts: &LinuxFacts, out: &mut Vec<Finding>) {
    let scope = facts.ptrace_scope;
    let meaning = match scope {
        None => "no Yama: any process of the same user may be traced".to_string(),
        Some(0) => "0: any process of the same user may be traced".to_string(),
        Some(1) => {
            "1: only a process's own descendants may be traced (root and CAP_SYS_PTRACE excepted)"
                .to_string()
        }
        Some(2) => "2: only root or CAP_SYS_PTRACE may trace".to_string(),
        Some(n) => format!("{n}: no process may be traced at all"),
    };
    out.push(finding(Status::Ok, "ptrace_scope", meaning, None));
    let scope_fix = "sudo sysctl -w kernel.yama.ptrace_scope=0 (or run as root)";
    let run_allowed = match scope {
        None | Some(0) | Some(1) => true,
        Some(2) => facts.may_ptrace_any,
        Some(_) => false,
    };
    let attach_allowed = match scope {
        None | Some(0) => true,
        Some(1) | Some(2) => facts.may_ptrace_any,
        Some(_) => false,
    };
    let (run, attach) = match (&facts.ptrace_child, &facts.ptrace_other) {
        (Some(child), Some(other)) => (child.clone(), other.clone()),
        _ => (
            if run_allowed {
                Ok(())
            } else {
                Err("ptrace_scope forbids it".into())
            },
            if attach_allowed {
                Ok(())
            } else {
                Err("ptrace_scope forbids it".into())
            },
        ),
    };
    let tried = facts.ptrace_child.is_some();
    let how = if tried { "tried" } else { "by ptrace_scope" };
    out.push(match run {
        Ok(()) => finding(Status::Ok, "run", format!("ptrace of a child works ({how}): `run` can dump a crash or a hang"), None),
        Err(e) => finding(
            Status::Problem(Way::Run),
            "run",
            format!("ptrace of a child fails ({e}): `run` cannot dump the command"),
            Some(if scope.is_some_and(|s| s >= 2) {
                scope_fix.to_string()
            } else {
                "in a container, allow ptrace (docker run --cap-add=SYS_PTRACE, or a seccomp profile that allows it)".to_string()
            }),
        ),
    });
    out.push(match attach {
        Ok(()) => finding(Status::Ok, "attach", format!("ptrace of another process works ({how}): `attach` can dump a running process"), None),
        Err(e) => finding(
            Status::Problem(Way::Attach),
            "attach",
            format!("ptrace of a process that is not a child fails ({e}): `attach` cannot dump it (`run` still can, the command being its child)"),
            Some(scope_fix.into()),
        ),
    });
}

fn check_windows(facts: &WindowsFacts, out: &mut Vec<Finding>) {
    let key = r"HKLM\SOFTWARE\Microsoft\Windows\Windows Error Reporting\LocalDumps";
    if facts.wer_disabled {
        out.push(finding(
            Status::Problem(Way::WerDumps),
            "WER",
            "Windows Error Reporting is turned off (Disabled=1): a crash leaves no dump".into(),
            Some(r#"reg delete "HKLM\SOFTWARE\Microsoft\Windows\Windows Error Reporting" /v Disabled /f"#.into()),
        ));
    }
    if !facts.local_dumps {
        out.push(finding(
            Status::Problem(Way::WerDumps),
            "WER LocalDumps",
            format!("{key} does not exist: WER keeps no dump of a crashing program (a Report.wer at most)"),
            Some(format!(
                r#"reg add "{key}" /v DumpType /t REG_DWORD /d 2 /f and reg add "{key}" /v DumpFolder /t REG_EXPAND_SZ /d C:\dumps /f (as administrator)"#
            )),
        ));
        return;
    }
    let folder = facts
        .dump_folder
        .clone()
        .unwrap_or_else(|| r"%LOCALAPPDATA%\CrashDumps".to_string());
    out.push(match &facts.dump_folder_writable {
        Some(Err(e)) => finding(
            Status::Problem(Way::WerDumps),
            "WER LocalDumps",
            format!("DumpFolder {folder} cannot be written ({e})"),
            Some("create it, writable by the account the programs run as".into()),
        ),
        _ => finding(
            Status::Ok,
            "WER LocalDumps",
            format!("dumps go to {folder}"),
            None,
        ),
    });
    out.push(match facts.dump_type.unwrap_or(1) {
        2 => finding(Status::Ok, "WER LocalDumps", "DumpType 2: full dumps".into(), None),
        0 => finding(Status::Ok, "WER LocalDumps", "DumpType 0: custom (CustomDumpFlags)".into(), None),
        _ => finding(
            Status::Note,
            "WER LocalDumps",
            "DumpType 1 (the default): mini dumps hold stacks but not the heap, so lock owners and Python state are often missing".into(),
            Some(format!(r#"reg add "{key}" /v DumpType /t REG_DWORD /d 2 /f"#)),
        ),
    });
    if facts.dump_count == Some(0) {
        out.push(finding(
            Status::Problem(Way::WerDumps),
            "WER LocalDumps",
            "DumpCount 0: no dump is kept".into(),
            Some(format!(
                r#"reg add "{key}" /v DumpCount /t REG_DWORD /d 10 /f"#
            )),
        ));
    }
}

/// The ways a crash would be captured here, and whether each works.
pub fn ways(facts: &Facts, findings: &[Finding]) -> Vec<(Way, bool)> {
    let mut ways = Vec::new();
    if facts.linux.is_some() {
        ways.extend([Way::Cores, Way::Run, Way::Attach]);
    }
    if facts.windows.is_some() {
        ways.push(Way::WerDumps);
    }
    ways.into_iter()
        .map(|way| {
            let broken = findings.iter().any(|f| f.status == Status::Problem(way));
            (way, !broken)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn linux(pattern: &str, limit: Limit) -> Facts {
        Facts {
            linux: Some(LinuxFacts {
                core_pattern: Some(pattern.to_string()),
                core_limit: Some((limit, Limit::Unlimited)),
                ptrace_scope: Some(1),
                may_ptrace_any: false,
                handler_ok: pattern.starts_with('|').then_some(true),
                cwd_writable: Some(Ok(())),
                apport_enabled: Some(true),
                ..LinuxFacts::default()
            }),
            dump_dir: Some((PathBuf::from("dumps"), Ok(()))),
            ..Facts::default()
        }
    }

    fn works(facts: &Facts, way: Way) -> bool {
        let findings = check(facts);
        ways(facts, &findings)
            .into_iter()
            .find(|(w, _)| *w == way)
            .unwrap()
            .1
    }

    fn problems(facts: &Facts) -> Vec<String> {
        check(facts)
            .into_iter()
            .filter(|f| matches!(f.status, Status::Problem(_)))
            .map(|f| {
                format!(
                    "{}: {} / fix: {}",
                    f.topic,
                    f.what,
                    f.fix.unwrap_or_default()
                )
            })
            .collect()
    }

    #[test]
    fn a_file_pattern_needs_a_core_limit_and_a_writable_folder() {
        assert!(works(&linux("core", Limit::Unlimited), Way::Cores));
        let off = linux("core", Limit::Bytes(0));
        assert!(!works(&off, Way::Cores));
        assert!(
            problems(&off)[0].contains("ulimit -c unlimited"),
            "{:?}",
            problems(&off)
        );
        let mut ro = linux("core", Limit::Unlimited);
        ro.linux.as_mut().unwrap().cwd_writable = Some(Err("Read-only file system".into()));
        assert!(!works(&ro, Way::Cores));
        let mut dir = linux("/var/cores/core.%e.%p", Limit::Unlimited);
        dir.linux.as_mut().unwrap().pattern_dir =
            Some(("/var/cores".into(), Err("No such file or directory".into())));
        assert!(
            problems(&dir)[0].contains("mkdir -p /var/cores"),
            "{:?}",
            problems(&dir)
        );
    }

    #[test]
    fn a_pipe_needs_its_handler_and_the_handlers_own_settings() {
        let systemd = "|/usr/lib/systemd/systemd-coredump %P %u %g %s %t %c %h";
        assert!(works(&linux(systemd, Limit::Unlimited), Way::Cores));
        // systemd-coredump honours the process's core limit.
        assert!(!works(&linux(systemd, Limit::Bytes(0)), Way::Cores));
        let mut missing = linux(systemd, Limit::Unlimited);
        missing.linux.as_mut().unwrap().handler_ok = Some(false);
        let said = problems(&missing);
        assert!(
            said[0].contains("does not exist") && said[0].contains("install systemd-coredump"),
            "{said:?}"
        );
        // In a container the handler runs on the host: a note only.
        missing.linux.as_mut().unwrap().container = true;
        assert!(works(&missing, Way::Cores));
        let mut none = linux(systemd, Limit::Unlimited);
        none.linux.as_mut().unwrap().coredump_storage = Some("none".into());
        assert!(!works(&none, Way::Cores));

        let apport = "|/usr/share/apport/apport -p%p -s%s -c%c -d%d -P%P -u%u -g%g -- %E";
        let facts = linux(apport, Limit::Bytes(0));
        assert!(
            !works(&facts, Way::Cores),
            "apport drops programs of no package"
        );
        let mut unpackaged = facts.clone();
        unpackaged.linux.as_mut().unwrap().apport_unpackaged = true;
        assert!(works(&unpackaged, Way::Cores));
        let mut off = unpackaged;
        off.linux.as_mut().unwrap().apport_enabled = Some(false);
        assert!(!works(&off, Way::Cores));

        // Our own handler reads the pipe whatever the core limit.
        let ours = "|/usr/local/bin/dumptriage convert --from-stdin -o /var/crash/%e.%p.dmp";
        assert!(works(&linux(ours, Limit::Bytes(0)), Way::Cores));
    }

    #[test]
    fn ptrace_scope_decides_run_and_attach_unless_tried() {
        let mut facts = linux("core", Limit::Unlimited);
        assert!(works(&facts, Way::Run));
        assert!(!works(&facts, Way::Attach), "scope 1, not root");
        facts.linux.as_mut().unwrap().may_ptrace_any = true;
        assert!(works(&facts, Way::Attach));
        facts.linux.as_mut().unwrap().ptrace_scope = Some(3);
        assert!(!works(&facts, Way::Run) && !works(&facts, Way::Attach));
        // A real attempt outranks the setting (a container's seccomp).
        let l = facts.linux.as_mut().unwrap();
        l.ptrace_scope = Some(0);
        l.ptrace_child = Some(Err("Operation not permitted".into()));
        l.ptrace_other = Some(Err("Operation not permitted".into()));
        assert!(!works(&facts, Way::Run));
        assert!(problems(&facts).iter().any(|p| p.contains("SYS_PTRACE")));
    }

    #[test]
    fn windows_local_dumps_keys() {
        let mut facts = Facts {
            windows: Some(WindowsFacts::default()),
            ..Facts::default()
        };
        assert!(!works(&facts, Way::WerDumps));
        assert!(problems(&facts)[0].contains("reg add"));
        let w = facts.windows.as_mut().unwrap();
        w.local_dumps = true;
        w.dump_folder = Some(r"C:\dumps".into());
        w.dump_type = Some(2);
        assert!(works(&facts, Way::WerDumps));
        facts.windows.as_mut().unwrap().dump_count = Some(0);
        assert!(!works(&facts, Way::WerDumps));
        facts.windows.as_mut().unwrap().dump_count = None;
        facts.windows.as_mut().unwrap().wer_disabled = true;
        assert!(!works(&facts, Way::WerDumps));
    }
}
