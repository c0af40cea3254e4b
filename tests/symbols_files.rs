//! Symbol sources on disk: Breakpad and Microsoft stores, plain folders
//! of PDBs and binaries, export tables (from a binary or a full-memory
//! dump), ELF debug files by build id and debuglink, identity checks, and
//! names from a dump that must never leave the symbol folders (issue 3).

use crate::common;
use crate::common::httpd;
use crate::common::shims;
use crate::common::symbol_fixtures;
use crate::common::synth;

use std::path::Path;

use serde_json::Value;

use common::bin;
use symbol_fixtures::*;
use synth::WinModule;

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
    let run = Analysis::hip(dir.path()).symbols(&store).run();
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
        let run = Analysis::of(dir.path(), &hip_dump(true, offset))
            .symbols(&folder)
            .run();
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
    let text = Analysis::hip(dir.path()).symbols(&folder).text();
    assert!(
        text.contains("fakehip.dll!__run_exit_handlers + 0x4 at ")
            && text.contains("fakehip.c:")
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
    let run = Analysis::of(dir.path(), &hip_dump(false, RUN_EXIT_HANDLERS + 4))
        .symbols(&store)
        .run();
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
    let run = Analysis::of(dir.path(), &hip_dump(true, STREAM_SYNCHRONIZE + 5))
        .symbols(&folder)
        .run();
    let frame = run.frame0();
    assert_eq!(frame["function"], "hipStreamSynchronize");
    assert_eq!(frame["function_offset"], "0x5");
    assert_eq!(frame["symbol_source"], "exports");
    let module = run.module("fakehip.dll");
    assert_eq!(module["symbol_source"], "exports");
    assert_eq!(module["symbol_file"], s(&folder.join("fakehip.dll")));

    let run = Analysis::of(dir.path(), &hip_dump(false, RUN_EXIT_HANDLERS + 4))
        .symbols(&folder)
        .run();
    assert_eq!(run.frame0()["function"], "__hipUnregisterFatBinary");
    assert_eq!(run.frame0()["function_offset"], "0x34");
    let text = Analysis::of(dir.path(), &hip_dump(false, RUN_EXIT_HANDLERS + 4))
        .symbols(&folder)
        .text();
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
    let run = Analysis::of(dir.path(), &dump).run();
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
    let run = Analysis::of(dir.path(), &dump).run();
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
    let run = Analysis::of(dir.path(), &dump).symbols(&store).run();
    let frame = run.frame0();
    assert_eq!(frame["module"], Value::Null);
    assert_eq!(frame["unloaded_module"], "fakehip.dll");
    assert_eq!(frame["unloaded_module_offset"], "0x1034");
    assert_eq!(frame["function"], "__run_exit_handlers");
    assert_eq!(frame["function_offset"], "0x4");
    assert_eq!(frame["symbol_source"], "pdb");
    assert_eq!(run.report()["unloaded_modules"][0]["symbol_source"], "pdb");

    let text = Analysis::of(dir.path(), &dump).symbols(&store).text();
    assert!(
        text.contains("in unloaded fakehip.dll!__run_exit_handlers + 0x4 (fakehip.dll + 0x1034)"),
        "{text}"
    );

    // Without symbols it still names the module and offset.
    let run = Analysis::of(dir.path(), &dump).run();
    assert_eq!(run.frame0()["unloaded_module"], "fakehip.dll");
    assert_eq!(run.frame0()["function"], Value::Null);
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
        let run = Analysis::of(dir.path(), &elf_dump(offset))
            .symbols(&root)
            .run();
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
    let run = Analysis::of(dir.path(), &elf_dump(ELF_WAIT_FOR_STREAMS + 2))
        .symbols(&folder)
        .run();
    assert_eq!(run.frame0()["function"], "_wait_for_streams");
    assert_eq!(run.frame0()["symbol_source"], "exports");

    copy(
        &native("libfakeexit.so.debug"),
        &folder.join("libfakeexit.so.debug"),
    );
    let run = Analysis::of(dir.path(), &elf_dump(ELF_RUN_EXIT_HANDLERS + 3))
        .symbols(&folder)
        .run();
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
    let run = Analysis::of(dir.path(), &dump).symbols(&folder).run();
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
    let text = Analysis::of(dir.path(), &dump).symbols(&folder).text();
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
    let run = Analysis::of(dir.path(), &dump).symbols(&root).run();
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
            let run = Analysis::of(dir.path(), &dump).symbols(&folder).run();
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
    put(&pdb_dir(&exact).join("fakehip.pdb"), &pdb);
    let run = Analysis::of(dir.path(), &wide_dump("C:\\Windows\\System32\\FAKEHIP.DLL"))
        .symbols(&exact)
        .run();
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

/// A Windows dump whose modules and PDBs carry names that reach outside a
/// folder: a parent path, a drive-relative name, a network path, an
/// alternate data stream, a device, a 4 KB name.
fn hostile_names_dump() -> Vec<u8> {
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
    synth::windows_threads(&modules, &[], &ips, Vec::new())
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

    let dump = hostile_names_dump();
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
    let run = Analysis::of(dir.path(), &dump).run();
    assert_eq!(
        run.frame0()["function"],
        "_wait_for_streams",
        "{:#}",
        run.report()
    );

    let shim = shims::build(dir.path(), "filelog", shims::FILE_LOG)
        .expect("a C compiler (cc) is needed to build the file-access recorder");
    let log = dir.path().join("files.log");
    let run = Analysis::of(dir.path(), &dump)
        .arg("--no-system-symbols")
        .env("LD_PRELOAD", &shim)
        .env("FILELOG", &log)
        .run();
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

/// A .sym file whose MODULE record is another build's is refused with a
/// warning naming both ids, from a folder and from a server; the server's
/// file is not kept in the cache.
#[test]
fn a_sym_file_of_another_build_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let sym = pdb_dir(&store).join("fakehip.sym");
    put(
        &sym,
        format!(
            "MODULE windows x86_64 {OTHER_DEBUG_ID} fakehip.pdb\n\
             FUNC 1030 11 0 function_of_another_build\n"
        )
        .as_bytes(),
    );
    let run = Analysis::hip(dir.path()).symbols(&store).run();
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
    let run = Analysis::hip(dir.path()).server(&server, &cache).run();
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
