//! Documentation pages generated from the rule files (docs/signatures/), so
//! they cannot drift from the rules: CI checks them with
//! `dumptriage signatures docs --check docs/signatures`.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;

use super::conditions;
use super::rule::Rule;
use super::schema::Expect;
use super::Database;

/// Every page of the database, as (file name, text): one per rule, the
/// index, the match conditions and the function groups.
pub fn pages(db: &Database) -> Vec<(String, String)> {
    let mut pages: Vec<(String, String)> = db
        .rules()
        .map(|r| (format!("{}.md", r.id), page(r)))
        .collect();
    pages.push(("README.md".to_string(), index(db.rules())));
    pages.push(("conditions.md".to_string(), conditions()));
    pages.push(("function-groups.md".to_string(), function_groups()));
    pages
}

/// The page of the keys of a `[[match]]` table, from the conditions' own
/// doc texts (src/signatures/conditions/), in the order they are checked.
fn conditions() -> String {
    let mut s = String::from(
        "<!-- Generated from src/signatures/conditions/ by `dumptriage signatures docs`; do not edit. -->\n\n\
         # Match conditions\n\nA `[[match]]` table of a rule file ([../signatures.md](../signatures.md)) \
         matches when all of its conditions hold. A rule matches when any of its tables does; the \
         most specific matching table gives the diagnosis. Patterns (globs, `re:` regular \
         expressions, `family:NAME`, `functions:NAME`) are described in \
         [Patterns and case](../signatures.md#patterns-and-case).\n",
    );
    for (title, keys) in [
        ("Table settings", conditions::SETTINGS),
        ("Conditions on the dump as a whole", conditions::ON_DUMP),
        ("Conditions on the chosen thread", conditions::ON_THREAD),
    ] {
        let _ = write!(s, "\n## {title}\n\n| key | meaning |\n| --- | --- |\n");
        for key in keys {
            let _ = writeln!(s, "| `{}` | {} |", key.key, key.doc);
        }
    }
    s
}

/// The page of the named function groups rules use as `functions:NAME`.
fn function_groups() -> String {
    let mut s = String::from(
        "<!-- Generated from src/functions.toml by `dumptriage signatures docs`; do not edit. -->\n\n\
         # Function groups\n\nLists of function names written once and used as `functions:NAME` \
         by rules and by the exit-phase tables. A group marked *exit only* runs only while the \
         process exits or a module is unloaded: one of its frames on a thread is evidence of exit \
         by itself (see [../signatures.md](../signatures.md), \"When exit is not established\").\n",
    );
    for (name, group) in crate::functions::GROUPS.iter() {
        let only = if group.exit_only { " (exit only)" } else { "" };
        let _ = write!(
            s,
            "\n## `functions:{name}`{only}\n\n{}\n\n",
            md(&group.about)
        );
        for entry in &group.functions {
            // A name with a backtick (MSVC's `dynamic atexit destructor
            // for ...') needs a longer code fence.
            if entry.contains('`') {
                let _ = writeln!(s, "- `` {entry} ``");
            } else {
                let _ = writeln!(s, "- `{entry}`");
            }
        }
    }
    s
}

/// Writes the pages into `dir`, creating it.
pub fn write(dir: &Path, pages: &[(String, String)]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, text) in pages {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// What differs between `dir` and the pages: one line per stale, missing or
/// orphaned page; empty when the folder is up to date.
pub fn check(dir: &Path, pages: &[(String, String)]) -> Vec<String> {
    let mut stale = Vec::new();
    for (name, text) in pages {
        let path = dir.join(name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(format!("{} is missing or out of date", path.display()));
        }
    }
    let expected: std::collections::HashSet<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".md") && !expected.contains(name.as_str()) {
                stale.push(format!(
                    "{} documents no rule (remove it)",
                    entry.path().display()
                ));
            }
        }
    }
    stale
}

