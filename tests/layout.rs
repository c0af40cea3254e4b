//! The shape of the source tree (issues 29 and 38): each file does one
//! job, which in practice means at most 600 lines before its tests, and no
//! two source files use each other, directly or through others. Checked on
//! the text of `src/`, so a change that breaks either fails here, not in a
//! later review.
//!
//! "Use" is followed the way the compiler resolves names (`imports.rs`):
//! through `use` trees, re-exports and globs to the file that defines the
//! item, and through paths written inline. A circle is reported with every
//! file in it and the line of each use that closes it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use regex_lite::Regex;

mod imports;

use imports::Crate;

const MAX_LINES: usize = 600;

fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    files.sort();
    files
}

/// The code of a file before its test module, without comments.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let tests = Regex::new(r"#\[cfg\(test\)\]\s*mod \w+ \{").unwrap();
    let text = match tests.find(&text) {
        Some(m) => &text[..m.start()],
        None => &text[..],
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_source_file_is_over_600_lines_before_its_tests() {
    let long: Vec<String> = sources()
        .iter()
        .map(|path| (path, code(path).lines().count()))
        .filter(|(_, lines)| *lines > MAX_LINES)
        .map(|(path, lines)| format!("{}: {lines} lines", path.display()))
        .collect();
    assert!(long.is_empty(), "files doing more than one job: {long:#?}");
}

/// The library's files, by path under `src/` (the binary, under `bin/`, is
/// a crate of its own: it cannot be part of a library circle).
fn library() -> BTreeMap<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    sources()
        .into_iter()
        .map(|path| {
            let name = path.strip_prefix(&root).unwrap().display().to_string();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .filter(|(name, _)| !name.starts_with("bin/"))
        .collect()
}

#[test]
fn no_two_source_files_import_each_other() {
    let files = library();
    let krate = Crate::read(&files, "lib.rs");
    assert!(krate.problems.is_empty(), "{:#?}", krate.problems);
    let (graph, unresolved) = krate.graph();
    // Every path into the crate leads somewhere: the reader follows them all.
    assert!(
        unresolved.is_empty(),
        "paths this check cannot follow: {unresolved:#?}"
    );
    let circles = imports::circles(&graph);
    assert!(
        circles.is_empty(),
        "import circles (files that use each other, directly or through others):\n{}",
        imports::describe(&graph, &circles)
    );
    // The check sees imports at all, through re-exports and globs: the
    // analyzer's entry uses `crate::model::Frame`, which model/mod.rs
    // re-exports from model/stack.rs with `pub use stack::*`.
    let uses = |from: &str, to: &str| graph[from].contains_key(to);
    assert!(uses("dump/mod.rs", "model/mod.rs"), "{graph:#?}");
    assert!(uses("dump/build.rs", "model/stack.rs"), "{graph:#?}");
}

/// The circles of a crate written out here, as `file: text` pairs.
fn circles_of(files: &[(&str, &str)]) -> (Vec<Vec<String>>, String, Vec<String>) {
    let files: BTreeMap<String, String> = files
        .iter()
        .map(|(name, text)| (name.to_string(), text.to_string()))
        .collect();
    let krate = Crate::read(&files, "lib.rs");
    assert!(krate.problems.is_empty(), "{:#?}", krate.problems);
    let (graph, unresolved) = krate.graph();
    let circles = imports::circles(&graph);
    let text = imports::describe(&graph, &circles);
    (circles, text, unresolved)
}

fn group(files: &[&str]) -> Vec<String> {
    files.iter().map(|f| f.to_string()).collect()
}

// The shape of the circle broken in #38: a parent reaches its children's
// functions through a module it imports (`find::pe::binary`), and the
// children name the parent's type two levels up.
#[test]
fn finds_a_circle_through_an_imported_module_and_super_super() {
    let (circles, text, unresolved) = circles_of(&[
        ("lib.rs", "pub mod symbols;"),
        ("symbols/mod.rs", "pub mod find;\npub mod sources;"),
        (
            "symbols/find/mod.rs",
            "pub(crate) mod elf;\npub(crate) mod pe;",
        ),
        (
            "symbols/find/pe.rs",
            "use super::super::sources::Sources;\npub fn binary(s: &Sources) {}",
        ),
        (
            "symbols/find/elf.rs",
            "use super::super::sources::Sources;\npub fn binary(s: &Sources) {}",
        ),
        (
            "symbols/sources.rs",
            "use super::find;\npub struct Sources;\n\
             impl Sources { fn f(&self) { find::pe::binary(self); find::elf::binary(self); } }",
        ),
    ]);
    assert!(unresolved.is_empty(), "{unresolved:#?}");
    assert_eq!(
        circles,
        [group(&[
            "symbols/find/elf.rs",
            "symbols/find/pe.rs",
            "symbols/sources.rs"
        ])],
        "{text}"
    );
    assert!(
        text.contains("symbols/sources.rs:3 uses symbols/find/pe.rs (find::pe::binary)"),
        "{text}"
    );
    assert!(
        text.contains(
            "symbols/find/pe.rs:1 uses symbols/sources.rs (super::super::sources::Sources)"
        ),
        "{text}"
    );
}

#[test]
fn follows_re_exports_globs_and_grouped_uses_to_the_defining_file() {
    // b.rs names `crate::a::T`, which a/mod.rs re-exports from a/inner.rs;
    // inner.rs uses b.rs through a grouped, renamed import.
    let (circles, text, _) = circles_of(&[
        ("lib.rs", "mod a;\nmod b;"),
        ("a/mod.rs", "mod inner;\npub use inner::T;"),
        (
            "a/inner.rs",
            "use crate::{b::{self, U as V}};\npub struct T(V);",
        ),
        ("b.rs", "pub struct U;\nfn f() -> crate::a::T { todo!() }"),
    ]);
    assert_eq!(circles, [group(&["a/inner.rs", "b.rs"])], "{text}");

    // The same through `pub use inner::*` and a bare name from `use crate::a::*`.
    let (circles, text, _) = circles_of(&[
        ("lib.rs", "mod a;\nmod b;"),
        ("a/mod.rs", "mod inner;\npub use inner::*;"),
        ("a/inner.rs", "pub struct T;\nfn g() { crate::b::h(); }"),
        ("b.rs", "use crate::a::*;\npub fn h() -> T { T }"),
    ]);
    assert_eq!(circles, [group(&["a/inner.rs", "b.rs"])], "{text}");
}

#[test]
fn follows_paths_written_inline_even_in_macro_arguments() {
    let (circles, text, _) = circles_of(&[
        ("lib.rs", "mod a;\nmod b;\nmod c;"),
        (
            "a.rs",
            "pub fn f() -> String { format!(\"{}\", crate::b::g()) }",
        ),
        ("b.rs", "pub fn g() -> u8 { super::c::K }"),
        (
            "c.rs",
            "pub const K: u8 = 1;\nfn k() { let _ = self::super::a::f(); }",
        ),
    ]);
    assert_eq!(circles, [group(&["a.rs", "b.rs", "c.rs"])], "{text}");
    assert!(
        text.starts_with("circle of 3 files: a.rs, b.rs, c.rs"),
        "{text}"
    );
}

#[test]
fn reports_every_circle_with_its_files() {
    let (circles, text, _) = circles_of(&[
        ("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;"),
        ("a.rs", "use crate::b::B;\npub struct A;"),
        ("b.rs", "use crate::a::A;\npub struct B;"),
        ("c.rs", "use crate::d::D;\npub struct C;"),
        ("d.rs", "use crate::c::C;\npub struct D;"),
    ]);
    assert_eq!(
        circles,
        [group(&["a.rs", "b.rs"]), group(&["c.rs", "d.rs"])]
    );
    for line in [
        "a.rs:1 uses b.rs (crate::b::B)",
        "b.rs:1 uses a.rs (crate::a::A)",
        "c.rs:1 uses d.rs (crate::d::D)",
        "d.rs:1 uses c.rs (crate::c::C)",
    ] {
        assert!(text.contains(line), "{line} not in\n{text}");
    }
}

#[test]
fn a_shared_leaf_module_is_no_circle() {
    // The fix STYLE.md asks for: the type both sides need in a leaf.
    let (circles, text, unresolved) = circles_of(&[
        ("lib.rs", "mod leaf;\nmod parent;"),
        ("leaf.rs", "pub struct Places;"),
        (
            "parent/mod.rs",
            "mod child;\nuse crate::leaf::Places;\nfn f(p: &Places) { child::g(p) }",
        ),
        (
            "parent/child.rs",
            "use super::super::leaf::Places;\npub fn g(_: &Places) {}",
        ),
    ]);
    assert!(circles.is_empty(), "{text}");
    assert!(unresolved.is_empty(), "{unresolved:#?}");
}

#[test]
fn names_in_comments_strings_tests_and_other_crates_are_not_uses() {
    let (circles, text, unresolved) = circles_of(&[
        ("lib.rs", "mod a;\nmod b;"),
        ("a.rs", "use crate::b::B;\npub struct A;"),
        (
            "b.rs",
            "// crate::a::A\n/* crate::a::A /* nested */ crate::a::A */\n\
             pub struct B;\n\
             const S: &str = \"crate::a::A\";\n\
             const R: &str = r#\"crate::a::A \"quoted\"\"#;\n\
             const C: char = '\\'';\n\
             fn f<'a>(x: &'a str) -> std::fmt::Result { let _ = x; Ok(()) }\n\
             #[cfg(test)]\nmod tests { use crate::a::A; }\n\
             #[cfg(test)]\nfn only_in_tests() -> crate::a::A { crate::a::A }",
        ),
    ]);
    assert!(circles.is_empty(), "{text}");
    assert!(unresolved.is_empty(), "{unresolved:#?}");
}

#[test]
fn a_path_into_the_crate_that_leads_nowhere_is_reported() {
    let (_, _, unresolved) = circles_of(&[
        ("lib.rs", "mod a;"),
        ("a.rs", "fn f() { crate::a::missing(); }"),
    ]);
    assert_eq!(
        unresolved,
        ["a.rs:1: crate::a::missing (missing is not in a.rs)"]
    );
}
