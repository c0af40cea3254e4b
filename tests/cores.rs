//! Linux core files (issue 25): the kernel's cores of the Linux sample
//! programs' crashes, gdb's `gcore` of their hangs, the kernel's core of a
//! hang asked for with SIGQUIT, and the same cores compressed as
//! systemd-coredump keeps them, each analysed through the real binary:
//! the same diagnosis and crash signature as the sample's minidump, the
//! functions the programs define in every stack they must be in, and every
//! thread's frames equal to gdb's on the same core as far as gdb's own walk
//! is sound.
#![cfg(target_os = "linux")]

use crate::common;
use crate::common::cores::{
    crash_core, has_gdb, kernel_cores_land_here, start_hang, take_core, workdir,
};
use crate::common::cpu;
use crate::common::programs;

use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn linux_samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps/linux")
}

/// systemd-coredump's name and compression: core.NAME.UID.BOOTID.PID.TIME.zst
fn zstd_copy(core: &Path) -> PathBuf {
    let name = core
        .file_name()
        .unwrap()
        .to_string_lossy()
        .replace("core.", "");
    let to = core.with_file_name(format!(
        "core.{name}.0.8f1a2b3c4d5e6f708192a3b4c5d6e7f8.4242.1764000000000000.zst"
    ));
    let bytes = std::fs::read(core).unwrap();
    let packed = zstd::encode_all(&bytes[..], 3).unwrap();
    std::fs::File::create(&to)
        .unwrap()
        .write_all(&packed)
        .unwrap();
    to
}

fn analyze(paths: &[PathBuf]) -> Vec<Value> {
    let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    common::analyze_json(&paths).0["reports"]
        .as_array()
        .unwrap()
        .clone()
}

fn answer(report: &Value) -> String {
    match report["diagnoses"].as_array().and_then(|d| d.first()) {
        Some(d) => common::diagnosis_name(d),
        None => format!("none ({})", report["error"].as_str().unwrap_or("")),
    }
}

/// One frame as gdb lists it (tests/programs/gdb_frames.py).
#[derive(Debug, Clone)]
struct GdbFrame {
    kind: String,
    pc: u64,
    start: u64,
    /// The shared library gdb's list of them places the pc in (`-`: none,
    /// or the program).
    solib: String,
    name: String,
}

fn gdb_frames(program: &Path, core: &Path) -> BTreeMap<u64, Vec<GdbFrame>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/gdb_frames.py");
    let out = Command::new("gdb")
        // Like ours, the walk goes on past main (to _start).
        .args([
            "-q",
            "-batch",
            "-nx",
            "-ex",
            "set backtrace past-main on",
            "-ex",
        ])
        .arg(format!("python exec(open('{}').read())", script.display()))
        .arg(program)
        .arg(core)
        // Where the program ran: the libraries it opened as `./lib...`.
        .current_dir(core.parent().unwrap())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let mut threads: BTreeMap<u64, Vec<GdbFrame>> = BTreeMap::new();
    let mut current = None;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        // Names (C++ templates) have spaces: the name is the rest.
        let words: Vec<&str> = line.splitn(5, ' ').collect();
        match words.as_slice() {
            ["THREAD", tid] => {
                let tid = tid.parse().unwrap();
                threads.entry(tid).or_default();
                current = Some(tid);
            }
            [kind, pc, start, solib, name] if current.is_some() => {
                let (Ok(pc), Ok(start)) = (pc.parse(), start.parse()) else {
                    continue;
                };
                threads.get_mut(&current.unwrap()).unwrap().push(GdbFrame {
                    kind: kind.to_string(),
                    pc,
                    start,
                    solib: solib.to_string(),
                    name: name.to_string(),
                });
            }
            _ => {}
        }
    }
    threads
}

fn hex(value: &Value) -> Option<u64> {
    u64::from_str_radix(value.as_str()?.trim_start_matches("0x"), 16).ok()
}

/// By path: the ranges [`cfi_of`] finds, and where the first segment is
/// linked.
type CfiCache = BTreeMap<String, (Vec<(u64, u64)>, u64)>;

