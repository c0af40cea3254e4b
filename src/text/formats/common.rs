//! What the formats share: the interface each implements, the line and
//! frame they read, and the small helpers of their regular expressions.

use std::sync::LazyLock;

use regex_lite::{Captures, Regex};

/// What every format answers: what a line is, if the format knows it.
pub(in crate::text) trait TraceFormat: Sync {
    /// The format this file reads.
    fn format(&self) -> Format;

    /// What `line` is in this format, or `None`. `inside` is the format of
    /// the trace being read: formats whose bare lines are too generic alone
    /// (Rust's `N: name`, py-spy's `name (file:line)`) read them only
    /// inside their own trace.
    fn read(&self, line: &Text<'_>, inside: Option<Format>) -> Option<Line>;
}

/// A cleaned line as the formats see it.
pub(in crate::text) struct Text<'a> {
    /// The line as cleaned (CI noise off), with its indentation.
    pub line: &'a str,
    /// Without leading blanks.
    pub trimmed: &'a str,
    /// The first byte of `trimmed`.
    pub first: u8,
}

/// The formats a trace can be in, as reports name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::text) enum Format {
    Gdb,
    Lldb,
    WinDbg,
    VisualStudio,
    Faulthandler,
    PythonTraceback,
    PySpy,
    Pystack,
    EuStack,
    BacktraceSymbols,
    Sanitizer,
    Rust,
    CudaSanitizer,
    AppleCrashReport,
    Glog,
    SystemdCoredump,
    AddressFrames,
    FrameList,
    Spindump,
    CallTree,
    Valgrind,
    Dotnet,
    Node,
    HsErr,
    Backward,
}

impl Format {
    pub(in crate::text) fn name(self) -> &'static str {
        match self {
            Format::Gdb => "gdb",
            Format::Lldb => "lldb",
            Format::WinDbg => "windbg",
            Format::VisualStudio => "visual-studio",
            Format::Faulthandler => "faulthandler",
            Format::PythonTraceback => "python-traceback",
            Format::PySpy => "py-spy",
            Format::Pystack => "pystack",
            Format::EuStack => "eu-stack",
            Format::BacktraceSymbols => "backtrace-symbols",
            Format::Sanitizer => "sanitizer",
            Format::Rust => "rust",
            Format::CudaSanitizer => "cuda-sanitizer",
            Format::AppleCrashReport => "apple-crash-report",
            Format::Glog => "glog",
            Format::SystemdCoredump => "systemd-coredump",
            Format::AddressFrames => "address-frames",
            Format::FrameList => "frame-list",
            Format::Spindump => "spindump",
            Format::CallTree => "call-tree",
            Format::Valgrind => "valgrind",
            Format::Dotnet => "dotnet",
            Format::HsErr => "jvm-fatal-error",
            Format::Backward => "backward-cpp",
            Format::Node => "node",
        }
    }

    /// Python tracebacks, macOS's sampled call trees, call trees written by
    /// hand and backward-cpp list the outermost call first; every other
    /// format the innermost.
    pub(in crate::text) fn outermost_first(self) -> bool {
        matches!(
            self,
            Format::PythonTraceback
                | Format::Pystack
                | Format::Spindump
                | Format::CallTree
                | Format::Backward
        )
    }

    /// A debugger's view of a stopped process: a stack it prints without
    /// naming a signal is where the process stopped, which its top frame
    /// tells (a wait: a hang; anything else: most likely a crash). A call
    /// tree written by hand is such a stack copied out. Python and profiler
    /// dumps are taken from live processes.
    pub(in crate::text) fn debugger(self) -> bool {
        matches!(
            self,
            Format::Gdb
                | Format::Lldb
                | Format::WinDbg
                | Format::VisualStudio
                | Format::FrameList
                | Format::EuStack
                | Format::CallTree
        )
    }

    /// Formats that make up one trace together: faulthandler's Python
    /// frames with its C stack; a traceback inside pytest-timeout's dump.
    pub(in crate::text) fn goes_with(self, other: Format) -> bool {
        self == other
            || matches!(
                (self, other),
                (Format::Faulthandler, Format::PythonTraceback)
                    | (Format::PythonTraceback, Format::Faulthandler)
            )
    }
}

/// A frame as a line gives it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(in crate::text) struct TextFrame {
    pub index: Option<usize>,
    pub module: Option<String>,
    pub function: Option<String>,
    pub function_offset: Option<u64>,
    pub module_offset: Option<u64>,
    pub address: Option<u64>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub python: bool,
    /// Read from a line that names a function and nothing else (a person's
    /// abridged `#3  free`, a bare `module!name`): a plain shape, so a trace
    /// of such frames alone needs a few of them.
    pub bare: bool,
    /// Further frames written on the same line, each the caller of the one
    /// before (`_PyModule_Clear -> finalize_modules -> Py_FinalizeEx`, `a /
    /// b`): their names.
    pub joined: Vec<String>,
    /// How many samples a sampling profiler's call tree counted in this
    /// frame (spindump, `sample`).
    pub samples: Option<u64>,
}

