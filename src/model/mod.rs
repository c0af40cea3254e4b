//! The typed report: what every renderer (text, JSON, ...) prints.
//!
//! Everything a user sees comes from these types, so the text and JSON outputs
//! cannot drift apart. The JSON shape is documented in `docs/json-schema.md`;
//! changing a field here is changing that contract.

use serde::{Deserialize, Serialize};

mod capture;
mod converted;
mod hex;
mod message;
mod names;
mod phase;
pub mod schema;
mod stack;

pub use capture::*;
pub use converted::*;
use hex::{
    de_hex_list, de_hex_option, de_hex_u32, de_hex_u64, hex_list, hex_option, hex_u32, hex_u64,
};
pub use message::*;
pub use names::*;
pub use phase::*;
pub use stack::*;

/// Bumped when a field is removed or changes meaning. Adding a field is not a
/// breaking change (see docs/json-schema.md, "Stability").
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// The top-level JSON document: one report per input dump.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Output<'a> {
    pub schema_version: u32,
    /// The version of every report's `crash_signature`
    /// ([`crate::signature::VERSION`]).
    pub crash_signature_version: u32,
    pub summary: &'a Summary,
    pub reports: &'a [Report],
}

/// A run at a glance: dumps grouped by what went wrong.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Summary {
    pub dumps: usize,
    pub analysed: usize,
    pub failed: usize,
    /// Known failures first, then unexplained ones, then dumps where nothing
    /// failed; larger groups first.
    pub groups: Vec<SummaryGroup>,
    /// Inputs that could not be analysed.
    pub errors: Vec<SummaryError>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SummaryGroup {
    /// The rule id for known failures; otherwise the generic rule id or
    /// `unknown crash`, followed by the crash signature.
    pub key: String,
    /// The diagnosis' rule id, if any.
    pub signature: Option<String>,
    pub kind: Option<Kind>,
    /// A specific signature explains these dumps.
    pub known: bool,
    /// A specific signature would explain these dumps, but the exit it
    /// asks for is not established (`possibly: ID`).
    pub possible: bool,
    pub title: String,
    pub fix: Option<String>,
    pub count: usize,
    pub dumps: Vec<String>,
    /// With a baseline: how many of these dumps' crash signatures it does
    /// not have (new failures). `None` without a baseline.
    pub new: Option<usize>,
    /// The baseline's issue URLs of these dumps, each once.
    pub issues: Vec<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SummaryError {
    pub path: String,
    pub error: String,
    pub error_kind: Option<ErrorKind>,
}

/// Whether a dump could be analysed at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Error,
}

/// The analysis of one minidump, or the reason it could not be analysed.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema, Deserialize)]
pub struct Report {
    /// The dump's path as the user gave it (or as found under a folder they gave).
    pub path: String,
    pub status: Status,
    /// One line naming what is wrong with the file, when `status` is `error`.
    pub error: Option<String>,
    /// The kind of that error, a stable name for tools (`truncated`,
    /// `not_minidump`, `internal`, ...: the variants of
    /// [`crate::dump::DumpError`], see [`crate::dump::DumpError::name`]).
    pub error_kind: Option<ErrorKind>,
    pub process: Option<Process>,
    pub system: Option<System>,
    /// The exception record; `None` for a live or hang dump.
    pub exception: Option<Exception>,
    /// The crashing thread first, then the others in dump order.
    pub threads: Vec<Thread>,
    pub modules: Vec<Module>,
    pub unloaded_modules: Vec<UnloadedModule>,
    /// Problems that did not stop the analysis (a corrupt optional stream, ...).
    pub warnings: Vec<String>,
    /// Whether the process was exiting, and which thread a hang is blamed on.
    pub exit_phase: ExitPhase,
    /// Known failures this dump matches, the most specific first:
    /// `diagnoses[0]` is the answer.
    pub diagnoses: Vec<Diagnosis>,
    /// The failure's identity across runs, builds and input kinds (version
    /// [`crate::signature::VERSION`], src/signature.rs): the crashing or
    /// blamed thread's frames without runtime machinery, and what a hung
    /// thread waits for. Groups the dumps no specific signature explains,
    /// and keys baselines.
    pub crash_signature: Option<String>,
    /// Some frame of the crash signature had no name and is written as
    /// `module+offset`: a rebuild of that module changes the signature.
    #[serde(default)]
    pub crash_signature_offsets: bool,
    /// Set when a baseline was given (`--baseline`) and the dump failed:
    /// whether its crash signature is in it, and the entry's issue and note.
    #[serde(default)]
    pub baseline: Option<BaselineMatch>,
    /// Why the dump was taken, when `run` or `attach` wrote it.
    pub capture: Option<Capture>,
    /// What the report was read from: a minidump, or a stack trace in text.
    pub source: Source,
}