/// The address ranges (file addresses) that the CFI of the ELF file at
/// `path` covers (every FDE of its .eh_frame and .debug_frame), as
/// binutils' readelf reads them, and the address the file's first segment
/// is linked at; cached by path.
fn cfi_of(path: &str, cache: &mut CfiCache) -> (Vec<(u64, u64)>, u64) {
    if let Some(known) = cache.get(path) {
        return known.clone();
    }
    let readelf = |args: &[&str]| {
        let out = Command::new("readelf")
            .args(args)
            .arg(path)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("readelf (binutils, beside gcc): {e}"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let ranges = readelf(&["-W", "--debug-dump=frames"])
        .lines()
        .filter(|l| l.contains(" FDE "))
        .filter_map(|l| {
            let (from, to) = l.split_once("pc=")?.1.split_once("..")?;
            let number = |n: &str| u64::from_str_radix(n.trim(), 16).ok();
            Some((number(from)?, number(to)?))
        })
        .collect();
    let first_load = readelf(&["-W", "-l"])
        .lines()
        .map(str::split_whitespace)
        .filter_map(|mut words| {
            (words.next() == Some("LOAD")).then_some(())?;
            u64::from_str_radix(words.nth(1)?.trim_start_matches("0x"), 16).ok()
        })
        .min()
        .unwrap_or(0);
    let found = (ranges, first_load & !0xfff);
    cache.insert(path.to_string(), found.clone());
    found
}

/// Compares every thread's frames with gdb's where gdb's are right, and
/// only there. gdb's first frame comes from the registers; each caller it
/// lists is right when the frame below it lies in a function that CFI
/// (.eh_frame, .debug_frame) describes, in a library gdb knows. Where
/// neither holds gdb falls back on prologue analysis, whose mistakes depend
/// on memory layout: for `__do_global_dtors_aux` (crtstuff, no CFI) it
/// lists a data address as the caller, and while a library's constructor
/// runs inside dlopen, the library is not yet in the dynamic linker's list
/// gdb reads, so gdb cannot name it or walk past it (the core's NT_FILE
/// note lists it, and our walk goes on). The comparison of a thread stops
/// at the first frame whose caller gdb could not know; frames gdb builds
/// from DWARF call-site records (tail calls) and inline frames (our frame's
/// inlines, sharing its pc) are left out. Returns the differences, and
/// counts the frames compared in `compared`.
fn compare_with_gdb(
    label: &str,
    report: &Value,
    gdb: &BTreeMap<u64, Vec<GdbFrame>>,
    cfi: &mut CfiCache,
    compared: &mut usize,
) -> Vec<String> {
    let mut problems = Vec::new();
    let ours: BTreeMap<u64, &Vec<Value>> = report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_u64().unwrap(), t["frames"].as_array().unwrap()))
        .collect();
    if ours.keys().collect::<Vec<_>>() != gdb.keys().collect::<Vec<_>>() {
        problems.push(format!(
            "{label}: threads {:?}, gdb {:?}",
            ours.keys().collect::<Vec<_>>(),
            gdb.keys().collect::<Vec<_>>()
        ));
        return problems;
    }
    let modules: BTreeMap<&str, &Value> = report["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["name"].as_str().unwrap(), m))
        .collect();
    // The program: gdb knows it without a shared library list.
    let program = report["modules"][0]["name"].as_str().unwrap_or("");
    for (tid, frames) in gdb {
        let physical: Vec<&GdbFrame> = frames
            .iter()
            .filter(|f| f.kind != "inline" && f.kind != "tailcall")
            .collect();
        let walked = ours[tid];
        let shown = |i: usize| {
            let f = &walked[i];
            format!(
                "{} {}",
                f["instruction"].as_str().unwrap_or("?"),
                f["function"].as_str().unwrap_or("??")
            )
        };
        for (i, theirs) in physical.iter().enumerate() {
            let Some(frame) = walked.get(i) else {
                problems.push(format!(
                    "{label} thread {tid}: our walk ends after {i} frames, gdb's goes on \
                     from CFI:\n  ours {:?}\n  gdb  {:?}",
                    (0..walked.len()).map(shown).collect::<Vec<_>>(),
                    physical
                        .iter()
                        .map(|f| format!("{:#x} {}", f.pc, f.name))
                        .collect::<Vec<_>>()
                ));
                break;
            };
            *compared += 1;
            // A caller frame's instruction is its return address minus one.
            let instruction = hex(&frame["instruction"]).unwrap();
            let pc = instruction + u64::from(i > 0);
            let start = hex(&frame["function_offset"]).map(|offset| instruction - offset);
            if pc != theirs.pc {
                problems.push(format!(
                    "{label} thread {tid} frame {i}: pc {pc:#x}, gdb {:#x} ({})",
                    theirs.pc, theirs.name
                ));
                break;
            }
            if theirs.start != 0 && start != Some(theirs.start) {
                problems.push(format!(
                    "{label} thread {tid} frame {i}: function {} at {start:x?}, gdb {} at {:#x}",
                    shown(i),
                    theirs.name,
                    theirs.start
                ));
            }
            // Is gdb's next frame from CFI?
            let module = frame["module"].as_str().unwrap_or("");
            let known_to_gdb = theirs.solib != "-" || module == program;
            let in_cfi = modules
                .get(module)
                .and_then(|m| m["path"].as_str())
                .filter(|path| Path::new(path).is_file())
                .zip(hex(&frame["module_offset"]))
                .is_some_and(|(path, offset)| {
                    let (ranges, linked_at) = cfi_of(path, cfi);
                    let address = offset + linked_at;
                    ranges
                        .iter()
                        .any(|(from, to)| (*from..*to).contains(&address))
                });
            if !(known_to_gdb && in_cfi) {
                break;
            }
        }
    }
    problems
}

/// The functions of the test programs (tests/programs/) that each core's
/// threads must show, innermost first: for each program, one list per
/// thread of interest, found in order (other frames may come between) in
/// some thread of the walk. A main thread's walk ends at the program's
/// `_start`. What the programs define, not what any tool says.
const KNOWN_STACKS: &[(&str, &[&[&str]])] = &[
    (
        "cuda_exit_crash",
        &[&["__cudaUnregisterFatBinary", "cudart_teardown", "_start"]],
    ),
    (
        "tls_exit_crash",
        &[
            &["registry_forget", "cache_release"],
            &["shutdown_runtime", "_start"],
        ],
    ),
    ("unload_crash", &[&["run_release_hook", "_start"]]),
    (
        "static_dtor_throw",
        &[&["Journal::flush()", "Journal::~Journal()", "_start"]],
    ),
    (
        "python-final",
        &[&["deliver_result", "worker_main"], &["flusher_dealloc"]],
    ),
    (
        "hip_exit_hang",
        &[
            &["SyncAllStreams", "__hipUnregisterFatBinary", "_start"],
            &["PalFenceWait", "queue_thread"],
        ],
    ),
    (
        "tls_exit_hang",
        &[
            &["parlay::scheduler::~scheduler()", "_start"],
            &[
                "parlay::scheduler::wait_for_input()",
                "parlay::scheduler::worker(int)",
            ],
        ],
    ),
    (
        "dlopen_exit_hang",
        &[
            &["_start"],
            &["slowinit_constructor", "plugin_loader"],
            &["resolve_backend"],
        ],
    ),
    (
        "python3",
        &[
            &[
                "PyThread_acquire_lock_timed",
                "acquire_timed",
                "lock_PyThread_acquire_lock",
                "wait_for_thread_shutdown",
                "Py_FinalizeEx",
                "Py_RunMain",
                "Py_BytesMain",
                "main",
                "_start",
            ],
            &[
                "PyThread_acquire_lock_timed",
                "acquire_timed",
                "lock_PyThread_acquire_lock",
                "thread_run",
            ],
        ],
    ),
];

/// The known stacks of `program` missing from the report's threads.
fn missing_known_stacks(label: &str, program: &str, report: &Value) -> Vec<String> {
    let stacks = KNOWN_STACKS
        .iter()
        .find(|(name, _)| *name == program)
        .unwrap_or_else(|| panic!("no known stacks for {program}"))
        .1;
    let threads: Vec<Vec<&str>> = report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["frames"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["function"].as_str().unwrap_or("??"))
                .collect()
        })
        .collect();
    // A C++ function is named in full (`(anonymous namespace)::worker_main(void*)`):
    // its last component without parameters is the function the program defines.
    let bare = |function: &str| {
        let function = function.replace("(anonymous namespace)::", "");
        let without_parameters = function.split('(').next().unwrap_or_default();
        without_parameters
            .rsplit("::")
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    let in_order = |frames: &[&str], wanted: &[&str]| {
        let mut frames = frames.iter();
        wanted.iter().all(|w| frames.any(|f| bare(f) == bare(w)))
    };
    stacks
        .iter()
        .filter(|wanted| !threads.iter().any(|frames| in_order(frames, wanted)))
        .map(|wanted| format!("{label}: no thread shows {wanted:?}: {threads:#?}"))
        .collect()
}

