//! debuginfod servers (issue 12): ELF debug files and binaries by build id
//! from a server on 127.0.0.1, with the rules of symbol servers (identity
//! check before anything is kept, no network without a URL).
//!
//! The program is tests/programs/cfi_crash.c, built with DWARF, its debug
//! information split off (`objcopy --only-keep-debug`) and the binary
//! stripped of every symbol, then captured with `dumptriage run`: only the
//! server's debug file can name its static functions.
#![cfg(target_os = "linux")]

use crate::common;
use crate::common::httpd;
use crate::common::shims;

use std::path::{Path, PathBuf};

use serde_json::Value;

use common::{bin, data, run_to_dump, tool};

struct Program {
    /// The stripped binary, where the dump says it was.
    binary: PathBuf,
    /// Its debug file, somewhere no search looks.
    debug: PathBuf,
    dump: PathBuf,
    build_id: String,
}

/// Builds, splits, strips and captures cfi_crash in `dir`.
fn capture(dir: &Path) -> Program {
    let build = dir.join("build");
    let kept = dir.join("kept");
    std::fs::create_dir_all(&build).unwrap();
    std::fs::create_dir_all(&kept).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/cfi_crash.c");
    let binary = build.join("cfi_crash");
    let debug = kept.join("cfi_crash.debug");
    tool(
        "gcc",
        &[
            "-g".as_ref(),
            "-O2".as_ref(),
            "-fomit-frame-pointer".as_ref(),
            "-Wl,--build-id".as_ref(),
            "-o".as_ref(),
            binary.as_os_str(),
            source.as_os_str(),
        ],
    );
    tool(
        "objcopy",
        &[
            "--only-keep-debug".as_ref(),
            binary.as_os_str(),
            debug.as_os_str(),
        ],
    );
    tool("strip", &["--strip-all".as_ref(), binary.as_os_str()]);
    let dump = run_to_dump(&binary, &dir.join("dumps"), "cfi_crash: crashing");
    let bytes = std::fs::read(&binary).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let id = object::Object::build_id(&file)
        .unwrap()
        .expect("a build id");
    let build_id = id.iter().map(|b| format!("{b:02x}")).collect();
    Program {
        binary,
        debug,
        dump,
        build_id,
    }
}

/// `analyze --format json ARGS DUMP` with `env`: the dump's report.
fn analyze(dump: &Path, args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut cmd = bin();
    cmd.args(["analyze", "--format", "json"])
        .args(args)
        .arg(dump);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let out = cmd.output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    doc["reports"][0].clone()
}

fn crashing_frames(report: &Value) -> Vec<Value> {
    let id = &report["exception"]["thread_id"];
    report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| &t["id"] == id)
        .unwrap_or_else(|| panic!("no crashing thread: {report:#}"))["frames"]
        .as_array()
        .unwrap()
        .clone()
}

