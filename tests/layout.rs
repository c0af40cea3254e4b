//! The shape of the source tree (issue 29): each file does one job, which
//! in practice means at most 600 lines before its tests, and no two source
//! files import each other, directly or through others. Checked on the
//! text of `src/`, so a change that breaks either fails here, not in a
//! later review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex_lite::Regex;

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

/// `src/a/b.rs` and `src/a/b/mod.rs` are module `a::b`; `src/lib.rs` the root.
fn module_of(root: &Path, path: &Path) -> Vec<String> {
    let rel = path.strip_prefix(root).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
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

#[test]
fn no_two_source_files_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files: Vec<PathBuf> = sources()
        .into_iter()
        .filter(|p| !p.ends_with("main.rs"))
        .collect();
    let modules: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|p| {
            (
                module_of(&root, p),
                p.strip_prefix(&root).unwrap().display().to_string(),
            )
        })
        .collect();
    // The file of the longest module prefix of `path`, seen from `current`.
    let resolve = |current: &[String], path: &[&str]| -> Option<String> {
        let (mut base, rest): (Vec<String>, &[&str]) = match path.first() {
            Some(&"crate") => (Vec::new(), &path[1..]),
            Some(&"self") => (current.to_vec(), &path[1..]),
            Some(&"super") => {
                let supers = path.iter().take_while(|s| **s == "super").count();
                let keep = current.len().checked_sub(supers)?;
                (current[..keep].to_vec(), &path[supers..])
            }
            _ => return None,
        };
        let mut found = modules.get(&base).cloned();
        for segment in rest {
            base.push(segment.to_string());
            if let Some(file) = modules.get(&base) {
                found = Some(file.clone());
            }
        }
        found
    };
    let path_re = Regex::new(r"\b((?:crate|super|self)(?:::\w+)+)").unwrap();
    let group_re = Regex::new(r"\buse ((?:crate|super|self)(?:::\w+)*)::\{([^}]*)\}").unwrap();
    let child_re = Regex::new(r"(?m)^\s*(?:pub(?:\([a-z]+\))? )?mod (\w+);").unwrap();
    let restricted = Regex::new(r"pub\(in [^)]*\)").unwrap();
    let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in &files {
        let file = path.strip_prefix(&root).unwrap().display().to_string();
        let current = module_of(&root, path);
        let text = restricted.replace_all(&code(path), "").into_owned();
        let mut edges = BTreeSet::new();
        for m in path_re.captures_iter(&text) {
            let segments: Vec<&str> = m[1].split("::").collect();
            edges.extend(resolve(&current, &segments));
        }
        for m in group_re.captures_iter(&text) {
            let prefix: Vec<&str> = m[1].split("::").collect();
            for item in m[2].split(',') {
                let mut segments = prefix.clone();
                segments.extend(item.trim().split("::").filter(|s| !s.is_empty()));
                edges.extend(resolve(&current, &segments));
            }
        }
        for m in child_re.captures_iter(&text) {
            let child = &m[1];
            let mut module = current.clone();
            module.push(child.to_string());
            let used = Regex::new(&format!(r"\b{child}::|\buse {child} as ")).unwrap();
            if let (Some(file), true) = (modules.get(&module), used.is_match(&text)) {
                edges.insert(file.clone());
            }
        }
        edges.remove(&file);
        imports.insert(file, edges);
    }
    // Every file that `from` reaches through imports.
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(file) = todo.pop() {
            for next in imports.get(&file).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let circles: Vec<String> = imports
        .iter()
        .flat_map(|(file, edges)| edges.iter().map(move |to| (file, to)))
        .filter(|(file, to)| reach(to).contains(*file))
        .map(|(file, to)| format!("{file} -> {to} -> ... -> {file}"))
        .collect();
    assert!(circles.is_empty(), "import circles: {circles:#?}");
    // The check sees imports at all: the analyzer's entry imports the model.
    assert!(
        imports["dump/mod.rs"].contains("model/mod.rs"),
        "{imports:#?}"
    );
}
