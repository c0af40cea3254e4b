//! Every symbol source, on dumps whose answer is known (issue 3).
//!
//! The dumps are synthesized around the fixtures of tests/data/native/
//! (built by scripts/native-fixtures.sh): fakehip.dll + fakehip.pdb, and
//! libfakeexit.so with its split debug file. Their identities and function
//! offsets below are what that script printed.

mod common;
#[path = "common/httpd.rs"]
mod httpd;
#[path = "common/synth.rs"]
mod synth;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;

use common::{bin, data};
use synth::WinModule;

const HIP_BASE: u64 = 0x7ffa_2000_0000;
const HIP_TIMESTAMP: u32 = 0x6553_f100;
const HIP_SIZE: u32 = 0x6000;
const HIP_CODE_ID: &str = "6553F1006000";
const HIP_GUID: [u8; 16] = [
    0xa0, 0xa8, 0x7d, 0x17, 0x75, 0xfb, 0x0a, 0x17, 0x4c, 0x4c, 0x44, 0x20, 0x50, 0x44, 0x42, 0x2e,
];
const HIP_DEBUG_ID: &str = "177DA8A0FB75170A4C4C44205044422E1";
/// Offsets of fakehip.dll's functions (`__run_exit_handlers` is static:
/// only the PDB names it).
const UNREGISTER: u64 = 0x1000;
const RUN_EXIT_HANDLERS: u64 = 0x1030;
const STREAM_SYNCHRONIZE: u64 = 0x1050;

const ELF_BASE: u64 = 0x7f12_3400_0000;
const ELF_BUILD_ID: &str = "68548ea76ac0bc5d6b3a796c21c8a5cfde74dadd";
const ELF_RUN_EXIT_HANDLERS: u64 = 0x4a9;
const ELF_WAIT_FOR_STREAMS: u64 = 0x4cf;

fn native(name: &str) -> PathBuf {
    data("native").join(name)
}

fn hip_module(with_codeview: bool) -> WinModule {
    WinModule {
        path: "C:\\Program Files\\App\\fakehip.dll",
        base: HIP_BASE,
        size: HIP_SIZE,
        timestamp: HIP_TIMESTAMP,
        pdb: with_codeview.then_some((HIP_GUID, 1, "fakehip.pdb")),
    }
}

fn hip_dump(with_codeview: bool, offset: u64) -> Vec<u8> {
    synth::windows_crash(
        &[hip_module(with_codeview)],
        &[],
        HIP_BASE + offset,
        Vec::new(),
    )
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
}

/// A Microsoft-style symbol store holding fakehip's binary and PDB.
fn ms_store(root: &Path) {
    copy(
        &native("fakehip.dll"),
        &root
            .join("fakehip.dll")
            .join(HIP_CODE_ID)
            .join("fakehip.dll"),
    );
    copy(
        &native("fakehip.pdb"),
        &root
            .join("fakehip.pdb")
            .join(HIP_DEBUG_ID)
            .join("fakehip.pdb"),
    );
}

struct Run {
    doc: Value,
    out: Output,
}

