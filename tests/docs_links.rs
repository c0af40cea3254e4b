//! The documentation holds together (issue 38): every relative link of the
//! README, CONTRIBUTING.md and docs/ names a file or folder of the
//! repository, every `#anchor` a heading of the page it points to (as
//! GitHub spells heading anchors), and the README stays a front page of at
//! most 250 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The README's budget: what it is, a report, the two commands, install,
/// one example per use, links. The manual is in docs/.
const README_MAX_LINES: usize = 250;

/// The Markdown files whose links are checked: the README, CONTRIBUTING.md
/// and every page below docs/ (the generated rule pages included).
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md"), root().join("CONTRIBUTING.md")];
    let mut folders = vec![root().join("docs")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    pages
}

/// The lines of `text` outside fenced code blocks, with their numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<&str> = None;
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(*m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(open), Some(m)) if open == m => fence = None,
            (None, None) => lines.push((n + 1, line)),
            _ => {}
        }
    }
    lines
}

/// `line` without its inline code spans (a link inside backticks is text).
fn without_code(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// The targets of the links and images of one line: what follows `](`.
fn link_targets(line: &str) -> Vec<String> {
    let text = without_code(line);
    text.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &text[at + 2..];
            let end = rest.find([')', ' '])?;
            Some(rest[..end].to_string())
        })
        .collect()
}

/// The anchor GitHub gives a heading: lower case, punctuation other than
/// `-` and `_` dropped, spaces made hyphens; a link's text stands for the
/// link.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // [text](target) -> text
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match (after.find("]("), after.find(')')) {
            (Some(close), Some(end)) if close < end => {
                text.push_str(&after[..close]);
                rest = &after[end + 1..];
            }
            _ => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// Every heading anchor of a page, numbered as GitHub numbers repeats
/// (`name`, `name-1`, ...).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut anchors = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(line[hashes..].trim().trim_end_matches('#'));
        let count = seen.entry(base.clone()).or_insert(0);
        anchors.insert(if *count == 0 {
            base.clone()
        } else {
            format!("{base}-{count}")
        });
        *count += 1;
    }
    anchors
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        for (n, line) in prose_lines(&text) {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, anchor) = match target.split_once('#') {
                    Some((file, anchor)) => (file, Some(anchor)),
                    None => (target.as_str(), None),
                };
                let dest = if file.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap().join(file)
                };
                if !dest.exists() {
                    problems.push(format!("{name}:{n}: {target}: no such file"));
                    continue;
                }
                let Some(anchor) = anchor else { continue };
                if dest.extension().is_none_or(|e| e != "md") {
                    problems.push(format!("{name}:{n}: {target}: an anchor into a non-page"));
                    continue;
                }
                let dest_text = std::fs::read_to_string(&dest).unwrap();
                if !anchors(&dest_text).contains(anchor) {
                    problems.push(format!("{name}:{n}: {target}: no heading #{anchor} there"));
                }
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} links found: is the parser broken?"
    );
    assert!(
        problems.is_empty(),
        "{} broken link(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_readme_is_a_front_page() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines; the front page keeps to {README_MAX_LINES}: move the \
         detail to docs/"
    );
}

/// The anchors are GitHub's: checked on headings of this repository's
/// own kinds, so that a link the test accepts works on the rendered page.
#[test]
fn anchors_are_spelled_as_github_spells_them() {
    let page = "# Capture: `attach` and `run`\n\
                ## `dumptriage attach PID|NAME`\n\
                ## `dumptriage run -- COMMAND [ARGS...]`\n\
                ### Exit status and `--fail-on`\n\
                ## Python: the thread `threading` waits for\n\
                ## A 4.8 GB core\n\
                ```yaml\n# GitHub Actions, Linux\n```\n\
                ## Examples\n## Examples\n";
    let found = anchors(page);
    for expected in [
        "capture-attach-and-run",
        "dumptriage-attach-pidname",
        "dumptriage-run----command-args",
        "exit-status-and---fail-on",
        "python-the-thread-threading-waits-for",
        "a-48-gb-core",
        "examples",
        "examples-1",
    ] {
        assert!(found.contains(expected), "{expected} not in {found:?}");
    }
    assert!(
        !found.contains("github-actions-linux"),
        "a comment in a code block is no heading"
    );
    assert_eq!(
        link_targets("see [a](docs/a.md#x), `[b](no.md)` and ![c](c.png)"),
        ["docs/a.md#x", "c.png"]
    );
}
