//! What each fuzz target does with one input, shared by the cargo-fuzz
//! targets (fuzz/fuzz_targets/) and the regression test that replays the
//! inputs kept in fuzz/regressions/ (tests/fuzz_regressions.rs), so a crash
//! found once is checked on every `cargo test`.
//!
//! Each body panics when the code under test fails the way bad input must
//! never make it fail: a panic (dump analysis catches its own panics and
//! reports them as `internal` errors, which count as failures here), or an
//! answer that breaks the one-line-error promise.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use dumptriage::dump::Analyzer;
use dumptriage::model::Status;
use dumptriage::signatures::Database;
use dumptriage::symbols::native::{self, NativeSymbols};
use dumptriage::symbols::SymbolConfig;

/// The targets, by name: the folder of fuzz/regressions/ and the cargo-fuzz
/// target of the same name.
pub const TARGETS: [&str; 10] = [
    "analyze_dump",
    "read_artifact",
    "read_core",
    "read_python",
    "read_text",
    "load_rule",
    "read_sym",
    "read_elf",
    "read_pe",
    "read_pdb",
];

/// Runs the body of `target` on `data`.
pub fn run(target: &str, data: &[u8]) {
    match target {
        "analyze_dump" => analyze_dump(data),
        "read_core" => read_core(data),
        "read_artifact" => read_artifact(data),
        "read_python" => dumptriage::python::fuzz_walk(data),
        "read_text" => read_text(data),
        "load_rule" => load_rule(data),
        "read_sym" => read_sym(data),
        "read_elf" => read_elf(data),
        "read_pe" => read_pe(data),
        "read_pdb" => read_pdb(data),
        other => panic!("no fuzz target {other}"),
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The repository root, from this crate or from the fuzz crate.
fn repo() -> PathBuf {
    let here = root();
    if here.join("tests/data").is_dir() {
        here.to_path_buf()
    } else {
        here.join("..")
    }
}

/// Other projects' dumps, kept in `../shared` beside the checkout (the
/// public corpus); a missing folder is a failure, named.
fn public_corpus() -> PathBuf {
    let dir = repo().join("../shared/corpus/public");
    assert!(
        dir.is_dir(),
        "{} is missing: the public dumps are read from ../shared beside the checkout",
        dir.display()
    );
    dir
}

fn no_symbols() -> SymbolConfig {
    SymbolConfig {
        system: false,
        nt_symbol_path: None,
        ..SymbolConfig::default()
    }
}

fn check_one_line(path: &Path, report: &dumptriage::model::Report) {
    if report.status == Status::Error {
        let error = report.error.as_deref().unwrap_or("");
        assert!(
            report.error_kind.as_deref() != Some("internal"),
            "{}: internal error: {error}",
            path.display()
        );
        assert!(!error.contains('\n'), "a multi-line error: {error:?}");
    }
}

/// A minidump: parsed, walked, classified and matched.
pub fn analyze_dump(data: &[u8]) {
    analyze_file("input.dmp", data);
}

/// A Linux core file (or a compressed one): read as a minidump, walked,
/// classified and matched, like a dump (the content decides, not the name).
pub fn read_core(data: &[u8]) {
    analyze_file("core", data);
}

/// What the OS or `pack` kept: `data` as an apport `.crash`, a
/// `Report.wer` and a pack, each found and analysed as `analyze` does; and
/// as a core read from a pipe by `convert --from-stdin`.
pub fn read_artifact(data: &[u8]) {
    static DATABASE: OnceLock<Database> = OnceLock::new();
    let database = DATABASE.get_or_init(|| Database::builtin().unwrap());
    for name in ["report.crash", "Report.wer", "pack.tar.zst"] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, data).unwrap();
        let collected = dumptriage::input::collect(&[dir.path().to_path_buf(), path.clone()]);
        let batch = dumptriage::BatchOptions {
            jobs: 1,
            ..dumptriage::BatchOptions::default()
        };
        for report in dumptriage::analyze_inputs(&collected.inputs, no_symbols(), database, &batch)
        {
            check_one_line(&path, &report);
        }
    }
    dumptriage::artifact::convert::fuzz_stream(data);
}

