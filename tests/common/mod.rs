//! Helpers shared by the integration tests: they run the real binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub mod capture;
pub mod cores;
pub mod cpu;
pub mod golden;
pub mod httpd;
#[cfg(target_os = "linux")]
pub mod programs;
#[cfg(target_os = "linux")]
pub mod pyenv;
pub mod shims;
pub mod skip;
pub mod symbol_fixtures;
pub mod synth;
pub mod text;

/// How long a test waits for something that must happen (a program
/// reaching the state under test, a thread blocking) before it says it
/// never happened. Not a measure of speed: each wait ends as soon as the
/// thing happens, and no test asserts how long anything took (on a machine
/// busy with other work, that measures the load).
pub const HANG_GUARD: std::time::Duration = std::time::Duration::from_secs(120);

/// Gives `command` the default action of SIGQUIT and SIGINT back. A shell
/// without job control starts `cmd &` with both ignored, and an ignored
/// signal stays ignored across exec: under `nohup .ci/run &` a program the
/// test stops with SIGQUIT, as a CI watchdog does, would go on and never
/// dump.
#[cfg(target_os = "linux")]
pub fn with_default_quit(command: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec and calls
    // only signal(2), which is async-signal-safe; it allocates nothing.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    command
}

/// Waits until the process `pid` has reached the state a test looks at:
/// every thread but `spinning` of them asleep (state S), at five looks in
/// a row 20 ms apart. A test that slept a fixed time instead would look too
/// early on a busy machine.
pub fn wait_until_asleep(pid: u32, spinning: usize) {
    let started = std::time::Instant::now();
    let mut calm = 0;
    while calm < 5 {
        let states: Vec<char> = std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|t| std::fs::read_to_string(t.path().join("stat")).ok())
            .filter_map(|stat| stat.rsplit_once(") ")?.1.chars().next())
            .collect();
        let asleep = states.iter().filter(|s| **s == 'S').count();
        calm = if !states.is_empty() && asleep + spinning >= states.len() {
            calm + 1
        } else {
            0
        };
        assert!(
            started.elapsed() < HANG_GUARD,
            "process {pid}: its threads never went to sleep ({states:?})"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The specific signatures of the interface (ids kept stable), each with a
/// sample dump.
pub const SPECIFIC_IDS: [&str; 16] = [
    "winml-epcatalog-release",
    "dxc-after-unload",
    "ort-logger-after-teardown",
    "ort-node-env-late-release",
    "hip-unregister-fatbinary-hang",
    "pal-fence-wait-at-exit",
    "vulkan-probe-driver-exception",
    "tls-destructor-crash-at-exit",
    "glibc-loader-lock-at-exit",
    "python-exit-waits-for-thread",
    "vulkan-teardown-at-exit",
    "opencl-release-at-exit",
    "d3d12-directml-at-exit",
    "cuda-library-handle-at-exit",
    "tls-teardown-hang-at-exit",
    "python-thread-after-finalization",
];

/// The generic situations of the interface.
pub const GENERIC_IDS: [&str; 5] = [
    "crash-in-unloaded-module",
    "crash-during-exit",
    "hang-during-exit",
    "loader-lock-at-exit",
    "abort-during-exit",
];

pub fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dumptriage"));
    // The machine's own symbol servers (distributions set DEBUGINFOD_URLS
    // for every login) are no part of a test.
    cmd.env_remove("NO_COLOR")
        .env_remove("_NT_SYMBOL_PATH")
        .env_remove("DEBUGINFOD_URLS")
        .env_remove("DEBUGINFOD_CACHE_PATH")
        .env_remove("DUMPTRIAGE_SYMBOL_INDEX_MIN");
    cmd
}

pub fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// `../shared` beside the checkout: data from other projects (public
/// dumps with their symbols, the JUnit schema), kept out of the repository.
/// CI clones the repository with shared/ beside it; without it the tests
/// that read it fail (never skip), saying where it was looked for.
pub fn shared_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    assert!(
        dir.join("corpus/public").is_dir(),
        "{} is missing: the public dumps and the JUnit schema are read from ../shared \
         beside the checkout (see CONTRIBUTING.md, \"Test data\")",
        dir.display()
    );
    dir
}

/// A file or folder of the public corpus (other projects' dumps and
/// symbols): `public("breakpad/minidump2.dmp")`.
pub fn public(rel: &str) -> PathBuf {
    shared_dir().join("corpus/public").join(rel)
}

/// Runs `dumptriage ARGS` and returns its output.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run dumptriage")
}

/// Runs `dumptriage analyze --format json PATHS` and parses the document.
pub fn analyze_json(paths: &[&Path]) -> (serde_json::Value, Output) {
    let mut cmd = bin();
    cmd.args(["analyze", "--format", "json"]).args(paths);
    let out = cmd.output().expect("run dumptriage");
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (doc, out)
}

