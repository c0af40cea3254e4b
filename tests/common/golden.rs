//! Golden files: the output of the binary, compared byte for byte with
//! `tests/golden/NAME` (rewritten with `UPDATE_GOLDEN=1`).
//!
//! Why plain golden files and not insta snapshots (as rust-minidump uses):
//! the files are exactly what the binary prints (text, JSON, Markdown,
//! JUnit XML), so a reviewer opens or diffs them as they are and other
//! tools can read them; and the one redaction they need (this machine's
//! paths, by `placeholder_paths`) must also turn the separators of the rest
//! of each path into `/` so that runs on Windows and Linux compare equal,
//! which insta's regular-expression filters cannot express: the same
//! function would run before insta anyway. What insta adds beyond that is
//! its review tool; `UPDATE_GOLDEN=1` and `git diff` do that job here.

use std::path::Path;

/// Compares `actual` with the golden file `name`, or writes it when
/// `UPDATE_GOLDEN` is set. A difference names its first differing line.
pub fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_GOLDEN=1)", path.display()));
    if expected != actual {
        let diff_at = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from its golden file at line {}:\n  golden: {:?}\n  actual: {:?}\n\
             (rerun with UPDATE_GOLDEN=1 if the change is intended)",
            diff_at + 1,
            expected.lines().nth(diff_at),
            actual.lines().nth(diff_at)
        );
    }
}
