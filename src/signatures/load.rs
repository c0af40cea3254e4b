//! Loading rule files: parsing, validation into compiled rules, and lint.
//!
//! Validation collects every problem of a file (unknown keys, wrong types,
//! bad patterns, missing fix, non-https references, ...) with the key it is
//! about, instead of stopping at the first: a rule author fixes them all in
//! one pass.

use std::fmt;
use std::path::{Path, PathBuf};

use super::conditions;
use super::rule::Rule;
use super::schema::RuleFile;

mod builtin {
    include!(concat!(env!("OUT_DIR"), "/builtin_signatures.rs"));
}

/// One problem in a rule file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: String,
    /// The key the problem is about (`match[0].frames[1].function`), empty
    /// for the file as a whole.
    pub key: String,
    pub reason: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.file, self.reason)
        } else {
            write!(f, "{}: {}: {}", self.file, self.key, self.reason)
        }
    }
}

/// Lints a folder of rule files: every problem of every file.
pub fn lint_dir(dir: &Path) -> Vec<Problem> {
    match read_dir(dir) {
        Ok(files) => parse_all(files, Checks::Full).1,
        Err(problems) => problems,
    }
}

/// Lints the rules compiled into the binary.
pub fn lint_builtin() -> Vec<Problem> {
    parse_all(builtin_files(Checks::Full), Checks::Full).1
}

/// A rule file to load.
pub(super) struct RuleText {
    /// How problems name it.
    pub file: String,
    pub toml: String,
    /// The same content without its examples as JSON, made by build.rs for
    /// the built-in files (read several times faster than the TOML, through
    /// the same types).
    pub json: Option<&'static str>,
}

/// How much loading checks. A run that analyses dumps trusts the built-in
/// rules, which the test suite lints: their examples (used only by
/// `signatures test`) are not turned into stacks and their regular
/// expressions are compiled on first use, which together cost several times
/// the rest of loading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Checks {
    /// Every check: user files, `signatures lint` and `signatures test`.
    Full,
    /// The built-in rules of a run.
    Trusted,
}

/// The built-in rule files; with every check, as their TOML (examples
/// included), else as build.rs's JSON.
pub(super) fn builtin_files(checks: Checks) -> impl Iterator<Item = RuleText> {
    builtin::BUILTIN
        .iter()
        .map(move |(name, toml, json)| RuleText {
            file: format!("signatures/{name}"),
            toml: toml.to_string(),
            json: (checks == Checks::Trusted && !json.is_empty()).then_some(*json),
        })
}

/// Parses rule files, collecting all their problems and duplicate ids.
pub(super) fn parse_all(
    files: impl IntoIterator<Item = RuleText>,
    checks: Checks,
) -> (Vec<Rule>, Vec<Problem>) {
    let mut rules: Vec<Rule> = Vec::new();
    let mut problems = Vec::new();
    // Ids seen so far, read even from files with other problems, so a
    // duplicate is reported whatever else is wrong.
    let mut seen: Vec<(String, String)> = Vec::new();
    for RuleText { file, toml, json } in files {
        let stem = Path::new(&file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let spec = deserialize(&file, &toml, json);
        let id = match &spec {
            Ok(spec) => Some(spec.id.clone()),
            Err((id, _)) => id.clone(),
        };
        let duplicate = id
            .as_ref()
            .and_then(|id| seen.iter().find(|(i, _)| i == id));
        if let (Some(id), Some((_, first))) = (&id, duplicate) {
            problems.push(Problem {
                file: file.clone(),
                key: "id".to_string(),
                reason: format!("duplicate id {id:?}, already used by {first}"),
            });
        }
        let is_duplicate = duplicate.is_some();
        if let Some(id) = id {
            seen.push((id, file.clone()));
        }
        match spec
            .map_err(|(_, errors)| errors)
            .and_then(|spec| validate(&file, &stem, &toml, spec, checks))
        {
            Ok(rule) if !is_duplicate => rules.push(rule),
            Ok(_) => {}
            Err(mut errors) => problems.append(&mut errors),
        }
    }
    (rules, problems)
}

/// The `*.toml` files of a folder, sorted.
pub(super) fn read_dir(dir: &Path) -> Result<Vec<RuleText>, Vec<Problem>> {
    let problem = |file: &Path, reason: String| {
        vec![Problem {
            file: file.display().to_string(),
            key: String::new(),
            reason,
        }]
    };
    let entries =
        std::fs::read_dir(dir).map_err(|e| problem(dir, format!("cannot read folder: {e}")))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(problem(dir, "no .toml rule files".to_string()));
    }
    paths
        .into_iter()
        .map(|path| {
            std::fs::read_to_string(&path)
                .map(|toml| RuleText {
                    file: path.display().to_string(),
                    toml,
                    json: None,
                })
                .map_err(|e| problem(&path, format!("cannot read: {e}")))
        })
        .collect()
}

/// Parses and validates one rule file (examples included). `file` names it
/// in problems; `stem` is the file name without `.toml`, which must equal
/// the id.
pub fn parse(file: &str, stem: &str, text: &str) -> Result<Rule, Vec<Problem>> {
    let spec = deserialize(file, text, None).map_err(|(_, problems)| problems)?;
    validate(file, stem, text, spec, Checks::Full)
}