/// Every report of a JSON document, keyed by the dump's file stem.
pub fn reports_by_stem(doc: &serde_json::Value) -> Vec<(String, &serde_json::Value)> {
    doc["reports"]
        .as_array()
        .expect("reports array")
        .iter()
        .map(|r| {
            let path = r["path"].as_str().expect("path");
            let stem = Path::new(path)
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (stem, r)
        })
        .collect()
}

/// Replaces each `(path, placeholder)` prefix in a report by its
/// placeholder, and writes the rest of that path with `/`, so golden files
/// are the same on every OS: on Windows a path such as
/// `C:\t\x\tests/data\corpus/a.dmp` (or its JSON form with `\\`) becomes
/// `<ROOT>/tests/data/corpus/a.dmp`. Backslashes elsewhere (a Windows
/// module path recorded in a dump) are left alone.
pub fn placeholder_paths(text: &str, prefixes: &[(&Path, &str)]) -> String {
    let mut text = text.to_string();
    for (prefix, placeholder) in prefixes {
        let raw = prefix.display().to_string();
        let json = raw.replace('\\', "\\\\");
        for form in [json, raw] {
            let mut out = String::with_capacity(text.len());
            let mut rest = text.as_str();
            while let Some(at) = rest.find(&form) {
                out.push_str(&rest[..at]);
                out.push_str(placeholder);
                rest = &rest[at + form.len()..];
                let tail = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || "._-/\\".contains(c)))
                    .unwrap_or(rest.len());
                let mut path = rest[..tail].replace("\\\\", "/").replace('\\', "/");
                while path.contains("//") {
                    path = path.replace("//", "/");
                }
                out.push_str(&path);
                rest = &rest[tail..];
            }
            out.push_str(rest);
            text = out;
        }
    }
    text
}

/// Runs a build tool (gcc, objcopy, strip), which must succeed.
pub fn tool(program: &str, args: &[&std::ffi::OsStr]) {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `program` under `dumptriage run` with `dumps` as the dump folder;
/// it must say `says` on standard error and leave one dump, returned.
pub fn run_to_dump(program: &Path, dumps: &Path, says: &str) -> PathBuf {
    std::fs::create_dir_all(dumps).unwrap();
    let out = capture::Capture::run(program)
        .json()
        .dump_dir(dumps)
        .output();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(says), "{stderr}");
    std::fs::read_dir(dumps)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "dmp"))
        .unwrap_or_else(|| panic!("no dump: {stderr}"))
}

/// A diagnosis as expectation files name it: its rule id, or `possibly: ID`
/// when it is a possible finding only (exit not established, issue 23), so
/// an answer that turns possible cannot pass unnoticed.
pub fn diagnosis_name(diagnosis: &serde_json::Value) -> String {
    let id = diagnosis["signature"].as_str().unwrap_or("");
    match diagnosis["possible"].as_str() {
        Some(_) => format!("possibly: {id}"),
        None => id.to_string(),
    }
}

/// The names of a JSON report's diagnoses, in order (`diagnosis_name`).
pub fn diagnosis_names(report: &serde_json::Value) -> Vec<String> {
    report["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .map(diagnosis_name)
        .collect()
}

/// The function names of a JSON thread's frames, in order (frames without
/// one left out).
pub fn function_names(thread: &serde_json::Value) -> Vec<String> {
    thread["frames"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["function"].as_str().map(str::to_string))
        .collect()
}

/// The `.dmp` files of a folder, sorted.
pub fn dumps_in(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "dmp"))
        .collect();
    found.sort();
    found
}

/// The variable that tells a test it runs alone, in a process of its own:
/// set by [`run_alone`] to the test's name.
const ALONE: &str = "DUMPTRIAGE_TEST_ALONE";

/// This test binary again, to run only the ignored test `name` (its path
/// in the binary: `module::function`): for a test that measures its whole
/// process (peak memory) or sets its environment, which the tests running
/// beside it in this process would disturb.
pub fn this_binary_running(name: &str) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary's path"));
    cmd.args([
        name,
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(ALONE, name);
    cmd
}

/// Runs the ignored test `name` alone in a child process (see
/// [`this_binary_running`]); its output is passed on, and its failure is
/// this test's.
pub fn run_alone(name: &str) {
    let out = this_binary_running(name)
        .output()
        .expect("run the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprint!("{stderr}");
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name}, alone in its own process: {}\n{stdout}",
        out.status
    );
}

/// The first line of a test that [`run_alone`] runs: it fails when run any
/// other way (`--ignored` with the other tests in one process).
pub fn assert_alone(name: &str) {
    assert_eq!(
        std::env::var(ALONE).as_deref(),
        Ok(name),
        "{name} measures its whole process: it is run alone by another test"
    );
}

/// gdb's `gcore` of a live process into `to` (which must then exist).
pub fn gcore(pid: u32, to: &Path) {
    let out = Command::new("gdb")
        .args(["-q", "-batch", "-nx", "-p", &pid.to_string(), "-ex"])
        .arg(format!("gcore {}", to.display()))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        to.exists(),
        "gcore wrote nothing: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
