//! Every symbol source, on dumps whose answer is known (issue 3).
//!
//! The dumps are synthesized around the fixtures of tests/data/native/
//! (built by scripts/native-fixtures.sh): fakehip.dll + fakehip.pdb, and
//! libfakeexit.so with its split debug file. Their identities and function
//! offsets below are what that script printed.

mod common;
#[path = "common/httpd.rs"]
mod httpd;
#[path = "common/shims.rs"]
mod shims;
#[path = "common/synth.rs"]
mod synth;

use std::collections::BTreeSet;
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

/// The fake HIP module's first frame, named from its PDB.
fn named_from_the_pdb(run: &Run) {
    assert_eq!(
        run.frame0()["function"],
        "__run_exit_handlers",
        "{:#}",
        run.report()
    );
    assert_eq!(run.frame0()["symbol_source"], "pdb");
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
    shims::build(dir, "netlog", shims::NET_LOG)
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

// Issue 10.1: Microsoft symbol stores exactly as symstore lays them out.

/// fakehip.dll with another SizeOfImage (0x6a00): a size with a hex letter,
/// as most real images have. Its code id is `6553F1006a00`.
const WIDE_SIZE: u32 = 0x6a00;
const WIDE_CODE_ID: &str = "6553F1006a00";

fn wide_dll() -> Vec<u8> {
    let mut dll = std::fs::read(native("fakehip.dll")).unwrap();
    let pe = u32::from_le_bytes(dll[0x3c..0x40].try_into().unwrap()) as usize;
    // SizeOfImage: 56 bytes into the optional header (PE32 and PE32+).
    let at = pe + 24 + 56;
    dll[at..at + 4].copy_from_slice(&WIDE_SIZE.to_le_bytes());
    dll
}

fn put(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A Wine-style dump (no CodeView record) of the wide-size fakehip, loaded
/// as `path`.
fn wide_dump(path: &'static str) -> Vec<u8> {
    let module = WinModule {
        path,
        base: HIP_BASE,
        size: WIDE_SIZE,
        timestamp: HIP_TIMESTAMP,
        pdb: None,
    };
    synth::windows_crash(&[module], &[], HIP_BASE + RUN_EXIT_HANDLERS + 4, Vec::new())
}

/// symstore keys a binary by `%08X%x` (timestamp upper case, image size
/// lower case) and a PDB by GUID + `%X` age; names keep the case they were
/// stored with, which is often not the dump's. Found in the exact spelling,
/// and with every component in another case; a batch lists the store's
/// root once.
#[test]
fn symstore_layout_with_hex_sizes_and_mixed_case() {
    let dir = tempfile::tempdir().unwrap();
    let pdb = std::fs::read(native("fakehip.pdb")).unwrap();

    // The exact spelling symstore gives the dump's names.
    let exact = dir.path().join("exact");
    put(
        &exact
            .join("FAKEHIP.DLL")
            .join(WIDE_CODE_ID)
            .join("FAKEHIP.DLL"),
        &wide_dll(),
    );
    put(
        &exact
            .join("fakehip.pdb")
            .join(HIP_DEBUG_ID)
            .join("fakehip.pdb"),
        &pdb,
    );
    let run = analyze(
        dir.path(),
        &wide_dump("C:\\Windows\\System32\\FAKEHIP.DLL"),
        &["--symbols", s(&exact)],
        &[],
    );
    named_from_the_pdb(&run);

    // Stored under other spellings than the dump's (`KERNEL32.dll` in the
    // dump, `kernel32.dll` in the store; `Ntdll.pdb`).
    let mixed = dir.path().join("mixed");
    put(
        &mixed
            .join("fakehip.dll")
            .join(WIDE_CODE_ID)
            .join("fakehip.dll"),
        &wide_dll(),
    );
    put(
        &mixed
            .join("Fakehip.pdb")
            .join(HIP_DEBUG_ID)
            .join("Fakehip.pdb"),
        &pdb,
    );
    let dumps = dir.path().join("dumps");
    for (i, name) in [
        "C:\\Windows\\System32\\FAKEHIP.DLL",
        "C:\\Windows\\System32\\FakeHip.dll",
        "C:\\Windows\\System32\\fakehip.DLL",
    ]
    .into_iter()
    .enumerate()
    {
        put(&dumps.join(format!("d{i}.dmp")), &wide_dump(name));
    }
    let shim = shims::build(dir.path(), "filelog", shims::FILE_LOG)
        .expect("a C compiler (cc) is needed to build the file-access recorder");
    let log = dir.path().join("files.log");
    let out = bin()
        .args([
            "analyze",
            "--format",
            "json",
            "-j",
            "1",
            "--symbols",
            s(&mixed),
        ])
        .arg(&dumps)
        .env("LD_PRELOAD", &shim)
        .env("FILELOG", &log)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    for report in doc["reports"].as_array().unwrap() {
        let frame = &report["threads"][0]["frames"][0];
        assert_eq!(frame["function"], "__run_exit_handlers", "{report:#}");
        assert_eq!(frame["symbol_source"], "pdb");
    }
    let listed = shims::accesses(&log)
        .into_iter()
        .filter(|a| a.op == "opendir" && a.path == mixed)
        .count();
    assert_eq!(listed, 1, "the store's root is listed once per run");
}

/// Downloads land in the cache under the canonical spelling (the dump's
/// names, symstore's ids), where a later run finds them offline.
#[test]
fn downloads_are_cached_in_the_symstore_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    put(
        &served
            .join("FakeHip.dll")
            .join(WIDE_CODE_ID)
            .join("FakeHip.dll"),
        &wide_dll(),
    );
    copy(
        &native("fakehip.pdb"),
        &served
            .join("fakehip.pdb")
            .join(HIP_DEBUG_ID)
            .join("fakehip.pdb"),
    );
    let server = httpd::Httpd::start(served, false);
    let cache = dir.path().join("cache");
    let dump = wide_dump("C:\\app\\FakeHip.dll");
    let run = analyze(
        dir.path(),
        &dump,
        &["--symbols", &server.url, "--symbols-cache", s(&cache)],
        &[],
    );
    assert_eq!(
        run.frame0()["function"],
        "__run_exit_handlers",
        "{:?}",
        server.requests()
    );
    assert!(cache
        .join("FakeHip.dll")
        .join(WIDE_CODE_ID)
        .join("FakeHip.dll")
        .is_file());
    assert!(cache
        .join("fakehip.pdb")
        .join(HIP_DEBUG_ID)
        .join("fakehip.pdb")
        .is_file());
    // Offline, from the cache alone.
    let run = analyze(dir.path(), &dump, &["--symbols", s(&cache)], &[]);
    assert_eq!(run.frame0()["function"], "__run_exit_handlers");
}

// Issue 13: names from a dump never leave the symbol folders.

/// Every file below `root`, with its size.
fn tree(root: &Path) -> BTreeSet<(PathBuf, u64)> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                out.insert((path.strip_prefix(root).unwrap().to_path_buf(), meta.len()));
            }
        }
    }
    out
}

