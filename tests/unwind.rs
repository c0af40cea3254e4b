//! Unwinding from the binaries when there is no .sym file (issue 10), and
//! stack-scan candidates that the binaries rule out (issue 15).
//!
//! The Windows dumps of tests/data/unwind/windows/ were captured under Wine
//! from the sample programs together with the binaries and PDBs of that
//! very build, and the .sym files dump_syms made from them
//! (scripts/unwind-fixtures.sh): the walk from the binaries can be compared
//! with the walk from the .sym files on the same dumps.

use crate::common;
use crate::common::synth;

use std::path::{Path, PathBuf};

use serde_json::Value;

use common::{bin, data};
use synth::WinModule;

fn windows(rel: &str) -> PathBuf {
    data("unwind/windows").join(rel)
}

/// `analyze --format json --symbols SYMBOLS DUMP`: the dump's report.
fn analyze(dump: &Path, symbols: &Path) -> Value {
    let out = bin()
        .args(["analyze", "--format", "json", "--symbols"])
        .arg(symbols)
        .arg(dump)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    doc["reports"][0].clone()
}

fn thread(report: &Value, id: &Value) -> Value {
    report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| &t["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no thread {id}"))
}

/// The thread the first diagnosis blames.
fn blamed(report: &Value) -> Value {
    thread(report, &report["diagnoses"][0]["thread_id"])
}

fn frames(thread: &Value) -> &Vec<Value> {
    thread["frames"].as_array().unwrap()
}

