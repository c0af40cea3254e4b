//! The C programs of tests/programs/, built with gcc at test time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const FLAGS: [&str; 3] = ["-g", "-O0", "-fno-omit-frame-pointer"];

/// Each program: the file built (a `.so` is a shared library), its source,
/// and what follows the source on gcc's command line. Libraries come before
/// the programs linked with them; `-Wl,-rpath,$ORIGIN` finds them beside.
const BUILDS: [(&str, &str, &[&str]); 17] = [
    ("libpal.so", "libpal.c", &["-lpthread"]),
    (
        "libamdhip64.so",
        "libamdhip64.c",
        &["-L.", "-lpal", "-Wl,-rpath,$ORIGIN", "-lpthread"],
    ),
    (
        "hip_exit_hang",
        "hip_exit_hang.c",
        &["-L.", "-lamdhip64", "-Wl,-rpath,$ORIGIN", "-lpthread"],
    ),
    ("libplugin.so", "libplugin.c", &[]),
    ("unload_crash", "unload_crash.c", &["-ldl"]),
    (
        "unload_crash_no_frame",
        "unload_crash_no_frame.c",
        &["-ldl"],
    ),
    ("exit_lock_hang", "exit_lock_hang.c", &["-lpthread"]),
    ("exit_deadlock", "exit_deadlock.c", &["-lpthread"]),
    ("deadlock", "deadlock.c", &["-lpthread"]),
    ("exit_status", "exit_status.c", &[]),
    // Stripped: not even `main` has a name.
    ("stripped_main", "stripped_main.c", &["-s", "-lpthread"]),
    (
        "healthy_gpu_daemon",
        "healthy_gpu_daemon.c",
        &["-L.", "-lamdhip64", "-Wl,-rpath,$ORIGIN", "-lpthread"],
    ),
    ("vfork_stuck", "vfork_stuck.c", &["-lpthread"]),
    (
        "registry_unload_crash",
        "registry_unload_crash.cpp",
        &["-ldl", "-lstdc++"],
    ),
    ("exit_waits", "exit_waits.c", &["-lpthread"]),
    ("rt_signals", "rt_signals.c", &["-lpthread"]),
    ("eintr_waits", "eintr_waits.c", &["-lpthread"]),
];

/// Builds every test program once per test binary; returns their folder.
pub fn programs() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("capture-programs");
        std::fs::create_dir_all(&out).unwrap();
        for (built, source, rest) in BUILDS {
            let shared: &[&str] = if built.ends_with(".so") {
                &["-fPIC", "-shared"]
            } else {
                &[]
            };
            gcc(&out, shared, built, &src.join(source), rest);
        }
        out
    })
}

fn gcc(dir: &Path, shared: &[&str], built: &str, source: &Path, rest: &[&str]) {
    let out = Command::new("gcc")
        .current_dir(dir)
        .args(FLAGS)
        .args(shared)
        .args(["-o", built])
        .arg(source)
        .args(rest)
        .output()
        .expect("gcc must be installed to build tests/programs");
    assert!(
        out.status.success(),
        "gcc -o {built} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