/// Module names a dump may carry to reach outside the symbol folders: a
/// parent path, a drive-relative name, a network path, an alternate data
/// stream, a device, a 4 KB name. Looked up in a store, on a server and in
/// a cache (and, for the network path, as a path on this machine): nothing
/// outside the given folders is opened, listed or written, and a name that
/// is not a plain file name is used nowhere, not even inside them.
#[test]
fn names_from_a_dump_never_leave_the_symbol_folders() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let store = root.join("work/store");
    let cache = root.join("work/cache");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::create_dir_all(&cache).unwrap();
    // What an escape would find.
    for bait in ["x.dll", "x.pdb", "work/x.pdb"] {
        copy(&native("fakehip.pdb"), &root.join(bait));
    }
    let served = root.join("served");
    std::fs::create_dir_all(&served).unwrap();
    let server = httpd::Httpd::start(served, false);
    let shim = shims::build(root, "filelog", shims::FILE_LOG)
        .expect("a C compiler (cc) is needed to build the file-access recorder");

    let long: &'static str = Box::leak(format!("{}.dll", "z".repeat(4096)).into_boxed_str());
    let long_pdb: &'static str = Box::leak(format!("{}.pdb", "z".repeat(4096)).into_boxed_str());
    let names: [(&'static str, &'static str); 6] = [
        ("..\\..\\x.dll", "..\\..\\x.pdb"),
        ("C:evil.dll", "C:evil.pdb"),
        ("//host/share/x.dll", "//host/share/x.pdb"),
        ("x.dll:stream", "x.pdb:stream"),
        ("CON.dll", "CON.pdb"),
        (long, long_pdb),
    ];
    let modules: Vec<WinModule> = names
        .iter()
        .enumerate()
        .map(|(i, (path, pdb))| {
            let mut guid = HIP_GUID;
            guid[0] = i as u8;
            WinModule {
                path,
                base: 0x7ff0_0000_0000 + 0x100_0000 * i as u64,
                size: 0x6a00 + 0x100 * i as u32,
                timestamp: HIP_TIMESTAMP + i as u32,
                pdb: Some((guid, 1, pdb)),
            }
        })
        .collect();
    let ips: Vec<u64> = modules.iter().map(|m| m.base + 0x1234).collect();
    let dump = synth::windows_threads(&modules, &[], &ips, Vec::new());
    let dump_path = root.join("work/crash.dmp");
    std::fs::write(&dump_path, &dump).unwrap();

    let log = root.join("files.log");
    let before = tree(root);
    let out = bin()
        .current_dir(&store)
        .args(["analyze", "--format", "json", "--symbols", s(&store)])
        .args(["--symbols", &server.url, "--symbols-cache", s(&cache)])
        .arg(&dump_path)
        .env("LD_PRELOAD", &shim)
        .env("FILELOG", &log)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let report = &doc["reports"][0];
    assert_eq!(report["status"], "ok", "{report:#}");

    // Nothing written anywhere (the cache stays empty: nothing was served).
    let mut after = tree(root);
    after.retain(|(p, _)| !p.starts_with("files.log"));
    assert_eq!(before, after);

    // Every path a name from the dump reached is inside the store or the
    // cache; the names that are not plain file names reached none.
    let accesses = shims::accesses(&log);
    let inside = |p: &Path| p.starts_with(&store) || p.starts_with(&cache);
    let mut looked_in_store = false;
    for access in &accesses {
        let Ok(rel) = access.path.strip_prefix(root) else {
            // Outside the test's folder: no name from the dump in it.
            let text = access.path.to_string_lossy();
            for needle in [
                "x.dll", "x.pdb", "x.sym", "evil", "stream", "CON.", "zzzz", "host",
            ] {
                assert!(!text.contains(needle), "{} {}", access.op, text);
            }
            continue;
        };
        let text = rel.to_string_lossy();
        for needle in ["evil", "stream", "CON.", "zzzz", "host"] {
            assert!(
                !text.contains(needle),
                "{} {}",
                access.op,
                access.path.display()
            );
        }
        if ["x.dll", "x.pdb", "x.sym"].iter().any(|n| text.contains(n)) {
            assert!(
                inside(&access.path),
                "{} {}",
                access.op,
                access.path.display()
            );
            looked_in_store |= access.path.starts_with(&store);
        }
    }
    assert!(
        looked_in_store,
        "the recorder sees look-ups: {} lines",
        accesses.len()
    );
    for request in server.requests() {
        for needle in [
            "evil", "stream", "CON.", "zzzz", "host", "%2F", "%5C", "%3A",
        ] {
            assert!(!request.contains(needle), "{request}");
        }
    }
    assert!(server.requests().iter().any(|r| r.contains("x.pdb")));

    // The refused names are said, shortened.
    let warnings = report["warnings"].to_string();
    for name in ["C:evil.pdb", "x.pdb:stream", "CON.pdb", "zzzzzzzz"] {
        assert!(
            warnings.contains(name) && warnings.contains("not a plain file name"),
            "{name}: {warnings}"
        );
    }
    assert!(warnings.len() < 8000, "a 4 KB name is not repeated in full");
}