/// The page of one rule: what it detects, why it matters, an example, the fix.
pub fn page(rule: &Rule) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "<!-- Generated from signatures/{}.toml by `dumptriage signatures docs`; do not edit. -->\n", rule.id);
    let _ = writeln!(s, "# {}\n", md(&rule.title));
    let _ = writeln!(
        s,
        "`{}` · {} · {}\n",
        rule.id,
        rule.kind.as_str(),
        if rule.generic {
            "generic situation"
        } else {
            "known failure"
        }
    );
    let _ = writeln!(s, "## What happens\n\n{}\n", md(rule.summary.trim()));
    let _ = writeln!(s, "## Why\n\n{}\n", md(rule.why.trim()));
    let _ = writeln!(s, "## Fix\n\n{}\n", md(rule.fix.trim()));
    if let Some(workaround) = &rule.workaround {
        let _ = writeln!(s, "## Workaround\n\n{}\n", md(workaround.trim()));
    }
    if let Some(example) = rule.examples.iter().find(|e| e.expect == Expect::Match) {
        let _ = writeln!(s, "## Example\n\n{}:\n", md(&example.name));
        s.push_str("```\n");
        if let Some(exception) = &example.exception {
            let _ = writeln!(s, "exception {exception}");
        }
        for thread in &example.threads {
            let name = thread
                .name
                .as_deref()
                .map(|n| format!(" \"{n}\""))
                .unwrap_or_default();
            let crashing = if thread.crashing { " (crashing)" } else { "" };
            let _ = writeln!(s, "thread {}{name}{crashing}", thread.id);
            for (i, frame) in thread.frames.iter().enumerate() {
                let _ = writeln!(s, "  {i:>2}  {frame}");
            }
        }
        s.push_str("```\n\n");
    }
    if let Some(fixed) = &rule.fixed {
        s.push_str("## Fixed in\n\n");
        let modules = fixed.module_names.join("`, `");
        match (&fixed.release, &fixed.source) {
            (Some((_, release)), Some(source)) => {
                let _ = writeln!(
                    s,
                    "{} {release} ([source]({source})) carries the fix (<{}>); reports compare it with the version of `{modules}` in the dump.\n",
                    fixed.component, fixed.fix
                );
            }
            _ => {
                let _ = writeln!(
                    s,
                    "The fix is <{}>; which {} release first carries it is not established. Reports show the version of `{modules}` in the dump and say so.\n",
                    fixed.fix, fixed.component
                );
            }
        }
    }
    s.push_str("## References\n\n");
    for reference in &rule.references {
        let _ = writeln!(s, "- <{reference}>");
    }
    s
}

/// The index page: every rule, specific ones first.
pub fn index<'a>(rules: impl IntoIterator<Item = &'a Rule>) -> String {
    let mut s = String::from(
        "<!-- Generated from signatures/*.toml by `dumptriage signatures docs`; do not edit. -->\n\n\
         # Signatures\n\nThe known exit-time failures dumptriage recognises, then the generic \
         situations. The rule format is described in [../signatures.md](../signatures.md), \
         the keys of a `[[match]]` table in [conditions.md](conditions.md).\n\n",
    );
    s.push_str(&table(rules, ""));
    s.push_str("\nThe function groups rules name as `functions:NAME` are listed in [function-groups.md](function-groups.md).\n");
    s
}

/// A table of every rule, specific ones first, each id linking to its page
/// (`pages` is the pages' folder as seen from the file the table is in).
fn table<'a>(rules: impl IntoIterator<Item = &'a Rule>, pages: &str) -> String {
    let mut rules: Vec<&Rule> = rules.into_iter().collect();
    rules.sort_by(|a, b| a.generic.cmp(&b.generic).then(a.id.cmp(&b.id)));
    let mut s = String::from("| id | kind | title |\n| --- | --- | --- |\n");
    for rule in rules {
        let generic = if rule.generic { " (generic)" } else { "" };
        let _ = writeln!(
            s,
            "| [`{}`]({pages}{}.md) | {}{generic} | {} |",
            rule.id,
            rule.id,
            rule.kind.as_str(),
            md(&rule.title)
        );
    }
    s
}

/// Where the table of rules goes in a README: between these two lines.
const README_BEGIN: &str =
    "<!-- signatures table: generated by `dumptriage signatures docs --readme`; do not edit -->";
const README_END: &str = "<!-- end of signatures table -->";

/// `readme` with the table of rules between its markers (ids linking into
/// `pages`, the pages' folder as seen from the README), so the README's
/// list of known failures cannot drift from the rules either.
pub fn readme(readme: &str, db: &Database, pages: &str) -> Result<String, String> {
    let (Some(begin), Some(end)) = (readme.find(README_BEGIN), readme.find(README_END)) else {
        return Err(format!(
            "the README has no table markers: put the lines {README_BEGIN:?} and {README_END:?} where the table goes"
        ));
    };
    if end < begin {
        return Err("the README's table markers are in the wrong order".to_string());
    }
    let pages = if pages.is_empty() || pages.ends_with('/') {
        pages.to_string()
    } else {
        format!("{pages}/")
    };
    Ok(format!(
        "{}{README_BEGIN}\n{}{}",
        &readme[..begin],
        table(db.rules(), &pages),
        &readme[end..]
    ))
}

/// Escapes Markdown syntax in prose, so `__hipUnregisterFatBinary` is not
/// rendered as bold and a `|` does not split a table cell.
fn md(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '_' | '*' | '<' | '>' | '[' | ']' | '|' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
