//! What is generated from the command line's definitions (#38): the
//! command reference docs/commands.md (checked against the binary's own
//! `--help`, refreshed with `DUMPTRIAGE_BLESS=1 cargo test --test
//! integration reference::`), the man pages (`dumptriage man DIR`) and the shell
//! completions (`dumptriage completions SHELL`). All through the real
//! binary, whose subcommands are found by walking its `--help`. And the
//! form of CHANGELOG.md (Keep a Changelog).

use crate::common;

use std::path::Path;

use common::bin;

/// `dumptriage ARGS --help`, as a 100-column terminal shows it.
fn help(path: &[String]) -> String {
    let out = bin()
        .args(path)
        .arg("--help")
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert!(out.status.success(), "{path:?} --help: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands a help text lists under `Commands:` (`help` left out).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// Every command path (`[]`, `["analyze"]`, `["signatures", "lint"]`, ...)
/// with its help, in the order `--help` lists them.
fn commands() -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    let mut todo = vec![Vec::new()];
    while let Some(path) = todo.pop() {
        let text = help(&path);
        for name in subcommands(&text).into_iter().rev() {
            let mut child = path.clone();
            child.push(name);
            todo.push(child);
        }
        out.push((path, text));
    }
    out
}

fn title(path: &[String]) -> String {
    std::iter::once("dumptriage")
        .chain(path.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// docs/commands.md as the binary's help makes it.
fn reference() -> String {
    let commands = commands();
    let mut md = String::from(
        "# Command reference\n\
         \n\
         Every command and option of `dumptriage`, as its `--help` prints them.\n\
         This page is generated from the command line's definitions (src/bin/dumptriage/cli.rs):\n\
         do not edit it by hand.\n\
         `DUMPTRIAGE_BLESS=1 cargo test --test integration reference::` writes it\n\
         again, and that test fails while it differs from the binary.\n\
         \n\
         Generated from the same definitions: shell completions\n\
         (`dumptriage completions bash`, `zsh`, `fish`, `powershell` or `elvish`;\n\
         for bash, `source <(dumptriage completions bash)`) and man pages\n\
         (`dumptriage man DIR` writes `dumptriage.1` and one page per subcommand,\n\
         `dumptriage-analyze.1`, ...).\n\
         \n",
    );
    for (path, _) in &commands {
        let name = title(path);
        let anchor = name.replace(' ', "-");
        let indent = "  ".repeat(path.len().saturating_sub(1));
        md.push_str(&format!("{indent}- [`{name}`](#{anchor})\n"));
    }
    for (path, text) in &commands {
        md.push_str(&format!("\n## `{}`\n\n```text\n{}```\n", title(path), text));
    }
    md
}

#[test]
fn the_command_reference_is_the_binarys_help() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/commands.md");
    let made = reference();
    if std::env::var_os("DUMPTRIAGE_BLESS").is_some() {
        std::fs::write(&file, &made).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&file).unwrap_or_default();
    if committed != made {
        let first = committed
            .lines()
            .zip(made.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(made.lines().count()));
        panic!(
            "docs/commands.md is stale (first difference at line {}: {:?} is now {:?}).\n\
             Refresh it with: DUMPTRIAGE_BLESS=1 cargo test --test integration reference::",
            first + 1,
            committed.lines().nth(first).unwrap_or("<end>"),
            made.lines().nth(first).unwrap_or("<end>"),
        );
    }
}

#[test]
fn the_reference_covers_every_subcommand_and_the_environment() {
    let commands = commands();
    let names: Vec<String> = commands.iter().map(|(p, _)| title(p)).collect();
    for expected in [
        "dumptriage analyze",
        "dumptriage attach",
        "dumptriage run",
        "dumptriage signatures lint",
        "dumptriage completions",
    ] {
        assert!(names.iter().any(|n| n == expected), "{expected}: {names:?}");
    }
    // Hidden: a packager's tool, not a user's command.
    assert!(!names.iter().any(|n| n == "dumptriage man"), "{names:?}");
    // The stop limit the capture commands read (src/bin/dumptriage/main.rs).
    for command in ["attach", "run"] {
        let (_, text) = commands
            .iter()
            .find(|(p, _)| p == &[command.to_string()])
            .unwrap();
        assert!(
            text.contains("DUMPTRIAGE_STOP_LIMIT_MS") && text.contains("(default: 2000)"),
            "{command}: {text}"
        );
    }
}

/// Each long option a help text lists (`--symbols-cache`).
fn long_options(help: &str) -> Vec<String> {
    help.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("--") || (l.starts_with('-') && l.get(2..6) == Some(", --")))
        .filter_map(|l| l.split("--").nth(1))
        .filter_map(|rest| rest.split([' ', '=', '<', '[']).next())
        .map(|name| format!("--{name}"))
        .collect()
}

#[test]
fn a_man_page_for_every_command_with_every_option() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin().arg("man").arg(dir.path()).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut pages: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    let commands = commands();
    let mut expected: Vec<String> = commands
        .iter()
        .map(|(path, _)| format!("{}.1", title(path).replace(' ', "-")))
        .collect();
    expected.sort();
    assert_eq!(pages, expected);
    for (path, text) in &commands {
        let page = format!("{}.1", title(path).replace(' ', "-"));
        let roff = std::fs::read_to_string(dir.path().join(&page)).unwrap();
        assert!(roff.starts_with(".ie") || roff.contains("\n.TH "), "{page}");
        let options = long_options(text);
        assert!(!options.is_empty(), "{page}: no options in {text}");
        for option in options {
            // roff spells a hyphen `\-`.
            let spelled = option.replace('-', "\\-");
            assert!(roff.contains(&spelled), "{page} lacks {option}");
        }
    }
    // groff reads every page without a warning (scripts/ci-setup-linux.sh
    // installs it).
    if cfg!(target_os = "linux") {
        let groff = std::process::Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .args(expected.iter().map(|p| dir.path().join(p)))
            .output();
        match groff {
            Ok(out) => assert!(
                out.status.success() && out.stderr.is_empty(),
                "groff: {}",
                String::from_utf8_lossy(&out.stderr)
            ),
            Err(e) => common::skip::skip("reference::man_pages_groff", &format!("groff: {e}")),
        }
    }
}