/// (instruction, trust) of every frame.
fn walk(thread: &Value) -> Vec<(String, String)> {
    frames(thread)
        .iter()
        .map(|f| {
            (
                f["instruction"].as_str().unwrap().to_string(),
                f["trust"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The trust of the frame named `function` (a name, or the start of one).
fn trust_of<'a>(thread: &'a Value, function: &str) -> &'a str {
    frames(thread)
        .iter()
        .find(|f| {
            f["function"]
                .as_str()
                .is_some_and(|n| n.starts_with(function))
        })
        .unwrap_or_else(|| panic!("no frame {function} in {:#?}", names(thread)))["trust"]
        .as_str()
        .unwrap()
}

fn names(thread: &Value) -> Vec<String> {
    frames(thread)
        .iter()
        .map(|f| {
            format!(
                "{}!{} ({})",
                f["module"].as_str().unwrap_or("?"),
                f["function"].as_str().unwrap_or("?"),
                f["trust"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

/// With only the binaries and PDBs (no .sym), the blamed thread is walked
/// by CFI through the program's own modules exactly as with the .sym
/// files, and reaches the same key frames: the atexit handler, DllMain at
/// process detach, the DLL's onexit table, the C runtime start-up. Every
/// frame of that walk is one of the .sym walk's; what the .sym walk has
/// more are stack-scan hits the binaries rule out.
#[test]
fn binaries_and_pdbs_walk_the_stack_like_the_sym_files() {
    // (dump, its diagnosis, a module of the program, key frames)
    let cases: [(&str, &str, &str, &[&str]); 3] = [
        (
            "hip-unregister-fatbinary-hang",
            "hip-unregister-fatbinary-hang",
            "amdhip64_6.dll",
            &[
                "unregister_device_sync",
                "__hipUnregisterFatBinary",
                "__hip_module_dtor",
                "mainCRTStartup",
            ],
        ),
        (
            "hip-dllmain-detach-hang",
            "pal-fence-wait-at-exit",
            "amdhip64_6.dll",
            &[
                "hip::Device::~Device",
                "ihipDestroyDevice",
                "DllMain",
                "_CRT_INIT",
                "mainCRTStartup",
            ],
        ),
        (
            "dxc-after-unload",
            "dxc-after-unload",
            "onnxruntime.dll",
            &[
                "dawn::native::InstanceBase::~InstanceBase",
                "onnxruntime::webgpu::WebGpuContextFactory::`dynamic atexit destructor",
                "_execute_onexit_table",
                "_CRT_INIT",
                "mainCRTStartup",
            ],
        ),
    ];
    for (name, signature, module, key_frames) in cases {
        let dump = windows(&format!("dumps/{name}.dmp"));
        let with_sym = analyze(&dump, &windows("sym"));
        let with_binaries = analyze(&dump, &windows("binaries"));
        assert_eq!(
            with_binaries["diagnoses"][0]["signature"], with_sym["diagnoses"][0]["signature"],
            "{name}"
        );
        assert_eq!(with_binaries["diagnoses"][0]["signature"], signature);
        let sym_thread = blamed(&with_sym);
        let bin_thread = blamed(&with_binaries);
        for function in key_frames {
            assert_eq!(
                trust_of(&bin_thread, function),
                "cfi",
                "{name}: {function}: {:#?}",
                names(&bin_thread)
            );
        }
        // The CFI frames are the same frames.
        let cfi = |t: &Value| -> Vec<(String, String)> {
            walk(t)
                .into_iter()
                .filter(|(_, trust)| trust == "cfi")
                .collect()
        };
        assert_eq!(cfi(&bin_thread), cfi(&sym_thread), "{name}");
        assert!(cfi(&bin_thread).len() >= key_frames.len(), "{name}");
        // Every frame of the walk from the binaries is in the .sym walk, in
        // the same order.
        let sym_walk = walk(&sym_thread);
        let mut rest = sym_walk.iter();
        for frame in walk(&bin_thread) {
            assert!(
                rest.any(|f| f.0 == frame.0),
                "{name}: {frame:?} is not in the .sym walk {sym_walk:#?}"
            );
        }
        // The report says where the unwind data came from.
        let module = with_binaries["modules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == module)
            .unwrap();
        let unwind = module["unwind_info"].as_str().unwrap();
        assert!(unwind.starts_with(".pdata of "), "{unwind}");
        assert!(with_sym["modules"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["unwind_info"].is_null()));
    }
}

/// What the test takes from a real dump's thread: its instruction pointer,
/// its stack from the stack pointer up, and the modules (path, base, size,
/// timestamp) named in `keep`.
struct RealThread {
    ip: u64,
    sp: u64,
    stack: Vec<u8>,
    modules: Vec<WinModule>,
}

fn real_thread(dump: &Path, id: u32, keep: &[&str]) -> RealThread {
    use minidump::{
        Minidump, MinidumpModuleList, MinidumpSystemInfo, MinidumpThreadList, Module as _,
    };
    let dump = Minidump::read_path(dump).unwrap();
    let system = dump.get_stream::<MinidumpSystemInfo>().unwrap();
    let threads = dump.get_stream::<MinidumpThreadList>().unwrap();
    let memory = dump.get_memory().unwrap();
    let thread = threads.get_thread(id).unwrap();
    let context = thread.context(&system, None).unwrap();
    let (ip, sp) = (
        context.get_instruction_pointer(),
        context.get_stack_pointer(),
    );
    let stack = thread.stack_memory(&memory).unwrap();
    let skip = (sp - stack.base_address()) as usize;
    let bytes = stack.bytes()[skip..].to_vec();
    let modules = dump
        .get_stream::<MinidumpModuleList>()
        .unwrap()
        .iter()
        .filter(|m| keep.iter().any(|k| m.code_file().ends_with(k)))
        .map(|m| WinModule {
            path: Box::leak(m.code_file().into_owned().into_boxed_str()),
            base: m.base_address(),
            size: m.size() as u32,
            timestamp: m.raw.time_date_stamp,
            pdb: None,
        })
        .collect();
    RealThread {
        ip,
        sp,
        stack: bytes,
        modules,
    }
}

/// A full-memory dump holds the modules' images: with no file at all, the
/// images' own .pdata unwinds the frames (and their export tables name
/// them). The dump is the real hang's main thread with the two program
/// modules' images added as a full-memory dump would hold them.
#[test]
fn unwind_tables_from_the_images_in_a_full_memory_dump() {
    let dump = windows("dumps/hip-unregister-fatbinary-hang.dmp");
    let from_files = analyze(&dump, &windows("binaries"));
    let main = blamed(&from_files);
    let id = main["id"].as_u64().unwrap() as u32;
    let real = real_thread(&dump, id, &["hip_repro.exe", "amdhip64_6.dll"]);
    assert_eq!(real.modules.len(), 2);
    let images = real
        .modules
        .iter()
        .map(|m| {
            let name = m.path.rsplit('\\').next().unwrap();
            let file = std::fs::read(windows("binaries").join(name)).unwrap();
            (m.base, synth::mapped_image(&file))
        })
        .collect();
    let synthetic =
        synth::windows_crash_on_stack(&real.modules, &[], real.ip, (real.sp, real.stack), images);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("full-memory.dmp");
    std::fs::write(&path, synthetic).unwrap();
    let empty = dir.path().join("no-symbols");
    std::fs::create_dir(&empty).unwrap();
    let report = analyze(&path, &empty);
    let thread = &report["threads"][0];

    // The frames the files' tables unwound in the program's modules are
    // unwound the same way from the images.
    let in_program = |t: &Value| -> Vec<String> {
        frames(t)
            .iter()
            .filter(|f| f["trust"] == "cfi")
            .filter(|f| {
                ["hip_repro.exe", "amdhip64_6.dll"].contains(&f["module"].as_str().unwrap_or(""))
            })
            .map(|f| f["instruction"].as_str().unwrap().to_string())
            .collect()
    };
    let expected = in_program(&main);
    assert!(expected.len() >= 6, "{:#?}", names(&main));
    let found = in_program(thread);
    assert!(
        expected.iter().all(|i| found.contains(i)),
        "{expected:?} not all in {:#?}",
        names(thread)
    );
    // Named from the image's export table (for certain: the image's
    // .pdata says the address is in the exported function), unwound by CFI.
    let named = frames(thread)
        .iter()
        .find(|f| f["function"] == "__hipUnregisterFatBinary" && f["function_guessed"] == false)
        .unwrap_or_else(|| panic!("{:#?}", names(thread)));
    assert_eq!(named["trust"], "cfi");
    assert_eq!(named["symbol_source"], "exports");
    let module = report["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "amdhip64_6.dll")
        .unwrap();
    assert_eq!(
        module["unwind_info"],
        ".pdata of the module's image in the dump"
    );
}

const HIP_BASE: u64 = 0x7ffa_2000_0000;

fn fakehip() -> WinModule {
    WinModule {
        path: "C:\\Program Files\\App\\fakehip.dll",
        base: HIP_BASE,
        size: 0x6000,
        timestamp: 0x6553_f100,
        pdb: Some((
            [
                0xa0, 0xa8, 0x7d, 0x17, 0x75, 0xfb, 0x0a, 0x17, 0x4c, 0x4c, 0x44, 0x20, 0x50, 0x44,
                0x42, 0x2e,
            ],
            1,
            "fakehip.pdb",
        )),
    }
}

/// A folder with fakehip.dll and its PDB side by side.
fn fakehip_folder(dir: &Path) -> PathBuf {
    let symbols = dir.join("symbols");
    std::fs::create_dir(&symbols).unwrap();
    for file in ["fakehip.dll", "fakehip.pdb"] {
        std::fs::copy(data("native").join(file), symbols.join(file)).unwrap();
    }
    symbols
}

/// The thread's own instruction is no return address, and keeps its name:
/// only stack-scan candidates are checked.
#[test]
fn the_context_frame_keeps_its_name_wherever_it_stopped() {
    // Stopped at 0x1010 (after a `mov`) in __hipUnregisterFatBinary, whose
    // prologue is `sub rsp, 0x28`: its caller's return address is above
    // those 0x28 bytes. The caller is fakehip.dll itself, at 0x101b.
    let mut stack = vec![0u8; 0x28];
    stack.extend_from_slice(&(HIP_BASE + 0x101b).to_le_bytes());
    stack.resize(0x100, 0);
    let dump = synth::windows_crash_on_stack(
        &[fakehip()],
        &[],
        HIP_BASE + 0x1010,
        (0x9_0000, stack),
        vec![],
    );
    let dir = tempfile::tempdir().unwrap();
    let symbols = fakehip_folder(dir.path());
    let path = dir.path().join("context.dmp");
    std::fs::write(&path, dump).unwrap();
    let report = analyze(&path, &symbols);
    let frames = frames(&report["threads"][0]);
    assert_eq!(frames[0]["function"], "__hipUnregisterFatBinary");
    assert_eq!(frames[0]["trust"], "context");
    // Its caller, unwound by fakehip.dll's .pdata (sub rsp, 0x28), keeps
    // its name too.
    assert_eq!(
        frames[1]["instruction"],
        format!("{:#x}", HIP_BASE + 0x101a)
    );
    assert_eq!(frames[1]["trust"], "cfi");
    assert_eq!(frames[1]["function"], "__hipUnregisterFatBinary");
}

/// A stack holding a pointer into the middle of a function (not after a
/// call) above a real return address: the scanner takes the return address
/// and passes over the pointer, because fakehip.dll's .pdata and code say
/// the pointer cannot be a return address. Its PDB alone would have named
/// it (it lies inside `__hipUnregisterFatBinary`), and the walk used to
/// keep it as a frame.
#[test]
fn a_pointer_into_the_middle_of_a_function_is_not_a_frame() {
    // fakehip.dll (tests/data/native): __hipUnregisterFatBinary at 0x1000
    // calls __run_exit_handlers from 0x1016; 0x101b follows that call. 0x1010
    // follows a `mov`.
    let middle = HIP_BASE + 0x1010;
    let after_call = HIP_BASE + 0x101b;
    let mut stack = Vec::new();
    for word in [middle, after_call] {
        stack.extend_from_slice(&word.to_le_bytes());
    }
    stack.resize(0x100, 0);
    // The thread stopped in code no module holds: only a scan finds its
    // caller.
    let dump =
        synth::windows_crash_on_stack(&[fakehip()], &[], 0x5000_0000, (0x9_0000, stack), vec![]);
    let dir = tempfile::tempdir().unwrap();
    let symbols = fakehip_folder(dir.path());
    let path = dir.path().join("scan.dmp");
    std::fs::write(&path, dump).unwrap();
    let report = analyze(&path, &symbols);
    let frames = frames(&report["threads"][0]);
    let instructions: Vec<&str> = frames
        .iter()
        .map(|f| f["instruction"].as_str().unwrap())
        .collect();
    assert!(
        !instructions.contains(&format!("{:#x}", middle - 1).as_str()),
        "{instructions:?}"
    );
    assert_eq!(frames[1]["instruction"], format!("{:#x}", after_call - 1));
    assert_eq!(frames[1]["trust"], "scan");
    assert_eq!(frames[1]["function"], "__hipUnregisterFatBinary");
}

/// Builds tests/programs/cfi_crash.c with `flags` into `dir`, runs it under
/// `dumptriage run` (it crashes three calls below main) and returns the
/// dump. The binary is then moved into `symbols` (with its debug file when
/// `split`), so only that folder has it.
#[cfg(target_os = "linux")]
fn capture_cfi_crash(dir: &Path, flags: &[&str], split: bool) -> (PathBuf, PathBuf) {
    let build = dir.join("build");
    let symbols = dir.join("symbols");
    std::fs::create_dir_all(&build).unwrap();
    std::fs::create_dir_all(&symbols).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/cfi_crash.c");
    let program = build.join("cfi_crash");
    use common::{run_to_dump, tool};
    let mut args: Vec<&std::ffi::OsStr> = flags.iter().map(|f| f.as_ref()).collect();
    args.extend(["-o".as_ref(), program.as_os_str(), source.as_os_str()]);
    tool("gcc", &args);
    if split {
        let debug = build.join("cfi_crash.debug");
        tool(
            "objcopy",
            &[
                "--only-keep-debug".as_ref(),
                program.as_os_str(),
                debug.as_os_str(),
            ],
        );
        let link = format!("--add-gnu-debuglink={}", debug.display());
        tool(
            "objcopy",
            &["--strip-debug".as_ref(), link.as_ref(), program.as_os_str()],
        );
    }
    let dump = run_to_dump(&program, &dir.join("dumps"), "cfi_crash: crashing");
    for entry in std::fs::read_dir(&build).unwrap() {
        let from = entry.unwrap().path();
        std::fs::rename(&from, symbols.join(from.file_name().unwrap())).unwrap();
    }
    (dump, symbols)
}

/// An ELF program without frame pointers, analysed with only its binary:
/// its frames are unwound from .eh_frame (CFI), not found by scanning.
#[cfg(target_os = "linux")]
#[test]
fn elf_frames_are_unwound_from_eh_frame() {
    let dir = tempfile::tempdir().unwrap();
    let (dump, symbols) = capture_cfi_crash(dir.path(), &["-O2", "-fomit-frame-pointer"], false);
    let report = analyze(&dump, &symbols);
    let crashing = thread(&report, &report["exception"]["thread_id"]);
    assert_eq!(
        frames(&crashing)[0]["function"],
        "store_result",
        "{:#?}",
        names(&crashing)
    );
    for function in ["compute_layer", "run_model", "main"] {
        assert_eq!(
            trust_of(&crashing, function),
            "cfi",
            "{:#?}",
            names(&crashing)
        );
    }
    let module = report["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "cfi_crash")
        .unwrap();
    let unwind = module["unwind_info"].as_str().unwrap();
    assert!(
        unwind.starts_with(".eh_frame (.eh_frame_hdr) of "),
        "{unwind}"
    );
    assert!(unwind.contains("symbols"), "{unwind}");
}

/// The same program built with .debug_frame only (no .eh_frame for its
/// functions), the DWARF in a separate debug file beside the stripped
/// binary: unwound from the debug file's .debug_frame.
#[cfg(target_os = "linux")]
#[test]
fn elf_frames_are_unwound_from_the_debug_files_debug_frame() {
    let dir = tempfile::tempdir().unwrap();
    let flags = [
        "-O2",
        "-fomit-frame-pointer",
        "-fno-asynchronous-unwind-tables",
        "-g",
    ];
    let (dump, symbols) = capture_cfi_crash(dir.path(), &flags, true);
    let report = analyze(&dump, &symbols);
    let crashing = thread(&report, &report["exception"]["thread_id"]);
    assert_eq!(
        frames(&crashing)[0]["function"],
        "store_result",
        "{:#?}",
        names(&crashing)
    );
    for function in ["compute_layer", "run_model", "main"] {
        assert_eq!(
            trust_of(&crashing, function),
            "cfi",
            "{:#?}",
            names(&crashing)
        );
    }
    let module = report["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "cfi_crash")
        .unwrap();
    assert_eq!(module["symbol_source"], "dwarf");
    let unwind = module["unwind_info"].as_str().unwrap();
    assert!(
        unwind.contains(".debug_frame of ") && unwind.ends_with("cfi_crash.debug"),
        "{unwind}"
    );
}
