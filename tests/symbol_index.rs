//! The persistent .sym index: the same answers with and without it, and
//! an index that is damaged, truncated or older than its file is never
//! trusted, and made again.

use crate::common;

use std::path::{Path, PathBuf};

use common::bin;
use serde_json::Value;

/// `analyze --format json ARGS` with every .sym file indexed (no size
/// threshold) in `cache`, or with no index when `cache` is `None`.
fn analyze(cache: Option<&Path>, args: &[&Path]) -> Value {
    let mut cmd = bin();
    cmd.args(["analyze", "--format", "json", "--no-system-symbols"]);
    match cache {
        Some(dir) => cmd
            .env("DUMPTRIAGE_SYMBOL_INDEX_MIN", "0")
            .arg("--symbols-cache")
            .arg(dir),
        None => cmd.arg("--no-symbol-index"),
    };
    let out = cmd.args(args).output().expect("run dumptriage");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)))
}

/// The report without the lists of places tried, which name the index.
fn answers(doc: &Value) -> Value {
    match doc {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "symbols_tried")
                .map(|(k, v)| (k.clone(), answers(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(answers).collect()),
        other => other.clone(),
    }
}

fn count(doc: &Value, text: &str) -> usize {
    doc.to_string().matches(text).count()
}

const READ: &str = "read through its index";
const WRITTEN: &str = "indexed for later runs";

/// The files below `dir` whose names end in `.EXT`.
fn files_with(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == ext) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn indexes(dir: &Path) -> Vec<PathBuf> {
    files_with(dir, "dtidx")
}

#[test]
fn same_answers_with_and_without_the_index_on_every_sample_and_the_public_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = common::shared_dir().join("corpus/public");
    let samples = root.join("sample-dumps");
    let (breakpad, rust) = (
        corpus.join("breakpad/symbols"),
        corpus.join("rust-minidump/symbols"),
    );
    let cases: Vec<Vec<PathBuf>> = vec![
        vec![samples],
        vec![
            PathBuf::from("--symbols"),
            breakpad,
            PathBuf::from("--symbols"),
            rust,
            corpus,
        ],
    ];
    for args in cases {
        let args: Vec<&Path> = args.iter().map(PathBuf::as_path).collect();
        let cache = tempfile::tempdir().unwrap();
        let whole = analyze(None, &args);
        let building = analyze(Some(cache.path()), &args);
        let through = analyze(Some(cache.path()), &args);
        assert_eq!(
            answers(&whole),
            answers(&building),
            "{args:?}: the run that indexes"
        );
        assert_eq!(
            answers(&whole),
            answers(&through),
            "{args:?}: the run that reads"
        );
        let written = count(&building, WRITTEN);
        assert!(written >= 5, "{args:?}: {written} files indexed");
        // (The building run may read an index it wrote already: one .sym
        // file serves modules that differ in their recorded names.)
        let read = count(&through, READ);
        assert!(read >= written, "{args:?}: later run read {read}");
        assert_eq!(count(&building, "no symbol index written"), 0, "{building}");
        // Each index file once, however many dumps' modules it served.
        let files = indexes(cache.path()).len();
        assert!(
            (5..=written).contains(&files),
            "{args:?}: {files} index files"
        );
    }
}

/// A sample dump and its symbols, copied so their files can be changed.
fn copied_sample(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps");
    let dump = dir.join("dxc-after-unload.dmp");
    std::fs::copy(root.join("dxc-after-unload.dmp"), &dump).unwrap();
    copy_tree(&root.join("symbols"), &dir.join("symbols"));
    dump
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        if source.is_dir() {
            copy_tree(&source, &target);
        } else {
            std::fs::copy(&source, &target).unwrap();
        }
    }
}

/// Runs `dump` three times after `damage`: each must give the answers of
/// the whole files, and by the third the index is read again.
fn damaged_then_rebuilt(what: &str, damage: impl Fn(&Path, &Path)) {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let dump = copied_sample(dir.path());
    analyze(Some(&cache), &[&dump]);
    assert!(count(&analyze(Some(&cache), &[&dump]), READ) > 0);
    damage(&cache, &dir.path().join("symbols"));
    let whole = answers(&analyze(None, &[&dump]));
    for run in 1..=3 {
        let doc = analyze(Some(&cache), &[&dump]);
        assert_eq!(whole, answers(&doc), "{what}: run {run} after the damage");
        if run == 3 {
            assert!(count(&doc, READ) > 0, "{what}: the index is read again");
        }
    }
}