impl Run {
    fn report(&self) -> &Value {
        &self.doc["reports"][0]
    }
    fn frame0(&self) -> &Value {
        &self.report()["threads"][0]["frames"][0]
    }
    fn module(&self, name: &str) -> &Value {
        self.report()["modules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("no module {name}"))
    }
    fn warnings(&self) -> Vec<String> {
        self.report()["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_string())
            .collect()
    }
}

/// Writes `dump` to `dir` and analyses it with `args` (JSON), the
/// environment's `_NT_SYMBOL_PATH` removed unless `env` sets it.
fn analyze(dir: &Path, dump: &[u8], args: &[&str], env: &[(&str, &str)]) -> Run {
    let path = dir.join("crash.dmp");
    std::fs::write(&path, dump).unwrap();
    let mut cmd = bin();
    cmd.args(["analyze", "--format", "json"])
        .args(args)
        .arg(&path);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let out = cmd.output().unwrap();
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    Run { doc, out }
}

fn text(dir: &Path, dump: &[u8], args: &[&str]) -> String {
    let path = dir.join("crash.dmp");
    std::fs::write(&path, dump).unwrap();
    let out = bin().arg("analyze").args(args).arg(&path).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Writes a Breakpad .sym for the fakehip module (its MODULE line, then
/// `records`) into the store at `root`, and returns its path.
fn write_hip_sym(root: &Path, records: &str) -> PathBuf {
    let sym = root
        .join("fakehip.pdb")
        .join(HIP_DEBUG_ID)
        .join("fakehip.sym");
    std::fs::create_dir_all(sym.parent().unwrap()).unwrap();
    std::fs::write(
        &sym,
        format!("MODULE windows x86_64 {HIP_DEBUG_ID} fakehip.pdb\n{records}"),
    )
    .unwrap();
    sym
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn breakpad_store_names_frames_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let sym = write_hip_sym(
        &store,
        "FILE 0 fakehip.c\n\
         FUNC 1000 26 0 __hipUnregisterFatBinary\n1000 26 14 0\n\
         FUNC 1030 11 0 __run_exit_handlers\n1030 11 9 0\n",
    );
    // The PDB is there too: the .sym file still wins (it is tried first).
    copy(
        &native("fakehip.pdb"),
        &store.join("fakehip.pdb.flat").join("x"),
    );
    let run = analyze(
        dir.path(),
        &hip_dump(true, RUN_EXIT_HANDLERS + 4),
        &["--symbols", s(&store)],
        &[],
    );
    let frame = run.frame0();
    assert_eq!(frame["function"], "__run_exit_handlers");
    assert_eq!(frame["symbol_source"], "sym");
    assert_eq!(frame["line"], 9);
    let module = run.module("fakehip.dll");
    assert_eq!(module["symbols"], "loaded");
    assert_eq!(module["symbol_source"], "sym");
    assert_eq!(module["symbol_file"], s(&sym));
}

/// A plain folder of the build's PE binaries and PDBs; names keep their
/// leading underscores exactly, with file and line from the PDB.
#[test]
fn pdb_in_a_plain_folder() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("build");
    copy(&native("fakehip.pdb"), &folder.join("fakehip.pdb"));
    copy(&native("fakehip.dll"), &folder.join("fakehip.dll"));
    for (offset, name) in [
        (RUN_EXIT_HANDLERS + 4, "__run_exit_handlers"),
        (UNREGISTER + 0x10, "__hipUnregisterFatBinary"),
        (STREAM_SYNCHRONIZE + 2, "hipStreamSynchronize"),
    ] {
        let run = analyze(
            dir.path(),
            &hip_dump(true, offset),
            &["--symbols", s(&folder)],
            &[],
        );
        let frame = run.frame0();
        assert_eq!(frame["function"], name, "{:#}", run.report());
        assert_eq!(frame["symbol_source"], "pdb");
        assert!(
            frame["file"].as_str().unwrap().ends_with("fakehip.c"),
            "{frame}"
        );
        assert!(frame["line"].as_u64().unwrap() > 0);
        let module = run.module("fakehip.dll");
        assert_eq!(module["symbol_source"], "pdb");
        assert_eq!(module["symbol_file"], s(&folder.join("fakehip.pdb")));
    }
    let text = text(
        dir.path(),
        &hip_dump(true, RUN_EXIT_HANDLERS + 4),
        &["--symbols", s(&folder)],
    );
    assert!(
        text.contains("fakehip.dll!__run_exit_handlers + 0x4 [")
            && text.contains("fakehip.c : ")
            && text.contains("name from pdb"),
        "{text}"
    );
}

/// Wine writes module records without CodeView records: the binary is found
/// by CODE_FILE/CODE_ID in a Microsoft-style store, and its own CodeView
/// record leads to the PDB.
#[test]
fn ms_store_by_code_id_for_modules_without_codeview() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    ms_store(&store);
    let run = analyze(
        dir.path(),
        &hip_dump(false, RUN_EXIT_HANDLERS + 4),
        &["--symbols", s(&store)],
        &[],
    );
    assert_eq!(run.module("fakehip.dll")["debug_id"], Value::Null);
    let frame = run.frame0();
    assert_eq!(frame["function"], "__run_exit_handlers");
    assert_eq!(frame["symbol_source"], "pdb");
    let tried = run.module("fakehip.dll")["symbols_tried"].to_string();
    assert!(tried.contains("found by code id"), "{tried}");
}

/// With only the binary, frames are named from its export table and
/// marked as such; a static function gets the nearest export before it.
#[test]
fn export_table_of_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("bin");
    copy(&native("fakehip.dll"), &folder.join("fakehip.dll"));
    let run = analyze(
        dir.path(),
        &hip_dump(true, STREAM_SYNCHRONIZE + 5),
        &["--symbols", s(&folder)],
        &[],
    );
    let frame = run.frame0();
    assert_eq!(frame["function"], "hipStreamSynchronize");
    assert_eq!(frame["function_offset"], "0x5");
    assert_eq!(frame["symbol_source"], "exports");
    let module = run.module("fakehip.dll");
    assert_eq!(module["symbol_source"], "exports");
    assert_eq!(module["symbol_file"], s(&folder.join("fakehip.dll")));

    let run = analyze(
        dir.path(),
        &hip_dump(false, RUN_EXIT_HANDLERS + 4),
        &["--symbols", s(&folder)],
        &[],
    );
    assert_eq!(run.frame0()["function"], "__hipUnregisterFatBinary");
    assert_eq!(run.frame0()["function_offset"], "0x34");
    let text = text(
        dir.path(),
        &hip_dump(false, RUN_EXIT_HANDLERS + 4),
        &["--symbols", s(&folder)],
    );
    assert!(text.contains("name from exports"), "{text}");
    assert!(
        text.contains("Modules named from export tables only"),
        "{text}"
    );
}

/// A full-memory dump holds the module's image: its export table names
/// frames with no file on disk at all.
#[test]
fn export_table_from_a_full_memory_dump() {
    let dir = tempfile::tempdir().unwrap();
    let image = synth::mapped_image(&std::fs::read(native("fakehip.dll")).unwrap());
    let dump = synth::windows_crash(
        &[hip_module(true)],
        &[],
        HIP_BASE + UNREGISTER + 7,
        vec![(HIP_BASE, image.clone())],
    );
    let run = analyze(dir.path(), &dump, &[], &[]);
    let frame = run.frame0();
    assert_eq!(frame["function"], "__hipUnregisterFatBinary");
    assert_eq!(frame["symbol_source"], "exports");
    assert_eq!(run.module("fakehip.dll")["symbol_source"], "exports");

    // An image whose headers are another build's is not used.
    let mut other = image;
    let pe_offset = u32::from_le_bytes(other[0x3c..0x40].try_into().unwrap()) as usize;
    other[pe_offset + 8] ^= 0xff; // TimeDateStamp
    let dump = synth::windows_crash(
        &[hip_module(true)],
        &[],
        HIP_BASE + UNREGISTER + 7,
        vec![(HIP_BASE, other)],
    );
    let run = analyze(dir.path(), &dump, &[], &[]);
    assert_eq!(run.frame0()["function"], Value::Null);
    assert!(
        run.warnings()
            .iter()
            .any(|w| w.contains("timestamp+size") && w.contains(HIP_CODE_ID)),
        "{:?}",
        run.warnings()
    );
}

/// A frame in an unloaded module's old range names that module and offset,
/// and the function, from symbols found by the module's code id.
#[test]
fn unloaded_module_is_symbolized_by_code_id() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    ms_store(&store);
    let exe = WinModule {
        path: "C:\\app\\app.exe",
        base: 0x1_4000_0000,
        size: 0x10000,
        timestamp: 0x6000_0000,
        pdb: None,
    };
    let dump = synth::windows_crash(
        &[exe],
        &[hip_module(false)],
        HIP_BASE + RUN_EXIT_HANDLERS + 4,
        Vec::new(),
    );
    let run = analyze(dir.path(), &dump, &["--symbols", s(&store)], &[]);
    let frame = run.frame0();
    assert_eq!(frame["module"], Value::Null);
    assert_eq!(frame["unloaded_module"], "fakehip.dll");
    assert_eq!(frame["unloaded_module_offset"], "0x1034");
    assert_eq!(frame["function"], "__run_exit_handlers");
    assert_eq!(frame["function_offset"], "0x4");
    assert_eq!(frame["symbol_source"], "pdb");
    assert_eq!(run.report()["unloaded_modules"][0]["symbol_source"], "pdb");

