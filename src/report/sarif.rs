//! SARIF 2.1.0 for code scanning (GitHub's upload-sarif and other SARIF
//! viewers): one result per failed dump, its rule as a
//! `reportingDescriptor` with the rule's text and fix as help, the blamed
//! thread as a stack and as a code flow (outermost call first), and the
//! crash signature as a partial fingerprint, which is what keeps a result's
//! identity from one run to the next. With a baseline, each result says
//! whether it is new (`baselineState`) and links its issue (`workItemUris`).
//! Unreadable inputs are the invocation's error notifications; dumps where
//! nothing failed give no result.
//!
//! Valid against the official schema (tests/sarif.rs, with the schema in
//! ../shared/data/sarif/). The document is made of typed structs below,
//! not assembled by hand.

use std::io::{self, Write};

use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
use serde::Serialize;

use crate::model::{Diagnosis, Frame, Report, Status, Thread};
use crate::{finding, signature, Finding};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The rule of a crash no signature explains.
const UNEXPLAINED: &str = "unexplained-crash";

pub(super) fn render(reports: &[Report], out: &mut dyn Write) -> io::Result<()> {
    let mut rules: Vec<Rule> = Vec::new();
    let mut results = Vec::new();
    for report in reports {
        if report.status == Status::Error || finding(report) == Finding::None {
            continue;
        }
        let diagnosis = report.diagnoses.first();
        let id = diagnosis.map_or(UNEXPLAINED, |d| d.signature.as_str());
        let index = match rules.iter().position(|r| r.id == id) {
            Some(i) => i,
            None => {
                rules.push(rule(diagnosis));
                rules.len() - 1
            }
        };
        results.push(result(report, diagnosis, id, index));
    }
    let notifications: Vec<Notification> = reports
        .iter()
        .filter(|r| r.status == Status::Error)
        .map(|r| Notification {
            level: "error",
            message: Message::text(format!(
                "{}: {}",
                r.path,
                r.error.as_deref().unwrap_or("unknown error")
            )),
            locations: vec![Location::of_file(&r.path)],
        })
        .collect();
    let log = Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "dumptriage",
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    rules,
                },
            },
            invocations: vec![Invocation {
                execution_successful: notifications.is_empty(),
                tool_execution_notifications: notifications,
            }],
            results,
            properties: RunProperties {
                crash_signature_version: signature::VERSION,
            },
        }],
    };
    serde_json::to_writer_pretty(&mut *out, &log)?;
    writeln!(out)
}

fn rule(diagnosis: Option<&Diagnosis>) -> Rule {
    let Some(d) = diagnosis else {
        return Rule {
            id: UNEXPLAINED.to_string(),
            short_description: Message::text("Crash matching no known signature".to_string()),
            full_description: Message::text(
                "The process crashed, and no rule of the signature database explains it: the \
                 crashing thread's stack and the crash signature are what there is to go on."
                    .to_string(),
            ),
            help: Help {
                text: "Read the crashing thread's frames (the result's stack) from the top: the \
                       first frame of your own code is where to start. Dumps with the same crash \
                       signature are the same failure."
                    .to_string(),
                markdown: None,
            },
            help_uri: None,
            default_configuration: Configuration { level: "error" },
            properties: RuleProperties {
                tags: vec!["crash".to_string()],
            },
        };
    };
    let mut help = format!("Fix: {}", d.fix);
    let mut markdown = format!("**Fix:** {}", d.fix);
    if let Some(w) = &d.workaround {
        help.push_str(&format!("\nWorkaround: {w}"));
        markdown.push_str(&format!("\n\n**Workaround:** {w}"));
    }
    for r in &d.references {
        help.push_str(&format!("\nSee: {r}"));
        markdown.push_str(&format!("\n\n<{r}>"));
    }
    let mut tags = vec![d.kind.as_str().to_string()];
    if d.generic {
        tags.push("generic".to_string());
    }
    Rule {
        id: d.signature.clone(),
        short_description: Message::text(d.title.clone()),
        full_description: Message::text(d.summary.clone()),
        help: Help {
            text: help,
            markdown: Some(markdown),
        },
        help_uri: d.references.first().cloned(),
        default_configuration: Configuration {
            level: if d.generic { "warning" } else { "error" },
        },
        properties: RuleProperties { tags },
    }
}