fn edit(path: &Path, change: impl Fn(&mut Vec<u8>)) {
    let mut bytes = std::fs::read(path).unwrap();
    change(&mut bytes);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_damaged_index_is_detected_and_made_again() {
    // A byte changed in every page of every index: header, tables, names
    // and checksums alike.
    damaged_then_rebuilt("flipped bytes", |cache, _| {
        for index in indexes(cache) {
            edit(&index, |bytes| {
                for at in (100..bytes.len()).step_by(4096) {
                    bytes[at] ^= 0x5a;
                }
            });
        }
    });
    // Only the tables' pages (the header and checksums intact): found by
    // the page checksums when read.
    damaged_then_rebuilt("flipped table bytes", |cache, _| {
        for index in indexes(cache) {
            edit(&index, |bytes| {
                let end = bytes.len().saturating_sub(bytes.len() / 8);
                for at in (520..end).step_by(512) {
                    bytes[at] ^= 0x01;
                }
            });
        }
    });
    damaged_then_rebuilt("truncated", |cache, _| {
        for index in indexes(cache) {
            edit(&index, |bytes| bytes.truncate(bytes.len() / 2));
        }
    });
    damaged_then_rebuilt("emptied", |cache, _| {
        for index in indexes(cache) {
            std::fs::write(index, b"").unwrap();
        }
    });
}

/// An index older than its .sym file: a new time, or new text of the same
/// size with the old time put back (only the page checksums can tell).
#[test]
fn an_index_older_than_its_symbol_file_is_not_used() {
    damaged_then_rebuilt("newer file", |_, symbols| {
        for sym in sym_files(symbols) {
            let file = std::fs::File::options().append(true).open(&sym).unwrap();
            file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
                .unwrap();
        }
    });
    damaged_then_rebuilt("same size and time, other names", |_, symbols| {
        for sym in sym_files(symbols) {
            let modified = std::fs::metadata(&sym).unwrap().modified().unwrap();
            // Every function renamed in place: `FUNC ... name` -> `...Xame`.
            edit(&sym, |bytes| {
                let text = String::from_utf8(bytes.clone()).unwrap();
                let mut out = String::new();
                for line in text.split_inclusive('\n') {
                    match line.strip_prefix("FUNC ") {
                        Some(rest) if rest.len() > 12 => {
                            let cut = line.len() - 3;
                            out.push_str(&line[..cut]);
                            out.push('X');
                            out.push_str(&line[cut + 1..]);
                        }
                        _ => out.push_str(line),
                    }
                }
                *bytes = out.into_bytes();
            });
            let file = std::fs::File::options().append(true).open(&sym).unwrap();
            file.set_modified(modified).unwrap();
        }
    });
}

fn sym_files(dir: &Path) -> Vec<PathBuf> {
    files_with(dir, "sym")
}

// --- PDB and DWARF files ------------------------------------------------------

const MARKED: &str = "to be indexed if read again";
const BUILDING: &str = "being indexed for later runs";

fn native_indexes(dir: &Path) -> Vec<PathBuf> {
    files_with(dir, "dtnidx")
}

/// The files that the strings of `doc` containing `text` are about.
fn files_said(doc: &Value, text: &str) -> std::collections::BTreeSet<String> {
    let mut found = std::collections::BTreeSet::new();
    let mut todo = vec![doc];
    while let Some(value) = todo.pop() {
        match value {
            Value::String(s) => {
                if let Some(at) = s.find(&format!(": {text}")) {
                    found.insert(s[..at].to_string());
                }
            }
            Value::Array(items) => todo.extend(items),
            Value::Object(map) => todo.extend(map.values()),
            _ => {}
        }
    }
    found
}

/// A crash in a program built with gcc -O2 -g (functions inlined, DWARF
/// in the binary), captured by `dumptriage run`: the dump and the folder
/// holding the binary.
#[cfg(target_os = "linux")]
fn gcc_o2_crash(dir: &Path) -> (PathBuf, PathBuf) {
    let build = dir.join("build");
    std::fs::create_dir_all(&build).unwrap();
    let program = build.join("cfi_crash");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/cfi_crash.c");
    common::tool(
        "gcc",
        &[
            "-O2".as_ref(),
            "-g".as_ref(),
            "-Wl,--build-id".as_ref(),
            "-o".as_ref(),
            program.as_os_str(),
            source.as_os_str(),
        ],
    );
    let dump = common::run_to_dump(&program, &dir.join("dumps"), "cfi_crash: crashing");
    (dump, build)
}

/// Runs the dumps of `args` with no index, then four times with one:
/// the first marks each big file read, the second indexes them (on
/// another thread, while it answers from the files), the third and fourth
/// read through the indexes. All give the same answers.
fn native_same_answers(what: &str, args: &[&Path], files: usize) {
    let cache = tempfile::tempdir().unwrap();
    let whole = answers(&analyze(None, args));
    let runs: Vec<Value> = (0..4).map(|_| analyze(Some(cache.path()), args)).collect();
    for (n, run) in runs.iter().enumerate() {
        assert_eq!(whole, answers(run), "{what}: run {} with the index", n + 1);
    }
    // (A file that serves modules recorded differently in two dumps is
    // read twice by one run: marked, then indexed by the same run.)
    let marked = files_said(&runs[0], MARKED);
    assert!(marked.len() >= files, "{what}: {marked:?} marked");
    let mut built = files_said(&runs[0], BUILDING);
    built.extend(files_said(&runs[1], BUILDING));
    assert_eq!(built, marked, "{what}: marked, then indexed");
    let marked = marked.len();
    for run in &runs[..2] {
        assert_eq!(count(run, "no symbol index written"), 0, "{what}: {run}");
    }
    let indexes = native_indexes(cache.path());
    assert_eq!(indexes.len(), marked, "{what}: {indexes:?}");
    for run in &runs[2..] {
        let read = run.to_string().matches(".dtnidx").count();
        assert!(read >= marked, "{what}: later run read {read} of {marked}");
        assert_eq!(count(run, BUILDING) + count(run, MARKED), 0, "{what}");
    }
}

#[test]
fn pdb_files_answer_the_same_through_their_index() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps");
    let raw: Vec<PathBuf> = std::fs::read_dir(samples.join("raw"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "raw"))
        .collect();
    assert!(raw.len() >= 20, "{} raw dumps", raw.len());
    let store = samples.join("store");
    let mut args: Vec<&Path> = vec![Path::new("--symbols"), &store];
    args.extend(raw.iter().map(PathBuf::as_path));
    native_same_answers("raw Wine dumps with PDBs", &args, 15);
}