    let text = text(dir.path(), &dump, &["--symbols", s(&store)]);
    assert!(
        text.contains("in unloaded fakehip.dll!__run_exit_handlers + 0x4 (fakehip.dll + 0x1034)"),
        "{text}"
    );

    // Without symbols it still names the module and offset.
    let run = analyze(dir.path(), &dump, &[], &[]);
    assert_eq!(run.frame0()["unloaded_module"], "fakehip.dll");
    assert_eq!(run.frame0()["function"], Value::Null);
}

fn build_id_bytes() -> Vec<u8> {
    (0..ELF_BUILD_ID.len() / 2)
        .map(|i| u8::from_str_radix(&ELF_BUILD_ID[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn elf_dump(offset: u64) -> Vec<u8> {
    synth::linux_crash(
        "/opt/gpu/lib/libfakeexit.so",
        ELF_BASE,
        0x4000,
        &build_id_bytes(),
        ELF_BASE + offset,
    )
}

/// Debian's -dbg layout: the DWARF is in .build-id/xx/yyyy.debug.
#[test]
fn elf_with_a_separate_build_id_debug_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("debug");
    let (head, tail) = ELF_BUILD_ID.split_at(2);
    let debug = root
        .join("usr/lib/debug/.build-id")
        .join(head)
        .join(format!("{tail}.debug"));
    copy(&native("libfakeexit.so.debug"), &debug);
    for (offset, name) in [
        (ELF_RUN_EXIT_HANDLERS + 3, "__run_exit_handlers"),
        (ELF_WAIT_FOR_STREAMS + 2, "_wait_for_streams"),
    ] {
        let run = analyze(dir.path(), &elf_dump(offset), &["--symbols", s(&root)], &[]);
        let frame = run.frame0();
        assert_eq!(frame["function"], name, "{:#}", run.report());
        assert_eq!(frame["symbol_source"], "dwarf");
        assert!(frame["file"].as_str().unwrap().ends_with("fakeexit.c"));
        assert!(frame["line"].as_u64().unwrap() > 0);
        assert_eq!(run.module("libfakeexit.so")["symbol_file"], s(&debug));
    }
}

/// The stripped library alone gives its dynamic symbols (exports); with its
/// .gnu_debuglink file beside it, DWARF.
#[test]
fn elf_binary_exports_and_debuglink() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("lib");
    copy(&native("libfakeexit.so"), &folder.join("libfakeexit.so"));
    let run = analyze(
        dir.path(),
        &elf_dump(ELF_WAIT_FOR_STREAMS + 2),
        &["--symbols", s(&folder)],
        &[],
    );
    assert_eq!(run.frame0()["function"], "_wait_for_streams");
    assert_eq!(run.frame0()["symbol_source"], "exports");

    copy(
        &native("libfakeexit.so.debug"),
        &folder.join("libfakeexit.so.debug"),
    );
    let run = analyze(
        dir.path(),
        &elf_dump(ELF_RUN_EXIT_HANDLERS + 3),
        &["--symbols", s(&folder)],
        &[],
    );
    assert_eq!(run.frame0()["function"], "__run_exit_handlers");
    assert_eq!(run.frame0()["symbol_source"], "dwarf");
}

/// Files of another build are refused, with a warning naming both
/// identities, and never used.
#[test]
fn identity_mismatches_are_refused_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("build");
    copy(&native("fakehip.pdb"), &folder.join("fakehip.pdb"));
    copy(&native("fakehip.dll"), &folder.join("fakehip.dll"));

    // The dump's module was linked from another PDB (another GUID).
    let mut module = hip_module(true);
    let mut guid = HIP_GUID;
    guid[0] ^= 1;
    module.pdb = Some((guid, 1, "fakehip.pdb"));
    // ... and another timestamp, so the binary is refused too.
    module.timestamp += 1;
    let dump = synth::windows_crash(&[module], &[], HIP_BASE + 0x1004, Vec::new());
    let run = analyze(dir.path(), &dump, &["--symbols", s(&folder)], &[]);
    assert_eq!(run.frame0()["function"], Value::Null);
    assert_eq!(run.frame0()["symbol_source"], "none");
    assert_eq!(run.module("fakehip.dll")["symbols"], "mismatched");
    let warnings = run.warnings();
    assert!(
        warnings.iter().any(|w| w.contains("fakehip.pdb")
            && w.contains(HIP_DEBUG_ID)
            && w.contains("177DA8A1FB75170A4C4C44205044422E1")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.contains("fakehip.dll")
            && w.contains(HIP_CODE_ID)
            && w.contains("6553F1016000")),
        "{warnings:?}"
    );
    let text = text(dir.path(), &dump, &["--symbols", s(&folder)]);
    assert!(
        text.contains("fakehip.dll: only files of another build were found"),
        "{text}"
    );

    // An ELF library (and its debuglink file) of another build id, found by
    // name in a folder.
    let root = dir.path().join("lib");
    copy(&native("libfakeexit.so"), &root.join("libfakeexit.so"));
    copy(
        &native("libfakeexit.so.debug"),
        &root.join("libfakeexit.so.debug"),
    );
    let mut other = build_id_bytes();
    other[19] ^= 1;
    let dump = synth::linux_crash(
        "/opt/gpu/lib/libfakeexit.so",
        ELF_BASE,
        0x4000,
        &other,
        ELF_BASE + ELF_RUN_EXIT_HANDLERS,
    );
    let run = analyze(dir.path(), &dump, &["--symbols", s(&root)], &[]);
    assert_eq!(run.frame0()["function"], Value::Null);
    assert!(
        run.warnings().iter().any(|w| w.contains(ELF_BUILD_ID)),
        "{:?}",
        run.warnings()
    );
}

/// Corrupt PDBs, binaries and debug files give a warning, never a panic.
#[test]
fn corrupt_native_files_are_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let pdb = std::fs::read(native("fakehip.pdb")).unwrap();
    let dll = std::fs::read(native("fakehip.dll")).unwrap();
    let elf = std::fs::read(native("libfakeexit.so.debug")).unwrap();
    let (head, tail) = ELF_BUILD_ID.split_at(2);
    let cases: Vec<(&str, Vec<u8>, Vec<u8>)> = vec![
        (
            "garbage",
            b"not a pdb at all".repeat(100),
            b"MZ garbage".to_vec(),
        ),
        (
            "truncated",
            pdb[..pdb.len() / 3].to_vec(),
            dll[..0x200].to_vec(),
        ),
        ("empty", Vec::new(), Vec::new()),
        (
            "flipped",
            pdb.iter()
                .enumerate()
                .map(|(i, b)| if i % 97 == 0 { !b } else { *b })
                .collect(),
            dll.iter()
                .enumerate()
                .map(|(i, b)| if i > 0x80 && i % 13 == 0 { !b } else { *b })
                .collect(),
        ),
    ];
    for (what, bad_pdb, bad_dll) in cases {
        let folder = dir.path().join(what);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("fakehip.pdb"), &bad_pdb).unwrap();
        std::fs::write(folder.join("fakehip.dll"), &bad_dll).unwrap();
        let debug = folder
            .join(".build-id")
            .join(head)
            .join(format!("{tail}.debug"));
        std::fs::create_dir_all(debug.parent().unwrap()).unwrap();
        let bad_elf: Vec<u8> = if what == "truncated" {
            elf[..elf.len() / 2].to_vec()
        } else {
            bad_pdb.clone()
        };
        std::fs::write(&debug, &bad_elf).unwrap();
        for dump in [
            hip_dump(true, RUN_EXIT_HANDLERS + 4),
            hip_dump(false, RUN_EXIT_HANDLERS + 4),
            elf_dump(ELF_RUN_EXIT_HANDLERS + 3),
        ] {
            let run = analyze(dir.path(), &dump, &["--symbols", s(&folder)], &[]);
            assert_eq!(run.out.status.code(), Some(0), "{what}");
            assert_eq!(run.report()["status"], "ok", "{what}: {:#}", run.report());
            let frame = run.frame0();
            // Whatever a damaged file still gives must be right or nothing.
            if let Some(name) = frame["function"].as_str() {
                assert!(
                    name == "__run_exit_handlers" || name == "__hipUnregisterFatBinary",
                    "{what}: {name}"
                );
            } else {
                assert!(
                    !run.warnings().is_empty(),
                    "{what}: a corrupt file is reported"
                );
            }
        }
    }
}

