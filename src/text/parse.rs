//! The pieces the line readers share: the formats, what a line can be,
//! the regular expressions of every format, and small helpers on their
//! captures.

use std::sync::LazyLock;

use regex_lite::{Captures, Regex};

/// The formats a trace can be in, as reports name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
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
}

impl Format {
    pub(super) fn name(self) -> &'static str {
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
        }
    }

    /// Python tracebacks list the outermost call first; every other format
    /// the innermost.
    pub(super) fn outermost_first(self) -> bool {
        matches!(self, Format::PythonTraceback | Format::Pystack)
    }
}

/// A frame as a line gives it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct TextFrame {
    pub index: Option<usize>,
    pub module: Option<String>,
    pub function: Option<String>,
    pub function_offset: Option<u64>,
    pub module_offset: Option<u64>,
    pub address: Option<u64>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub python: bool,
}

/// What a line is.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Line {
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
    /// Frames were left out (`[External Code]`, `...`, Rust's note).
    Elided,
    /// The native stack of the thread just shown follows (faulthandler's
    /// "Current thread's C stack trace", Python 3.14): its frames are the
    /// innermost ones of that thread.
    NativeStack,
}

macro_rules! re {
    ($name:ident, $expr:expr) => {
        pub(super) static $name: LazyLock<Regex> =
            LazyLock::new(|| Regex::new($expr).expect($expr));
    };
}