/// What a line is.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::text) enum Line {
    Frame(Format, TextFrame),
    /// A thread header: its id and name when printed; `current` when the
    /// format marks it as the thread that crashed or was stopped.
    Thread {
        format: Format,
        /// The debugger's own number for the thread (gdb's `Thread 2`),
        /// which its crash line names.
        number: Option<u64>,
        id: Option<u64>,
        name: Option<String>,
        current: bool,
        /// WinDbg's `#`: the thread of the last event (the exception),
        /// which `.` (the current thread) need not be after `~Ns`.
        event: bool,
    },
    /// The module of the frame above (compute-sanitizer's `in LIBRARY`).
    Module(String),
    /// The source location of the frame above (Rust's `at file:line`).
    Location {
        file: String,
        line: Option<u32>,
    },
    /// The crash, as the runtime or debugger names it (`SIGSEGV`,
    /// `access violation`, `c0000005`), with the thread when the line says.
    Crash {
        what: String,
        thread: Option<u64>,
    },
    /// A trace begins here (faulthandler's "Fatal Python error", ASan's
    /// ERROR line, a Rust panic, pytest-timeout's banner): a new trace when
    /// one is already being read.
    Start(Format),
    /// The thread a debugger stopped in, by its number and id (gdb's
    /// `[Current thread is 1 (Thread 0x... (LWP 42))]` on a core).
    Stopped {
        number: Option<u64>,
        id: Option<u64>,
    },
    /// A debugger or the user stopped the process without a crash (gdb's
    /// SIGINT after Ctrl-C, a breakpoint, lldb's SIGSTOP on attach): the
    /// trace that follows is of a live process.
    Interrupted,
    /// Frames were left out (`[External Code]`, `...`, Rust's note).
    Elided,
    /// The frames of this format that follow are no thread's stack but
    /// history (valgrind's stacks of where a block was freed or allocated),
    /// until the next crash, thread or trace.
    Aside(Format),
    /// The native stack of the thread just shown follows (faulthandler's
    /// "Current thread's C stack trace", Python 3.14): its frames are the
    /// innermost ones of that thread.
    NativeStack,
}

/// A regular expression compiled on first use.
macro_rules! re {
    ($name:ident, $expr:expr) => {
        pub(super) static $name: std::sync::LazyLock<regex_lite::Regex> =
            std::sync::LazyLock::new(|| regex_lite::Regex::new($expr).expect($expr));
    };
}
pub(in crate::text) use re;

// A signal a program's own handler names (`Error: signal 11:`, `Caught
// signal 6`, `received SIGSEGV`): Linux numbering.
pub(in crate::text) static SIGNAL_SAID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:signal (4|6|7|8|11)\b|(SIG(?:SEGV|ABRT|BUS|FPE|ILL))\b)")
        .expect("signal pattern")
});

pub(in crate::text) fn hex(text: &str) -> Option<u64> {
    u64::from_str_radix(text.trim_start_matches("0x").trim_start_matches("0X"), 16).ok()
}

pub(in crate::text) fn text(c: &Captures, i: usize) -> Option<String> {
    c.get(i)
        .map(|m| m.as_str().to_string())
        .filter(|s| !s.is_empty())
}

pub(in crate::text) fn number<T: std::str::FromStr>(c: &Captures, i: usize) -> Option<T> {
    c.get(i).and_then(|m| m.as_str().parse().ok())
}

/// The file name of a path, `/` or `\` separated.
pub(in crate::text) fn base(path: &str) -> String {
    path.rsplit(['/', '\\']).next().unwrap_or(path).to_string()
}

/// A name a debugger prints for "no name".
pub(in crate::text) fn named(name: Option<String>) -> Option<String> {
    name.filter(|n| {
        !matches!(
            n.as_str(),
            "??" | "???" | "<unknown>" | "_start_" | "n/a" | ""
        )
    })
}

/// A path that names a shared library or executable image, not a source
/// file.
pub(in crate::text) fn is_library(path: &str) -> bool {
    let name = base(path).to_ascii_lowercase();
    name.contains(".so")
        || name.ends_with(".dylib")
        || name.ends_with(".dll")
        || name.ends_with(".exe")
}

/// Itanium-mangled names (`_ZN3foo3barEv`, what backtrace_symbols prints)
/// demangled; other names as they are.
pub(in crate::text) fn demangle(name: &str) -> String {
    if name.starts_with("_Z") {
        addr2line::demangle_auto(std::borrow::Cow::Borrowed(name), None).into_owned()
    } else {
        name.to_string()
    }
}

/// A frame line of `format`.
pub(in crate::text) fn frame_line(format: Format, frame: TextFrame) -> Option<Line> {
    Some(Line::Frame(format, frame))
}

/// What follows a bare frame's name on an abridged line: nothing, a note
/// (`<- spin loop`, `<-- re-locks it`, `# comment`, `... file.cc:12`), or
/// more frames joined by ` -> ` or ` / ` (each the caller of the one
/// before), themselves maybe followed by a note. `None` when it is
/// something else (prose: the line is no frame).
pub(in crate::text) fn abridged_tail(rest: &str) -> Option<Vec<String>> {
    let mut joined = Vec::new();
    let mut rest = rest.trim();
    loop {
        if rest.is_empty()
            || rest.starts_with("<-")
            || rest.starts_with('#')
            || rest.starts_with("...")
        {
            return Some(joined);
        }
        let next = rest
            .strip_prefix("->")
            .or_else(|| rest.strip_prefix('/'))?
            .trim_start();
        let end = next.find(char::is_whitespace).unwrap_or(next.len());
        let name = &next[..end];
        // (After a first frame, a name in any case: `a / RtlDelayExecution`.)
        let identifier = name
            .starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '~')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_:~<>,()!.*&$@?'`".contains(c));
        if !identifier {
            return None;
        }
        joined.push(name.to_string());
        rest = next[end..].trim();
    }
}

/// A name that looks like a function's (not a word of prose): C and C++
/// names with an underscore, a scope, parameters or a template, or all in
/// lower case; `module!name`.
pub(in crate::text) fn symbol_name(name: &str) -> bool {
    let Some(first) = name.chars().next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_' || first == '~')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_:~<>,()!.*&$@?'`".contains(c))
        && (name.contains('_')
            || name.contains("::")
            || name.contains('(')
            || name.contains('<')
            || name.contains('!')
            || name.chars().all(|c| !c.is_ascii_uppercase()))
}