/// `--no-system-symbols`: the module paths the dump records are not opened,
/// even when the file is there with the right identity.
#[test]
fn no_system_symbols_turns_off_the_machines_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let library = native("libfakeexit.so").canonicalize().unwrap();
    let library: &'static str = Box::leak(library.to_str().unwrap().to_string().into_boxed_str());
    let dump = synth::linux_crash(
        library,
        ELF_BASE,
        0x4000,
        &build_id_bytes(),
        ELF_BASE + ELF_WAIT_FOR_STREAMS + 2,
    );
    let run = analyze(dir.path(), &dump, &[], &[]);
    assert_eq!(
        run.frame0()["function"],
        "_wait_for_streams",
        "{:#}",
        run.report()
    );

    let shim = shims::build(dir.path(), "filelog", shims::FILE_LOG)
        .expect("a C compiler (cc) is needed to build the file-access recorder");
    let log = dir.path().join("files.log");
    let run = analyze(
        dir.path(),
        &dump,
        &["--no-system-symbols"],
        &[("LD_PRELOAD", s(&shim)), ("FILELOG", s(&log))],
    );
    assert_eq!(run.frame0()["function"], Value::Null);
    for access in shims::accesses(&log) {
        assert!(
            !access.path.starts_with("/usr/lib/debug")
                && !access.path.to_string_lossy().contains("libfakeexit"),
            "{} {}",
            access.op,
            access.path.display()
        );
    }
}

// Issue 13: symbol files and the cache.

const OTHER_DEBUG_ID: &str = "177DA8A0FB75170A4C4C44205044422F1";

/// A .sym file whose MODULE record is another build's is refused with a
/// warning naming both ids, from a folder and from a server; the server's
/// file is not kept in the cache.
#[test]
fn a_sym_file_of_another_build_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let sym = store
        .join("fakehip.pdb")
        .join(HIP_DEBUG_ID)
        .join("fakehip.sym");
    put(
        &sym,
        format!(
            "MODULE windows x86_64 {OTHER_DEBUG_ID} fakehip.pdb\n\
             FUNC 1030 11 0 function_of_another_build\n"
        )
        .as_bytes(),
    );
    let run = analyze(
        dir.path(),
        &hip_dump(true, RUN_EXIT_HANDLERS + 4),
        &["--symbols", s(&store)],
        &[],
    );
    assert_eq!(run.frame0()["function"], Value::Null, "{:#}", run.report());
    assert_eq!(run.module("fakehip.dll")["symbols"], "mismatched");
    assert!(
        run.warnings()
            .iter()
            .any(|w| w.contains(s(&sym)) && w.contains(OTHER_DEBUG_ID) && w.contains(HIP_DEBUG_ID)),
        "{:?}",
        run.warnings()
    );

    let server = httpd::Httpd::start(store, false);
    let cache = dir.path().join("cache");
    let run = analyze(
        dir.path(),
        &hip_dump(true, RUN_EXIT_HANDLERS + 4),
        &["--symbols", &server.url, "--symbols-cache", s(&cache)],
        &[],
    );
    assert_eq!(run.frame0()["function"], Value::Null);
    assert!(
        run.warnings()
            .iter()
            .any(|w| w.contains(OTHER_DEBUG_ID) && w.contains(HIP_DEBUG_ID)),
        "{:?}",
        run.warnings()
    );
    assert!(tree(&cache).is_empty(), "{:?}", tree(&cache));
}

