//! The C programs of tests/programs/, built with gcc at test time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const FLAGS: [&str; 3] = ["-g", "-O0", "-fno-omit-frame-pointer"];

/// Builds every test program once per test binary; returns their folder.
pub fn programs() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("capture-programs");
        std::fs::create_dir_all(&out).unwrap();
        let rpath = "-Wl,-rpath,$ORIGIN";
        gcc(
            &out,
            &["-fPIC", "-shared", "-o", "libpal.so"],
            &[src.join("libpal.c")],
            &["-lpthread"],
        );
        gcc(
            &out,
            &["-fPIC", "-shared", "-o", "libamdhip64.so"],
            &[src.join("libamdhip64.c")],
            &["-L.", "-lpal", rpath, "-lpthread"],
        );
        gcc(
            &out,
            &["-o", "hip_exit_hang"],
            &[src.join("hip_exit_hang.c")],
            &["-L.", "-lamdhip64", rpath, "-lpthread"],
        );
        gcc(
            &out,
            &["-fPIC", "-shared", "-o", "libplugin.so"],
            &[src.join("libplugin.c")],
            &[],
        );
        gcc(
            &out,
            &["-o", "unload_crash"],
            &[src.join("unload_crash.c")],
            &["-ldl"],
        );
        gcc(
            &out,
            &["-o", "exit_lock_hang"],
            &[src.join("exit_lock_hang.c")],
            &["-lpthread"],
        );
        gcc(
            &out,
            &["-o", "exit_deadlock"],
            &[src.join("exit_deadlock.c")],
            &["-lpthread"],
        );
        gcc(
            &out,
            &["-o", "deadlock"],
            &[src.join("deadlock.c")],
            &["-lpthread"],
        );
        gcc(
            &out,
            &["-o", "exit_status"],
            &[src.join("exit_status.c")],
            &[],
        );
        // Stripped: not even `main` has a name.
        gcc(
            &out,
            &["-s", "-o", "stripped_main"],
            &[src.join("stripped_main.c")],
            &["-lpthread"],
        );
        gcc(
            &out,
            &["-o", "healthy_gpu_daemon"],
            &[src.join("healthy_gpu_daemon.c")],
            &["-L.", "-lamdhip64", rpath, "-lpthread"],
        );
        gcc(
            &out,
            &["-o", "vfork_stuck"],
            &[src.join("vfork_stuck.c")],
            &["-lpthread"],
        );
        gcc(
            &out,
            &["-o", "registry_unload_crash"],
            &[src.join("registry_unload_crash.cpp")],
            &["-ldl", "-lstdc++"],
        );
        gcc(
            &out,
            &["-o", "exit_waits"],
            &[src.join("exit_waits.c")],
            &["-lpthread"],
        );
        gcc(
            &out,
            &["-o", "rt_signals"],
            &[src.join("rt_signals.c")],
            &["-lpthread"],
        );
        gcc(
            &out,
            &["-o", "eintr_waits"],
            &[src.join("eintr_waits.c")],
            &["-lpthread"],
        );
        out
    })
}

fn gcc(dir: &Path, args: &[&str], sources: &[PathBuf], libs: &[&str]) {
    let out = Command::new("gcc")
        .current_dir(dir)
        .args(FLAGS)
        .args(args)
        .args(sources)
        .args(libs)
        .output()
        .expect("gcc must be installed to build tests/programs");
    assert!(
        out.status.success(),
        "gcc {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