fn result(report: &Report, diagnosis: Option<&Diagnosis>, id: &str, index: usize) -> SarifResult {
    let known = report.baseline.as_ref().is_some_and(|b| b.known);
    let possible = diagnosis.is_some_and(|d| d.possible.is_some());
    let mut message = match diagnosis {
        Some(d) => format!("{}: {}", d.name(), d.title),
        None => "Crash matching no known signature".to_string(),
    };
    if let Some(why) = diagnosis.and_then(Diagnosis::not_established) {
        message.push_str(&format!(" ({why})"));
    }
    if let Some(s) = &report.crash_signature {
        message.push_str(&format!(". Crash signature: {s}"));
    }
    if let Some(b) = report.baseline.as_ref().filter(|b| b.known) {
        message.push_str(". Known");
        if let Some(issue) = &b.issue {
            message.push_str(&format!(", tracked at {issue}"));
        }
        if let Some(note) = &b.note {
            message.push_str(&format!(": {note}"));
        }
    }
    if let Some(d) = diagnosis {
        message.push_str(&format!(". Fix: {}", d.fix));
    }
    let thread = diagnosis
        .and_then(|d| report.threads.iter().find(|t| t.id == d.thread_id))
        .or_else(|| report.crashing_thread())
        .or_else(|| report.blamed_thread());
    let related: Vec<Location> = thread
        .and_then(|t| t.frames.iter().find(|f| f.file.is_some()))
        .map(frame_location)
        .into_iter()
        .collect();
    SarifResult {
        rule_id: id.to_string(),
        rule_index: index,
        kind: "fail",
        level: if known || possible {
            "warning"
        } else {
            "error"
        },
        message: Message::text(message),
        locations: vec![Location::of_file(&report.path)],
        related_locations: related,
        stacks: thread.map(stack).into_iter().collect(),
        code_flows: thread.map(code_flow).into_iter().collect(),
        partial_fingerprints: report.crash_signature.as_ref().map(|s| Fingerprints {
            crash_signature: s.clone(),
        }),
        baseline_state: report
            .baseline
            .as_ref()
            .map(|b| if b.known { "unchanged" } else { "new" }),
        work_item_uris: report
            .baseline
            .as_ref()
            .and_then(|b| b.issue.clone())
            .filter(|i| i.starts_with("https://") || i.starts_with("http://"))
            .into_iter()
            .collect(),
        properties: ResultProperties {
            dump: report.path.clone(),
            crash_signature: report.crash_signature.clone(),
            kind: diagnosis
                .map(|d| d.kind.as_str())
                .unwrap_or("crash")
                .to_string(),
            confidence: diagnosis.map(|d| d.confidence),
        },
    }
}

fn stack(thread: &Thread) -> Stack {
    Stack {
        message: Message::text(thread_label(thread)),
        frames: thread
            .frames
            .iter()
            .map(|f| StackFrame {
                location: frame_location(f),
                module: f.module.clone(),
                thread_id: i64::from(thread.id),
            })
            .collect(),
    }
}

/// The thread as a path of execution: the outermost call first.
fn code_flow(thread: &Thread) -> CodeFlow {
    CodeFlow {
        message: Message::text(thread_label(thread)),
        thread_flows: vec![ThreadFlow {
            id: thread.id.to_string(),
            locations: thread
                .frames
                .iter()
                .rev()
                .enumerate()
                .map(|(nesting, f)| ThreadFlowLocation {
                    location: frame_location(f),
                    nesting_level: nesting,
                })
                .collect(),
        }],
    }
}

fn thread_label(thread: &Thread) -> String {
    let mut label = format!("thread {}", thread.id);
    if let Some(name) = &thread.name {
        label.push_str(&format!(" \"{name}\""));
    }
    if thread.crashing {
        label.push_str(" (crashing)");
    }
    if let Some(b) = &thread.blocked {
        label.push_str(&format!(", blocked in {}", b.function));
    }
    label
}

/// A frame as a location: its source line when known, its function as a
/// logical location, and what the text report says of it as the message.
fn frame_location(frame: &Frame) -> Location {
    let name = match (&frame.module, &frame.function) {
        (Some(m), Some(f)) => format!("{m}!{f}"),
        (None, Some(f)) => f.clone(),
        (Some(m), None) => format!("{m}+{}", crate::model::offset(frame.module_offset)),
        (None, None) => format!("{:#x}", frame.instruction),
    };
    let physical = frame.file.as_deref().map(|file| PhysicalLocation {
        artifact_location: ArtifactLocation { uri: uri(file) },
        region: frame
            .line
            .filter(|&l| l > 0)
            .map(|l| Region { start_line: l }),
    });
    Location {
        physical_location: physical,
        logical_locations: frame
            .function
            .as_ref()
            .map(|f| LogicalLocation {
                fully_qualified_name: f.clone(),
                kind: "function",
            })
            .into_iter()
            .collect(),
        message: Some(Message::text(name)),
    }
}