/// A symbol server on 127.0.0.1: files are fetched once into the cache, and
/// the second run reads the cache without asking the server.
#[test]
fn symbol_server_and_its_cache() {
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    // The .sym for one build, the PDB (Microsoft layout) for the module
    // without CodeView found by code id.
    let sym = write_hip_sym(&served, "FUNC 1030 11 0 __run_exit_handlers\n");
    let server = httpd::Httpd::start(served.clone(), false);
    let cache = dir.path().join("cache");
    let args = [
        "--symbols",
        server.url.as_str(),
        "--symbols-cache",
        s(&cache),
    ];

    let run = analyze(
        dir.path(),
        &hip_dump(true, RUN_EXIT_HANDLERS + 4),
        &args,
        &[],
    );
    assert_eq!(run.frame0()["function"], "__run_exit_handlers");
    assert_eq!(run.frame0()["symbol_source"], "sym");
    assert_eq!(
        run.module("fakehip.dll")["symbol_file"],
        format!("{}fakehip.pdb/{HIP_DEBUG_ID}/fakehip.sym", server.url)
    );
    let first = server.hits();
    assert!(first >= 1, "{:?}", server.requests());
    assert!(cache
        .join("fakehip.pdb")
        .join(HIP_DEBUG_ID)
        .join("fakehip.sym")
        .is_file());

    let run = analyze(
        dir.path(),
        &hip_dump(true, RUN_EXIT_HANDLERS + 4),
        &args,
        &[],
    );
    assert_eq!(run.frame0()["function"], "__run_exit_handlers");
    assert_eq!(server.hits(), first, "the second run reads the cache");

    // Native files in the Microsoft layout, found through _NT_SYMBOL_PATH.
    std::fs::remove_file(&sym).unwrap();
    ms_store(&served);
    let nt_cache = dir.path().join("nt-cache");
    let nt = format!("srv*{}*{}", nt_cache.display(), server.url);
    let run = analyze(
        dir.path(),
        &hip_dump(false, RUN_EXIT_HANDLERS + 4),
        &[],
        &[("_NT_SYMBOL_PATH", &nt)],
    );
    assert_eq!(run.frame0()["function"], "__run_exit_handlers");
    assert_eq!(run.frame0()["symbol_source"], "pdb");
    assert!(nt_cache
        .join("fakehip.pdb")
        .join(HIP_DEBUG_ID)
        .join("fakehip.pdb")
        .is_file());
    assert!(nt_cache
        .join("fakehip.dll")
        .join(HIP_CODE_ID)
        .join("fakehip.dll")
        .is_file());
}