/// A stable short name the program itself defines (`error_kind`): one of
/// its own names when it made the report, an owned copy when it read a
/// report back (`dumptriage merge`).
pub type ErrorKind = std::borrow::Cow<'static, str>;

/// A failed dump's crash signature against the baseline (`--baseline`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BaselineMatch {
    /// The baseline has the signature: a known failure, tracked elsewhere.
    pub known: bool,
    /// The entry's issue URL.
    pub issue: Option<String>,
    /// The entry's note.
    pub note: Option<String>,
}

/// What a report was read from.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema, Deserialize)]
pub struct Source {
    pub kind: SourceKind,
    /// For text: the trace's format as detected (`gdb`, `faulthandler`, ...).
    pub format: Option<String>,
    /// For text: the line of the file where the trace starts (from 1).
    pub line: Option<usize>,
    /// For text: a runtime's own message near the trace saying the process
    /// was exiting (CPython's finalization, CUDA's "driver shutting down"),
    /// or the shape of the log (every test had passed before the failure),
    /// in words that say which fact decided it. Exit evidence like an exit
    /// frame.
    pub exit_evidence: Option<String>,
    /// What suggests exit when no runtime's message or exit frame shows
    /// it: for text, the text's own words (the reporter's "segfaults on
    /// exit", a heading over the stack, the program's "Shutting down..."
    /// just before the failure); for any report, a quit path on the failing
    /// thread (a function named for quitting: `mch_exit`, `App::Shutdown`).
    /// A hint, not a proof: rules answer from it only as a possible
    /// finding, when the stacks neither show exit nor rule it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_suggested: Option<String>,
    /// For text: why the log rules exit out (a test was still running when
    /// the process failed), when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_ruled_out: Option<String>,
    /// For text: the messages around the trace that say what happened (a
    /// runtime's fatal error, the C library's heap check, an exit status, a
    /// test summary), in the order of the log.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
    /// For text: the report has no stack, only the log's messages.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub messages_only: bool,
}

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    #[default]
    Minidump,
    Text,
    /// A Linux core file (plain or compressed).
    Core,
    /// A Windows Error Reporting `Report.wer` with no dump beside it: its
    /// problem signature only (the faulting module and offset, the code).
    Wer,
}

impl Report {
    /// The one place a report is made: what an input said is for its
    /// reader to fill in (`Report { threads, ..Report::new(path, source) }`:
    /// a reader states only what it read); every field classification fills
    /// (the exit phase, the diagnoses, the crash signature, the baseline)
    /// starts here, empty, for `exit_phase::classify` and the matcher.
    pub fn new(path: String, source: Source) -> Self {
        Report {
            path,
            status: Status::Ok,
            error: None,
            error_kind: None,
            process: None,
            system: None,
            exception: None,
            threads: Vec::new(),
            modules: Vec::new(),
            unloaded_modules: Vec::new(),
            warnings: Vec::new(),
            exit_phase: ExitPhase::default(),
            diagnoses: Vec::new(),
            crash_signature: None,
            crash_signature_offsets: false,
            baseline: None,
            capture: None,
            source,
        }
    }

    /// A report for a dump that could not be analysed: `kind` is the error's
    /// stable name, `error` the one line that explains it.
    pub fn failed(path: String, kind: &'static str, error: String) -> Self {
        Report {
            status: Status::Error,
            error: Some(error),
            error_kind: Some(ErrorKind::Borrowed(kind)),
            ..Report::new(path, Source::default())
        }
    }