struct DirPath(PathBuf);
impl DirPath {
    fn path(&self) -> &Path {
        &self.0
    }
}

/// The Linux samples' failures as cores: the same diagnosis as each
/// sample's minidump, from a kernel core (crashes), gdb's gcore and a
/// SIGQUIT kernel core (hangs), and zstd-compressed copies, in one batch;
/// each core's frames equal gdb's.
#[test]
fn cores_of_the_linux_samples_give_the_dumps_diagnosis_and_gdbs_frames() {
    if !has_gdb() {
        common::skip::skip(
            "cores::samples",
            "gdb is not installed (scripts/ci-setup-linux.sh installs it)",
        );
        return;
    }
    if !kernel_cores_land_here() {
        common::skip::skip(
            "cores::samples",
            "kernel.core_pattern does not write cores into the process's folder",
        );
        return;
    }
    let bin = linux_samples().join("bin");
    let dir = tempfile::tempdir().unwrap();
    let dir = match std::env::var_os("DUMPTRIAGE_KEEP_CORES") {
        Some(keep) => tempfile::TempDir::new_in(keep).unwrap().keep(),
        None => dir.path().to_path_buf(),
    };
    let dir = DirPath(dir);
    let cores = sample_cores(dir.path(), &bin);
    let paths: Vec<PathBuf> = cores.iter().map(|(c, _, _)| c.clone()).collect();
    let reports = analyze(&paths);
    assert_eq!(reports.len(), cores.len());
    let mut failures = Vec::new();
    let mut cfi = BTreeMap::new();
    let (mut cores_compared, mut frames_compared, mut threads) = (0, 0, 0);
    for ((core, program, sample), report) in cores.iter().zip(&reports) {
        let label = core.file_name().unwrap().to_string_lossy().into_owned();
        let dump = analyze(&[linux_samples().join(format!("{sample}-linux.dmp"))]);
        let (got, want) = (answer(report), answer(&dump[0]));
        if got != want {
            failures.push(format!("{label}: {got}, the sample dump {want}"));
        }
        // One failure, one crash signature, from its dump or its core
        // (issue 40).
        let (got, want) = (&report["crash_signature"], &dump[0]["crash_signature"]);
        if got != want {
            failures.push(format!(
                "{label}: crash signature {got}, the sample dump {want}"
            ));
        }
        assert_eq!(report["source"]["kind"], "core", "{label}");
        // A gcore or a requested core is no crash.
        let crashed = report["exception"]["crash"] == true;
        let requested = label.starts_with("gcore")
            || sample.contains("hang")
            || sample.contains("lock")
            || sample.contains("waits");
        assert_eq!(crashed, !requested, "{label}: {}", report["exception"]);
        // The folder is named after the program (the Python one's
        // interpreter is Debian's).
        let name = core
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy();
        failures.extend(missing_known_stacks(&label, &name, report));
        if core.extension().is_some_and(|e| e == "zst") {
            assert!(
                report["source"]["format"]
                    .as_str()
                    .unwrap()
                    .starts_with("zstd"),
                "{label}"
            );
            continue;
        }
        failures.extend(compare_with_gdb(
            &label,
            report,
            &gdb_frames(program, core),
            &mut cfi,
            &mut frames_compared,
        ));
        cores_compared += 1;
        threads += report["threads"].as_array().unwrap().len();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("compared with gdb: {frames_compared} frames of {threads} threads in {cores_compared} cores");
    // Most of every stack is compared (not only the frames the registers
    // give): CFI covers the libraries and programs these cores run.
    assert!(
        cores_compared >= 12,
        "{cores_compared} cores compared with gdb"
    );
    assert!(
        frames_compared >= threads * 6,
        "only {frames_compared} frames of {threads} threads compared with gdb"
    );
}

/// The cores of the Linux samples' programs, each with its program and the
/// sample whose diagnosis it must give: a kernel core of each crash and its
/// zstd copy, CPython's crash after finalization when Debian's python3 is
/// here, and for each hang gdb's gcore, its zstd copy and a SIGQUIT kernel
/// core.
fn sample_cores(dir: &Path, bin: &Path) -> Vec<(PathBuf, PathBuf, &'static str)> {
    let mut cores: Vec<(PathBuf, PathBuf, &'static str)> = Vec::new();
    for (program, sample) in [
        ("cuda_exit_crash", "cuda-runtime-teardown-at-exit"),
        ("tls_exit_crash", "tls-destructor-crash-at-exit"),
        ("unload_crash", "crash-at-exit-after-dlclose"),
        ("static_dtor_throw", "abort-during-exit"),
    ] {
        let work = workdir(dir, program);
        let core = crash_core(&work.join(program), &[], &[], &work);
        cores.push((zstd_copy(&core), bin.join(program), sample));
        cores.push((core, bin.join(program), sample));
    }
    // The real interpreter (Debian's python3, which the sample's extension
    // was built against) crashing in a thread after finalization.
    let python = Path::new("/usr/bin/python3");
    if !python.exists() {
        common::skip::skip("cores::python", "no /usr/bin/python3 (Debian's python3)");
    } else {
        let work = workdir(dir, "python-final");
        let core = crash_core(
            python,
            &["-c", "import pyfinal_ext"],
            &[("PYTHONPATH", bin)],
            &work,
        );
        cores.push((
            core,
            python.to_path_buf(),
            "python-thread-after-finalization",
        ));
    }
    for (program, sample) in [
        ("hip_exit_hang", "hip-unregister-fatbinary-hang"),
        ("tls_exit_hang", "tls-teardown-hang-at-exit"),
        ("dlopen_exit_hang", "glibc-loader-lock-at-exit"),
        ("python3", "python-exit-waits-for-thread"),
    ] {
        let work = workdir(dir, program);
        let mut child = start_hang(&work.join(program), &[], &work);
        let gcored = work.join(format!("gcore.{program}"));
        common::gcore(child.id(), &gcored);
        // What a CI step's watchdog does: SIGQUIT, and the kernel dumps.
        Command::new("kill")
            .args(["-QUIT", &child.id().to_string()])
            .status()
            .unwrap();
        let _ = child.wait();
        let quit = take_core(&bin.join(program), &work);
        cores.push((zstd_copy(&gcored), bin.join(program), sample));
        cores.push((gcored, bin.join(program), sample));
        cores.push((quit, bin.join(program), sample));
    }
    cores
}

/// A core compressed three ways, an ordinary crash's core (no exit-time
/// answer), an exit hang's core with its wait chain, and broken cores:
/// each gives a report (with a warning naming what is missing) or one line
/// of error, never a panic or a hang. Kernel cores only: no gdb needed.
#[test]
fn compressed_poor_and_broken_cores() {
    if !kernel_cores_land_here() {
        common::skip::skip(
            "cores::broken",
            "kernel.core_pattern does not write cores into the process's folder",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = workdir(dir.path(), "work");
    let core = crash_core(&work.join("tls_exit_crash"), &[], &[], &work);
    let bytes = std::fs::read(&core).unwrap();
    let [lz4, xz, zst] = compressed_copies(dir.path(), &core, &bytes);
    let ordinary = ordinary_crash_core(dir.path());
    let waits = exit_hang_core(dir.path());

    let reports = analyze(&[core.clone(), lz4, xz, zst, ordinary, waits]);
    let want = answer(&reports[0]);
    assert_eq!(want, "tls-destructor-crash-at-exit");
    for (report, format) in reports[1..4].iter().zip(["lz4", "xz", "zstd"]) {
        assert_eq!(answer(report), want, "{format}");
        assert_eq!(
            report["source"]["format"],
            format!("{format}-compressed ELF core")
        );
    }
    check_ordinary_crash(&reports[4]);
    check_exit_hang(&reports[5]);
    let cases = broken_copies(dir.path(), &bytes);
    let reports = analyze(&cases);
    let by_name = |name: &str| {
        let i = cases.iter().position(|c| c.ends_with(name)).unwrap();
        &reports[i]
    };
    let warned = |name: &str, says: &str| {
        let report = by_name(name);
        assert_eq!(report["status"], "ok", "{name}: {:#}", report["error"]);
        assert!(
            report["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w.as_str().unwrap().contains(says)),
            "{name}: {:#}",
            report["warnings"]
        );
    };
    warned("cut.core", "the file is cut short");
    warned("no-files.core", "modules are unknown");
    warned("cut.zst", "stream is corrupt");
    assert_eq!(by_name("zeroed.core")["status"], "ok");
    for (name, says) in [
        ("text.zst", "zstd-compressed data that is not an ELF core"),
        ("header-only.core", "core file"),
        ("far-headers.core", "core file"),
    ] {
        let error = by_name(name)["error"].as_str().unwrap_or("");
        assert!(error.contains(says), "{name}: {error}");
        assert!(!error.contains('\n'), "{name}: {error}");
    }
    // However broken, the first thread of the cut core is still walked.
    assert!(!by_name("cut.core")["threads"]
        .as_array()
        .unwrap()
        .is_empty());
    assert!(
        by_name("hostile-phnum.core")["status"] == "ok"
            || by_name("hostile-phnum.core")["error"].is_string()
    );
}

fn write_in(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, data).unwrap();
    path
}

/// The core compressed with lz4, xz and zstd.
fn compressed_copies(dir: &Path, core: &Path, bytes: &[u8]) -> [PathBuf; 3] {
    let mut lz4 = lz4_flex::frame::FrameEncoder::new(Vec::new());
    lz4.write_all(bytes).unwrap();
    let lz4 = write_in(dir, "core.lz4", &lz4.finish().unwrap());
    let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 1);
    xz.write_all(bytes).unwrap();
    let xz = write_in(dir, "core.xz", &xz.finish().unwrap());
    let zst = zstd_copy(core);

    [lz4, xz, zst]
}

/// The core of an ordinary crash (during work, three calls below main) of
/// a stripped program whose debug file lies beside the core, as
/// `objcopy --only-keep-debug` names it: found by build id.
fn ordinary_crash_core(dir: &Path) -> PathBuf {
    let plain = dir.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    common::tool(
        "gcc",
        &[
            "-g".as_ref(),
            "-O0".as_ref(),
            "-o".as_ref(),
            plain.join("cfi_crash").as_os_str(),
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/programs/cfi_crash.c")
                .as_os_str(),
        ],
    );
    // Stripped, with its debug file kept as `objcopy --only-keep-debug`
    // names it, beside the core: found by build id.
    let binary = plain.join("cfi_crash");
    let debug = plain.join("cfi_crash.debug");
    common::tool(
        "objcopy",
        &[
            "--only-keep-debug".as_ref(),
            binary.as_os_str(),
            debug.as_os_str(),
        ],
    );
    common::tool("strip", &["-g".as_ref(), binary.as_os_str()]);
    crash_core(&binary, &[], &[], &plain)
}

/// The core of an exit handler waiting for a mutex a worker holds, dumped
/// on SIGQUIT.
fn exit_hang_core(dir: &Path) -> PathBuf {
    let hang = dir.join("hang");
    std::fs::create_dir_all(&hang).unwrap();
    std::os::unix::fs::symlink(
        programs::programs().join("exit_lock_hang"),
        hang.join("exit_lock_hang"),
    )
    .unwrap();
    let mut child = start_hang(&hang.join("exit_lock_hang"), &[], &hang);
    Command::new("kill")
        .args(["-QUIT", &child.id().to_string()])
        .status()
        .unwrap();
    let _ = child.wait();
    take_core(&hang.join("exit_lock_hang"), &hang)
}

/// The ordinary crash: a crash, named where it happened, no exit answer.
fn check_ordinary_crash(ordinary: &Value) {
    assert_eq!(ordinary["exception"]["crash"], true);
    assert!(
        ordinary["diagnoses"].as_array().unwrap().is_empty(),
        "{:#}",
        ordinary["diagnoses"]
    );
    let frames: Vec<&str> = ordinary["threads"][0]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["function"].as_str())
        .collect();
    assert_eq!(
        &frames[..4],
        ["store_result", "compute_layer", "run_model", "main"],
        "{frames:?}"
    );
    let top = &ordinary["threads"][0]["frames"][0];
    assert!(
        top["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("cfi_crash.c")),
        "the line comes from cfi_crash.debug: {top:#}"
    );
}

/// The requested core of the exit hang: no crash, the holder named.
fn check_exit_hang(waits: &Value) {
    assert!(waits["exception"].is_null(), "{:#}", waits["exception"]);
    assert_eq!(waits["diagnoses"][0]["signature"], "hang-during-exit");
    assert!(
        waits["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("sent by process")),
        "{:#}",
        waits["warnings"]
    );
    let threads = waits["threads"].as_array().unwrap();
    let exiting = threads.iter().find(|t| !t["exiting"].is_null()).unwrap();
    assert_eq!(exiting["wait"]["kind"], "mutex", "{exiting:#}");
    assert!(
        threads.iter().any(|t| t["id"] == exiting["wait"]["holder"]),
        "{exiting:#}"
    );
}

/// The core broken in eight ways: cut, zeroed, its files note unknown,
/// hostile and far program headers, a cut zstd stream, text compressed,
/// the ELF header alone.
fn broken_copies(dir: &Path, bytes: &[u8]) -> Vec<PathBuf> {
    let write = |name: &str, data: &[u8]| write_in(dir, name, data);
    let mut cut = bytes.to_vec();
    cut.truncate(bytes.len() * 6 / 10);
    let mut zeroed = bytes.to_vec();
    let data_start = 0x3000.min(zeroed.len());
    zeroed[data_start..].iter_mut().for_each(|b| *b = 0);
    let mut no_files = bytes.to_vec();
    // NT_FILE's type word, made unknown.
    let at = no_files
        .windows(4)
        .position(|w| w == 0x4649_4c45u32.to_le_bytes())
        .unwrap();
    no_files[at..at + 4].copy_from_slice(&0x1234u32.to_le_bytes());
    let mut hostile = bytes.to_vec();
    hostile[56..58].copy_from_slice(&u16::MAX.to_le_bytes()); // e_phnum
    let mut far = bytes.to_vec();
    far[32..40].copy_from_slice(&(u64::MAX - 10).to_le_bytes()); // e_phoff
    let mut packed = zstd::encode_all(bytes, 3).unwrap();
    packed.truncate(packed.len() / 2);
    vec![
        write("cut.core", &cut),
        write("zeroed.core", &zeroed),
        write("no-files.core", &no_files),
        write("hostile-phnum.core", &hostile),
        write("far-headers.core", &far),
        write("cut.zst", &packed),
        write(
            "text.zst",
            &zstd::encode_all(&b"hello, not a core"[..], 3).unwrap(),
        ),
        write("header-only.core", &bytes[..64]),
    ]
}

/// How many times the intact core's CPU time one corruption of it may cost.
const COST_FACTOR: u32 = 20;

/// A deterministic stream of pseudo-random numbers (splitmix64).
fn splitmix64(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Corruption number `case` of a core: the new bytes of its first `head`
/// bytes, the length it is cut to, and what was done.
fn corrupt(
    case: usize,
    next: &mut impl FnMut() -> u64,
    original: &[u8],
    head: usize,
) -> (Vec<u8>, u64, String) {
    let mut bytes = original[..head].to_vec();
    let mut len = original.len() as u64;
    let what = match case % 4 {
        0 => {
            for _ in 0..=(next() % 8) {
                let at = (next() % head as u64) as usize;
                bytes[at] ^= 1 << (next() % 8);
            }
            "bit flips".to_string()
        }
        1 => {
            let at = (next() % (head as u64 - 8)) as usize & !3;
            let value = [0u64, u64::MAX, 0x7fff_ffff, 0xffff, 1 << 40][(next() % 5) as usize];
            bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
            format!("{value:#x} at {at:#x}")
        }
        2 => {
            // Half in the headers and notes, half in the memory.
            let within = if next().is_multiple_of(2) {
                head
            } else {
                original.len()
            };
            len = next() % within as u64;
            format!("cut at {len}")
        }
        _ => {
            // A program header's offset or size made absurd.
            let at = 64 + 56 * (next() % 28) as usize + [8, 32, 40][(next() % 3) as usize];
            bytes[at..at + 8].copy_from_slice(&(u64::MAX - next() % 4096).to_le_bytes());
            format!("program header field at {at:#x}")
        }
    };
    (bytes, len, what)
}

/// 160 deterministic corruptions of a real kernel core's headers and notes
/// (bit flips, extreme counts, sizes and offsets, truncations), each
/// analysed: a report or one line of error, never a panic, at a cost of the
/// same order as the intact core's.
#[test]
fn corrupted_cores_give_a_report_or_one_clear_error() {
    use dumptriage::dump::Analyzer;
    use dumptriage::model::Status;
    use dumptriage::symbols::SymbolConfig;
    use std::io::{Seek, SeekFrom};

    if !kernel_cores_land_here() {
        common::skip::skip(
            "cores::corrupted",
            "kernel.core_pattern does not write cores into the process's folder",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = workdir(dir.path(), "work");
    let core = crash_core(&work.join("tls_exit_crash"), &[], &[], &work);
    let original = std::fs::read(&core).unwrap();
    // The headers and notes: where a writer's bug or a cut lands hardest.
    let head = 0x3000.min(original.len());
    let analyzer = Analyzer::new(
        SymbolConfig {
            system: false,
            ..SymbolConfig::default()
        }
        .sources(),
    );
    let mut next = splitmix64(0x5eed_c0de);
    let path = dir.path().join("case.core");
    std::fs::write(&path, &original).unwrap();
    // What analysing the intact core costs (its first analysis, which
    // fills the caches the cases share), against which each corruption's
    // cost is measured: a count or size taken at its word must not
    // multiply it.
    let before = cpu::thread();
    assert_eq!(analyzer.analyze(&path).status, Status::Ok);
    let intact = cpu::thread() - before;
    let mut slowest = std::time::Duration::ZERO;
    let (mut reports, mut errors) = (0, 0);
    for case in 0..160 {
        let (bytes, len, what) = corrupt(case, &mut next, &original, head);
        let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.seek(SeekFrom::Start(0)).unwrap();
        file.write_all(&bytes).unwrap();
        file.set_len(len.max(1).min(original.len() as u64)).unwrap();
        drop(file);
        let before = cpu::thread();
        let report = analyzer.analyze(&path);
        let took = cpu::thread() - before;
        let label = format!("case {case}: {what}");
        // The analysis runs on this thread: its CPU time is the case's.
        assert!(
            took <= intact * COST_FACTOR,
            "{label}: {took:?} of CPU, the intact core {intact:?}"
        );
        slowest = slowest.max(took);
        match report.status {
            Status::Ok => reports += 1,
            Status::Error => {
                errors += 1;
                let error = report.error.as_deref().unwrap_or("");
                assert!(
                    !error.is_empty() && !error.contains('\n'),
                    "{label}: {error:?}"
                );
                assert!(!error.starts_with("internal error"), "{label}: {error}");
            }
        }
        // Back to the original for the next case.
        std::fs::write(&path, &original).unwrap();
    }
    eprintln!(
        "corrupted cores: {reports} reports, {errors} errors; CPU: intact {intact:?}, \
         slowest case {slowest:?}"
    );
    assert!(reports > 40, "most corruptions still leave a readable core");
}
