//! The command's process tree under `run`: which of its processes are
//! stuck at a hang timeout, and ending all of them.
//!
//! The wrapper makes itself a child subreaper (PR_SET_CHILD_SUBREAPER), so
//! a process whose parent dies (the `sh` of `sh -c` killed first, a
//! daemonizing double fork) is re-parented to the wrapper instead of init:
//! every process the command started stays in the wrapper's tree, found by
//! following parent pids in /proc.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use libc::pid_t;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// A process of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Member {
    pub pid: u32,
    /// 0 for the root.
    pub depth: usize,
    /// Every thread waits for a child process to end (wait4/waitid): a
    /// wrapper such as `sh -c`, `make`, `cargo test` or `npm test`.
    pub wrapper: bool,
}

/// `root` and every process below it, parents before children. A vfork
/// child is left out: it runs in its parent's memory until it execs or
/// exits, and its parent waits for that (the parent is the one to look at).
pub(super) fn tree(root: u32) -> Vec<Member> {
    let children = children_by_parent();
    let mut out = vec![Member {
        pid: root,
        depth: 0,
        wrapper: waits_for_children(root),
    }];
    let mut next = 0;
    while next < out.len() {
        let (pid, depth) = (out[next].pid, out[next].depth);
        let vforking = in_vfork(pid);
        for &child in children.get(&pid).into_iter().flatten() {
            if out.iter().all(|m| m.pid != child) && !vforking {
                out.push(Member {
                    pid: child,
                    depth: depth + 1,
                    wrapper: waits_for_children(child),
                });
            }
        }
        next += 1;
    }
    out
}

/// The processes to dump at a hang: those not merely waiting for a child,
/// deepest first (the work is at the leaves; the wrappers above only wait
/// for it), at most `max`. When every process waits for a child (its
/// child a zombie not yet reaped, say), the deepest one.
pub(super) fn stuck(tree: &[Member], max: usize) -> Vec<Member> {
    let mut working: Vec<Member> = tree.iter().filter(|m| !m.wrapper).cloned().collect();
    if working.is_empty() {
        working.extend(tree.iter().max_by_key(|m| m.depth).cloned());
    }
    // Deepest first; among equals, the older (lower) pid.
    working.sort_by(|a, b| b.depth.cmp(&a.depth).then(a.pid.cmp(&b.pid)));
    working.truncate(max);
    working
}

/// Ends every process below `ancestor` (the wrapper itself: with the
/// subreaper, that is every process the command started), as timeout(1)
/// with `-k` does: SIGTERM, then SIGKILL for what is left after `grace`.
/// SIGCONT follows SIGTERM, as with timeout(1): a stopped process (one
/// stopped for its dump) takes its SIGTERM before any of its interrupted
/// calls returns to it. `terminated` had their SIGTERM already (a second
/// one would run a handler twice). Returns how many needed SIGKILL.
/// Zombies count as ended (their parent, or the wrapper, reaps them).
pub(super) fn end_all_below(ancestor: u32, grace: Duration, terminated: &[u32]) -> usize {
    let signal_all = |signal: Signal| -> usize {
        let alive: Vec<u32> = tree(ancestor)
            .into_iter()
            .skip(1)
            .map(|m| m.pid)
            .filter(|&pid| alive(pid))
            .collect();
        for &pid in &alive {
            if signal != Signal::SIGTERM || !terminated.contains(&pid) {
                let _ = kill(Pid::from_raw(pid as pid_t), signal);
            }
        }
        if signal == Signal::SIGTERM {
            for &pid in &alive {
                let _ = kill(Pid::from_raw(pid as pid_t), Signal::SIGCONT);
            }
        }
        alive.len()
    };
    if signal_all(Signal::SIGTERM) == 0 {
        return 0;
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if tree(ancestor).iter().skip(1).all(|m| !alive(m.pid)) {
            return 0;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    signal_all(Signal::SIGKILL)
}

/// Reaps every ended child of the wrapper (re-parented orphans included)
/// without waiting.
pub(super) fn reap_orphans() {
    loop {
        // SAFETY: waitpid with a null status pointer and WNOHANG only
        // collects exited children.
        let pid = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG | libc::__WALL) };
        if pid <= 0 {
            break;
        }
    }
}