    /// The thread the exception happened on, if it was a real crash.
    pub(crate) fn crashing_thread(&self) -> Option<&Thread> {
        self.threads.iter().find(|t| t.crashing)
    }

    /// The thread holding what thread `id` waits for, when the dump tells.
    pub fn holder_of(&self, id: u32) -> Option<u32> {
        self.threads
            .iter()
            .find(|t| t.id == id)?
            .wait
            .as_ref()?
            .holder
    }

    /// The thread `from` and the threads its wait leads to, in order: each
    /// one's holder, until a thread waits for nothing known or the chain comes
    /// back to a thread already in it.
    pub fn wait_chain(&self, from: u32) -> Vec<u32> {
        let mut chain = vec![from];
        let mut at = from;
        while let Some(next) = self.holder_of(at) {
            if chain.contains(&next) {
                break;
            }
            chain.push(next);
            at = next;
        }
        chain
    }

    /// The thread a crash or hang is blamed on.
    pub fn blamed_thread(&self) -> Option<&Thread> {
        let id = self.exit_phase.blamed_thread?;
        self.threads.iter().find(|t| t.id == id)
    }

    /// Whether the dump records a real crash (not a hang, live dump,
    /// debugger break-in or requested dump).
    pub fn crashed(&self) -> bool {
        self.exception.as_ref().is_some_and(|e| e.crash)
    }
}

#[derive(Debug, Clone, Serialize, Default, schemars::JsonSchema, Deserialize)]
pub struct Process {
    /// File name of the main executable (`python.exe`), when the module list has one.
    pub name: Option<String>,
    pub pid: Option<u32>,
    /// The command line, when the dump records it (Linux dumps do).
    pub command_line: Option<String>,
    /// When the dump was written (UTC, RFC 3339).
    pub dump_time: Option<String>,
    /// When the process started (UTC, RFC 3339), when the dump records it
    /// (Windows dumps do).
    pub start_time: Option<String>,
    /// Seconds from the start to the dump.
    pub uptime_seconds: Option<f64>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema, Deserialize)]
pub struct System {
    /// "Windows NT", "Linux", "Mac OS X", ...
    pub os: String,
    pub os_version: Option<String>,
    /// "x86", "amd64", "arm64", ...
    pub cpu: String,
    pub cpu_info: Option<String>,
    pub cpu_count: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Exception {
    /// The raw code: an NTSTATUS on Windows (`0xc0000005`), a signal number elsewhere.
    #[serde(serialize_with = "hex_u32", deserialize_with = "de_hex_u32")]
    #[schemars(with = "hex::Hex")]
    pub code: u32,
    /// The decoded reason (`EXCEPTION_ACCESS_VIOLATION_READ`, `SIGSEGV / SEGV_MAPERR`).
    pub name: String,
    /// The faulting address (for access violations the address accessed).
    #[serde(serialize_with = "hex_u64", deserialize_with = "de_hex_u64")]
    #[schemars(with = "hex::Hex")]
    pub address: u64,
    /// For a memory access fault (access violation, in-page error,
    /// SIGSEGV, SIGBUS): the data address the faulting instruction touched.
    #[serde(serialize_with = "hex_option", deserialize_with = "de_hex_option")]
    #[schemars(with = "Option<hex::Hex>")]
    pub access_address: Option<u64>,
    /// The exception record's parameters (ExceptionInformation) as the
    /// writer stored them: for 0xC0000409 the fast-fail code first, for
    /// 0xE06D7363 the C++ exception's magic, object and ThrowInfo.
    #[serde(serialize_with = "hex_list", deserialize_with = "de_hex_list")]
    #[schemars(with = "Vec<hex::Hex>")]
    pub parameters: Vec<u64>,
    /// Set when the crash is an abort, the process ending itself on purpose
    /// (fail-fast, SIGABRT, `abort`/`std::terminate`/`_purecall` on the
    /// crashing thread): how it shows.
    pub abort: Option<String>,
    /// For an MSVC C++ exception (0xE06D7363): the type thrown
    /// (`std::runtime_error`), when the dump's memory or the throwing
    /// module's binary holds its ThrowInfo.
    pub cpp_type: Option<String>,
    /// For any other crash (an abort from std::terminate, a fault in a catch
    /// handler): an MSVC C++ exception still being dispatched on the crashing
    /// thread, its record found in the live part of that thread's stack.
    pub cpp_in_flight: Option<CppInFlight>,
    pub thread_id: u32,
    /// False when the exception only marks how the dump was taken: a
    /// debugger break-in (0x80000003 on the break-in thread) or a "dump
    /// requested" code. Such a dump is treated as a live or hang dump.
    pub crash: bool,
    /// Why `crash` is false.
    pub not_a_crash: Option<String>,
    /// The crashing thread's instruction pointer lies in no module the dump
    /// lists, loaded or unloaded: a call or jump into unmapped memory, such
    /// as a library that was dlclose'd (Linux dumps list no unloaded
    /// modules) or a freed or corrupt function pointer.
    pub ip_in_no_module: bool,
}

/// A C++ exception whose dispatch was still under way when the process
/// crashed: the exception record the system built for it on the stack.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema, Deserialize)]
pub struct CppInFlight {
    /// The type thrown (`onnxruntime::OnnxRuntimeException`).
    pub cpp_type: String,
    /// Where the record is, in the crashing thread's stack.
    #[serde(serialize_with = "hex_u64", deserialize_with = "de_hex_u64")]
    #[schemars(with = "hex::Hex")]
    pub record_address: u64,
}

/// Whether a signature describes a crash or a hang.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Crash,
    Hang,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Crash => "crash",
            Kind::Hang => "hang",
        }
    }
}

