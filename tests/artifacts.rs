//! What the machine kept, in one artifact (issue #41), through the real
//! binary: `convert` of the Linux sample cores (the core's diagnosis and
//! frames from a file of under 5% of its size, from a file or from a pipe),
//! `pack` of a core and of a Wine minidump moved to a fresh folder with the
//! originals deleted (the same frames and diagnosis), hostile packs, and
//! `doctor` on this machine and on injected settings.
#![cfg(target_os = "linux")]

use crate::common;
use crate::common::cores;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn analyze(path: &Path, extra: &[&str], home: &Path) -> Value {
    let out = common::bin()
        .args(["analyze", "--format", "json"])
        .args(extra)
        .arg(path)
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("TMPDIR", tmp(home))
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{path:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    doc
}

/// A private temporary folder beside `home`, for the runs' own folders.
fn tmp(home: &Path) -> PathBuf {
    let dir = home.join("tmp");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What must be the same: the diagnoses, and every thread's frames (where
/// and what each one is, and what it waits for).
fn answer(report: &Value) -> Value {
    let diagnoses = common::diagnosis_names(report);
    let threads: Vec<Value> = report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let frames: Vec<Value> = t["frames"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    serde_json::json!([
                        f["instruction"],
                        f["module"],
                        f["function"],
                        f["line"],
                        f["kind"]
                    ])
                })
                .collect();
            serde_json::json!({"id": t["id"], "frames": frames, "wait": t["wait"]})
        })
        .collect();
    serde_json::json!({"diagnoses": diagnoses, "threads": threads, "exception": report["exception"]["code"]})
}