/// `data` written to a file called `name`, analysed and diagnosed.
fn analyze_file(name: &str, data: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, data).unwrap();
    // Loaded once: parsing the rules for each input would be most of the
    // time spent.
    static DATABASE: OnceLock<Database> = OnceLock::new();
    let database = DATABASE.get_or_init(|| Database::builtin().unwrap());
    let analyzer = Analyzer::new(no_symbols().sources());
    let report = dumptriage::diagnose(analyzer.analyze(&path), database);
    check_one_line(&path, &report);
}

/// A log or pasted trace: read for traces, each diagnosed.
pub fn read_text(data: &[u8]) {
    static DATABASE: OnceLock<Database> = OnceLock::new();
    let database = DATABASE.get_or_init(|| Database::builtin().unwrap());
    let text = String::from_utf8_lossy(data);
    match dumptriage::text::read_traces("input.log", &text) {
        Ok(reports) => {
            assert!(!reports.is_empty());
            for report in reports {
                let report = dumptriage::diagnose(report, database);
                assert!(report.path.starts_with("input.log"), "{}", report.path);
            }
        }
        Err(error) => assert!(!error.contains('\n'), "a multi-line error: {error:?}"),
    }
}

/// A rule file.
pub fn load_rule(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = dumptriage::signatures::load::parse("fuzz.toml", "fuzz", text);
}

/// A Breakpad .sym file, used to symbolize and unwind a real dump (the
/// .sym of `null_read_av`, whose module the fuzzed file stands in for).
pub fn read_sym(data: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir
        .path()
        .join("null_read_av/7B7D1968FF0D47AE4366E9C3A7E1B6750");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("null_read_av.sym"), data).unwrap();
    let dump = public_corpus().join("breakpad/null_read_av.dmp");
    let config = SymbolConfig {
        stores: vec![dir.path().to_path_buf()],
        ..no_symbols()
    };
    let report = Analyzer::new(config.sources()).analyze(&dump);
    check_one_line(&dump, &report);
}

/// An ELF file: identity, symbol tables, DWARF, and a few look-ups.
pub fn read_elf(data: &[u8]) {
    let Ok(info) = native::elf::read_file(data) else {
        return;
    };
    if let Ok(dwarf) = native::elf::Dwarf::load(data.to_vec(), info, "fuzz") {
        for rva in [0, 0x1000, 0x1139, 0x2000, u64::MAX] {
            let _ = dwarf.lookup(rva);
        }
    }
}

/// A PE file: identity, exports and unwind extents.
pub fn read_pe(data: &[u8]) {
    let _ = native::pe::read_file(data);
}

/// A PDB file: opened (with its own identity, so the whole file is read),
/// then a few look-ups.
pub fn read_pdb(data: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("input.pdb");
    std::fs::write(&path, data).unwrap();
    let pdb = match native::pdb::Pdb::open(&path, Default::default()) {
        Err(native::pdb::PdbError::Mismatch(found)) => native::pdb::Pdb::open(&path, found),
        other => other,
    };
    if let Ok(pdb) = pdb {
        for rva in [0, 0x1000, 0x1010, 0x2000, u64::from(u32::MAX)] {
            let _ = pdb.lookup(rva);
        }
    }
}

thread_local! {
    /// The last panic seen by [`keep_caught_panics`]' hook.
    static LAST_PANIC: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// For the fuzz targets: libFuzzer's panic hook aborts at any panic, even
/// one the code under test catches and turns into an error on purpose (the
/// PDB reader's, for instance). This hook only remembers the panic;
/// [`fuzz_one`] reports a panic that escapes, and the fuzzer then aborts.
pub fn keep_caught_panics() {
    std::panic::set_hook(Box::new(|info| {
        LAST_PANIC.with(|last| *last.borrow_mut() = info.to_string());
    }));
}

/// Runs one fuzz input; a panic that escapes is printed and goes on to
/// libFuzzer, which records the input as a crash.
pub fn fuzz_one(target: &str, data: &[u8]) {
    let outcome = std::panic::catch_unwind(|| run(target, data));
    if let Err(payload) = outcome {
        LAST_PANIC.with(|last| eprintln!("{target}: {}", last.borrow()));
        std::panic::resume_unwind(payload);
    }
}
