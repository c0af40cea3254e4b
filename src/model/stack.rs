//! Threads and their frames: how each frame was found, where its name
//! came from, and the functions inlined into it.

use super::hex::{de_hex_option, de_hex_u64, hex_option, hex_u64};
use super::phase::{Blocked, ExitMarker, StartupMarker, ThreadEnd, Wait};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, schemars::JsonSchema, Deserialize)]
pub struct Thread {
    pub id: u32,
    /// From the ThreadNames stream (Windows) or the dump writer's own record.
    pub name: Option<String>,
    pub crashing: bool,
    /// Set when the thread is running process exit.
    pub exiting: Option<ExitMarker>,
    /// When the walked frames show no exit but the stack search found a
    /// return address into a function that runs only at exit: that hit
    /// (`frame_index` is its index in `stack_search`). Weaker evidence,
    /// used only by rules that allow stack-search evidence.
    pub exiting_in_stack: Option<ExitMarker>,
    /// Set when the thread is starting the process or loading a module.
    pub starting: Option<StartupMarker>,
    /// Set when the thread itself is ending while nothing shows the process
    /// exiting: its own teardown (thread-local and TSD destructors,
    /// pthread_exit, FLS callbacks) under its start function. Thread exit,
    /// not process exit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ending: Option<ThreadEnd>,
    /// Set when the thread is blocked in a wait.
    pub blocked: Option<Blocked>,
    /// What it waits for, where the dump tells.
    pub wait: Option<Wait>,
    /// Whether the thread sat in a system call when the dump was written,
    /// where its registers tell (Linux: the kernel's restart code in the
    /// return register); `None` elsewhere (text traces, Windows).
    #[serde(skip)]
    pub in_system_call: Option<bool>,
    /// A Python thread that holds the GIL (read from the interpreter's
    /// state in the dump); absent from JSON when it does not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub holds_gil: bool,
    /// Why the stack is short or empty, when it is (`missing_context`, ...); `ok` otherwise.
    pub walk: Walk,
    pub frames: Vec<Frame>,
    /// When the walk broke off or is mostly stack scanning: return addresses
    /// into named functions found in the thread's stack memory that no
    /// walked frame shows, from the top of the stack down. Weaker evidence
    /// than frames: a stack holds stale return addresses too. A crash into
    /// unmapped code whose walk found no caller in a loaded module takes
    /// the first hit as its frame 1 (found by stack scan), out of this list.
    pub stack_search: Vec<StackHit>,
    /// The general-purpose registers of the crashing thread (what a
    /// debugger's `r` shows), in the CPU's own order; empty for the other
    /// threads and when the dump has no valid context.
    #[serde(
        serialize_with = "super::hex::register_list",
        deserialize_with = "super::hex::de_register_list"
    )]
    #[schemars(with = "std::collections::BTreeMap<String, super::hex::Hex>")]
    pub registers: Vec<(String, u64)>,
}

impl Thread {
    /// The one place a thread is made: what the input shows of it (name,
    /// frames, registers, what it waits for) is for its reader to fill in
    /// (`Thread { frames, ..Thread::new(id) }`); what classification decides
    /// (`exiting`, `exiting_in_stack`, `starting`, `blocked`) starts here,
    /// unset, for `exit_phase::classify`.
    pub fn new(id: u32) -> Thread {
        Thread {
            id,
            name: None,
            crashing: false,
            exiting: None,
            exiting_in_stack: None,
            starting: None,
            blocked: None,
            wait: None,
            ending: None,
            in_system_call: None,
            holds_gil: false,
            walk: Walk::Ok,
            frames: Vec::new(),
            stack_search: Vec::new(),
            registers: Vec::new(),
        }
    }
}

/// A return address found in a thread's stack memory by searching it, not by
/// walking it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StackHit {
    /// Where it was found, from the thread's stack pointer.
    #[serde(serialize_with = "hex_u64", deserialize_with = "de_hex_u64")]
    #[schemars(with = "super::hex::Hex")]
    pub stack_offset: u64,
    /// Found deeper in the stack than the last walked frame.
    pub below_walk: bool,
    /// The return address.
    #[serde(serialize_with = "hex_u64", deserialize_with = "de_hex_u64")]
    #[schemars(with = "super::hex::Hex")]
    pub address: u64,
    pub module: String,
    /// The function the address returns into.
    pub function: String,
    #[serde(serialize_with = "hex_u64", deserialize_with = "de_hex_u64")]
    #[schemars(with = "super::hex::Hex")]
    pub function_offset: u64,
    pub symbol_source: SymbolSource,
}

