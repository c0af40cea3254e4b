//! Symbol servers and the download cache: timeouts, stalls, size caps,
//! no network without a URL, a cache no server can poison, and files
//! shared by the dumps of a run (issue 3).

use crate::common;
use crate::common::httpd;
use crate::common::shims;
use crate::common::symbol_fixtures;
use crate::common::synth;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use common::bin;
use symbol_fixtures::*;

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

    let run = Analysis::hip(dir.path()).server(&server, &cache).run();
    assert_eq!(run.frame0()["function"], "__run_exit_handlers");
    assert_eq!(run.frame0()["symbol_source"], "sym");
    assert_eq!(
        run.module("fakehip.dll")["symbol_file"],
        format!("{}fakehip.pdb/{HIP_DEBUG_ID}/fakehip.sym", server.url)
    );
    let first = server.hits();
    assert!(first >= 1, "{:?}", server.requests());
    assert!(pdb_dir(&cache).join("fakehip.sym").is_file());

    let run = Analysis::hip(dir.path()).server(&server, &cache).run();
    assert_eq!(run.frame0()["function"], "__run_exit_handlers");
    assert_eq!(server.hits(), first, "the second run reads the cache");

    // Native files in the Microsoft layout, found through _NT_SYMBOL_PATH.
    std::fs::remove_file(&sym).unwrap();
    ms_store(&served);
    let nt_cache = dir.path().join("nt-cache");
    let nt = format!("srv*{}*{}", nt_cache.display(), server.url);
    let run = Analysis::of(dir.path(), &hip_dump(false, RUN_EXIT_HANDLERS + 4))
        .env("_NT_SYMBOL_PATH", &nt)
        .run();
    assert_eq!(run.frame0()["function"], "__run_exit_handlers");
    assert_eq!(run.frame0()["symbol_source"], "pdb");
    assert!(pdb_dir(&nt_cache).join("fakehip.pdb").is_file());
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
    let run = Analysis::hip(dir.path())
        .symbols(&server.url)
        .symbols(&folder)
        .timeout(1)
        .cache(&dir.path().join("cache"))
        .run();
    // One question, one timeout: the server is not asked again.
    assert_eq!(server.hits(), 1);
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
    // One warning per failed server, in the report and on stderr, naming
    // the server once and why; never a "not asked" warning.
    let server_warnings: Vec<String> = run
        .warnings()
        .into_iter()
        .filter(|w| w.contains("symbol server"))
        .collect();
    assert_eq!(server_warnings.len(), 1, "{server_warnings:?}");
    let warning = &server_warnings[0];
    assert!(!warning.contains("not asked"), "{warning}");
    let stderr = String::from_utf8_lossy(&run.out.stderr);
    let on_stderr: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("symbol server"))
        .collect();
    assert_eq!(
        on_stderr,
        [format!("dumptriage: warning: {warning}")],
        "{stderr}"
    );
}

/// A server that refuses connections: the reason names the file asked
/// for once (the HTTP client's message repeats the URL otherwise).
#[test]
fn a_refusing_symbol_server_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/");
    let run = Analysis::hip(dir.path())
        .symbols(&url)
        .cache(&dir.path().join("cache"))
        .run();
    assert_eq!(run.out.status.code(), Some(0));
    let warnings: Vec<String> = run
        .warnings()
        .into_iter()
        .filter(|w| w.contains("symbol server"))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let asked = format!("{url}index2.txt");
    assert_eq!(warnings[0].matches(&asked).count(), 1, "{}", warnings[0]);
    assert!(warnings[0].starts_with(&format!("symbol server {url} failed: ")));
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
    let run = Analysis::of(dir.path(), &hip_dump(false, RUN_EXIT_HANDLERS + 4))
        .symbols(&folder)
        .env("LD_PRELOAD", &shim)
        .env("NETLOG", &log)
        .env("_NT_SYMBOL_PATH", &nt)
        .run();
    assert_eq!(run.frame0()["symbol_source"], "exports");
    assert!(
        !log.exists(),
        "network used without a URL: {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );

    let server = httpd::Httpd::start(dir.path().join("empty"), false);
    Analysis::of(dir.path(), &hip_dump(false, RUN_EXIT_HANDLERS + 4))
        .server(&server, &dir.path().join("c2"))
        .env("LD_PRELOAD", &shim)
        .env("NETLOG", &log)
        .env("_NT_SYMBOL_PATH", &nt)
        .run();
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
        &pdb_dir(&served).join("fakehip.pdb"),
    );
    let server = httpd::Httpd::start(served, false);
    let cache = dir.path().join("cache");
    let dump = wide_dump("C:\\app\\FakeHip.dll");
    let run = Analysis::of(dir.path(), &dump)
        .server(&server, &cache)
        .run();
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
    assert!(pdb_dir(&cache).join("fakehip.pdb").is_file());
    // Offline, from the cache alone.
    let run = Analysis::of(dir.path(), &dump).symbols(&cache).run();
    assert_eq!(run.frame0()["function"], "__run_exit_handlers");
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
    put(&pdb_dir(&served).join("fakehip.pdb"), &pdb);
    let server = httpd::Httpd::start(served, false);
    let cache = dir.path().join("cache");

    Analysis::of(dir.path(), &hip_dump(false, RUN_EXIT_HANDLERS + 4))
        .server(&server, &cache)
        .run();
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

    let run = Analysis::hip(dir.path()).server(&server, &cache).run();
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
    let run = Analysis::of(dir.path(), &dump).symbols(&cache).run();
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