/// A server cannot put a file in a shared cache where another module would
/// find it: what it sends is kept only under the path built from the ids
/// of the module it was asked about, and only when it is that module's.
#[test]
fn a_server_cannot_poison_a_shared_cache() {
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    // Asked by code id for fakehip.dll, the server names another module:
    // the answer may name fakehip's debug id, but not choose a cache path
    // for `victim.pdb`.
    put(
        &served
            .join("fakehip.dll")
            .join(HIP_CODE_ID)
            .join("fakehip.sym"),
        format!(
            "MODULE windows x86_64 {OTHER_DEBUG_ID} victim.pdb\n\
             FUNC 1030 11 0 planted_name\n"
        )
        .as_bytes(),
    );
    // Asked for fakehip's PDB, it sends another build's.
    let mut pdb = std::fs::read(native("fakehip.pdb")).unwrap();
    let mut patched = 0;
    for i in 0..pdb.len() - 16 {
        if pdb[i..i + 16] == HIP_GUID {
            pdb[i] ^= 1;
            patched += 1;
        }
    }
    assert!(patched > 0);
    put(
        &served
            .join("fakehip.pdb")
            .join(HIP_DEBUG_ID)
            .join("fakehip.pdb"),
        &pdb,
    );
    let server = httpd::Httpd::start(served, false);
    let cache = dir.path().join("cache");
    let args = [
        "--symbols",
        server.url.as_str(),
        "--symbols-cache",
        s(&cache),
    ];

    analyze(
        dir.path(),
        &hip_dump(false, RUN_EXIT_HANDLERS + 4),
        &args,
        &[],
    );
    let files: Vec<PathBuf> = tree(&cache).into_iter().map(|(p, _)| p).collect();
    assert!(
        !files.iter().any(|p| p.starts_with("victim.pdb")),
        "a path another module would use: {files:?}"
    );
    // The code-id answer is kept under fakehip's own code id only.
    for file in &files {
        assert!(
            file.starts_with(Path::new("fakehip.dll").join(HIP_CODE_ID)),
            "{files:?}"
        );
    }

    let run = analyze(
        dir.path(),
        &hip_dump(true, RUN_EXIT_HANDLERS + 4),
        &args,
        &[],
    );
    assert_ne!(run.frame0()["symbol_source"], "pdb");
    assert!(
        run.warnings()
            .iter()
            .any(|w| w.contains("GUID+age") && w.contains(HIP_DEBUG_ID)),
        "{:?}",
        run.warnings()
    );
    assert!(
        !cache.join("fakehip.pdb").exists(),
        "a refused download is not kept: {:?}",
        tree(&cache)
    );

    // A module named victim.pdb with that id, read from the cache only.
    let mut victim = hip_module(true);
    // OTHER_DEBUG_ID: fakehip's GUID with its last byte 0x2f.
    let mut other_guid = HIP_GUID;
    other_guid[15] = 0x2f;
    victim.pdb = Some((other_guid, 1, "victim.pdb"));
    victim.path = "C:\\app\\victim.dll";
    let dump = synth::windows_crash(&[victim], &[], HIP_BASE + RUN_EXIT_HANDLERS + 4, Vec::new());
    let run = analyze(dir.path(), &dump, &["--symbols", s(&cache)], &[]);
    assert_eq!(run.module("victim.dll")["debug_id"], OTHER_DEBUG_ID);
    assert_ne!(run.frame0()["function"], "planted_name");
}

/// With no user cache directory (no HOME, no XDG_CACHE_HOME, no entry in
/// the user database) and no --symbols-cache, nothing is written to a
/// shared folder: downloads serve the run and are gone, with one warning.
#[test]
fn no_user_cache_means_no_cache_and_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    write_hip_sym(&served, "FUNC 1030 11 0 __run_exit_handlers\n");
    let server = httpd::Httpd::start(served, false);
    let shim = shims::build(dir.path(), "nopasswd", shims::NO_PASSWD)
        .expect("a C compiler (cc) is needed to build the shim");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let path = dir.path().join("crash.dmp");
    std::fs::write(&path, hip_dump(true, RUN_EXIT_HANDLERS + 4)).unwrap();
    let out = bin()
        .args(["analyze", "--format", "json", "--symbols", &server.url])
        .arg(&path)
        .env_remove("HOME")
        .env_remove("XDG_CACHE_HOME")
        .env("TMPDIR", &tmp)
        .env("LD_PRELOAD", &shim)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let report = &doc["reports"][0];
    assert_eq!(
        report["threads"][0]["frames"][0]["function"], "__run_exit_handlers",
        "{report:#}"
    );
    let warnings: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|w| w.contains("caching is off"))
        .collect();
    assert_eq!(warnings.len(), 1, "{:#}", report["warnings"]);
    assert!(
        tree(&tmp).is_empty(),
        "left in the temporary folder: {:?}",
        tree(&tmp)
    );
    assert!(std::fs::read_dir(&tmp).unwrap().next().is_none());
}

