//! `--format github` (issue 40) through the real binary: workflow commands
//! GitHub Actions turns into annotations, within its limits (10 errors and
//! 10 warnings per step, 50 per job) with the rest summed up in one line,
//! each with a title, the file and the fix, escaped as the runner reads
//! them back.

use crate::common;

use std::path::Path;

/// A workflow command: (kind, properties, message).
type WorkflowCommand = (String, Vec<(String, String)>, String);

/// A workflow command read back as the runner does: (kind, properties,
/// message), with `%25`, `%0D`, `%0A` (and in properties `%3A`, `%2C`)
/// undone.
fn parse(line: &str) -> Option<WorkflowCommand> {
    let rest = line.strip_prefix("::")?;
    let (head, message) = rest.split_once("::")?;
    let (kind, props) = head.split_once(' ').unwrap_or((head, ""));
    let unescape = |s: &str| {
        s.replace("%0D", "\r")
            .replace("%0A", "\n")
            .replace("%3A", ":")
            .replace("%2C", ",")
            .replace("%25", "%")
    };
    let props = props
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').expect("key=value");
            (k.to_string(), unescape(v))
        })
        .collect();
    Some((kind.to_string(), props, unescape(message)))
}

fn github(paths: &[&Path], extra: &[&str]) -> Vec<WorkflowCommand> {
    let out = common::bin()
        .args(["analyze", "--format", "github"])
        .args(extra)
        .args(paths)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut commands = Vec::new();
    for line in text.lines() {
        if line.starts_with("::") {
            commands.push(parse(line).unwrap_or_else(|| panic!("not a command: {line}")));
        } else {
            assert!(line.starts_with("dumptriage: "), "{line}");
        }
    }
    commands
}

fn prop<'a>(props: &'a [(String, String)], key: &str) -> Option<&'a str> {
    props
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

#[test]
fn annotations_stay_within_githubs_limits_and_say_every_group() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps");
    let commands = github(&[&samples], &[]);
    let errors: Vec<_> = commands.iter().filter(|c| c.0 == "error").collect();
    let warnings: Vec<_> = commands.iter().filter(|c| c.0 == "warning").collect();
    assert_eq!(errors.len() + warnings.len(), commands.len());
    assert!(errors.len() <= 10, "{}", errors.len());
    assert!(warnings.len() <= 10, "{}", warnings.len());
    assert!(commands.len() <= 50);
    // More failure groups than 10: the tenth error sums up the rest.
    let json = common::bin()
        .args(["analyze", "--format", "json"])
        .arg(&samples)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let groups: Vec<&serde_json::Value> = doc["summary"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| !g["kind"].is_null())
        .collect();
    assert!(groups.len() > 10, "{} groups", groups.len());
    let last = errors.last().unwrap();
    assert!(warnings.len() < 10, "no warning is summed up here");
    let more = groups.len() - warnings.len() - (errors.len() - 1);
    assert_eq!(
        prop(&last.1, "title"),
        Some(format!("dumptriage: {more} more error groups").as_str())
    );
    // Every group is said: in its own annotation or in the summing-up one.
    let all: String = commands
        .iter()
        .map(|c| format!("{} {}\n", prop(&c.1, "title").unwrap_or(""), c.2))
        .collect();
    for g in &groups {
        let name = g["signature"]
            .as_str()
            .unwrap_or(g["key"].as_str().unwrap());
        assert!(all.contains(name), "{name} is in no annotation");
    }
    // Each annotation of a group: title, file and fix.
    for (kind, props, message) in commands.iter().filter(|c| c.2.contains("dump")) {
        if prop(props, "title").is_some_and(|t| t.contains(" more ")) {
            continue;
        }
        assert!(prop(props, "title").is_some_and(|t| t.starts_with("dumptriage: ")));
        let file = prop(props, "file").unwrap_or_else(|| panic!("{kind}: no file: {message}"));
        assert!(file.ends_with(".dmp"), "{file}");
        if !message.contains("Crash matching no known signature") {
            assert!(message.contains("\nFix: "), "{message}");
        }
    }
}

/// Names that are workflow-command syntax come back as they were (made
/// printable): `%`, `,`, `:`, and a newline in a file name.
#[test]
fn hostile_names_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-dumps/linux/abort-during-exit-linux.dmp");
    let name = "50%,a:b::error title=x::y\nz.dmp";
    let hostile = dir.path().join(name);
    std::fs::copy(&sample, &hostile).unwrap();
    let commands = github(&[&hostile], &[]);
    assert_eq!(commands.len(), 1, "{commands:?}");
    let (kind, props, message) = &commands[0];
    assert_eq!(kind, "error");
    let file = prop(props, "file").unwrap();
    let shown = dumptriage::printable::clean(&hostile.display().to_string());
    assert_eq!(file, shown);
    assert!(message.contains(&shown), "{message}");
    assert_eq!(props.len(), 2, "{props:?}");
}

/// With a baseline, known failures are warnings with their issue, new ones
/// errors.
#[test]
fn known_failures_are_warnings_with_their_issue() {
    let dir = tempfile::tempdir().unwrap();
    let linux = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps/linux");
    let baseline = dir.path().join("baseline.toml");
    std::fs::write(
        &baseline,
        "crash_signature_version = 2\n[[failure]]\nsignature = \"Journal::flush | Journal::~Journal\"\n\
         issue = \"https://github.com/example/app/issues/3\"\nnote = \"known\"\n",
    )
    .unwrap();
    let b = baseline.to_str().unwrap();
    let commands = github(
        &[
            &linux.join("abort-during-exit-linux.dmp"),
            &linux.join("tls-destructor-crash-at-exit-linux.dmp"),
        ],
        &["--baseline", b],
    );
    let kinds: Vec<&str> = commands.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(kinds, ["error", "warning"], "{commands:#?}");
    assert!(commands[1]
        .2
        .contains("Tracked: https://github.com/example/app/issues/3"));
    assert!(commands[0].2.contains("New: 1 dump"));
}