fn module(report: &Value) -> &Value {
    report["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "cfi_crash")
        .unwrap()
}

fn warnings(report: &Value) -> Vec<String> {
    report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

fn put(path: &Path, from: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::copy(from, path).unwrap();
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The stripped binary's dump and a debuginfod server holding its debug
/// file: frames are named from the server's DWARF; the file is kept in the
/// cache and the next run asks nothing.
#[test]
fn debug_files_from_a_debuginfod_server() {
    let dir = tempfile::tempdir().unwrap();
    let program = capture(dir.path());
    let served = dir.path().join("served");
    let debuginfo = served
        .join("buildid")
        .join(&program.build_id)
        .join("debuginfo");
    put(&debuginfo, &program.debug);
    let server = httpd::Httpd::start(served.clone(), false);
    let cache = dir.path().join("cache");
    let url = format!("debuginfod+{}", server.url);
    let args = ["--symbols", url.as_str(), "--symbols-cache", s(&cache)];

    // Without the server, the stripped binary names nothing.
    let report = analyze(&program.dump, &["--symbols-cache", s(&cache)], &[]);
    assert_ne!(crashing_frames(&report)[0]["function"], "store_result");
    assert_eq!(server.hits(), 0);

    let report = analyze(&program.dump, &args, &[]);
    let frames = crashing_frames(&report);
    assert_eq!(frames[0]["function"], "store_result", "{:#}", report);
    assert_eq!(frames[0]["symbol_source"], "dwarf");
    assert!(frames[0]["line"].as_u64().unwrap() > 0);
    let names: Vec<&str> = frames
        .iter()
        .filter_map(|f| f["function"].as_str())
        .collect();
    for caller in ["compute_layer", "run_model", "main"] {
        assert!(names.contains(&caller), "{names:?}");
    }
    let kept = cache
        .join("debuginfod")
        .join(&program.build_id)
        .join("debuginfo");
    assert_eq!(module(&report)["symbol_file"], s(&kept));
    assert_eq!(
        server.requests(),
        vec![format!("/buildid/{}/debuginfo", program.build_id)]
    );
    let hits = server.hits();
    let report = analyze(&program.dump, &args, &[]);
    assert_eq!(crashing_frames(&report)[0]["function"], "store_result");
    assert_eq!(server.hits(), hits, "the second run reads the cache");
}

/// The same server as DEBUGINFOD_URLS (space-separated, as elfutils reads
/// it), with DEBUGINFOD_CACHE_PATH laid out as elfutils does; asked only
/// when the variable is set.
#[test]
fn debuginfod_urls_and_its_cache() {
    let dir = tempfile::tempdir().unwrap();
    let program = capture(dir.path());
    let served = dir.path().join("served");
    let id_dir = served.join("buildid").join(&program.build_id);
    put(&id_dir.join("debuginfo"), &program.debug);
    // The binary itself, for a run where this machine does not have it.
    put(&id_dir.join("executable"), &program.binary);
    let server = httpd::Httpd::start(served.clone(), false);
    let dead = httpd::Httpd::start(dir.path().join("nothing"), false);
    let cache = dir.path().join("debuginfod-cache");
    let urls = format!("{}   {}", dead.url, server.url);
    let env = [
        ("DEBUGINFOD_URLS", urls.as_str()),
        ("DEBUGINFOD_CACHE_PATH", s(&cache)),
    ];
    let own_cache = dir.path().join("cache");
    let args = ["--symbols-cache", s(&own_cache), "--no-system-symbols"];
    let report = analyze(&program.dump, &args, &env);
    let frames = crashing_frames(&report);
    assert_eq!(frames[0]["function"], "store_result", "{:#}", report);
    assert_eq!(frames[0]["symbol_source"], "dwarf");
    // Both servers asked in order; kept in elfutils' layout.
    assert!(dead.hits() >= 1);
    let debuginfo = cache.join(&program.build_id).join("debuginfo");
    let executable = cache.join(&program.build_id).join("executable");
    assert!(debuginfo.is_file());
    // With --no-system-symbols the binary the dump names is not opened:
    // the unwinder's .eh_frame comes from the server's executable.
    assert!(executable.is_file(), "{:?}", server.requests());
    let unwind = module(&report)["unwind_info"].as_str().unwrap_or("");
    assert!(unwind.contains(s(&executable)), "{unwind}");
    for caller in ["compute_layer", "run_model", "main"] {
        let frame = frames
            .iter()
            .find(|f| f["function"] == caller)
            .unwrap_or_else(|| panic!("no {caller}: {frames:#?}"));
        assert_eq!(frame["trust"], "cfi", "{caller}");
    }
    assert!(!own_cache.join("debuginfod").exists());

    // Unset (or empty), nothing is asked.
    let hits = server.hits();
    let report = analyze(&program.dump, &args, &[]);
    assert_ne!(crashing_frames(&report)[0]["function"], "store_result");
    let report = analyze(&program.dump, &args, &[("DEBUGINFOD_URLS", "")]);
    assert_ne!(crashing_frames(&report)[0]["function"], "store_result");
    assert_eq!(server.hits(), hits);
}

/// A server that answers with the debug file of another build is refused
/// with a warning naming both build ids, and nothing is kept.
#[test]
fn a_debug_file_of_another_build_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let program = capture(dir.path());
    let served = dir.path().join("served");
    let id_dir = served.join("buildid").join(&program.build_id);
    put(
        &id_dir.join("debuginfo"),
        &data("native").join("libfakeexit.so.debug"),
    );
    put(
        &id_dir.join("executable"),
        &data("native").join("libfakeexit.so"),
    );
    let server = httpd::Httpd::start(served, false);
    let cache = dir.path().join("cache");
    let report = analyze(
        &program.dump,
        &["--no-system-symbols"],
        &[
            ("DEBUGINFOD_URLS", server.url.as_str()),
            ("DEBUGINFOD_CACHE_PATH", s(&cache)),
        ],
    );
    assert_ne!(crashing_frames(&report)[0]["function"], "store_result");
    let warnings = warnings(&report);
    assert!(
        warnings.iter().any(|w| w.contains("/debuginfo")
            && w.contains("68548ea76ac0bc5d6b3a796c21c8a5cfde74dadd")
            && w.contains("differs")),
        "{warnings:?}"
    );
    assert!(
        !cache.join(&program.build_id).join("debuginfo").exists()
            && !cache.join(&program.build_id).join("executable").exists(),
        "nothing of another build is kept"
    );
}

/// Without DEBUGINFOD_URLS or a debuginfod+ entry, the tool makes no
/// connection for ELF modules; with one, the same recorder sees it (so the
/// test can fail).
#[test]
fn no_network_without_a_debuginfod_url() {
    let dir = tempfile::tempdir().unwrap();
    let program = capture(dir.path());
    let shim = shims::build(dir.path(), "netlog", shims::NET_LOG)
        .expect("a C compiler (cc) is needed to build the connect() recorder");
    let log = dir.path().join("net.log");
    let cache = dir.path().join("cache");
    let env = [("LD_PRELOAD", s(&shim)), ("NETLOG", s(&log))];
    analyze(&program.dump, &["--symbols-cache", s(&cache)], &env);
    assert!(
        !log.exists(),
        "network used without a URL: {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    let server = httpd::Httpd::start(dir.path().join("empty"), false);
    let with_url = [env[0], env[1], ("DEBUGINFOD_URLS", server.url.as_str())];
    analyze(&program.dump, &["--symbols-cache", s(&cache)], &with_url);
    assert!(
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("connect"),
        "the recorder sees connections when a URL is given"
    );
    assert!(server.hits() >= 1);
}
