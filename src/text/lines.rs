//! What one cleaned line of a log is, for each trace format: a frame, a
//! thread header, the crash itself, or the start of a trace. Each format
//! has a cheap test on the line's first characters before its regular
//! expression, so a 50 MB log is mostly skipped at that test.

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
        id: Option<u64>,
        name: Option<String>,
        current: bool,
    },
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
    /// Frames were left out (`[External Code]`, `...`, Rust's note).
    Elided,
    /// The native stack of the thread just shown follows (faulthandler's
    /// "Current thread's C stack trace", Python 3.14): its frames are the
    /// innermost ones of that thread.
    NativeStack,
}

macro_rules! re {
    ($name:ident, $expr:expr) => {
        static $name: LazyLock<Regex> = LazyLock::new(|| Regex::new($expr).expect($expr));
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
    GDB_SIGNAL,
    r#"^(?:Thread (\d+) "[^"]*" received|Program received|Program terminated with) signal (SIG\w+)"#
);
re!(
    LLDB_FRAME,
    r"^\s*\*?\s*frame #(\d+):\s+(0x[0-9a-fA-F]+)?(?:\s*(\S+?)`(.+?)(?: \+ (\d+))?(?: at (\S+?):(\d+)(?::\d+)?)?)?\s*$"
);
re!(
    LLDB_THREAD,
    r"^\s*(\*)?\s*thread #(\d+)(?:, name = '([^']*)')?(?:.*stop reason = (.*))?"
);
re!(
    WINDBG_FRAME,
    r"^(?:[0-9a-fA-F]{2,4}\s+)?[0-9a-fA-F]{8}(?:`?[0-9a-fA-F]{8})?\s+[0-9a-fA-F]{8}(?:`?[0-9a-fA-F]{8})?\s+(?:[0-9a-fA-F`]{8,17}\s+){0,4}(?::\s+)?(\S+?)(?:\((?:.*)\))?(?:\+0x([0-9a-fA-F]+))?(?:\s+\[(.+?) @ (\d+)\])?\s*$"
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
    r"^\s*>?\s*(\S+?\.(?:dll|exe|pyd|node|sys|so|DLL|EXE))!(.+?)(?:\s+(?:Line|Zeile|Ligne|Línea|Riga|Linha|Строка|行|줄|Řádek|Wiersz|Satır)\s*(\d+))?(?:\s+(?:C\+\+|C|Unknown|Unbekannt|Native|Mixed))?\s*$"
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
re!(EU_THREAD, r"^TID (\d+):\s*$");
re!(
    EU_FRAME,
    r"^#(\d+)\s+(0x[0-9a-fA-F]+)(?:\s+-\s*1)?(?:\s+(\S+))?(?:\s+-\s+(\S+))?\s*$"
);
re!(
    BT_SYMBOLS,
    r"^(\S+)\(([^()+]*)(?:\+(0x[0-9a-fA-F]+))?\)\s*\[(0x[0-9a-fA-F]+)\]\s*$"
);
re!(
    SAN_FRAME,
    r"^\s+#(\d+) (0x[0-9a-fA-F]+) in (.+?)(?: \((\S+?)\+(0x[0-9a-fA-F]+)\)| (\S+?):(\d+)(?::\d+)?)?\s*$"
);
re!(
    SAN_START,
    r"^==\d+==\s*ERROR: \w+Sanitizer: (\S+(?: on unknown address)?)"
);
re!(
    RUST_FRAME,
    r"^\s*(\d+):\s+(?:(0x[0-9a-fA-F]+) - )?(.+?)\s*$"
);
re!(
    CUDA_HOST_FRAME,
    r"Host Frame:\s*(\S+?)(?: \((.+?)(?: \+ (0x[0-9a-fA-F]+))?\))? \[(0x[0-9a-fA-F]+)\]"
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

fn hex(text: &str) -> Option<u64> {
    u64::from_str_radix(text.trim_start_matches("0x").trim_start_matches("0X"), 16).ok()
}

fn text(c: &Captures, i: usize) -> Option<String> {
    c.get(i)
        .map(|m| m.as_str().to_string())
        .filter(|s| !s.is_empty())
}

fn number<T: std::str::FromStr>(c: &Captures, i: usize) -> Option<T> {
    c.get(i).and_then(|m| m.as_str().parse().ok())
}

/// The file name of a path, `/` or `\` separated.
fn base(path: &str) -> String {
    path.rsplit(['/', '\\']).next().unwrap_or(path).to_string()
}

/// A name a debugger prints for "no name".
fn named(name: Option<String>) -> Option<String> {
    name.filter(|n| !matches!(n.as_str(), "??" | "???" | "<unknown>" | "_start_" | ""))
}

/// What `line` is, in the context of the format being read (`inside`:
/// formats whose bare lines are too generic alone, such as Rust's `N:` and
/// py-spy's `func (file:line)`, are read only inside their own trace).
pub(super) fn classify(line: &str, inside: Option<Format>) -> Option<Line> {
    let trimmed = line.trim_start();
    let first = trimmed.as_bytes().first().copied()?;
    // Thread headers and starts first: they are distinctive.
    match first {
        b'T' => {
            if let Some(c) = GDB_THREAD.captures(line) {
                return Some(Line::Thread {
                    format: Format::Gdb,
                    id: number(&c, 3),
                    name: text(&c, 4).or_else(|| text(&c, 5)),
                    current: false,
                });
            }
            if let Some(c) = PYSPY_THREAD.captures(line) {
                let id = text(&c, 1).and_then(|t| hex(&t).or_else(|| t.parse().ok()));
                return Some(Line::Thread {
                    format: Format::PySpy,
                    id,
                    name: text(&c, 3),
                    current: false,
                });
            }
            if let Some(c) = FAULT_THREAD.captures(line) {
                return Some(Line::Thread {
                    format: Format::Faulthandler,
                    id: text(&c, 2).and_then(|t| hex(&t)),
                    name: text(&c, 3),
                    current: &c[1] == "Current thread",
                });
            }
            if let Some(c) = PYSTACK_THREAD.captures(line) {
                return Some(Line::Thread {
                    format: Format::Pystack,
                    id: number(&c, 1),
                    name: text(&c, 2),
                    current: false,
                });
            }
            if let Some(c) = EU_THREAD.captures(line) {
                return Some(Line::Thread {
                    format: Format::EuStack,
                    id: number(&c, 1),
                    name: None,
                    current: false,
                });
            }
            if line.starts_with("Traceback (most recent call last)") {
                return Some(Line::Start(Format::PythonTraceback));
            }
            if line.starts_with("Thread ") && line.contains("received signal") {
                if let Some(c) = GDB_SIGNAL.captures(line) {
                    return Some(Line::Crash {
                        what: c[2].to_string(),
                        thread: number(&c, 1),
                    });
                }
            }
        }
        b'P' => {
            if let Some(c) = GDB_SIGNAL.captures(line) {
                return Some(Line::Crash {
                    what: c[2].to_string(),
                    thread: None,
                });
            }
        }
        b'F' | b'W' => {
            if let Some(c) = FATAL_PYTHON.captures(line) {
                return Some(Line::Crash {
                    what: c[1].to_string(),
                    thread: None,
                });
            }
        }
        b'=' => {
            if let Some(c) = SAN_START.captures(line) {
                let _ = c;
                return Some(Line::Crash {
                    what: format!("sanitizer: {}", &c[1]),
                    thread: None,
                });
            }
        }
        b'C' => {
            if let Some(c) = FAULT_THREAD.captures(line) {
                return Some(Line::Thread {
                    format: Format::Faulthandler,
                    id: text(&c, 2).and_then(|t| hex(&t)),
                    name: text(&c, 3),
                    current: &c[1] == "Current thread",
                });
            }
            if trimmed.starts_with("Current thread's C stack trace") {
                return Some(Line::NativeStack);
            }
        }
        b'~' => {
            if let Some(c) = PYTEST_THREAD.captures(line) {
                return Some(Line::Thread {
                    format: Format::PythonTraceback,
                    id: number(&c, 2),
                    name: text(&c, 1),
                    current: false,
                });
            }
        }
        b'+' if line.contains("Timeout") => return Some(Line::Start(Format::PythonTraceback)),
        b's' if trimmed.starts_with("stack backtrace:") => return Some(Line::Start(Format::Rust)),
        b'*' if trimmed.starts_with("*** Check failure stack trace") => {
            return Some(Line::Crash {
                what: "abort (glog CHECK failure)".to_string(),
                thread: None,
            })
        }
        b't' if trimmed.starts_with("thread '") && trimmed.contains("panicked at") => {
            return Some(Line::Crash {
                what: "panic".to_string(),
                thread: None,
            })
        }
        _ => {}
    }
    if trimmed.starts_with("thread #") || trimmed.starts_with("* thread #") {
        if let Some(c) = LLDB_THREAD.captures(line) {
            return Some(Line::Thread {
                format: Format::Lldb,
                id: number(&c, 2),
                name: text(&c, 3),
                current: c.get(1).is_some() || c.get(4).is_some(),
            });
        }
    }
    if trimmed.contains(" Id: ") {
        if let Some(c) = WINDBG_THREAD.captures(line) {
            return Some(Line::Thread {
                format: Format::WinDbg,
                id: text(&c, 4).and_then(|t| hex(&t)),
                name: None,
                current: c.get(1).is_some_and(|m| m.as_str() == "."),
            });
        }
    }
    if let Some(c) = WINDBG_EXCEPTION.captures(trimmed) {
        let what = text(&c, 1).or_else(|| text(&c, 3)).unwrap_or_default();
        return Some(Line::Crash { what, thread: None });
    }
    if trimmed == "[External Code]"
        || trimmed.starts_with("note: Some details are omitted")
        || trimmed == "..."
        || trimmed.starts_with("(More stack frames follow")
    {
        return Some(Line::Elided);
    }
    frame(line, trimmed, first, inside)
}

fn frame(line: &str, trimmed: &str, first: u8, inside: Option<Format>) -> Option<Line> {
    let at = |format: Format, frame: TextFrame| Some(Line::Frame(format, frame));
    let gdb_like =
        first == b'#' || (first.is_ascii_digit() && line.contains(" 0x") && line.contains(" in "));
    if gdb_like && !line.starts_with(' ') {
        if line.contains(" in ") || line.contains(" (") || line.contains(" at ") {
            if let Some(c) = GDB_FRAME.captures(line) {
                // A line cut inside the argument list keeps them in the
                // name: the name ends at ` (`.
                let function = text(&c, 3)
                    .filter(|f| !f.starts_with('<'))
                    .map(|f| f.split(" (").next().unwrap_or(&f).trim().to_string());
                // `at FILE:LINE` is a source location; gdb also says `at
                // LIBRARY` (no line) for a library without debug info.
                let (file, library) = match (text(&c, 5), number::<u32>(&c, 6), text(&c, 7)) {
                    (Some(at), None, library) if is_library(&at) => (None, Some(at).or(library)),
                    (file, _, library) => (file, library),
                };
                return at(
                    Format::Gdb,
                    TextFrame {
                        index: number(&c, 1),
                        address: text(&c, 2).and_then(|a| hex(&a)),
                        function: named(function),
                        module: library.as_deref().map(base),
                        file,
                        line: number(&c, 6),
                        ..TextFrame::default()
                    },
                );
            }
        }
        if let Some(c) = EU_FRAME.captures(line) {
            return at(
                Format::EuStack,
                TextFrame {
                    index: number(&c, 1),
                    address: text(&c, 2).and_then(|a| hex(&a)),
                    function: named(text(&c, 3)),
                    module: text(&c, 4).as_deref().map(base),
                    ..TextFrame::default()
                },
            );
        }
    }
    if first == b'#' && line.starts_with(' ') {
        if let Some(c) = SAN_FRAME.captures(line) {
            return at(
                Format::Sanitizer,
                TextFrame {
                    index: number(&c, 1),
                    address: text(&c, 2).and_then(|a| hex(&a)),
                    function: named(text(&c, 3)),
                    module: text(&c, 4).as_deref().map(base),
                    module_offset: text(&c, 5).and_then(|o| hex(&o)),
                    file: text(&c, 6),
                    line: number(&c, 7),
                    ..TextFrame::default()
                },
            );
        }
    }
    if trimmed.starts_with("frame #") || trimmed.starts_with("* frame #") {
        if let Some(c) = LLDB_FRAME.captures(line) {
            return at(
                Format::Lldb,
                TextFrame {
                    index: number(&c, 1),
                    address: text(&c, 2).and_then(|a| hex(&a)),
                    module: text(&c, 3),
                    function: named(text(&c, 4)),
                    function_offset: number(&c, 5),
                    file: text(&c, 6),
                    line: number(&c, 7),
                    ..TextFrame::default()
                },
            );
        }
    }
    if trimmed.starts_with("File \"") {
        if let Some(c) = PY_FRAME.captures(line) {
            let format = match inside {
                Some(Format::Faulthandler) => Format::Faulthandler,
                _ if line.contains("\", line ") && line.contains(", in ") => {
                    Format::PythonTraceback
                }
                _ => Format::Faulthandler,
            };
            return at(
                format,
                TextFrame {
                    file: text(&c, 1),
                    line: number(&c, 2),
                    function: text(&c, 3),
                    python: true,
                    ..TextFrame::default()
                },
            );
        }
    }
    if trimmed.starts_with("Binary file \"") {
        if let Some(c) = FAULT_C_FRAME.captures(line) {
            return at(
                Format::Faulthandler,
                TextFrame {
                    module: text(&c, 1).as_deref().map(base),
                    function: named(text(&c, 2)),
                    function_offset: text(&c, 3).and_then(|o| hex(&o)),
                    address: text(&c, 4).and_then(|a| hex(&a)),
                    ..TextFrame::default()
                },
            );
        }
    }
    if trimmed.starts_with("(Python) File") || trimmed.starts_with("(C) File") {
        if let Some(c) = PYSTACK_FRAME.captures(line) {
            let python = &c[1] == "Python";
            return at(
                Format::Pystack,
                TextFrame {
                    file: if python { text(&c, 2) } else { None },
                    line: if python { number(&c, 3) } else { None },
                    function: named(text(&c, 4)),
                    module: text(&c, 5).as_deref().map(base),
                    python,
                    ..TextFrame::default()
                },
            );
        }
    }
    if trimmed.contains('`') || (trimmed.contains('!') && trimmed.split_whitespace().count() >= 3) {
        if let Some(c) = WINDBG_FRAME.captures(trimmed) {
            return windbg_frame(&c);
        }
    }
    if trimmed.contains('!') {
        if let Some(c) = VS_FRAME.captures(line) {
            let function = c[2].trim().to_string();
            let (function, address) = match function.strip_suffix("()") {
                // `module.dll!00007ffa12345678()`: an address, no name.
                Some(hex_name) if hex(hex_name).is_some() && hex_name.len() >= 8 => {
                    (None, hex(hex_name))
                }
                _ => (Some(function), None),
            };
            return at(
                Format::VisualStudio,
                TextFrame {
                    module: text(&c, 1),
                    function,
                    address,
                    line: number(&c, 3),
                    ..TextFrame::default()
                },
            );
        }
    }
    if trimmed.ends_with(']') && trimmed.contains("(") && trimmed.contains(")[0x") {
        if let Some(c) = BT_SYMBOLS.captures(trimmed) {
            let function = text(&c, 2).map(|f| demangle(&f));
            let (function_offset, module_offset) = match &function {
                Some(_) => (text(&c, 3).and_then(|o| hex(&o)), None),
                None => (None, text(&c, 3).and_then(|o| hex(&o))),
            };
            return at(
                Format::BacktraceSymbols,
                TextFrame {
                    module: Some(base(&c[1])),
                    function,
                    function_offset,
                    module_offset,
                    address: hex(&c[4]),
                    ..TextFrame::default()
                },
            );
        }
    }
    if trimmed.contains("Host Frame:") {
        if let Some(c) = CUDA_HOST_FRAME.captures(trimmed) {
            let function = text(&c, 2).map(|f| demangle(&f));
            return at(
                Format::CudaSanitizer,
                TextFrame {
                    module: Some(base(&c[1])),
                    function_offset: function.as_ref().and(text(&c, 3)).and_then(|o| hex(&o)),
                    function,
                    address: hex(&c[4]),
                    ..TextFrame::default()
                },
            );
        }
    }
    if first == b'@' {
        if let Some(c) = GLOG_FRAME.captures(line) {
            return at(
                Format::Glog,
                TextFrame {
                    address: hex(&c[1]),
                    function: named(text(&c, 2)),
                    ..TextFrame::default()
                },
            );
        }
    }
    if first.is_ascii_digit() && trimmed.contains(" 0x") {
        if let Some(c) = APPLE_FRAME.captures(trimmed) {
            let module = c[2].to_string();
            if !module.starts_with("0x") {
                return at(
                    Format::AppleCrashReport,
                    TextFrame {
                        index: number(&c, 1),
                        module: Some(module),
                        address: hex(&c[3]),
                        function: named(text(&c, 4)),
                        function_offset: number(&c, 5),
                        ..TextFrame::default()
                    },
                );
            }
        }
    }
    match inside {
        Some(Format::Rust) => {
            if let Some(c) = RUST_AT.captures(line) {
                return Some(Line::Location {
                    file: c[1].to_string(),
                    line: number(&c, 2),
                });
            }
            if let Some(c) = RUST_FRAME.captures(line) {
                return at(
                    Format::Rust,
                    TextFrame {
                        index: number(&c, 1),
                        address: text(&c, 2).and_then(|a| hex(&a)),
                        function: named(text(&c, 3)).map(|f| strip_rust_hash(&f)),
                        ..TextFrame::default()
                    },
                );
            }
        }
        Some(Format::PySpy) => {
            if let Some(c) = PYSPY_FRAME.captures(line) {
                let location = c[2].to_string();
                let python = location.ends_with(".py") || c.get(3).is_some();
                return at(
                    Format::PySpy,
                    TextFrame {
                        function: named(text(&c, 1)),
                        file: python.then(|| location.clone()),
                        line: number(&c, 3),
                        module: (!python).then(|| base(&location)),
                        python,
                        ..TextFrame::default()
                    },
                );
            }
        }
        _ => {}
    }
    None
}

fn windbg_frame(c: &Captures) -> Option<Line> {
    let symbol = c[1].to_string();
    let (module, function) = match symbol.split_once('!') {
        Some((module, function)) => (Some(module.to_string()), Some(function.to_string())),
        None => (Some(symbol), None),
    };
    let offset = text(c, 2).and_then(|o| hex(&o));
    Some(Line::Frame(
        Format::WinDbg,
        TextFrame {
            module,
            function_offset: function.as_ref().and(offset),
            module_offset: if function.is_none() { offset } else { None },
            function,
            file: text(c, 3),
            line: number(c, 4),
            ..TextFrame::default()
        },
    ))
}

/// A path that names a shared library or executable image, not a source
/// file.
fn is_library(path: &str) -> bool {
    let name = base(path).to_ascii_lowercase();
    name.contains(".so")
        || name.ends_with(".dylib")
        || name.ends_with(".dll")
        || name.ends_with(".exe")
}

/// Itanium-mangled names (`_ZN3foo3barEv`, what backtrace_symbols prints)
/// demangled; other names as they are.
fn demangle(name: &str) -> String {
    if name.starts_with("_Z") {
        addr2line::demangle_auto(std::borrow::Cow::Borrowed(name), None).into_owned()
    } else {
        name.to_string()
    }
}

/// Rust's `::h0123456789abcdef` hash suffix off a symbol.
fn strip_rust_hash(name: &str) -> String {
    match name.rsplit_once("::h") {
        Some((head, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            head.to_string()
        }
        _ => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame_of(line: &str, inside: Option<Format>) -> (Format, TextFrame) {
        match classify(line, inside) {
            Some(Line::Frame(format, frame)) => (format, frame),
            other => panic!("{line:?}: {other:?}"),
        }
    }

    #[test]
    fn frames_of_each_format() {
        let (f, g) = frame_of(
            "#2  0x00007f3a1c2d3e4f in __run_exit_handlers (status=0) at exit.c:113",
            None,
        );
        assert_eq!(
            (f, g.function.as_deref(), g.file.as_deref(), g.line),
            (
                Format::Gdb,
                Some("__run_exit_handlers"),
                Some("exit.c"),
                Some(113)
            )
        );
        let (_, g) = frame_of(
            "#1  0x00007ffff7a42d3b in ?? () from /lib/x86_64-linux-gnu/libcuda.so.1",
            None,
        );
        assert_eq!(
            (g.function, g.module.as_deref()),
            (None, Some("libcuda.so.1"))
        );
        let (_, g) = frame_of("#0  __futex_abstimed_wait_common64 (private=0, cancel=true) at ./nptl/futex-internal.c:57", None);
        assert_eq!(
            g.function.as_deref(),
            Some("__futex_abstimed_wait_common64")
        );
        let (f, l) = frame_of(
            "    frame #3: 0x0000000100003f2c libfoo.dylib`Foo::~Foo() + 28 at foo.cpp:12:3",
            None,
        );
        assert_eq!(
            (
                f,
                l.module.as_deref(),
                l.function.as_deref(),
                l.function_offset,
                l.line
            ),
            (
                Format::Lldb,
                Some("libfoo.dylib"),
                Some("Foo::~Foo()"),
                Some(28),
                Some(12)
            )
        );
        let (f, w) = frame_of(
            "00 000000b5`6d9ff6a8 00007ffd`1c2c2a4e     ntdll!NtWaitForSingleObject+0x14",
            None,
        );
        assert_eq!(
            (
                f,
                w.module.as_deref(),
                w.function.as_deref(),
                w.function_offset
            ),
            (
                Format::WinDbg,
                Some("ntdll"),
                Some("NtWaitForSingleObject"),
                Some(0x14)
            )
        );
        let (_, w) = frame_of(
            "0000004f`6b9ff8c0 00007ff8`3b2a1234 amdhip64_6+0x2f1a3",
            None,
        );
        assert_eq!(
            (w.module.as_deref(), w.function, w.module_offset),
            (Some("amdhip64_6"), None, Some(0x2f1a3))
        );
        let (f, v) = frame_of(
            ">\tonnxruntime.dll!onnxruntime::logging::Logger::Log(int x) Line 42\tC++",
            None,
        );
        assert_eq!(
            (f, v.module.as_deref(), v.line),
            (Format::VisualStudio, Some("onnxruntime.dll"), Some(42))
        );
        let (_, v) = frame_of(" \tnvcuda64.dll!00007ffb12345678()\tUnknown", None);
        assert_eq!((v.function, v.address), (None, Some(0x7ffb12345678)));
        let (f, p) = frame_of("  File \"windowsml/__init__.py\", line 428 in close       # WinMLEpCatalogRelease(self._handle)", Some(Format::Faulthandler));
        assert_eq!(
            (f, p.function.as_deref(), p.line, p.python),
            (Format::Faulthandler, Some("close"), Some(428), true)
        );
        let (f, _) = frame_of(
            "  File \"/usr/lib/python3.11/threading.py\", line 1590, in _shutdown",
            None,
        );
        assert_eq!(f, Format::PythonTraceback);
        let (f, b) = frame_of(
            "/lib/x86_64-linux-gnu/libc.so.6(__libc_start_main+0xf3)[0x7f0e1c2d3083]",
            None,
        );
        assert_eq!(
            (
                f,
                b.module.as_deref(),
                b.function.as_deref(),
                b.function_offset
            ),
            (
                Format::BacktraceSymbols,
                Some("libc.so.6"),
                Some("__libc_start_main"),
                Some(0xf3)
            )
        );
        let (_, b) = frame_of("./prog(_ZN3foo3barEv+0x1a)[0x4005d6]", None);
        assert_eq!(b.function.as_deref(), Some("foo::bar()"));
        let (f, a) = frame_of(
            "    #1 0x7f2a in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x21bf6)",
            None,
        );
        assert_eq!(
            (f, a.module.as_deref(), a.module_offset),
            (Format::Sanitizer, Some("libc.so.6"), Some(0x21bf6))
        );
        let (f, r) = frame_of(
            "  13: std::rt::lang_start::h0123456789abcdef",
            Some(Format::Rust),
        );
        assert_eq!(
            (f, r.function.as_deref()),
            (Format::Rust, Some("std::rt::lang_start"))
        );
        let (f, s) = frame_of(
            "    pthread_cond_timedwait (libc-2.31.so)",
            Some(Format::PySpy),
        );
        assert_eq!(
            (f, s.module.as_deref(), s.python),
            (Format::PySpy, Some("libc-2.31.so"), false)
        );
        let (_, s) = frame_of("    wait (threading.py:324)", Some(Format::PySpy));
        assert_eq!(
            (s.function.as_deref(), s.line, s.python),
            (Some("wait"), Some(324), true)
        );
        let (f, e) = frame_of(
            "#3  0x00007f2d1c0a2b3c __hipUnregisterFatBinary - /opt/rocm/lib/libamdhip64.so.6",
            None,
        );
        assert_eq!(
            (f, e.function.as_deref(), e.module.as_deref()),
            (
                Format::EuStack,
                Some("__hipUnregisterFatBinary"),
                Some("libamdhip64.so.6")
            )
        );
    }

    #[test]
    fn threads_crashes_and_starts() {
        for header in [
            "Thread 2 (Thread 0x7f0e1a2b3c40 (LWP 4242)) \"worker\":",
            "Thread 2 (Thread 0x7f0e1a2b3c40 (LWP 4242) \"worker\"):",
            "Thread 2 (Thread 0x7f0e1a2b3c40 (LWP 4242)):",
            "Thread 2 (process 4242):",
        ] {
            assert!(
                matches!(
                    classify(header, None),
                    Some(Line::Thread {
                        format: Format::Gdb,
                        id: Some(4242),
                        ..
                    })
                ),
                "{header}"
            );
        }
        assert!(matches!(
            classify("Current thread 0x00007f1a (most recent call first):", None),
            Some(Line::Thread {
                format: Format::Faulthandler,
                current: true,
                ..
            })
        ));
        assert!(matches!(
            classify("Thread 0x0000bc98:", None),
            Some(Line::Thread {
                format: Format::Faulthandler,
                ..
            })
        ));
        assert!(matches!(
            classify("Windows fatal exception: access violation", None),
            Some(Line::Crash { .. })
        ));
        assert!(matches!(
            classify(
                "Thread 1 \"python\" received signal SIGSEGV, Segmentation fault.",
                None
            ),
            Some(Line::Crash {
                thread: Some(1),
                ..
            })
        ));
        assert!(matches!(
            classify(
                "~~~~~~~~~~~~~~~~ Stack of MainThread (140245) ~~~~~~~~~~~~~~~~",
                None
            ),
            Some(Line::Thread {
                format: Format::PythonTraceback,
                ..
            })
        ));
        assert!(matches!(classify("* thread #1, queue = 'com.apple.main-thread', stop reason = EXC_BAD_ACCESS (code=1)", None),
            Some(Line::Thread { format: Format::Lldb, current: true, .. })));
        assert!(matches!(
            classify(
                ".  0  Id: 1a2c.1a30 Suspend: 1 Teb: 00000000`00361000 Unfrozen",
                None
            ),
            Some(Line::Thread {
                format: Format::WinDbg,
                current: true,
                id: Some(0x1a30),
                ..
            })
        ));
        assert!(matches!(
            classify("ExceptionCode: c0000005 (Access violation)", None),
            Some(Line::Crash { .. })
        ));
        // Ordinary log lines are nothing.
        for line in [
            "INFO: 3 tests passed",
            "  1: warming up",
            "# comment",
            "Thread pool started",
            "see foo!bar for details",
        ] {
            assert_eq!(classify(line, None), None, "{line}");
        }
    }
}