/// Whether a thread's stack could be walked, and if not, why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Walk {
    Ok,
    MissingContext,
    MissingMemory,
    UnsupportedCpu,
    DumpThreadSkipped,
}

impl Walk {
    /// The word every output uses (the JSON value too).
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Walk::Ok => "ok",
            Walk::MissingContext => "missing_context",
            Walk::MissingMemory => "missing_memory",
            Walk::UnsupportedCpu => "unsupported_cpu",
            Walk::DumpThreadSkipped => "dump_thread_skipped",
        }
    }
}

/// How the stack walker found a frame, from most to least reliable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// As a text trace printed it (a debugger's, a runtime's): no walk here.
    Text,
    /// A Python frame read from the interpreter's own state in memory.
    Interpreter,
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
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Trust::Text => "text trace",
            Trust::Interpreter => "interpreter state",
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema, Deserialize)]
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
    pub(crate) fn describe(self) -> &'static str {
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

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Frame {
    pub index: usize,
    /// The absolute instruction address.
    #[serde(serialize_with = "hex_u64", deserialize_with = "de_hex_u64")]
    #[schemars(with = "super::hex::Hex")]
    pub instruction: u64,
    /// File name of the loaded module holding the address (`test_app.exe`).
    pub module: Option<String>,
    pub function: Option<String>,
    /// The name is only the nearest exported (symbol-table, or .sym PUBLIC) name before
    /// the address: the function it names may end before the address.
    /// Rules match such names only where they say so.
    pub function_guessed: bool,
    #[serde(serialize_with = "hex_option", deserialize_with = "de_hex_option")]
    #[schemars(with = "Option<super::hex::Hex>")]
    pub module_offset: Option<u64>,
    #[serde(serialize_with = "hex_option", deserialize_with = "de_hex_option")]
    #[schemars(with = "Option<super::hex::Hex>")]
    pub function_offset: Option<u64>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub trust: Trust,
    pub symbol_source: SymbolSource,
    /// When no loaded module holds the address but an unloaded one did: its name.
    pub unloaded_module: Option<String>,
    /// Offset of the address in that unloaded module.
    #[serde(serialize_with = "hex_option", deserialize_with = "de_hex_option")]
    #[schemars(with = "Option<super::hex::Hex>")]
    pub unloaded_module_offset: Option<u64>,
    /// Functions inlined at this address, innermost first.
    pub inlines: Vec<InlineFrame>,
    /// A native frame, or a Python one (from a text trace: `function`,
    /// `file` and `line` are the Python function's; no module).
    pub kind: FrameKind,
}

/// What a frame is a frame of.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, schemars::JsonSchema, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum FrameKind {
    #[default]
    Native,
    Python,
}

impl Frame {
    /// A frame known only from a text trace: what it said, nothing else.
    pub fn from_text(index: usize) -> Frame {
        Frame {
            index,
            instruction: 0,
            module: None,
            function: None,
            function_guessed: false,
            module_offset: None,
            function_offset: None,
            file: None,
            line: None,
            trust: Trust::Text,
            symbol_source: SymbolSource::None,
            unloaded_module: None,
            unloaded_module_offset: None,
            inlines: Vec::new(),
            kind: FrameKind::Native,
        }
    }

    /// The names this frame answers to: the functions inlined at its address
    /// (innermost first), then its own function, unless that is only a
    /// guess (`function_guessed`): the exit phase and rules go by certain
    /// names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.inlines
            .iter()
            .map(|i| i.function.as_str())
            .chain(self.function.as_deref().filter(|_| !self.function_guessed))
    }

    /// The names with a guessed function name too, for rules that accept
    /// the nearest export as evidence.
    pub(crate) fn names_with_guesses(&self) -> impl Iterator<Item = &str> {
        self.inlines
            .iter()
            .map(|i| i.function.as_str())
            .chain(self.function.as_deref())
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema, Deserialize)]
pub struct InlineFrame {
    pub function: String,
    pub file: Option<String>,
    pub line: Option<u32>,
}