/// One matched rule of the signature database.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema, Deserialize)]
pub struct Diagnosis {
    /// The rule id (`hip-unregister-fatbinary-hang`). Not to be confused
    /// with a report's `crash_signature`, which names unexplained crashes.
    pub signature: String,
    pub title: String,
    pub kind: Kind,
    /// True for the generic situations (`crash-during-exit`, ...), which
    /// always rank after specific signatures.
    pub generic: bool,
    /// 0.0-1.0; see docs/signatures.md, "Confidence".
    pub confidence: f64,
    /// The thread the diagnosis is about.
    pub thread_id: u32,
    /// The rule's exit is a thread's own exit, not the process's: the
    /// teardown it names ran as one thread ended (thread-local destructors
    /// of a worker), while nothing shows the process exiting.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub thread_exit: bool,
    /// Set when the rule asks for exit and nothing establishes it (nor
    /// rules it out): why. The diagnosis is then a possible finding only,
    /// ranked after every established one and not counted by
    /// `--fail-on known`.
    pub possible: Option<String>,
    /// Which `[[match]]` table of the rule matched, so a wrong answer
    /// points at the conditions to fix.
    pub alternative: Alternative,
    pub evidence: Vec<Evidence>,
    /// What happens, and why.
    pub summary: String,
    pub fix: String,
    pub workaround: Option<String>,
    pub references: Vec<String>,
    /// How the version the dump records compares with the release that
    /// carries the fix, when the rule names one (`[fixed]`).
    pub version_check: Option<VersionCheck>,
    /// The thread the diagnosed thread's wait leads to (the holder of what
    /// it waits for, that one's holder, ...: the last of the chain), where
    /// the dump tells: the thread to fix.
    pub waits_for: Option<WaitsFor>,
}

/// A rule's fix compared with the version in the dump (issue 39).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VersionCheck {
    /// The component the fix is in (`ONNX Runtime`).
    pub component: String,
    /// The module the version was read from, or the one found without one.
    pub module: Option<String>,
    pub module_version: Option<String>,
    /// The first release that carries the fix; `None` when no source
    /// establishes one.
    pub fixed_in: Option<String>,
    /// The change that fixed it.
    pub fix: String,
    /// What establishes `fixed_in`.
    pub source: Option<String>,
    pub verdict: VersionVerdict,
    /// The whole as one sentence, as the text report shows it.
    pub summary: String,
}