/// The .sym file the hip dump needs, padded to `size` bytes with records
/// that change nothing.
fn padded_sym(size: usize) -> String {
    let mut text = format!(
        "MODULE windows x86_64 {HIP_DEBUG_ID} fakehip.pdb\nFILE 0 fakehip.c\n\
         FUNC 1030 11 0 __run_exit_handlers\n1030 11 9 0\n"
    );
    let mut n = 0;
    while text.len() < size {
        text.push_str(&format!("PUBLIC {:x} 0 padding_{n}\n", 0x5000 + n));
        n += 1;
    }
    text
}

/// A server that stops sending in the middle of a file is given up after
/// one read timeout, like one that cannot be reached: it is not asked for
/// the module's other files, and nothing half-written stays in the cache.
#[test]
fn a_server_that_stalls_mid_body_is_given_up() {
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    put(
        &served
            .join("fakehip.pdb")
            .join(HIP_DEBUG_ID)
            .join("fakehip.sym"),
        padded_sym(4000).as_bytes(),
    );
    ms_store(&served);
    let server = httpd::Httpd::with(served, httpd::Behaviour::StallAfter(100));
    let folder = dir.path().join("build");
    copy(&native("fakehip.pdb"), &folder.join("fakehip.pdb"));
    let cache = dir.path().join("cache");
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
            s(&cache),
        ],
        &[],
    );
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(run.out.status.code(), Some(0));
    // The folder after the server still names the frame.
    assert_eq!(run.frame0()["function"], "__run_exit_handlers");
    assert_eq!(run.frame0()["symbol_source"], "pdb");
    // One file asked for (after the store's one `index2.txt` question),
    // then nothing more.
    let files: Vec<String> = server
        .requests()
        .into_iter()
        .filter(|r| r != "/index2.txt")
        .collect();
    assert_eq!(files.len(), 1, "{:?}", server.requests());
    assert!(
        run.warnings()
            .iter()
            .any(|w| w.contains("symbol server") && w.contains(&server.url)),
        "{:?}",
        run.warnings()
    );
    assert!(tree(&cache).is_empty(), "{:?}", tree(&cache));
}

/// The read timeout is per read: a file that keeps arriving, for longer
/// than the timeout in all, is downloaded whole.
#[test]
fn a_slow_download_that_keeps_arriving_is_not_cut() {
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    put(
        &served
            .join("fakehip.pdb")
            .join(HIP_DEBUG_ID)
            .join("fakehip.sym"),
        padded_sym(1200).as_bytes(),
    );
    let server = httpd::Httpd::with(
        served,
        httpd::Behaviour::Trickle {
            chunk: 100,
            pause: Duration::from_millis(250),
        },
    );
    let cache = dir.path().join("cache");
    let start = Instant::now();
    let run = analyze(
        dir.path(),
        &hip_dump(true, RUN_EXIT_HANDLERS + 4),
        &[
            "--symbols",
            server.url.as_str(),
            "--symbols-timeout",
            "1",
            "--symbols-cache",
            s(&cache),
        ],
        &[],
    );
    assert!(
        start.elapsed() > Duration::from_secs(2),
        "the test trickles"
    );
    assert_eq!(
        run.frame0()["function"],
        "__run_exit_handlers",
        "{:?}",
        run.warnings()
    );
    assert_eq!(run.frame0()["symbol_source"], "sym");
    assert!(cache
        .join("fakehip.pdb")
        .join(HIP_DEBUG_ID)
        .join("fakehip.sym")
        .is_file());
}