/// A server that accepts and never answers costs one timeout, then a
/// warning; the analysis goes on and succeeds.
#[test]
fn a_hung_symbol_server_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let server = httpd::Httpd::start(dir.path().join("nothing"), true);
    let folder = dir.path().join("build");
    copy(&native("fakehip.pdb"), &folder.join("fakehip.pdb"));
    let start = Instant::now();
    let run = analyze(
        dir.path(),
        &hip_dump(true, RUN_EXIT_HANDLERS + 4),
        &[
            "--symbols",
            server.url.as_str(),
            "--symbols",
            s(&folder),
            "--symbols-timeout",
            "1",
            "--symbols-cache",
            s(&dir.path().join("cache")),
        ],
        &[],
    );
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(run.out.status.code(), Some(0));
    // The folder after the server still answers.
    assert_eq!(run.frame0()["function"], "__run_exit_handlers");
    assert!(
        run.warnings()
            .iter()
            .any(|w| w.contains("symbol server") && w.contains(&server.url)),
        "{:?}",
        run.warnings()
    );
    // One failure gives the server up: later lookups do not wait again.
    let tried = run.module("fakehip.dll")["symbols_tried"].to_string();
    assert!(tried.contains("failed earlier") || tried.matches("timed out").count() <= 1);
}

/// Builds a shim that records every connect() and getaddrinfo() a process
/// makes (LD_PRELOAD). `None` when no C compiler is there.
fn network_shim(dir: &Path) -> Option<PathBuf> {
    let source = dir.join("netlog.c");
    std::fs::write(
        &source,
        r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
static void note(const char *what) {
    const char *path = getenv("NETLOG");
    if (!path) return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) return;
    write(fd, what, strlen(what));
    write(fd, "\n", 1);
    close(fd);
}
int connect(int fd, const struct sockaddr *addr, socklen_t len) {
    if (addr && (addr->sa_family == AF_INET || addr->sa_family == AF_INET6)) note("connect");
    int (*real)(int, const struct sockaddr *, socklen_t) = dlsym(RTLD_NEXT, "connect");
    return real(fd, addr, len);
}
int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res) {
    note("getaddrinfo");
    int (*real)(const char *, const char *, const struct addrinfo *, struct addrinfo **) =
        dlsym(RTLD_NEXT, "getaddrinfo");
    return real(node, service, hints, res);
}
"#,
    )
    .unwrap();
    let shim = dir.join("netlog.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let built = std::process::Command::new(cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(&shim)
        .arg(&source)
        .arg("-ldl")
        .status()
        .ok()?;
    built.success().then_some(shim)
}

