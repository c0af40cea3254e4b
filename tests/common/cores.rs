//! Cores of the Linux sample programs, made at test time (none is
//! committed): the kernel's core of a crash, the kernel's core of a hang
//! asked for with SIGQUIT (a CI watchdog's way), and gdb's gcore.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The sample programs and their libraries.
pub fn samples_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps/linux/bin")
}

/// The kernel writes `core` into the crashing process's folder when
/// core_pattern is a plain name (the kernel's default, this machine's and
/// most containers'); with a pipe or a folder no test can make a core.
pub fn kernel_cores_land_here() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/core_pattern")
        .is_ok_and(|p| !p.starts_with('|') && !p.contains('/'))
}

pub fn has_gdb() -> bool {
    Command::new("gdb").arg("--version").output().is_ok()
}

/// A folder for one program's cores with links to the sample programs and
/// their libraries (some open theirs from the current folder).
pub fn workdir(root: &Path, name: &str) -> PathBuf {
    let work = root.join(name);
    std::fs::create_dir_all(&work).unwrap();
    for entry in std::fs::read_dir(samples_bin()).unwrap() {
        let path = entry.unwrap().path();
        std::os::unix::fs::symlink(&path, work.join(path.file_name().unwrap())).unwrap();
    }
    work
}

/// Runs `program ARGS` in `dir` with cores allowed and `env` set; returns
/// its core, renamed `core.NAME`.
pub fn crash_core(program: &Path, args: &[&str], env: &[(&str, &Path)], dir: &Path) -> PathBuf {
    let mut command = Command::new("bash");
    for (name, value) in env {
        command.env(name, value);
    }
    let status = command
        .arg("-c")
        .arg("ulimit -c unlimited && exec \"$0\" \"$@\"")
        .arg(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "{program:?} did not crash");
    take_core(program, dir)
}

/// The core the kernel left in `dir`, renamed `core.NAME`.
pub fn take_core(program: &Path, dir: &Path) -> PathBuf {
    let name = program.file_name().unwrap().to_string_lossy().into_owned();
    let found = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let file = p.file_name().unwrap().to_string_lossy();
            file == "core" || file.starts_with("core.") && file[5..].parse::<u32>().is_ok()
        })
        .unwrap_or_else(|| panic!("{name} left no core in {dir:?}"));
    let to = dir.join(format!("core.{name}"));
    std::fs::rename(found, &to).unwrap();
    to
}

/// Starts a program that hangs at exit, and waits until it says it got
/// there (a line on standard output or error) and every thread of it is
/// blocked (asleep, several looks in a row): a core taken before would show
/// a thread still on its way, or none at all.
pub fn start_hang(program: &Path, args: &[&str], dir: &Path) -> std::process::Child {
    let mut child = Command::new("bash")
        .arg("-c")
        .arg("ulimit -c unlimited && exec \"$0\" \"$@\" 2>&1")
        .arg(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (said, heard) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(out);
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let _ = said.send(());
        // Keep reading, so the program never blocks on a full pipe.
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    // Only a guard against a program that never gets there: waiting ends
    // as soon as it does.
    heard
        .recv_timeout(crate::common::HANG_GUARD)
        .unwrap_or_else(|e| panic!("{program:?} never said it was exiting: {e}"));
    crate::common::wait_until_asleep(child.id(), 0);
    child
}

/// The kernel's core of a program hung at exit, asked for with SIGQUIT;
/// with `gcore`, gdb's core of it first (returned second).
pub fn hang_cores(
    program: &Path,
    args: &[&str],
    dir: &Path,
    gcore: bool,
) -> (PathBuf, Option<PathBuf>) {
    let mut child = start_hang(program, args, dir);
    let gcored = gcore.then(|| {
        let to = dir.join(format!(
            "gcore.{}",
            program.file_name().unwrap().to_string_lossy()
        ));
        crate::common::gcore(child.id(), &to);
        to
    });
    Command::new("kill")
        .args(["-QUIT", &child.id().to_string()])
        .status()
        .unwrap();
    let _ = child.wait();
    (take_core(program, dir), gcored)
}