/// Characters a path keeps in a URI reference; the rest is %-encoded.
const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// A file path as a URI reference: absolute paths (Unix or Windows) as
/// `file:` URIs, relative ones as relative references, with `/`.
pub(crate) fn uri(path: &str) -> String {
    let slashed = path.replace('\\', "/");
    let drive = slashed.len() >= 2
        && slashed.as_bytes()[0].is_ascii_alphabetic()
        && slashed.as_bytes()[1] == b':';
    let encode = |p: &str| utf8_percent_encode(p, PATH).to_string();
    if drive {
        format!("file:///{}", encode(&slashed))
    } else if let Some(rest) = slashed.strip_prefix("//") {
        // A UNC path: \\server\share\file.
        format!("file://{}", encode(rest))
    } else if slashed.starts_with('/') {
        format!("file://{}", encode(&slashed))
    } else {
        // A relative reference whose first segment holds a `:` would read
        // as a scheme: `./` keeps it a path.
        let first = slashed.split('/').next().unwrap_or("");
        let encoded = encode(&slashed);
        if first.contains(':') {
            format!("./{encoded}")
        } else {
            encoded
        }
    }
}

#[derive(Serialize)]
struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

#[derive(Serialize)]
struct Run {
    tool: Tool,
    invocations: Vec<Invocation>,
    results: Vec<SarifResult>,
    properties: RunProperties,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunProperties {
    crash_signature_version: u32,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    semantic_version: &'static str,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: String,
    short_description: Message,
    full_description: Message,
    help: Help,
    #[serde(skip_serializing_if = "Option::is_none")]
    help_uri: Option<String>,
    default_configuration: Configuration,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct Help {
    text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    markdown: Option<String>,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties {
    tags: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_execution_notifications: Vec<Notification>,
}

#[derive(Serialize)]
struct Notification {
    level: &'static str,
    message: Message,
    locations: Vec<Location>,
}

#[derive(Serialize)]
struct Message {
    text: String,
}

impl Message {
    fn text(text: String) -> Message {
        Message { text }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: String,
    rule_index: usize,
    kind: &'static str,
    level: &'static str,
    message: Message,
    locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stacks: Vec<Stack>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    code_flows: Vec<CodeFlow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    partial_fingerprints: Option<Fingerprints>,
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline_state: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    work_item_uris: Vec<String>,
    properties: ResultProperties,
}

#[derive(Serialize)]
struct Fingerprints {
    /// The crash signature, by its version: results of different versions
    /// never compare equal.
    #[serde(rename = "crashSignature/v2")]
    crash_signature: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultProperties {
    dump: String,
    crash_signature: Option<String>,
    kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    confidence: Option<f64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    #[serde(skip_serializing_if = "Option::is_none")]
    physical_location: Option<PhysicalLocation>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    logical_locations: Vec<LogicalLocation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Message>,
}

impl Location {
    fn of_file(path: &str) -> Location {
        Location {
            physical_location: Some(PhysicalLocation {
                artifact_location: ArtifactLocation { uri: uri(path) },
                region: None,
            }),
            logical_locations: Vec::new(),
            message: None,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
struct ArtifactLocation {
    uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LogicalLocation {
    fully_qualified_name: String,
    kind: &'static str,
}

#[derive(Serialize)]
struct Stack {
    message: Message,
    frames: Vec<StackFrame>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StackFrame {
    location: Location,
    #[serde(skip_serializing_if = "Option::is_none")]
    module: Option<String>,
    thread_id: i64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CodeFlow {
    message: Message,
    thread_flows: Vec<ThreadFlow>,
}

#[derive(Serialize)]
struct ThreadFlow {
    id: String,
    locations: Vec<ThreadFlowLocation>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ThreadFlowLocation {
    location: Location,
    nesting_level: usize,
}

#[cfg(test)]
mod tests {
    use super::uri;

    #[test]
    fn paths_become_uri_references() {
        assert_eq!(uri("dumps/a b.dmp"), "dumps/a%20b.dmp");
        assert_eq!(uri("/tmp/x#1.dmp"), "file:///tmp/x%231.dmp");
        assert_eq!(uri(r"C:\src\app.cpp"), "file:///C:/src/app.cpp");
        assert_eq!(uri(r"\\server\share\a.dmp"), "file://server/share/a.dmp");
        assert_eq!(uri("c:d/x"), "file:///c:d/x");
        assert_eq!(uri("ab:c/x"), "./ab:c/x");
        assert_eq!(uri("ü.dmp"), "%C3%BC.dmp");
    }
}