fn convert(args: &[&str], stdin: Option<&Path>) -> Output {
    let mut command = common::bin();
    command.arg("convert").args(args);
    match stdin {
        Some(path) => command.stdin(std::fs::File::open(path).unwrap()),
        None => command.stdin(Stdio::null()),
    };
    command.output().unwrap()
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

/// Every Linux sample's core, converted: exit 0 (the minidump's report is
/// the core's, checked by `convert` itself), under 5% of the core, and the
/// same diagnosis and frames when analysed again here; the kernel's cores
/// fed on standard input too (a core_pattern pipe), and gdb's gcore, whose
/// notes come last, refused from a pipe in one line.
#[test]
fn converted_sample_cores_give_the_cores_report_at_under_5_percent() {
    if !cores::kernel_cores_land_here() || !cores::has_gdb() {
        common::skip::skip(
            "artifacts::convert",
            "kernel.core_pattern does not write cores into the process's folder, or no gdb",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let python = Path::new("/usr/bin/python3");
    let mut made = sample_cores(dir.path(), python);
    // A core cut short: its warning goes into the minidump.
    let (first, _) = &made[1];
    let bytes = std::fs::read(first).unwrap();
    let cut = dir.path().join("core.cut");
    std::fs::write(&cut, &bytes[..bytes.len() * 6 / 10]).unwrap();
    made.push((cut, false));

    let mut failures = Vec::new();
    let mut python_reads = 0;
    for (core, kernel) in &made {
        if let Some(read) = check_converted(core, *kernel, &home, &mut failures) {
            python_reads += usize::from(read);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if python.exists() {
        assert!(
            python_reads >= 2,
            "the Python reader's reads were kept for the CPython cores"
        );
    }
    // Not a core: one line, status 2.
    let dump = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-dumps/linux/tls-destructor-crash-at-exit-linux.dmp");
    let out = convert(
        &[
            dump.to_str().unwrap(),
            "-o",
            dir.path().join("x.dmp").to_str().unwrap(),
        ],
        None,
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains("not an ELF core"), "{said}");
    let out = convert(
        &[
            "--from-stdin",
            "-o",
            dir.path().join("y.dmp").to_str().unwrap(),
        ],
        Some(&dump),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an ELF core"));
}

/// The cores the conversion test converts, each with whether the kernel
/// wrote it (and so it is also read from a pipe): the Linux samples'
/// crashes and hangs, CPython's when `python` is here, and gdb's gcore of
/// a hang.
fn sample_cores(dir: &Path, python: &Path) -> Vec<(PathBuf, bool)> {
    let bin = cores::samples_bin();
    // (core, from the kernel: also read from a pipe)
    let mut made: Vec<(PathBuf, bool)> = Vec::new();
    for program in [
        "cuda_exit_crash",
        "tls_exit_crash",
        "unload_crash",
        "static_dtor_throw",
    ] {
        let work = cores::workdir(dir, program);
        made.push((
            cores::crash_core(&work.join(program), &[], &[], &work),
            true,
        ));
    }
    if python.exists() {
        // CPython's own interpreter state (the Python reader's memory):
        // a thread left running at exit, and a thread after finalization.
        let work = cores::workdir(dir, "python-final");
        made.push((
            cores::crash_core(
                python,
                &["-c", "import pyfinal_ext"],
                &[("PYTHONPATH", &bin)],
                &work,
            ),
            true,
        ));
        let work = cores::workdir(dir, "python-join");
        let script = "import threading, time\nprint('ready', flush=True)\nthreading.Thread(target=time.sleep, args=(60,)).start()";
        let (core, _) = cores::hang_cores(python, &["-c", script], &work, false);
        made.push((core, true));
    } else {
        common::skip::skip(
            "artifacts::convert_python",
            "no /usr/bin/python3 (Debian's python3)",
        );
    }
    for (program, gcore) in [
        ("hip_exit_hang", false),
        ("tls_exit_hang", false),
        ("dlopen_exit_hang", false),
        ("exit_lock_hang", false),
        ("exit_deadlock", false),
        ("python3", true),
    ] {
        let work = cores::workdir(dir, program);
        let (quit, gcored) = cores::hang_cores(&work.join(program), &[], &work, gcore);
        made.push((quit, true));
        if let Some(gcored) = gcored {
            made.push((gcored, false));
        }
    }
    made
}

/// Converts one core and checks the minidump against it (the same answer,
/// under 5% of its size, its warnings), then converts it again from a pipe:
/// the kernel's cores give the same answer, gdb's gcore is refused in one
/// line. What is wrong goes into `failures`; whether the Python readers'
/// reads were kept, when the conversion went through.
fn check_converted(
    core: &Path,
    kernel: bool,
    home: &Path,
    failures: &mut Vec<String>,
) -> Option<bool> {
    let label = core.display().to_string();
    let small = core.with_extension("small.dmp");
    let out = convert(
        &[core.to_str().unwrap(), "-o", small.to_str().unwrap()],
        None,
    );
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.code() != Some(0) || !said.contains("gives the same report") {
        failures.push(format!(
            "{label}: convert said {:?}: {said}",
            out.status.code()
        ));
        return None;
    }
    let python_read = said.contains("Python readers read") && !said.contains("read 0 ranges");
    let ratio = size(&small) as f64 / size(core) as f64;
    if ratio >= 0.05 {
        failures.push(format!("{label}: {:.2}% of the core", ratio * 100.0));
    }
    let want = &analyze(core, &[], home)["reports"][0];
    let got = &analyze(&small, &[], home)["reports"][0];
    if answer(want) != answer(got) {
        failures.push(format!(
            "{label}: core {:#}\nminidump {:#}",
            answer(want),
            answer(got)
        ));
    }
    assert_eq!(got["source"]["kind"], "minidump");
    assert!(got["source"]["format"]
        .as_str()
        .unwrap()
        .contains("converted by dumptriage"));
    if label.ends_with("core.cut") {
        assert!(
            got["warnings"]
                .to_string()
                .contains("the core is incomplete"),
            "{:#}",
            got["warnings"]
        );
    }
    // From a pipe: the kernel's cores read once, in order.
    let piped = core.with_extension("piped.dmp");
    let out = convert(&["--from-stdin", "-o", piped.to_str().unwrap()], Some(core));
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    if kernel {
        if out.status.code() != Some(0) {
            failures.push(format!("{label} from a pipe: {said}"));
            return None;
        }
        let got = &analyze(&piped, &[], home)["reports"][0];
        if answer(want) != answer(got) {
            failures.push(format!(
                "{label} from a pipe: core {:#}\nminidump {:#}",
                answer(want),
                answer(got)
            ));
        }
        // Never replaces a file.
        let again = convert(&["--from-stdin", "-o", piped.to_str().unwrap()], Some(core));
        assert_eq!(again.status.code(), Some(2), "{label}");
    } else if label.contains("gcore") {
        assert_eq!(out.status.code(), Some(2), "{label}: {said}");
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(said.contains("notes do not come before"), "{said}");
    }
    Some(python_read)
}

/// lldb, a minidump reader that is not ours, reads the minidump `convert`
/// writes: every thread, each at the core's registers, and unwinds through
/// the same return addresses our report shows.
#[test]
fn lldb_reads_the_converted_minidump() {
    if !cores::kernel_cores_land_here() {
        common::skip::skip(
            "artifacts::lldb",
            "kernel.core_pattern does not write cores into the process's folder",
        );
        return;
    }
    if Command::new("lldb").arg("--version").output().is_err() {
        common::skip::skip(
            "artifacts::lldb",
            "lldb is not installed (scripts/ci-setup-linux.sh installs it)",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = cores::workdir(dir.path(), "tls");
    let core = cores::crash_core(&work.join("tls_exit_crash"), &[], &[], &work);
    let small = work.join("small.dmp");
    let out = convert(
        &[core.to_str().unwrap(), "-o", small.to_str().unwrap()],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new("lldb")
        .args(["-b", "-o", "thread backtrace all", "-c"])
        .arg(&small)
        .current_dir(&work)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    // Each thread's frame addresses, as lldb lists them.
    let mut theirs: Vec<Vec<u64>> = Vec::new();
    for line in said.lines() {
        let line = line.trim_start().trim_start_matches("* ");
        if line.starts_with("thread #") {
            theirs.push(Vec::new());
        } else if let Some(rest) = line.strip_prefix("frame #") {
            let pc = rest.split_once(": 0x").map(|(_, r)| &r[..16]).unwrap();
            theirs
                .last_mut()
                .unwrap()
                .push(u64::from_str_radix(pc, 16).unwrap());
        }
    }
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let report = &analyze(&small, &[], &home)["reports"][0];
    let ours = report["threads"].as_array().unwrap();
    assert_eq!(theirs.len(), ours.len(), "{said}");
    let hex =
        |v: &Value| u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    for thread in ours {
        let frames = thread["frames"].as_array().unwrap();
        let top = hex(&frames[0]["instruction"]);
        let lldb = theirs
            .iter()
            .find(|pcs| pcs.first() == Some(&top))
            .unwrap_or_else(|| panic!("no lldb thread at {top:#x}: {said}"));
        // A caller frame's instruction is its return address minus one.
        for frame in &frames[1..] {
            let returns = hex(&frame["instruction"]) + 1;
            assert!(
                lldb.contains(&returns),
                "{returns:#x} not in lldb's {lldb:x?}: {said}"
            );
        }
        assert!(frames.len() >= 5, "{thread:#}");
    }
}

/// The labels a pack's reports get: `PACK/NAME`.
fn by_name<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"].as_str().unwrap().ends_with(name))
        .unwrap_or_else(|| panic!("no report of {name}: {doc:#}"))
}

/// The manifest of a pack: its first member.
fn pack_manifest(archive: &Path) -> Value {
    let decoder = zstd::stream::read::Decoder::new(std::fs::File::open(archive).unwrap()).unwrap();
    let mut tar = tar::Archive::new(decoder);
    let first = tar.entries().unwrap().next().unwrap().unwrap();
    serde_json::from_reader(first).unwrap()
}

/// A pack of a core (of a program in a folder of its own) and of a Wine
/// minidump (symbols from the sample store), moved to a fresh folder with
/// the core, the program and the dump deleted: the same frames and
/// diagnosis, with no symbol options and with the machine's own files
/// turned off; `--convert` packs the core as its small minidump.
#[test]
fn a_pack_moved_elsewhere_gives_the_same_frames_and_diagnosis() {
    if !cores::kernel_cores_land_here() {
        common::skip::skip(
            "artifacts::pack",
            "kernel.core_pattern does not write cores into the process's folder",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let program_dir = dir.path().join("program");
    std::fs::create_dir(&program_dir).unwrap();
    let program = program_dir.join("tls_exit_crash");
    std::fs::copy(cores::samples_bin().join("tls_exit_crash"), &program).unwrap();
    let core = cores::crash_core(&program, &[], &[], &program_dir);
    let wine_dir = dir.path().join("wine");
    std::fs::create_dir(&wine_dir).unwrap();
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps");
    let wine = wine_dir.join("hip-unregister-fatbinary-hang.dmp");
    std::fs::copy(samples.join("hip-unregister-fatbinary-hang.dmp"), &wine).unwrap();
    let store = samples.join("store");

    let core_before = answer(&analyze(&core, &[], &home)["reports"][0]);
    let wine_before = answer(
        &analyze(
            &wine,
            &["--no-system-symbols", "--symbols", store.to_str().unwrap()],
            &home,
        )["reports"][0],
    );
    assert!(core_before.to_string().contains("tls_exit_crash"));
    assert!(wine_before
        .to_string()
        .contains("hip-unregister-fatbinary-hang"));

    let pack = dir.path().join("crashes.tar.zst");
    let small = dir.path().join("small.tar.zst");
    for (archive, extra) in [(&pack, None), (&small, Some("--convert"))] {
        let out = common::bin()
            .arg("pack")
            .args([&core, &wine])
            .args(["--symbols", store.to_str().unwrap(), "-o"])
            .arg(archive)
            .args(extra)
            .env("HOME", &home)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // --convert packs the core as its small minidump.
    let (whole, converted) = (pack_manifest(&pack), pack_manifest(&small));
    assert_eq!(whole["inputs"][0]["kind"], "core");
    assert_eq!(
        converted["inputs"][0]["kind"],
        "minidump converted from a core"
    );
    let ratio = converted["inputs"][0]["bytes"].as_f64().unwrap()
        / whole["inputs"][0]["bytes"].as_f64().unwrap();
    assert!(ratio < 0.05, "{ratio}");
    assert_eq!(
        whole["files"], converted["files"],
        "the same binaries and symbol files"
    );
    let kinds = whole["files"].to_string();
    assert!(
        kinds.contains("\"kind\":\"pdb\"") && kinds.contains("\"kind\":\"binary\""),
        "{kinds}"
    );

    // Elsewhere: the originals gone, a fresh folder and home.
    std::fs::remove_dir_all(&program_dir).unwrap();
    std::fs::remove_dir_all(&wine_dir).unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let fresh = elsewhere.join("home");
    std::fs::create_dir(&fresh).unwrap();
    for archive in [&pack, &small] {
        let moved = elsewhere.join(archive.file_name().unwrap());
        std::fs::rename(archive, &moved).unwrap();
        for extra in [&[][..], &["--no-system-symbols"][..]] {
            let doc = analyze(&moved, extra, &fresh);
            let core_after = by_name(
                &doc,
                if archive == &small {
                    "core.tls_exit_crash.dmp"
                } else {
                    "core.tls_exit_crash"
                },
            );
            assert_eq!(answer(core_after), core_before, "{moved:?} {extra:?}");
            let wine_after = by_name(&doc, "hip-unregister-fatbinary-hang.dmp");
            assert_eq!(answer(wine_after), wine_before, "{moved:?} {extra:?}");
            // Names came from the pack's own files, shown as in the pack.
            let files = core_after["modules"].to_string();
            assert!(
                files.contains(".tar.zst/symbols/tls_exit_crash/"),
                "{files}"
            );
        }
    }
    // The packs' temporary folders are gone after each run.
    let left: Vec<_> = std::fs::read_dir(tmp(&fresh)).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Hostile and broken packs: one line of error naming the file, status 2,
/// nothing written outside the private folder, and the other inputs of
/// the run still analysed.
#[test]
fn hostile_and_broken_packs_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = br#"{"format":"dumptriage-pack","version":1,"tool":"t","created":"","inputs":[{"name":"x","from":"x","bytes":1,"kind":"minidump"}],"files":[],"left_out":[]}"#;
    let write = |name: &str, entries: &[(&str, tar::EntryType, &[u8])], cut: bool| {
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_ustar();
        header.set_path("dumptriage-pack.json").unwrap();
        header.set_size(manifest.len() as u64);
        header.set_cksum();
        builder.append(&header, &manifest[..]).unwrap();
        for (path, kind, data) in entries {
            let mut header = tar::Header::new_gnu();
            header.as_old_mut().name[..path.len()].copy_from_slice(path.as_bytes());
            header.set_size(data.len() as u64);
            header.set_entry_type(*kind);
            if kind.is_symlink() {
                header.set_link_name("/etc").unwrap();
            }
            header.set_cksum();
            builder.append(&header, *data).unwrap();
        }
        let mut packed = zstd::encode_all(&builder.into_inner().unwrap()[..], 3).unwrap();
        if cut {
            packed.truncate(packed.len() / 2);
        }
        let path = dir.path().join(name);
        std::fs::write(&path, packed).unwrap();
        path
    };
    let regular = tar::EntryType::Regular;
    let big = vec![1u8; 64 << 10];
    let cases = [
        (
            write("escape.tar.zst", &[("../escape", regular, b"x")], false),
            "not a plain relative path",
        ),
        (
            write(
                "link.tar.zst",
                &[("x", tar::EntryType::Symlink, b"")],
                false,
            ),
            "not a plain file or folder",
        ),
        (write("cut.tar.zst", &[("x", regular, &big)], true), "cut"),
        (
            write("missing.tar.zst", &[("y", regular, b"MDMP")], false),
            "does not hold",
        ),
    ];
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps/crash-during-work.dmp");
    for (path, says) in &cases {
        let out = common::bin()
            .args(["analyze", "--format", "json"])
            .arg(path)
            .arg(&sample)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let reports = doc["reports"].as_array().unwrap();
        assert_eq!(reports.len(), 2, "the other input is still analysed");
        assert_eq!(reports[1]["status"], "ok");
        let error = reports[0]["error"].as_str().unwrap();
        assert!(
            error.contains(says) && !error.contains('\n'),
            "{path:?}: {error}"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(path.file_name().unwrap().to_str().unwrap()),
            "{stderr}"
        );
        assert!(!dir.path().join("escape").exists() && !Path::new("/tmp/escape").exists());
    }
}

fn doctor(env: &[(&str, &Path)], limit: &str, args: &[&str], cwd: &Path) -> (Option<i32>, String) {
    let mut command = Command::new("bash");
    command
        .arg("-c")
        .arg(format!("ulimit -c {limit} && exec \"$0\" doctor \"$@\""))
        .arg(env!("CARGO_BIN_EXE_dumptriage"))
        .args(args)
        .current_dir(cwd)
        .env_remove("DEBUGINFOD_URLS")
        .env_remove("_NT_SYMBOL_PATH");
    for (name, value) in env {
        command.env(name, value);
    }
    let out = command.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// `doctor` on this machine says the core_pattern and core limit it
/// finds, and fails for core files exactly when the limit is 0 (with a
/// pattern that writes files, as here).
#[test]
fn doctor_reports_this_machine() {
    let dir = tempfile::tempdir().unwrap();
    let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap();
    let pattern = pattern.trim_end();
    let (status, said) = doctor(&[], "0", &["--for", "cores"], dir.path());
    assert!(
        said.contains(&format!("{pattern:?}")),
        "the real core_pattern: {said}"
    );
    if cores::kernel_cores_land_here() {
        assert_eq!(status, Some(1), "{said}");
        assert!(
            said.contains("ulimit -c: 0: the kernel writes no core file"),
            "{said}"
        );
        let (status, said) = doctor(&[], "unlimited", &["--for", "cores"], dir.path());
        assert_eq!(status, Some(0), "{said}");
        assert!(said.contains("ulimit -c: unlimited"), "{said}");
        assert!(
            said.contains("core files:        would capture\n"),
            "{said}"
        );
    }
    // `run` and `attach`: tried for real (root here, or ptrace_scope 0).
    assert!(said.contains("run: ptrace of a child"), "{said}");
}

/// A core_pattern setting injected as files under a folder `doctor` reads
/// instead of /proc and /etc: the pattern, the files (path, text,
/// executable), the core limit, the status wanted and words it must say.
type Setting<'a> = (
    &'a str,
    Vec<(&'a str, &'a str, bool)>,
    &'a str,
    i32,
    &'a str,
);

fn core_settings() -> Vec<Setting<'static>> {
    let systemd = "|/usr/lib/systemd/systemd-coredump %P %u %g %s %t %c %h %d";
    let apport = "|/usr/share/apport/apport -p%p -s%s -c%c -d%d -P%P -u%u -g%g -- %E";
    fn handler(path: &str) -> (&str, &str, bool) {
        (path, "#!/bin/sh\n", true)
    }
    vec![
        (
            systemd,
            vec![],
            "unlimited",
            1,
            "does not exist or cannot be run",
        ),
        (
            systemd,
            vec![handler("usr/lib/systemd/systemd-coredump")],
            "unlimited",
            0,
            "Storage=external",
        ),
        (
            systemd,
            vec![handler("usr/lib/systemd/systemd-coredump")],
            "0",
            1,
            "keeps no core of a process whose core limit is 0",
        ),
        (
            systemd,
            vec![
                handler("usr/lib/systemd/systemd-coredump"),
                (
                    "etc/systemd/coredump.conf",
                    "[Coredump]\nStorage=none\n",
                    false,
                ),
            ],
            "unlimited",
            1,
            "Storage=none",
        ),
        (
            apport,
            vec![
                handler("usr/share/apport/apport"),
                ("etc/default/apport", "enabled=0\n", false),
            ],
            "unlimited",
            1,
            "apport is turned off",
        ),
        (
            apport,
            vec![
                handler("usr/share/apport/apport"),
                ("etc/default/apport", "enabled=1\n", false),
            ],
            "unlimited",
            1,
            "only of programs from the distribution's packages",
        ),
        (
            "/nonexistent/cores/core.%e",
            vec![],
            "unlimited",
            1,
            "cannot be written",
        ),
        (
            "|/usr/local/bin/dumptriage convert --from-stdin -o /var/crash/%e.%p.dmp",
            vec![handler("usr/local/bin/dumptriage")],
            "0",
            0,
            "piped to dumptriage",
        ),
    ]
}

/// Each core_pattern setting (systemd-coredump, apport, a folder that
/// cannot be written, a pipe to dumptriage), injected.
#[test]
fn doctor_reads_each_core_pattern_setting() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (pattern, files, limit, want, says)) in core_settings().iter().enumerate() {
        let root = dir.path().join(format!("root{i}"));
        let sys = root.join("proc/sys/kernel");
        std::fs::create_dir_all(&sys).unwrap();
        std::fs::write(sys.join("core_pattern"), format!("{pattern}\n")).unwrap();
        for (rel, text, executable) in files {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            if *executable {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        let (status, said) = doctor(
            &[("DUMPTRIAGE_DOCTOR_ROOT", &root)],
            limit,
            &["--for", "cores"],
            dir.path(),
        );
        assert_eq!(status, Some(*want), "{pattern} ulimit {limit}: {said}");
        assert!(said.contains(says), "{pattern}: wanted {says:?} in {said}");
        if *want == 1 {
            assert!(said.contains("fix: "), "{said}");
        }
    }
}

/// Symbol servers: one that answers (any HTTP answer), one that does not
/// (a note: it fails no capture); and a check for another operating
/// system is refused.
#[test]
fn doctor_checks_symbol_servers() {
    let dir = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let answering = format!("http://{}/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(2) {
            let mut stream = stream.unwrap();
            let mut buf = [0u8; 1024];
            let _ = std::io::Read::read(&mut stream, &mut buf);
            let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/", l.local_addr().unwrap())
    };
    let (_, said) = doctor(
        &[],
        "unlimited",
        &[
            "--for",
            "run",
            "--symbols",
            &answering,
            "--symbols",
            &format!("debuginfod+{closed}"),
        ],
        dir.path(),
    );
    assert!(
        said.contains(&format!("{answering} answers (HTTP 404)")),
        "{said}"
    );
    assert!(
        said.contains(&format!("note     symbol server: {closed} does not answer")),
        "{said}"
    );
    let out = common::run(&["doctor", "--for", "wer"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not checked on this operating system"));
}

#[test]
fn help_describes_each_command() {
    for command in ["convert", "pack", "doctor"] {
        let out = common::run(&[command, "--help"]);
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("--symbols"), "{command}: {text}");
    }
}
