//! Stores as symstore leaves them (issue 12): CAB-compressed files,
//! `file.ptr` pointers and two-tier layouts, on servers and in folders.

use crate::common::httpd;
use crate::common::symbol_fixtures;

use std::path::Path;

use serde_json::Value;

use symbol_fixtures::*;

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
    let run = Analysis::of(dir.path(), &hip_dump(false, RUN_EXIT_HANDLERS + 4))
        .server(&server, &cache)
        .run();
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
    let run = Analysis::hip(dir.path()).server(&server, &cache).run();
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
    let run = Analysis::hip(dir.path()).server(&server, &cache).run();
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
    let run = Analysis::hip(dir.path()).server(&server, &cache).run();
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
    let dump = hip_dump(true, RUN_EXIT_HANDLERS + 4);
    let run = Analysis::of(dir.path(), &dump)
        .server(&server, &cache)
        .run();
    named_from_the_pdb(&run);
    assert!(server.requests().iter().any(|r| r.ends_with("/file.ptr")));

    // A file of another build at the path is refused.
    copy(&native("fakehip.dll"), &elsewhere);
    let run = Analysis::of(dir.path(), &dump)
        .server(&server, &cache)
        .run();
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
        let run = Analysis::of(dir.path(), &dump)
            .server(&server, &cache)
            .run();
        assert_eq!(run.frame0()["function"], Value::Null);
        assert!(
            run.warnings().iter().any(|w| w.contains("not followed")),
            "{target}: {:?}",
            run.warnings()
        );
    }

    put(&pointer, b"MSG: withheld by the release team");
    let run = Analysis::of(dir.path(), &dump)
        .server(&server, &cache)
        .run();
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

    let run = Analysis::of(dir.path(), &dump).symbols(&store).run();
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
    let run = Analysis::of(dir.path(), &dump)
        .server(&server, &cache)
        .run();
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
        let run = Analysis::of(dir.path(), &dump).symbols(store).run();
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