/// Which side of the fix the dump's version is on, or why that is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VersionVerdict {
    /// Older than the release with the fix: upgrading fixes it.
    PredatesFix,
    /// The fix is in: the failure is something else.
    HasFix,
    /// The version is too coarse to tell (it names the release series only).
    Undecided,
    /// The module is there, without a version.
    NoVersion,
    /// None of the component's modules is in the dump.
    NoModule,
    /// No source establishes which release carries the fix.
    ReleaseUnknown,
}

/// The end of a wait chain, said in one line: `waits for thread 7
/// "uploader", blocked in `Queue.get` at uploader_hang.py:9`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WaitsFor {
    /// The threads the wait leads to, in order; the last is the culprit.
    pub chain: Vec<u32>,
    pub thread_id: u32,
    pub thread_name: Option<String>,
    /// What that thread is blocked in or running: the call its own code
    /// made (a Python function such as `Queue.get`, or the blocking call).
    pub blocked_in: Option<String>,
    /// Where its own code made that call: `file:line` (the file's name).
    pub at: Option<String>,
    /// The whole line, as the text report shows it.
    pub summary: String,
}

impl Diagnosis {
    /// The rule id as reports name the finding: `possibly: ID` when it is
    /// a possible finding only.
    pub fn name(&self) -> String {
        match self.possible {
            Some(_) => format!("possibly: {}", self.signature),
            None => self.signature.clone(),
        }
    }

    /// Why the finding is only possible, as reports say it.
    pub fn not_established(&self) -> Option<String> {
        self.possible
            .as_deref()
            .map(|why| format!("exit not established because {why}"))
    }
}

/// A rule's `[[match]]` table: its place in the file and its label (the
/// table's `label`, else its conditions in a few words).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema, Deserialize)]
pub struct Alternative {
    pub index: usize,
    pub label: String,
}

/// One fact a diagnosis rests on.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema, Deserialize)]
pub struct Evidence {
    pub thread_id: Option<u32>,
    pub frame_index: Option<usize>,
    pub fact: String,
}

/// Whether symbols were found for a module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModuleSymbols {
    /// Some source named the module's functions (see `Module::symbol_source`).
    Loaded,
    Missing,
    /// Only files whose identity differs from the module's were found; they
    /// were refused.
    Mismatched,
    Corrupt,
    /// No frame needed this module, so no symbols were looked up.
    NotNeeded,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema, Deserialize)]
pub struct Module {
    pub name: String,
    /// The full path the dump records (`C:\Windows\System32\ntdll.dll`).
    pub path: String,
    #[serde(serialize_with = "hex_u64", deserialize_with = "de_hex_u64")]
    #[schemars(with = "hex::Hex")]
    pub base: u64,
    pub size: u64,
    pub version: Option<String>,
    pub debug_file: Option<String>,
    pub debug_id: Option<String>,
    pub code_id: Option<String>,
    pub symbols: ModuleSymbols,
    /// The source that named this module's frames (`none` when nothing did).
    pub symbol_source: SymbolSource,
    /// The file or URL that source was read from.
    pub symbol_file: Option<String>,
    /// Every place looked at for this module's symbols and what was found
    /// there, in the order tried; empty when no lookup was needed.
    pub symbols_tried: Vec<String>,
    /// Where the unwind information for this module's frames came from
    /// when no .sym file gave it: the binary's (or the image's) `.pdata`,
    /// `.eh_frame` or `.debug_frame`. `None` when none was used.
    pub unwind_info: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UnloadedModule {
    pub name: String,
    pub path: String,
    #[serde(serialize_with = "hex_u64", deserialize_with = "de_hex_u64")]
    #[schemars(with = "hex::Hex")]
    pub base: u64,
    pub size: u64,
    pub code_id: Option<String>,
    /// The source that named frames in this module's old range, when one did.
    pub symbol_source: SymbolSource,
}

/// Formats an address, offset or code the way every output writes them.
pub fn hex(value: u64) -> String {
    format!("{value:#x}")
}

/// An offset as `0x1a2b`, or `?` when unknown.
pub fn offset(value: Option<u64>) -> String {
    value.map_or_else(|| "?".to_string(), hex)
}

/// The file name of a path recorded in a dump, whichever OS wrote it.
pub fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}