#[cfg(target_os = "linux")]
#[test]
fn dwarf_files_answer_the_same_through_their_index() {
    let dir = tempfile::tempdir().unwrap();
    let (dump, build) = gcc_o2_crash(dir.path());
    native_same_answers(
        "gcc -O2 -g binary",
        &[Path::new("--symbols"), &build, &dump],
        1,
    );
    // The binary's frames are named from DWARF, with lines.
    let doc = analyze(None, &[Path::new("--symbols"), &build, &dump]);
    let text = doc.to_string();
    assert!(text.contains("store_result"), "{text}");
    assert!(text.contains("cfi_crash.c"), "{text}");
}

/// Runs the PDB store case until its indexes are read, damages them with
/// `damage`, then runs it twice: both answer as the files do, and the
/// second reads a new index.
fn native_damaged_then_rebuilt(what: &str, damage: impl Fn(&Path, &Path)) {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps");
    let dump = samples.join("raw/dxc-after-unload.wine.mdmp.raw");
    // The store copied, so that its files can be changed.
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    copy_tree(&samples.join("store"), &store);
    let args: Vec<&Path> = vec![Path::new("--symbols"), &store, &dump];
    let cache = tempfile::tempdir().unwrap();
    for _ in 0..3 {
        analyze(Some(cache.path()), &args);
    }
    let indexes = native_indexes(cache.path());
    assert!(indexes.len() >= 2, "{what}: {indexes:?}");
    damage(cache.path(), &store);
    let whole = answers(&analyze(None, &args));
    let again = analyze(Some(cache.path()), &args);
    assert_eq!(whole, answers(&again), "{what}: the run after the damage");
    assert!(count(&again, BUILDING) >= indexes.len(), "{what}: {again}");
    let later = analyze(Some(cache.path()), &args);
    assert_eq!(whole, answers(&later), "{what}: the run after that");
    let read = later.to_string().matches(".dtnidx").count();
    assert!(read >= indexes.len(), "{what}: {later}");
}

#[test]
fn a_damaged_pdb_index_is_detected_and_made_again() {
    native_damaged_then_rebuilt("flipped bytes", |cache, _| {
        for index in native_indexes(cache) {
            edit(&index, |bytes| {
                for at in (100..bytes.len()).step_by(4096) {
                    bytes[at] ^= 0x5a;
                }
            });
        }
    });
    native_damaged_then_rebuilt("truncated", |cache, _| {
        for index in native_indexes(cache) {
            edit(&index, |bytes| bytes.truncate(bytes.len() / 2));
        }
    });
    native_damaged_then_rebuilt("made for another file", |cache, _| {
        // Each index swapped with another's: the header names the file's
        // id, so none is read for the wrong file.
        let indexes = native_indexes(cache);
        let contents: Vec<Vec<u8>> = indexes.iter().map(|p| std::fs::read(p).unwrap()).collect();
        for (n, index) in indexes.iter().enumerate() {
            std::fs::write(index, &contents[(n + 1) % contents.len()]).unwrap();
        }
    });
}

/// A PDB changed since its index was made (a new time) is read itself, and
/// indexed again.
#[test]
fn an_index_older_than_its_pdb_is_not_used() {
    native_damaged_then_rebuilt("newer PDB", |_, store| {
        for pdb in files_with(store, "pdb") {
            let file = std::fs::File::options().append(true).open(&pdb).unwrap();
            file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
                .unwrap();
        }
    });
}