/// Makes the wrapper the reaper of every orphan of the command's tree.
pub(super) fn become_subreaper() -> std::io::Result<()> {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes one integer argument.
    let result = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Whether a thread of `pid` waits for its vfork child (it sleeps
/// uninterruptibly in the kernel's clone until the child execs or exits).
fn in_vfork(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        let wchan = std::fs::read_to_string(task.path().join("wchan")).unwrap_or_default();
        let state = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        matches!(
            wchan.trim(),
            "kernel_clone" | "wait_for_vfork_done" | "_do_fork"
        ) && parse_stat(&state).is_some_and(|(s, _)| s == 'D')
    })
}

/// A process that exists and is not a zombie.
fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|(state, _)| state != 'Z' && state != 'X')
}

/// Every process's children, from /proc/PID/stat.
fn children_by_parent() -> HashMap<u32, Vec<u32>> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return children;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some((_, parent)) = stat(pid) {
            children.entry(parent).or_default().push(pid);
        }
    }
    for list in children.values_mut() {
        list.sort_unstable();
    }
    children
}

/// The state and parent pid of /proc/PID/stat. The command name (field 2)
/// is in parentheses and may itself hold spaces and parentheses: the fields
/// after it start after the last `)`.
fn stat(pid: u32) -> Option<(char, u32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

fn parse_stat(text: &str) -> Option<(char, u32)> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    Some((state, parent))
}

/// Whether every thread of `pid` sleeps in the kernel's wait for a child
/// (`do_wait`, the wait channel of wait4 and waitid).
fn waits_for_children(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    let mut any = false;
    for task in tasks.flatten() {
        let wchan = std::fs::read_to_string(task.path().join("wchan")).unwrap_or_default();
        if wchan.trim() != "do_wait" {
            return false;
        }
        any = true;
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_command_names() {
        assert_eq!(parse_stat("42 (sh) S 7 42 42 0"), Some(('S', 7)));
        assert_eq!(parse_stat("43 (a) b (c)) R 42 1 1"), Some(('R', 42)));
        assert_eq!(parse_stat("44 (x"), None);
    }

    #[test]
    fn the_stuck_processes_are_the_deepest_non_wrappers() {
        let m = |pid, depth, wrapper| Member {
            pid,
            depth,
            wrapper,
        };
        // sh -c 'make' -> make -> (cc1 hung, sh waiting for a hung test)
        let tree = [
            m(10, 0, true),
            m(11, 1, true),
            m(12, 2, false),
            m(13, 2, true),
            m(14, 3, false),
        ];
        let pids: Vec<u32> = stuck(&tree, 8).iter().map(|m| m.pid).collect();
        assert_eq!(pids, [14, 12]);
        assert_eq!(stuck(&tree, 1).len(), 1);
        // Only wrappers: the deepest.
        let waiting = [m(10, 0, true), m(11, 1, true)];
        assert_eq!(stuck(&waiting, 8)[0].pid, 11);
    }

    /// A real tree: this test process's shell child and its grandchild.
    #[test]
    fn the_tree_follows_parent_pids_and_finds_wrappers() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30; true"])
            .spawn()
            .unwrap();
        let root = child.id();
        let deadline = Instant::now() + Duration::from_secs(5);
        let found = loop {
            let found = tree(root);
            if found.len() >= 2 && found[0].wrapper || Instant::now() > deadline {
                break found;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let _ = child.kill();
        let _ = child.wait();
        assert!(found.len() >= 2, "{found:?}");
        assert!(found[0].wrapper, "{found:?}");
        assert_eq!(found[1].depth, 1);
        assert!(!found[1].wrapper, "{found:?}");
        assert_eq!(stuck(&found, 8)[0].pid, found[1].pid);
        // the sleep was orphaned to init (this test is no subreaper): gone
        // with its own kill below.
        let _ = kill(Pid::from_raw(found[1].pid as pid_t), Signal::SIGKILL);
    }
}