/// A rule file as written, from its JSON form when there is one, else from
/// its TOML: every unknown key is a problem, with its full path. On failure,
/// the id too when the file says it, so duplicates are found whatever else
/// is wrong.
fn deserialize(
    file: &str,
    toml: &str,
    json: Option<&str>,
) -> Result<RuleFile, (Option<String>, Vec<Problem>)> {
    let problem = |key: &str, reason: String| Problem {
        file: file.to_string(),
        key: key.to_string(),
        reason,
    };
    let mut problems = Vec::new();
    let mut unknown = |path: serde_ignored::Path<'_>| {
        problems.push(problem(
            &key_path(&path),
            "unknown key (not part of the rule format: see docs/signatures.md)".to_string(),
        ))
    };
    let (id, parsed) = match json {
        Some(json) => {
            let parsed = serde_ignored::deserialize(
                &mut serde_json::Deserializer::from_str(json),
                &mut unknown,
            )
            .map_err(|e| e.to_string());
            (None, parsed)
        }
        None => {
            let value: toml::Table = match toml.parse() {
                Ok(v) => v,
                Err(e) => {
                    return Err((
                        None,
                        vec![problem(
                            "",
                            format!("not valid TOML: {}", one_line(&e.to_string())),
                        )],
                    ))
                }
            };
            let id = value.get("id").and_then(|v| v.as_str()).map(str::to_string);
            let parsed = serde_ignored::deserialize(toml::Value::Table(value), &mut unknown)
                .map_err(|e| e.to_string());
            (id, parsed)
        }
    };
    match parsed {
        Ok(spec) if problems.is_empty() => Ok(spec),
        Ok(spec) => Err((Some(spec.id), problems)),
        Err(e) => {
            problems.push(problem("", one_line(&e)));
            Err((id, problems))
        }
    }
}

/// Checks a deserialized rule file and compiles its patterns.
fn validate(
    file: &str,
    stem: &str,
    text: &str,
    spec: RuleFile,
    checks: Checks,
) -> Result<Rule, Vec<Problem>> {
    let problem = |key: &str, reason: String| Problem {
        file: file.to_string(),
        key: key.to_string(),
        reason,
    };
    let mut problems = Vec::new();
    if spec.id != stem {
        problems.push(problem(
            "id",
            format!("{:?} must equal the file name {stem:?}", spec.id),
        ));
    }
    if !is_kebab_case(&spec.id) {
        problems.push(problem(
            "id",
            format!("{:?} is not kebab-case (a-z, 0-9, single dashes)", spec.id),
        ));
    }
    for (key, text) in [
        ("title", &spec.title),
        ("summary", &spec.summary),
        ("why", &spec.why),
        ("fix", &spec.fix),
    ] {
        if text.trim().is_empty() {
            problems.push(problem(key, "must not be empty".to_string()));
        }
    }
    if spec.references.is_empty() {
        problems.push(problem(
            "references",
            "at least one https reference is required".to_string(),
        ));
    }
    for (i, reference) in spec.references.iter().enumerate() {
        if !reference.starts_with("https://") || reference.contains(char::is_whitespace) {
            problems.push(problem(
                &format!("references[{i}]"),
                format!("{reference:?} is not an https URL"),
            ));
        }
    }
    let fixed = spec
        .fixed
        .as_ref()
        .and_then(|f| super::versions::compile(f, &mut |k, r| problems.push(problem(k, r))));
    if spec.alternatives.is_empty() {
        problems.push(problem(
            "match",
            "at least one [[match]] table is required".to_string(),
        ));
    }
    let mut alternatives = Vec::new();
    for (i, alt) in spec.alternatives.iter().enumerate() {
        let path = format!("match[{i}]");
        match conditions::compile(alt, spec.kind, &path, checks == Checks::Full) {
            Ok(c) => alternatives.push(c),
            Err(errors) => problems.extend(errors.into_iter().map(|(k, r)| problem(&k, r))),
        }
    }
    if checks == Checks::Full {
        super::examples::check_examples(&spec.examples, &mut |k, r| problems.push(problem(k, r)));
    }
    if problems.is_empty() {
        Ok(Rule {
            id: spec.id,
            title: spec.title,
            kind: spec.kind,
            generic: spec.generic,
            summary: spec.summary,
            why: spec.why,
            fix: spec.fix,
            workaround: spec.workaround,
            references: spec.references,
            fixed,
            alternatives,
            examples: spec.examples,
            origin: file.to_string(),
            text: text.to_string(),
        })
    } else {
        Err(problems)
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn is_kebab_case(id: &str) -> bool {
    !id.is_empty()
        && id.split('-').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// A key's path as the problems spell it: `match[0].frames[1].function`.
fn key_path(path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    match path {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}[{index}]", key_path(parent)),
        Path::Map { parent, key } => match key_path(parent) {
            parent if parent.is_empty() => key.clone(),
            parent => format!("{parent}.{key}"),
        },
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => key_path(parent),
    }
}