/// `--max-download-size`: a larger file is refused with a warning, whether
/// the server announces its length or not, and nothing is kept.
#[test]
fn downloads_are_capped() {
    for behaviour in [httpd::Behaviour::Serve, httpd::Behaviour::NoLength] {
        let dir = tempfile::tempdir().unwrap();
        let served = dir.path().join("served");
        put(
            &served
                .join("fakehip.pdb")
                .join(HIP_DEBUG_ID)
                .join("fakehip.sym"),
            padded_sym(8000).as_bytes(),
        );
        let server = httpd::Httpd::with(served, behaviour);
        let cache = dir.path().join("cache");
        let args = [
            "--symbols",
            server.url.as_str(),
            "--symbols-cache",
            s(&cache),
        ];
        let capped: Vec<&str> = args
            .iter()
            .copied()
            .chain(["--max-download-size", "4K"])
            .collect();
        let run = analyze(
            dir.path(),
            &hip_dump(true, RUN_EXIT_HANDLERS + 4),
            &capped,
            &[],
        );
        assert_eq!(run.out.status.code(), Some(0), "{behaviour:?}");
        assert_eq!(run.frame0()["function"], Value::Null, "{behaviour:?}");
        assert!(
            run.warnings()
                .iter()
                .any(|w| w.contains("larger than the download limit of 4096 bytes")),
            "{behaviour:?}: {:?}",
            run.warnings()
        );
        assert!(tree(&cache).is_empty(), "{behaviour:?}: {:?}", tree(&cache));

        // Within the default limit, the same file is used.
        let run = analyze(
            dir.path(),
            &hip_dump(true, RUN_EXIT_HANDLERS + 4),
            &args,
            &[],
        );
        assert_eq!(
            run.frame0()["function"],
            "__run_exit_handlers",
            "{behaviour:?}"
        );
    }
    let out = bin()
        .args(["analyze", "--max-download-size", "lots", "x.dmp"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a size"));
}

/// A CAB archive of `file`, holding it as `name`, MSZIP-compressed as
/// makecab writes by default: every 32 KB frame a "CK" block of raw
/// deflate.
fn mszip_cab(file: &Path, name: &str, archive: &Path) {
    use std::io::Write;
    let data = std::fs::read(file).unwrap();
    let blocks: Vec<(Vec<u8>, u16)> = data
        .chunks(32768)
        .map(|frame| {
            let mut deflate =
                flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
            deflate.write_all(frame).unwrap();
            let mut block = b"CK".to_vec();
            block.extend(deflate.finish().unwrap());
            (block, frame.len() as u16)
        })
        .collect();
    std::fs::create_dir_all(archive.parent().unwrap()).unwrap();
    std::fs::write(archive, cab_archive(data.len(), blocks, name, 1)).unwrap();
}

/// A CAB archive of `data` named `name`, LZX-compressed as symstore
/// /compress writes them (LZX, 2 MB window), in one LZX block of the
/// uncompressed kind: no LZX encoder is at hand, and an uncompressed block
/// still takes the archive through the LZX decoder (its block header, the
/// R0-R2 registers, the 32 KB frames split across CFDATA blocks).
fn lzx_cab(data: &[u8], name: &str) -> Vec<u8> {
    assert!(data.len() < 1 << 24);
    let size = data.len() as u32;
    // E8 translation off (1 bit), block type 3 (3 bits), 24-bit size, then
    // padding to the 16-bit word; words are little-endian, read from their
    // high bit.
    let head: u32 = (0b0011 << 28) | (size << 4);
    let mut first = Vec::new();
    first.extend(((head >> 16) as u16).to_le_bytes());
    first.extend((head as u16).to_le_bytes());
    for _ in 0..3 {
        first.extend(1u32.to_le_bytes());
    }
    let frames: Vec<&[u8]> = data.chunks(32768).collect();
    let mut blocks: Vec<(Vec<u8>, u16)> = Vec::new();
    for (i, frame) in frames.iter().enumerate() {
        let mut block = if i == 0 { first.clone() } else { Vec::new() };
        block.extend_from_slice(frame);
        blocks.push((block, frame.len() as u16));
    }
    cab_archive(data.len(), blocks, name, 3 | (21 << 8)) // LZX, window 2^21
}

/// A one-folder, one-file CAB archive of the given data blocks
/// (compressed bytes, uncompressed size) with the folder's compression
/// type.
fn cab_archive(size: usize, blocks: Vec<(Vec<u8>, u16)>, name: &str, compression: u16) -> Vec<u8> {
    let size = size as u32;
    let name_bytes = [name.as_bytes(), &[0]].concat();
    let header = 36;
    let folder = 8;
    let files_at = header + folder;
    let data_at = files_at + 16 + name_bytes.len();
    let total = data_at + blocks.iter().map(|(b, _)| 8 + b.len()).sum::<usize>();
    let mut cab = Vec::new();
    cab.extend(b"MSCF");
    cab.extend(0u32.to_le_bytes());
    cab.extend((total as u32).to_le_bytes());
    cab.extend(0u32.to_le_bytes());
    cab.extend((files_at as u32).to_le_bytes());
    cab.extend(0u32.to_le_bytes());
    cab.extend([3u8, 1u8]); // version 1.3
    cab.extend(1u16.to_le_bytes()); // folders
    cab.extend(1u16.to_le_bytes()); // files
    cab.extend(0u16.to_le_bytes()); // flags
    cab.extend(0u16.to_le_bytes()); // set id
    cab.extend(0u16.to_le_bytes()); // cabinet index
    cab.extend((data_at as u32).to_le_bytes());
    cab.extend((blocks.len() as u16).to_le_bytes());
    cab.extend(compression.to_le_bytes());
    cab.extend(size.to_le_bytes());
    cab.extend(0u32.to_le_bytes()); // offset in the folder
    cab.extend(0u16.to_le_bytes()); // folder
    cab.extend(0x5821u16.to_le_bytes()); // date
    cab.extend(0u16.to_le_bytes()); // time
    cab.extend(0x20u16.to_le_bytes()); // archive attribute
    cab.extend(&name_bytes);
    assert_eq!(cab.len(), data_at);
    for (block, uncompressed) in blocks {
        cab.extend(0u32.to_le_bytes()); // no checksum
        cab.extend((block.len() as u16).to_le_bytes());
        cab.extend(uncompressed.to_le_bytes());
        cab.extend(block);
    }
    assert_eq!(cab.len(), total);
    cab
}

fn pdb_dir(root: &Path) -> PathBuf {
    root.join("fakehip.pdb").join(HIP_DEBUG_ID)
}

/// Microsoft-style servers as symstore leaves them (issue 12): files
/// stored with /compress are CAB archives under `NAME.xx_`, asked for when
/// the plain name is not there and unpacked into the cache under the plain
/// name; MSZIP and LZX both.
#[test]
fn compressed_files_on_a_symbol_server() {
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    // The binary (found by code id: the module has no CodeView record) and
    // the PDB it names, both compressed.
    mszip_cab(
        &native("fakehip.dll"),
        "fakehip.dll",
        &served
            .join("fakehip.dll")
            .join(HIP_CODE_ID)
            .join("fakehip.dl_"),
    );
    mszip_cab(
        &native("fakehip.pdb"),
        "fakehip.pdb",
        &pdb_dir(&served).join("fakehip.pd_"),
    );
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
        &hip_dump(false, RUN_EXIT_HANDLERS + 4),
        &args,
        &[],
    );
    named_from_the_pdb(&run);
    let requests = server.requests();
    assert!(
        requests.iter().any(|r| r.ends_with("/fakehip.pd_"))
            && requests.iter().any(|r| r.ends_with("/fakehip.dl_")),
        "{requests:?}"
    );
    // Kept unpacked, under the plain name: the cache stays a plain store.
    let kept = pdb_dir(&cache).join("fakehip.pdb");
    assert_eq!(
        std::fs::read(&kept).unwrap(),
        std::fs::read(native("fakehip.pdb")).unwrap()
    );
    assert!(!pdb_dir(&cache).join("fakehip.pd_").exists());

    // LZX, as symstore /compress writes, and a .sym as `.sy_`.
    std::fs::remove_dir_all(&served).unwrap();
    let sym =
        format!("MODULE windows x86_64 {HIP_DEBUG_ID} fakehip.pdb\nFUNC 1030 11 0 lzx_named\n");
    put(
        &pdb_dir(&served).join("fakehip.sy_"),
        &lzx_cab(sym.as_bytes(), "fakehip.sym"),
    );
    let cache = dir.path().join("cache2");
    let run = analyze(
        dir.path(),
        &hip_dump(true, RUN_EXIT_HANDLERS + 4),
        &[
            "--symbols",
            server.url.as_str(),
            "--symbols-cache",
            s(&cache),
        ],
        &[],
    );
    assert_eq!(run.frame0()["function"], "lzx_named", "{:#}", run.report());
    assert_eq!(run.frame0()["symbol_source"], "sym");

    // A PDB larger than one 32 KB LZX frame, LZX-compressed.
    let pdb = std::fs::read(native("fakehip.pdb")).unwrap();
    assert!(pdb.len() > 32768);
    std::fs::remove_dir_all(&served).unwrap();
    put(
        &pdb_dir(&served).join("fakehip.pd_"),
        &lzx_cab(&pdb, "fakehip.pdb"),
    );
    let cache = dir.path().join("cache3");
    let run = analyze(
        dir.path(),
        &hip_dump(true, RUN_EXIT_HANDLERS + 4),
        &[
            "--symbols",
            server.url.as_str(),
            "--symbols-cache",
            s(&cache),
        ],
        &[],
    );
    assert_eq!(run.frame0()["function"], "__run_exit_handlers");
    assert_eq!(
        std::fs::read(pdb_dir(&cache).join("fakehip.pdb")).unwrap(),
        pdb
    );

    // A broken archive is refused with a warning and not kept.
    std::fs::remove_dir_all(&served).unwrap();
    put(
        &pdb_dir(&served).join("fakehip.pd_"),
        b"MSCF but not really a cabinet",
    );
    let cache = dir.path().join("cache4");
    let run = analyze(
        dir.path(),
        &hip_dump(true, RUN_EXIT_HANDLERS + 4),
        &[
            "--symbols",
            server.url.as_str(),
            "--symbols-cache",
            s(&cache),
        ],
        &[],
    );
    assert_eq!(run.frame0()["function"], Value::Null);
    assert!(
        run.warnings().iter().any(|w| w.contains("CAB")),
        "{:?}",
        run.warnings()
    );
    assert!(tree(&cache).is_empty(), "{:?}", tree(&cache));
}

/// A pointer store's `file.ptr`: `PATH:` to a local absolute path is
/// followed (and the file checked); a network path is not, and `MSG:` is a
/// warning.
#[test]
fn file_ptr_redirects() {
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    let elsewhere = dir.path().join("elsewhere").join("fakehip.pdb");
    copy(&native("fakehip.pdb"), &elsewhere);
    let pointer = pdb_dir(&served).join("file.ptr");
    put(&pointer, format!("PATH:{}", elsewhere.display()).as_bytes());
    let server = httpd::Httpd::start(served.clone(), false);
    let cache = dir.path().join("cache");
    let args = [
        "--symbols",
        server.url.as_str(),
        "--symbols-cache",
        s(&cache),
    ];
    let dump = hip_dump(true, RUN_EXIT_HANDLERS + 4);
    let run = analyze(dir.path(), &dump, &args, &[]);
    named_from_the_pdb(&run);
    assert!(server.requests().iter().any(|r| r.ends_with("/file.ptr")));

    // A file of another build at the path is refused.
    copy(&native("fakehip.dll"), &elsewhere);
    let run = analyze(dir.path(), &dump, &args, &[]);
    assert_eq!(run.frame0()["function"], Value::Null);
    assert!(
        run.warnings()
            .iter()
            .any(|w| w.contains("corrupt") || w.contains("differs")),
        "{:?}",
        run.warnings()
    );

    // Never a network share, never a relative path.
    for target in [
        "\\\\fileserver\\symbols\\fakehip.pdb",
        "//fileserver/symbols/fakehip.pdb",
        "fakehip.pdb",
    ] {
        put(&pointer, format!("PATH:{target}").as_bytes());
        let run = analyze(dir.path(), &dump, &args, &[]);
        assert_eq!(run.frame0()["function"], Value::Null);
        assert!(
            run.warnings().iter().any(|w| w.contains("not followed")),
            "{target}: {:?}",
            run.warnings()
        );
    }

    put(&pointer, b"MSG: withheld by the release team");
    let run = analyze(dir.path(), &dump, &args, &[]);
    assert!(
        run.warnings()
            .iter()
            .any(|w| w.contains("withheld by the release team")),
        "{:?}",
        run.warnings()
    );
}

/// Two-tier stores (`index2.txt` at the root: `fa/fakehip.pdb/...`), on a
/// server and as a folder; the cache keeps the one-tier layout.
#[test]
fn two_tier_stores() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    put(&store.join("index2.txt"), b"");
    // symstore lower-cases the two-letter folder; the file keeps its case.
    ms_store(&store.join("fa"));
    let dump = hip_dump(false, RUN_EXIT_HANDLERS + 4);

    let run = analyze(dir.path(), &dump, &["--symbols", s(&store)], &[]);
    assert_eq!(
        run.frame0()["function"],
        "__run_exit_handlers",
        "{:#}",
        run.report()
    );
    assert_eq!(
        run.module("fakehip.dll")["symbol_file"],
        s(&store
            .join("fa")
            .join("fakehip.pdb")
            .join(HIP_DEBUG_ID)
            .join("fakehip.pdb"))
    );

    let server = httpd::Httpd::start(store.clone(), false);
    let cache = dir.path().join("cache");
    let run = analyze(
        dir.path(),
        &dump,
        &[
            "--symbols",
            server.url.as_str(),
            "--symbols-cache",
            s(&cache),
        ],
        &[],
    );
    assert_eq!(
        run.frame0()["function"],
        "__run_exit_handlers",
        "{:#}",
        run.report()
    );
    let requests = server.requests();
    assert!(
        requests.contains(&format!("/fa/fakehip.pdb/{HIP_DEBUG_ID}/fakehip.pdb")),
        "{requests:?}"
    );
    assert_eq!(
        requests.iter().filter(|r| *r == "/index2.txt").count(),
        1,
        "asked once per run: {requests:?}"
    );
    assert!(pdb_dir(&cache).join("fakehip.pdb").is_file());
}

