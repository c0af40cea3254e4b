//! The typed report: what every renderer (text, JSON, ...) prints.
//!
//! Everything a user sees comes from these types, so the text and JSON outputs
//! cannot drift apart. The JSON shape is documented in `docs/json-schema.md`;
//! changing a field here is changing that contract.

use serde::Serialize;

/// Bumped when a field is removed or changes meaning. Adding a field is not a
/// breaking change (see docs/json-schema.md, "Stability").
pub const SCHEMA_VERSION: u32 = 1;

/// The top-level JSON document: one report per input dump.
#[derive(Debug, Serialize)]
pub struct Output<'a> {
    pub schema_version: u32,
    pub reports: &'a [Report],
}

/// Whether a dump could be analysed at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Error,
}

/// The analysis of one minidump, or the reason it could not be analysed.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The dump's path as the user gave it (or as found under a folder they gave).
    pub path: String,
    pub status: Status,
    /// One line naming what is wrong with the file, when `status` is `error`.
    pub error: Option<String>,
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
}

impl Report {
    /// A report for a dump that could not be analysed.
    pub fn failed(path: String, error: String) -> Self {
        Report {
            path,
            status: Status::Error,
            error: Some(error),
            process: None,
            system: None,
            exception: None,
            threads: Vec::new(),
            modules: Vec::new(),
            unloaded_modules: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// The thread the exception happened on, if any.
    pub fn crashing_thread(&self) -> Option<&Thread> {
        self.threads.iter().find(|t| t.crashing)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Process {
    /// File name of the main executable (`python.exe`), when the module list has one.
    pub name: Option<String>,
    pub pid: Option<u32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct System {
    /// "Windows NT", "Linux", "Mac OS X", ...
    pub os: String,
    pub os_version: Option<String>,
    /// "x86", "amd64", "arm64", ...
    pub cpu: String,
    pub cpu_info: Option<String>,
    pub cpu_count: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Exception {
    /// The raw code: an NTSTATUS on Windows (`0xc0000005`), a signal number elsewhere.
    pub code: String,
    /// The decoded reason (`EXCEPTION_ACCESS_VIOLATION_READ`, `SIGSEGV / SEGV_MAPERR`).
    pub name: String,
    /// The faulting address (for access violations the address accessed).
    pub address: String,
    pub thread_id: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct Thread {
    pub id: u32,
    /// From the ThreadNames stream (Windows) or the dump writer's own record.
    pub name: Option<String>,
    pub crashing: bool,
    /// Why the stack is short or empty, when it is (`missing_context`, ...); `ok` otherwise.
    pub walk: &'static str,
    pub frames: Vec<Frame>,
}

/// How the stack walker found a frame, from most to least reliable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    Context,
    Prewalked,
    Cfi,
    FramePointer,
    CfiScan,
    Scan,
    None,
}

impl Trust {
    /// The words the text report uses ("found by ...").
    pub fn describe(self) -> &'static str {
        match self {
            Trust::Context => "context",
            Trust::Prewalked => "external walker",
            Trust::Cfi => "CFI",
            Trust::FramePointer => "frame pointer",
            Trust::CfiScan => "CFI scan",
            Trust::Scan => "stack scan",
            Trust::None => "unknown",
        }
    }
}

/// Where a frame's function name came from, from most to least precise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolSource {
    /// A Breakpad .sym file (from a store, a symbol server or its cache).
    Sym,
    /// A Windows PDB whose GUID and age match the module.
    Pdb,
    /// DWARF debug information of an ELF binary or its separate debug file.
    Dwarf,
    /// The full symbol table (.symtab) of an unstripped ELF binary: function
    /// names without source lines.
    Symtab,
    /// A PE export table or an ELF dynamic symbol table, from the binary or
    /// from the module's image in the dump: only exported functions have
    /// names, so a frame may get the nearest exported name before it.
    Exports,
    /// No name was found.
    None,
}

impl SymbolSource {
    /// The word the text report and the JSON use.
    pub fn describe(self) -> &'static str {
        match self {
            SymbolSource::Sym => "sym",
            SymbolSource::Pdb => "pdb",
            SymbolSource::Dwarf => "dwarf",
            SymbolSource::Symtab => "symtab",
            SymbolSource::Exports => "exports",
            SymbolSource::None => "none",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Frame {
    pub index: usize,
    /// The absolute instruction address.
    pub instruction: String,
    /// File name of the loaded module holding the address (`test_app.exe`).
    pub module: Option<String>,
    pub function: Option<String>,
    pub module_offset: Option<String>,
    pub function_offset: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub trust: Trust,
    pub symbol_source: SymbolSource,
    /// When no loaded module holds the address but an unloaded one did: its name.
    pub unloaded_module: Option<String>,
    /// Offset of the address in that unloaded module.
    pub unloaded_module_offset: Option<String>,
    /// Functions inlined at this address, innermost first.
    pub inlines: Vec<InlineFrame>,
}

#[derive(Debug, Clone, Serialize)]
pub struct InlineFrame {
    pub function: String,
    pub file: Option<String>,
    pub line: Option<u32>,
}

/// Whether symbols were found for a module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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

#[derive(Debug, Clone, Serialize)]
pub struct Module {
    pub name: String,
    /// The full path the dump records (`C:\Windows\System32\ntdll.dll`).
    pub path: String,
    pub base: String,
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
}

#[derive(Debug, Clone, Serialize)]
pub struct UnloadedModule {
    pub name: String,
    pub path: String,
    pub base: String,
    pub size: u64,
    pub code_id: Option<String>,
    /// The source that named frames in this module's old range, when one did.
    pub symbol_source: SymbolSource,
}

/// Formats an address or offset the way every output writes them.
pub fn hex(value: u64) -> String {
    format!("{value:#x}")
}

/// The file name of a path recorded in a dump, whichever OS wrote it.
pub fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}
