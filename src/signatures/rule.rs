//! Rule files: their TOML shape, and their validation into compiled rules.
//!
//! Validation collects every problem of a file (unknown keys, wrong types,
//! bad patterns, missing fix, non-https references, ...) with the key it is
//! about, instead of stopping at the first: a rule author fixes them all in
//! one pass. docs/signatures.md documents the format.

use std::fmt;

use serde::Deserialize;

use super::pattern::{Case, Pattern};
use crate::model::Kind;

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

// ---- The file as written -------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    pub id: String,
    pub title: String,
    pub kind: Kind,
    #[serde(default)]
    pub generic: bool,
    pub summary: String,
    pub why: String,
    pub fix: String,
    pub workaround: Option<String>,
    pub references: Vec<String>,
    #[serde(rename = "match")]
    pub alternatives: Vec<MatchSpec>,
    #[serde(default)]
    pub examples: Vec<ExampleSpec>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct MatchSpec {
    pub thread: Option<ThreadChoice>,
    pub thread_name: Option<String>,
    #[serde(default)]
    pub exception: Vec<String>,
    pub crash: Option<bool>,
    pub process_exiting: Option<bool>,
    pub thread_exiting: Option<bool>,
    pub thread_blocked: Option<bool>,
    pub ip_in_unloaded_module: Option<UnloadedChoice>,
    #[serde(default)]
    pub modules_loaded: Vec<String>,
    #[serde(default)]
    pub modules_unloaded: Vec<String>,
    #[serde(default)]
    pub functions_absent: Vec<String>,
    #[serde(default)]
    pub frames: Vec<FrameSpec>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThreadChoice {
    /// The thread of a real crash.
    Crashing,
    /// The crashing thread, or for a dump without a crash the exiting,
    /// blocked thread (exit_phase).
    Blamed,
    /// Any thread.
    Any,
    /// A thread whose name matches `thread_name`.
    Named,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum UnloadedChoice {
    Any(bool),
    Named(String),
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct FrameSpec {
    pub function: Option<String>,
    pub module: Option<String>,
    pub unloaded: Option<String>,
    pub within: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExampleSpec {
    pub name: String,
    pub expect: Expect,
    #[serde(default = "default_os")]
    pub os: String,
    pub exception: Option<String>,
    #[serde(default)]
    pub modules: Vec<String>,
    #[serde(default)]
    pub unloaded_modules: Vec<String>,
    pub threads: Vec<ExampleThread>,
}

fn default_os() -> String {
    "windows".to_string()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    Match,
    NoMatch,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExampleThread {
    pub id: u32,
    pub name: Option<String>,
    #[serde(default)]
    pub crashing: bool,
    pub frames: Vec<String>,
}

// ---- The compiled rule ---------------------------------------------------

/// A validated rule, ready to match.
#[derive(Debug)]
pub struct Rule {
    pub id: String,
    pub title: String,
    pub kind: Kind,
    pub generic: bool,
    pub summary: String,
    pub why: String,
    pub fix: String,
    pub workaround: Option<String>,
    pub references: Vec<String>,
    pub alternatives: Vec<Conditions>,
    pub examples: Vec<ExampleSpec>,
    /// Where the rule came from (`signatures/x.toml`, or `built-in`).
    pub origin: String,
    /// The file's text, for `signatures show`.
    pub text: String,
}

#[derive(Debug)]
pub struct Conditions {
    pub thread: ThreadChoice,
    pub thread_name: Option<Pattern>,
    pub exception: Vec<ExceptionCode>,
    pub crash: Option<bool>,
    pub process_exiting: Option<bool>,
    pub thread_exiting: Option<bool>,
    pub thread_blocked: Option<bool>,
    pub ip_in_unloaded_module: Option<Option<Pattern>>,
    pub modules_loaded: Vec<Pattern>,
    pub modules_unloaded: Vec<Pattern>,
    pub functions_absent: Vec<Pattern>,
    pub frames: Vec<FramePattern>,
}

impl Conditions {
    /// How much a match of these conditions says: named functions count
    /// most. Used to put the most specific diagnosis first.
    pub fn specificity(&self) -> u32 {
        let frames: u32 = self
            .frames
            .iter()
            .map(|f| if f.function.is_some() { 3 } else { 1 })
            .sum();
        let flags = [
            self.thread_name.is_some(),
            !self.exception.is_empty(),
            self.process_exiting == Some(true),
            self.thread_exiting == Some(true),
            self.thread_blocked == Some(true),
            self.ip_in_unloaded_module.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count() as u32;
        frames
            + flags
            + (self.modules_loaded.len()
                + self.modules_unloaded.len()
                + self.functions_absent.len()) as u32
    }
}

impl Conditions {
    /// Every pattern of these conditions, for a full compile in lint.
    fn patterns(&self) -> impl Iterator<Item = &Pattern> {
        self.thread_name
            .iter()
            .chain(self.ip_in_unloaded_module.iter().flatten())
            .chain(&self.modules_loaded)
            .chain(&self.modules_unloaded)
            .chain(&self.functions_absent)
            .chain(
                self.frames
                    .iter()
                    .flat_map(|f| [&f.function, &f.module, &f.unloaded].into_iter().flatten()),
            )
    }
}

impl Rule {
    /// Compiles every regular expression of the rule now (matching compiles
    /// them lazily): what `signatures lint` adds to loading.
    pub fn check_patterns(&self) -> Vec<Problem> {
        self.alternatives
            .iter()
            .enumerate()
            .flat_map(|(i, c)| {
                c.patterns().filter_map(move |p| {
                    p.check().err().map(|reason| Problem {
                        file: self.origin.clone(),
                        key: format!("match[{i}]"),
                        reason,
                    })
                })
            })
            .collect()
    }
}

#[derive(Debug)]
pub struct FramePattern {
    pub function: Option<Pattern>,
    pub module: Option<Pattern>,
    pub unloaded: Option<Pattern>,
    pub within: Option<usize>,
}

/// An exception condition: a raw code, or a name (`SIGSEGV`,
/// `EXCEPTION_ACCESS_VIOLATION`) known to stand for one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExceptionCode {
    pub code: u32,
    /// Signals are numbers that mean something only off Windows.
    pub signal: bool,
    pub written: String,
}

/// Exception and signal names a rule may use, with their codes.
pub const EXCEPTION_NAMES: &[(&str, u32, bool)] = &[
    ("EXCEPTION_ACCESS_VIOLATION", 0xc000_0005, false),
    ("STATUS_ACCESS_VIOLATION", 0xc000_0005, false),
    ("EXCEPTION_IN_PAGE_ERROR", 0xc000_0006, false),
    ("STATUS_INVALID_HANDLE", 0xc000_0008, false),
    ("STATUS_ILLEGAL_INSTRUCTION", 0xc000_001d, false),
    ("STATUS_INTEGER_DIVIDE_BY_ZERO", 0xc000_0094, false),
    ("STATUS_STACK_OVERFLOW", 0xc000_00fd, false),
    ("STATUS_HEAP_CORRUPTION", 0xc000_0374, false),
    ("STATUS_STACK_BUFFER_OVERRUN", 0xc000_0409, false),
    ("STATUS_FAIL_FAST_EXCEPTION", 0xc000_0602, false),
    ("STATUS_BREAKPOINT", 0x8000_0003, false),
    ("EXCEPTION_CPP", 0xe06d_7363, false),
    ("CPP_EXCEPTION", 0xe06d_7363, false),
    ("SIGILL", 4, true),
    ("SIGTRAP", 5, true),
    ("SIGABRT", 6, true),
    ("SIGBUS", 7, true),
    ("SIGFPE", 8, true),
    ("SIGSEGV", 11, true),
];

impl ExceptionCode {
    pub fn parse(text: &str) -> Result<ExceptionCode, String> {
        let trimmed = text.trim();
        if let Some(&(name, code, signal)) = EXCEPTION_NAMES
            .iter()
            .find(|(name, _, _)| name.eq_ignore_ascii_case(trimmed))
        {
            return Ok(ExceptionCode {
                code,
                signal,
                written: name.to_string(),
            });
        }
        let number = match trimmed
            .strip_prefix("0x")
            .or_else(|| trimmed.strip_prefix("0X"))
        {
            Some(hex) => u32::from_str_radix(hex, 16),
            None => trimmed.parse::<u32>(),
        };
        number
            .map(|code| ExceptionCode {
                code,
                signal: false,
                written: trimmed.to_string(),
            })
            .map_err(|_| {
                format!(
                    "unknown exception {text:?}: write a code (0xC0000005) or one of {}",
                    EXCEPTION_NAMES
                        .iter()
                        .map(|e| e.0)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }
}

// ---- Validation ------------------------------------------------------------

const TOP_KEYS: &[&str] = &[
    "id",
    "title",
    "kind",
    "generic",
    "summary",
    "why",
    "fix",
    "workaround",
    "references",
    "match",
    "examples",
];
const MATCH_KEYS: &[&str] = &[
    "thread",
    "thread_name",
    "exception",
    "crash",
    "process_exiting",
    "thread_exiting",
    "thread_blocked",
    "ip_in_unloaded_module",
    "modules_loaded",
    "modules_unloaded",
    "functions_absent",
    "frames",
];
const FRAME_KEYS: &[&str] = &["function", "module", "unloaded", "within"];
const EXAMPLE_KEYS: &[&str] = &[
    "name",
    "expect",
    "os",
    "exception",
    "modules",
    "unloaded_modules",
    "threads",
];
const EXAMPLE_THREAD_KEYS: &[&str] = &["id", "name", "crashing", "frames"];

/// Parses and validates one rule file. `file` names it in problems;
/// `stem` is the file name without `.toml`, which must equal the id.
pub fn parse(file: &str, stem: &str, text: &str) -> Result<Rule, Vec<Problem>> {
    let problem = |key: &str, reason: String| Problem {
        file: file.to_string(),
        key: key.to_string(),
        reason,
    };
    let value: toml::Table = match text.parse() {
        Ok(v) => v,
        Err(e) => {
            return Err(vec![problem(
                "",
                format!("not valid TOML: {}", one_line(&e.to_string())),
            )])
        }
    };
    let mut problems = Vec::new();
    unknown_keys(&value, file, &mut problems);
    let spec: RuleFile = match RuleFile::deserialize(toml::Value::Table(value)) {
        Ok(spec) => spec,
        Err(e) => {
            // Unknown keys are already reported one by one above.
            if problems.is_empty() {
                problems.push(problem("", one_line(&e.to_string())));
            }
            return Err(problems);
        }
    };
    if !problems.is_empty() {
        return Err(problems);
    }

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
    if spec.alternatives.is_empty() {
        problems.push(problem(
            "match",
            "at least one [[match]] table is required".to_string(),
        ));
    }
    let mut alternatives = Vec::new();
    for (i, alt) in spec.alternatives.iter().enumerate() {
        match compile_conditions(alt, spec.kind, &format!("match[{i}]")) {
            Ok(c) => alternatives.push(c),
            Err(errors) => problems.extend(errors.into_iter().map(|(k, r)| problem(&k, r))),
        }
    }
    check_examples(&spec.examples, &mut |k, r| problems.push(problem(k, r)));
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

/// Reports every key the format does not know, with its full path.
fn unknown_keys(table: &toml::Table, file: &str, problems: &mut Vec<Problem>) {
    let mut check = |table: &toml::Table, allowed: &[&str], path: &str| {
        for key in table.keys() {
            if !allowed.contains(&key.as_str()) {
                let full = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                problems.push(Problem {
                    file: file.to_string(),
                    key: full,
                    reason: format!("unknown key (expected one of: {})", allowed.join(", ")),
                });
            }
        }
    };
    check(table, TOP_KEYS, "");
    let tables = |key: &str| -> Vec<(usize, &toml::Table)> {
        match table.get(key) {
            Some(toml::Value::Array(items)) => items
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.as_table().map(|t| (i, t)))
                .collect(),
            _ => Vec::new(),
        }
    };
    for (i, alt) in tables("match") {
        check(alt, MATCH_KEYS, &format!("match[{i}]"));
        if let Some(toml::Value::Array(frames)) = alt.get("frames") {
            for (j, frame) in frames.iter().enumerate() {
                if let Some(frame) = frame.as_table() {
                    check(frame, FRAME_KEYS, &format!("match[{i}].frames[{j}]"));
                }
            }
        }
    }
    for (i, example) in tables("examples") {
        check(example, EXAMPLE_KEYS, &format!("examples[{i}]"));
        if let Some(toml::Value::Array(threads)) = example.get("threads") {
            for (j, thread) in threads.iter().enumerate() {
                if let Some(thread) = thread.as_table() {
                    check(
                        thread,
                        EXAMPLE_THREAD_KEYS,
                        &format!("examples[{i}].threads[{j}]"),
                    );
                }
            }
        }
    }
}

type KeyErrors = Vec<(String, String)>;

fn compile_conditions(spec: &MatchSpec, kind: Kind, path: &str) -> Result<Conditions, KeyErrors> {
    let mut errors = Vec::new();
    let mut pattern_errors = Vec::new();
    let mut pattern = |key: String, source: &str, case: Case| match Pattern::new(source, case) {
        Ok(p) => Some(p),
        Err(e) => {
            pattern_errors.push((key, e));
            None
        }
    };
    let thread = spec.thread.unwrap_or(match kind {
        Kind::Crash => ThreadChoice::Crashing,
        Kind::Hang => ThreadChoice::Blamed,
    });
    let thread_name = spec
        .thread_name
        .as_deref()
        .and_then(|s| pattern(format!("{path}.thread_name"), s, Case::Sensitive));
    let list = |key: &str,
                items: &[String],
                case: Case,
                pattern: &mut dyn FnMut(String, &str, Case) -> Option<Pattern>| {
        items
            .iter()
            .enumerate()
            .filter_map(|(i, s)| pattern(format!("{path}.{key}[{i}]"), s, case))
            .collect::<Vec<_>>()
    };
    let modules_loaded = list(
        "modules_loaded",
        &spec.modules_loaded,
        Case::Insensitive,
        &mut pattern,
    );
    let modules_unloaded = list(
        "modules_unloaded",
        &spec.modules_unloaded,
        Case::Insensitive,
        &mut pattern,
    );
    let functions_absent = list(
        "functions_absent",
        &spec.functions_absent,
        Case::Sensitive,
        &mut pattern,
    );
    let ip_in_unloaded_module = match &spec.ip_in_unloaded_module {
        None | Some(UnloadedChoice::Any(false)) => None,
        Some(UnloadedChoice::Any(true)) => Some(None),
        Some(UnloadedChoice::Named(name)) => Some(pattern(
            format!("{path}.ip_in_unloaded_module"),
            name,
            Case::Insensitive,
        )),
    };
    let mut frames = Vec::new();
    for (i, frame) in spec.frames.iter().enumerate() {
        let key = |k: &str| format!("{path}.frames[{i}].{k}");
        if frame.function.is_none() && frame.module.is_none() && frame.unloaded.is_none() {
            errors.push((
                format!("{path}.frames[{i}]"),
                "a frame pattern needs function, module or unloaded".to_string(),
            ));
        }
        frames.push(FramePattern {
            function: frame
                .function
                .as_deref()
                .and_then(|s| pattern(key("function"), s, Case::Sensitive)),
            module: frame
                .module
                .as_deref()
                .and_then(|s| pattern(key("module"), s, Case::Insensitive)),
            unloaded: frame
                .unloaded
                .as_deref()
                .and_then(|s| pattern(key("unloaded"), s, Case::Insensitive)),
            within: frame.within,
        });
    }
    errors.append(&mut pattern_errors);
    let mut exception = Vec::new();
    for (i, text) in spec.exception.iter().enumerate() {
        match ExceptionCode::parse(text) {
            Ok(code) => exception.push(code),
            Err(e) => errors.push((format!("{path}.exception[{i}]"), e)),
        }
    }
    if thread == ThreadChoice::Named && spec.thread_name.is_none() {
        errors.push((
            format!("{path}.thread_name"),
            "required when thread = \"named\"".to_string(),
        ));
    }
    if thread != ThreadChoice::Named && spec.thread_name.is_some() && thread != ThreadChoice::Any {
        errors.push((
            format!("{path}.thread_name"),
            "only meaningful with thread = \"named\" or \"any\"".to_string(),
        ));
    }
    let conditions = Conditions {
        thread,
        thread_name,
        exception,
        crash: spec.crash,
        process_exiting: spec.process_exiting,
        thread_exiting: spec.thread_exiting,
        thread_blocked: spec.thread_blocked,
        ip_in_unloaded_module,
        modules_loaded,
        modules_unloaded,
        functions_absent,
        frames,
    };
    if conditions.specificity() == 0 && conditions.crash.is_none() {
        errors.push((
            path.to_string(),
            "matches every dump: add a condition".to_string(),
        ));
    }
    if errors.is_empty() {
        Ok(conditions)
    } else {
        Err(errors)
    }
}

fn check_examples(examples: &[ExampleSpec], report: &mut dyn FnMut(&str, String)) {
    let positives = examples
        .iter()
        .filter(|e| e.expect == Expect::Match)
        .count();
    if positives == 0 {
        report(
            "examples",
            "at least one example with expect = \"match\" is required".to_string(),
        );
    }
    if positives == examples.len() {
        report(
            "examples",
            "at least one example with expect = \"no-match\" is required".to_string(),
        );
    }
    for (i, example) in examples.iter().enumerate() {
        if let Err(e) = super::examples::to_report(example) {
            report(&format!("examples[{i}]"), e);
        }
    }
}