/// A symbol store on disk as symstore leaves it (a network share copied,
/// or mounted): CAB-compressed files (`.pd_`), a two-tier layout
/// (`index2.txt`, `fa/fakehip.pdb/...`) and `file.ptr` redirects are read
/// as from a server, and nothing is written into the store or kept after
/// the run.
#[test]
fn compressed_files_and_pointers_in_a_folder_store() {
    let dir = tempfile::tempdir().unwrap();
    let dump = hip_dump(true, RUN_EXIT_HANDLERS + 4);
    let named = |store: &Path| {
        let before = tree(store);
        let run = analyze(dir.path(), &dump, &["--symbols", s(store)], &[]);
        assert_eq!(tree(store), before, "the store is left as it was");
        run
    };

    let flat = dir.path().join("flat");
    mszip_cab(
        &native("fakehip.pdb"),
        "fakehip.pdb",
        &pdb_dir(&flat).join("fakehip.pd_"),
    );
    let run = named(&flat);
    named_from_the_pdb(&run);

    // Two-tier, compressed: `fa/fakehip.pdb/ID/fakehip.pd_`.
    let tiered = dir.path().join("tiered");
    put(&tiered.join("index2.txt"), b"");
    mszip_cab(
        &native("fakehip.pdb"),
        "fakehip.pdb",
        &pdb_dir(&tiered.join("fa")).join("fakehip.pd_"),
    );
    let run = named(&tiered);
    assert_eq!(
        run.frame0()["function"],
        "__run_exit_handlers",
        "{:#}",
        run.report()
    );

    // A pointer store: `file.ptr` with `PATH:` to a local file.
    let pointers = dir.path().join("pointers");
    let elsewhere = dir.path().join("elsewhere").join("fakehip.pdb");
    copy(&native("fakehip.pdb"), &elsewhere);
    put(
        &pdb_dir(&pointers).join("file.ptr"),
        format!("PATH:{}", elsewhere.display()).as_bytes(),
    );
    let run = named(&pointers);
    assert_eq!(
        run.frame0()["function"],
        "__run_exit_handlers",
        "{:#}",
        run.report()
    );
    // ... but never to a network share.
    put(
        &pdb_dir(&pointers).join("file.ptr"),
        b"PATH:\\\\fileserver\\symbols\\fakehip.pdb",
    );
    let run = named(&pointers);
    assert_eq!(run.frame0()["function"], Value::Null);

    // A broken archive names nothing (and is not a crash).
    let broken = dir.path().join("broken");
    put(
        &pdb_dir(&broken).join("fakehip.pd_"),
        b"MSCF but not really",
    );
    let run = named(&broken);
    assert_eq!(run.frame0()["function"], Value::Null);
}