re!(
    GDB_FRAME,
    r"^#?(\d+)\s+(?:(0x[0-9a-fA-F]+) in )?(.*?)(?: ?\((.*)\))?(?: at (.+?)(?::(\d+))?| from (\S+))?\s*$"
);
re!(
    GDB_THREAD,
    r#"^Thread (\d+) \((?:Thread (0x[0-9a-fA-F]+) )?\(?(?:LWP|process) (\d+)\)?(?: "([^"]*)")?\)?(?: "([^"]*)")?(?: \(Exiting\))?\)?:?\s*$"#
);
re!(
    GDB_CURRENT,
    r"^\[Current thread is (\d+) \((?:Thread 0x[0-9a-fA-F]+ \()?(?:LWP|process) (\d+)\)"
);
re!(
    GDB_SIGNAL,
    r#"^(?:Thread (\d+) "[^"]*" received|Program received|Program terminated with) signal (SIG\w+)"#
);
// lldb marks optimized, inlined and compiler-made frames after the
// location: `[opt]`, `[inlined]`, `[artificial]`.
re!(
    LLDB_FRAME,
    r"^\s*\*?\s*frame #(\d+):\s+(0x[0-9a-fA-F]+)?(?:\s*(\S+?)`(.+?)(?: \+ (\d+))?(?: at (\S+?):(\d+)(?::\d+)?)?)?(?:\s+\[(?:opt|inlined|artificial)\])*\s*$"
);
re!(
    LLDB_THREAD,
    r"^\s*(\*)?\s*thread #(\d+)(?:, name = '([^']*)')?(?:.*stop reason = (.*))?"
);
re!(
    WINDBG_FRAME,
    r"^(?:[0-9a-fA-F]{2,4}\s+)?(?:[0-9a-fA-F]{8}(?:`?[0-9a-fA-F]{8})?\s+[0-9a-fA-F]{8}(?:`?[0-9a-fA-F]{8})?|\(Inline Function\)\s+-{8}`?-{0,8})\s+(?::\s+)?(?:[0-9a-fA-F`]{8,17}\s+){0,4}(?::\s+)?(\S.*?)(?:\+0x([0-9a-fA-F]+))?(?:\s+\[(.+?) @ (\d+)\])?\s*$"
);
re!(
    WINDBG_THREAD,
    r"^\s*([.#])?\s*(\d+)\s+Id: ([0-9a-fA-F]+)\.([0-9a-fA-F]+) Suspend:"
);
re!(
    WINDBG_EXCEPTION,
    r"(?i)^(?:ExceptionCode: ([0-9a-f]{8})|\([0-9a-f]+\.[0-9a-f]+\): (.+?) - code ([0-9a-f]{8}))"
);
re!(
    VS_FRAME,
    r"^\s*>?\s*([\w.+-]+?\.(?:dll|exe|pyd|node|sys|so|DLL|EXE))!(.+?)(?:\s+(?:Line|Zeile|Ligne|Línea|Riga|Linha|Строка|行|줄|Řádek|Wiersz|Satır)\s*(\d+))?(?:\s+(?:C\+\+|C|Unknown|Unbekannt|Native|Mixed))?\s*$"
);
re!(PY_FRAME, r#"^\s+File "(.+)", line (\d+),? in ([^\s#]+)"#);
re!(
    FAULT_THREAD,
    r"^(Current thread|Thread) (0x[0-9a-fA-F]+)(?: \[([^\]]*)\])?(?: \(most recent call first\))?:\s*$"
);
re!(
    FAULT_C_FRAME,
    r#"^\s+Binary file "(.+?)"(?:, at (\S+?)\+0x([0-9a-fA-F]+))? \[(0x[0-9a-fA-F]+)\]"#
);
re!(PYTEST_THREAD, r"^~+ Stack of (.+) \((\d+)\) ~+\s*$");
re!(
    PYSPY_THREAD,
    r#"^Thread (0x[0-9a-fA-F]+|\d+) \((idle|active)[^)]*\)(?:: "(.*)")?\s*$"#
);
re!(PYSPY_FRAME, r"^\s+(\S+) \((.+?)(?::(\d+))?\)\s*$");
re!(
    PYSTACK_THREAD,
    r"^Traceback for thread (\d+)(?: \(([^)]*)\))?"
);
re!(
    PYSTACK_FRAME,
    r#"^\s+\((Python|C)\) File "(.+)", line (\d+), in (\S+)(?: \((\S+)\))?"#
);
// systemd-coredump's stacks (`coredumpctl info`, the journal):
// `Stack trace of thread 4242:` (some versions add the thread's name), then
// `#0  0x00007f... FUNCTION (MODULE + 0xOFFSET)`, `n/a` for no name; the
// signal is on a `Signal: 11 (SEGV)` line above.
re!(
    COREDUMP_THREAD,
    r"^\s*Stack trace of thread (\d+)(?: \(([^)]*)\))?:\s*$"
);
re!(
    COREDUMP_FRAME,
    r"^\s*#(\d+)\s+(0x[0-9a-fA-F]+)\s+(.+?) \(([^()\s]+)(?: \+ (0x[0-9a-fA-F]+))?\)\s*$"
);
re!(COREDUMP_SIGNAL, r"^\s*Signal: \d+ \((\w+)\)\s*$");
re!(EU_THREAD, r"^TID (\d+):\s*$");
re!(
    EU_FRAME,
    r"^#(\d+)\s+(0x[0-9a-fA-F]+)(?:\s+-\s*1)?(?:\s+(\S+))?(?:\s+-\s+(\S+))?\s*$"
);
// (A signal handler that pipes each line through addr2line leaves its
// `FILE:LINE` after the address; one that numbers the lines puts the
// number first.)
re!(
    BT_SYMBOLS,
    r"^(?:\d+\s+)?(\S+)\(([^()+]*)(?:\+(0x[0-9a-fA-F]+))?\)\s*\[(0x[0-9a-fA-F]+)\](?:\s+(\S+?):(\d+))?\s*$"
);
// A signal a program's own handler names (`Error: signal 11:`, `Caught
// signal 6`, `received SIGSEGV`): Linux numbering.
re!(
    SIGNAL_SAID,
    r"(?i)\b(?:signal (4|6|7|8|11)\b|(SIG(?:SEGV|ABRT|BUS|FPE|ILL))\b)"
);
// (An unsymbolized frame has no `in NAME`: `#3 0x...  (/bin/app+0x1c)`;
// newer runtimes put ` (BuildId: ...)` after the module.)
re!(
    SAN_FRAME,
    r"^\s+#(\d+) (0x[0-9a-fA-F]+)(?: in (.+?))?(?: +\((\S+?)\+(0x[0-9a-fA-F]+)\)| (\S+?):(\d+)(?::\d+)?)?(?: \(BuildId: [0-9a-fA-F]+\))?\s*$"
);
re!(
    SAN_START,
    r"^==\d+==\s*ERROR: \w+Sanitizer: (\S+(?: on unknown address)?)"
);
// A Rust frame that prints its address: `N: 0x... - NAME`.
re!(RUST_ADDRESS_FRAME, r"^\s*\d+:\s+0x[0-9a-fA-F]+ - \S");
re!(
    RUST_FRAME,
    r"^\s*(\d+):\s+(?:(0x[0-9a-fA-F]+) - )?(.+?)\s*$"
);
// compute-sanitizer's and cuda-memcheck's host frames: cuda-memcheck puts
// the module first (`Host Frame:/lib/libcuda.so.1 (cuLaunch + 0x1a)
// [0x2f1a3]`), compute-sanitizer the function (`Host Frame:main in
// main.cu:12 [0x8e75]`, older `FILE:LINE:FUNC [0x..]`, or nothing) and the
// module on the next line (`=========     in /lib/libcuda.so.1`).
re!(
    CUDA_HOST_FRAME,
    r"Host Frame:\s*(.*?)\s*\[(0x[0-9a-fA-F]+)\](?:\s+in (\S+))?\s*$"
);
re!(
    CUDA_MODULE_FIRST,
    r"^(\S+?) \((.+?)(?: \+ (0x[0-9a-fA-F]+))?\)$"
);
re!(CUDA_FILE_LINE_FUNC, r"^(\S+?):(\d+):([^\s:][^\s]*)$");
re!(CUDA_FUNC_IN_FILE, r"^(.+?) in (\S+?):(\d+)$");
re!(CUDA_MODULE_LINE, r"^=+\s+in (\S+)\s*$");
// What compute-sanitizer (and cuda-memcheck) reports before the host
// backtrace of each error: a CUDA API call that failed, or a memory error.
re!(
    CUDA_ERROR,
    r"^=+ (Program hit (\w+) \(error \d+\).*|Invalid __\w+__ \w+.*|Host API memory access error.*)$"
);
re!(
    APPLE_FRAME,
    r"^(\d+)\s+(\S+)\s+(0x[0-9a-fA-F]+) (.+?)(?: \+ (\d+))?\s*$"
);
re!(
    GLOG_FRAME,
    r"^\s*@\s+(0x[0-9a-fA-F]+)\s+(?:\(unknown\)|(.+?))\s*$"
);
re!(RUST_AT, r"^\s+at (.+?):(\d+)(?::\d+)?\s*$");
re!(
    FATAL_PYTHON,
    r"^(?:Fatal Python error|Windows fatal exception): (.+?)\s*$"
);

pub(super) fn hex(text: &str) -> Option<u64> {
    u64::from_str_radix(text.trim_start_matches("0x").trim_start_matches("0X"), 16).ok()
}

pub(super) fn text(c: &Captures, i: usize) -> Option<String> {
    c.get(i)
        .map(|m| m.as_str().to_string())
        .filter(|s| !s.is_empty())
}

pub(super) fn number<T: std::str::FromStr>(c: &Captures, i: usize) -> Option<T> {
    c.get(i).and_then(|m| m.as_str().parse().ok())
}

/// The file name of a path, `/` or `\` separated.
pub(super) fn base(path: &str) -> String {
    path.rsplit(['/', '\\']).next().unwrap_or(path).to_string()
}

/// A name a debugger prints for "no name".
pub(super) fn named(name: Option<String>) -> Option<String> {
    name.filter(|n| {
        !matches!(
            n.as_str(),
            "??" | "???" | "<unknown>" | "_start_" | "n/a" | ""
        )
    })
}