#[test]
fn a_man_page_folder_that_cannot_be_made_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let out = bin().arg("man").arg(file.join("man1")).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("cannot create") && stderr.contains("man1"),
        "{stderr}"
    );
}

#[test]
fn completions_for_every_shell() {
    for (shell, marker) in [
        ("bash", "complete -F _dumptriage"),
        ("zsh", "#compdef dumptriage"),
        ("fish", "complete -c dumptriage"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion:arg-completer[dumptriage]"),
    ] {
        let out = bin().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}: {out:?}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains(marker), "{shell}: {marker} not in {script}");
        // Every subcommand and a flag of the shared report options.
        for word in ["analyze", "attach", "signatures", "symbols-cache"] {
            assert!(script.contains(word), "{shell}: {word}");
        }
    }
    let bad = bin().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// bash itself loads the script and completes a subcommand and a flag
/// (bash 4.3 or later: not macOS's own 3.2).
#[cfg(target_os = "linux")]
#[test]
fn bash_completes_subcommands_and_flags() {
    let script = bin().args(["completions", "bash"]).output().unwrap().stdout;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dumptriage.bash");
    std::fs::write(&file, script).unwrap();
    let complete = |words: &str| -> Vec<String> {
        let line = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
             _dumptriage dumptriage \"${{COMP_WORDS[-1]}}\" \"${{COMP_WORDS[-2]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            file.display()
        );
        let out = std::process::Command::new("bash")
            .args(["-c", &line])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    };
    let top = complete("dumptriage an");
    assert_eq!(top, ["analyze"]);
    let flags = complete("dumptriage analyze --symbols-c");
    assert!(flags.contains(&"--symbols-cache".to_string()), "{flags:?}");
}

/// CHANGELOG.md follows Keep a Changelog: an `Unreleased` section on top,
/// and in each version's section each kind of change (`### Added`, ...)
/// at most once, in the order the format gives them.
#[test]
fn the_changelog_keeps_one_heading_per_kind_of_change() {
    const KINDS: [&str; 6] = [
        "Added",
        "Changed",
        "Deprecated",
        "Removed",
        "Fixed",
        "Security",
    ];
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("CHANGELOG.md"))
        .unwrap();
    let versions: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("## ")).collect();
    assert_eq!(versions.first(), Some(&"[Unreleased]"), "{versions:?}");
    let mut problems = Vec::new();
    for section in text.split("\n## ").skip(1) {
        let version = section.lines().next().unwrap_or_default();
        let kinds: Vec<&str> = section
            .lines()
            .filter_map(|l| l.strip_prefix("### "))
            .collect();
        let mut last = None;
        for kind in &kinds {
            match KINDS.iter().position(|k| k == kind) {
                None => problems.push(format!("{version}: `### {kind}` is not a kind of change")),
                Some(at) if last.is_some_and(|l| at <= l) => problems.push(format!(
                    "{version}: `### {kind}` is out of order or repeated (one each, in the \
                     order {KINDS:?}): merge it into the first"
                )),
                Some(at) => last = Some(at),
            }
        }
    }
    assert!(problems.is_empty(), "CHANGELOG.md: {problems:#?}");
}