/// A server that stops sending in the middle of a file is given up after
/// one read timeout, like one that cannot be reached: it is not asked for
/// the module's other files, and nothing half-written stays in the cache.
#[test]
fn a_server_that_stalls_mid_body_is_given_up() {
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    put(
        &pdb_dir(&served).join("fakehip.sym"),
        padded_sym(4000).as_bytes(),
    );
    ms_store(&served);
    let server = httpd::Httpd::with(served, httpd::Behaviour::StallAfter(100));
    let folder = dir.path().join("build");
    copy(&native("fakehip.pdb"), &folder.join("fakehip.pdb"));
    let cache = dir.path().join("cache");
    let run = Analysis::hip(dir.path())
        .symbols(&server.url)
        .symbols(&folder)
        .timeout(1)
        .cache(&cache)
        .run();
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
    let sym = padded_sym(1200);
    put(&pdb_dir(&served).join("fakehip.sym"), sym.as_bytes());
    let (chunk, pause) = (100, Duration::from_millis(250));
    // The whole file takes longer than the 1 s timeout to arrive, each
    // piece much less.
    assert!(pause * (sym.len() / chunk) as u32 > Duration::from_secs(2));
    let server = httpd::Httpd::with(served, httpd::Behaviour::Trickle { chunk, pause });
    let cache = dir.path().join("cache");
    let run = Analysis::hip(dir.path())
        .symbols(&server.url)
        .timeout(1)
        .cache(&cache)
        .run();
    assert_eq!(
        run.frame0()["function"],
        "__run_exit_handlers",
        "{:?}",
        run.warnings()
    );
    assert_eq!(run.frame0()["symbol_source"], "sym");
    assert!(pdb_dir(&cache).join("fakehip.sym").is_file());
}

/// `--max-download-size`: a larger file is refused with a warning, whether
/// the server announces its length or not, and nothing is kept.
#[test]
fn downloads_are_capped() {
    for behaviour in [httpd::Behaviour::Serve, httpd::Behaviour::NoLength] {
        let dir = tempfile::tempdir().unwrap();
        let served = dir.path().join("served");
        put(
            &pdb_dir(&served).join("fakehip.sym"),
            padded_sym(8000).as_bytes(),
        );
        let server = httpd::Httpd::with(served, behaviour);
        let cache = dir.path().join("cache");
        let run = Analysis::hip(dir.path())
            .server(&server, &cache)
            .arg("--max-download-size")
            .arg("4K")
            .run();
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
        let run = Analysis::hip(dir.path()).server(&server, &cache).run();
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

/// An unusable cache (here --symbols-cache names a file; a read-only home
/// in a container is the common case) does not lose the server's names:
/// downloads go to a private folder of the run, with one warning saying
/// why (issue 30).
#[test]
fn an_unusable_cache_falls_back_to_a_private_folder() {
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    write_hip_sym(&served, "FUNC 1030 11 0 __run_exit_handlers\n");
    let server = httpd::Httpd::start(served, false);
    let not_a_folder = dir.path().join("cache-is-a-file");
    std::fs::write(&not_a_folder, b"x").unwrap();
    let run = Analysis::hip(dir.path())
        .server(&server, &not_a_folder)
        .run();
    assert_eq!(run.frame0()["function"], "__run_exit_handlers");
    let warnings = run.warnings();
    let about_cache: Vec<&String> = warnings.iter().filter(|w| w.contains("cache")).collect();
    assert_eq!(about_cache.len(), 1, "{warnings:#?}");
    assert!(
        about_cache[0].contains("cannot be used") && about_cache[0].contains("cache-is-a-file"),
        "{warnings:#?}"
    );
    assert!(not_a_folder.is_file(), "the file is left as it was");
}