/// With no URL anywhere (folders, a cache-only _NT_SYMBOL_PATH), the tool
/// makes no network connection; the same shim does see one when a URL is
/// given, so the test can fail.
#[test]
fn no_network_without_a_url() {
    let dir = tempfile::tempdir().unwrap();
    let Some(shim) = network_shim(dir.path()) else {
        panic!("a C compiler (cc) is needed to build the connect() recorder");
    };
    let folder = dir.path().join("build");
    copy(&native("fakehip.dll"), &folder.join("fakehip.dll"));
    let log = dir.path().join("net.log");
    let nt = format!(
        "cache*{};{}",
        dir.path().join("c").display(),
        folder.display()
    );
    let env = [
        ("LD_PRELOAD", s(&shim)),
        ("NETLOG", s(&log)),
        ("_NT_SYMBOL_PATH", nt.as_str()),
    ];
    let run = analyze(
        dir.path(),
        &hip_dump(false, RUN_EXIT_HANDLERS + 4),
        &["--symbols", s(&folder)],
        &env,
    );
    assert_eq!(run.frame0()["symbol_source"], "exports");
    assert!(
        !log.exists(),
        "network used without a URL: {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );

    let server = httpd::Httpd::start(dir.path().join("empty"), false);
    analyze(
        dir.path(),
        &hip_dump(false, RUN_EXIT_HANDLERS + 4),
        &[
            "--symbols",
            server.url.as_str(),
            "--symbols-cache",
            s(&dir.path().join("c2")),
        ],
        &env,
    );
    assert!(
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("connect"),
        "the recorder sees connections when a URL is given"
    );
}

/// Symbol files are loaded once and shared by the dumps of a run: two dumps
/// of the same module in one run need one download.
#[test]
fn sources_are_shared_by_the_dumps_of_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    ms_store(&served);
    let server = httpd::Httpd::start(served, false);
    let dumps = dir.path().join("dumps");
    std::fs::create_dir_all(&dumps).unwrap();
    for i in 0..3 {
        std::fs::write(
            dumps.join(format!("d{i}.dmp")),
            hip_dump(false, RUN_EXIT_HANDLERS + i),
        )
        .unwrap();
    }
    let out = bin()
        .args(["analyze", "--format", "json", "--symbols", &server.url])
        .args(["--symbols-cache", s(&dir.path().join("cache"))])
        .arg(&dumps)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    for report in doc["reports"].as_array().unwrap() {
        assert_eq!(
            report["threads"][0]["frames"][0]["function"],
            "__run_exit_handlers"
        );
    }
    let requests = server.requests();
    let pdb_requests = requests.iter().filter(|r| r.ends_with(".pdb")).count();
    assert_eq!(pdb_requests, 1, "{requests:?}");
}
