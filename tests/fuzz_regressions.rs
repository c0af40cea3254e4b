//! Replays the fuzz inputs kept in fuzz/regressions/TARGET/ (crashes the
//! fuzzer found, and the small seeds each target starts from) through the
//! same bodies the cargo-fuzz targets run (fuzz/bodies.rs). A crash found
//! by `scripts/fuzz.sh` is copied there, fixed, and guarded from then on.

#[path = "../fuzz/bodies.rs"]
mod bodies;

use std::path::Path;

#[test]
fn every_kept_fuzz_input_is_handled() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut replayed = 0;
    for target in bodies::TARGETS {
        let dir = root.join(target);
        let mut inputs: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.is_file())
            .collect();
        inputs.sort();
        assert!(!inputs.is_empty(), "{}: no input kept", dir.display());
        for input in inputs {
            let data = std::fs::read(&input).unwrap();
            let outcome = std::panic::catch_unwind(|| bodies::run(target, &data));
            assert!(outcome.is_ok(), "{target}: {} fails", input.display());
            replayed += 1;
        }
    }
    assert!(replayed >= bodies::TARGETS.len());
}

/// The test profile (Cargo.toml) builds the library, the binary and these
/// tests with overflow checks, so an overflow on hostile input panics in
/// every test instead of wrapping silently.
#[test]
fn the_test_profile_checks_overflows() {
    let max = std::hint::black_box(u32::MAX);
    let sum = std::panic::catch_unwind(|| max + std::hint::black_box(1));
    assert!(sum.is_err(), "built without overflow checks");
}
