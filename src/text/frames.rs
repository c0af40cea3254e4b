//! Frame lines of every format (the other lines are lines.rs's).

use regex_lite::Captures;

use super::parse::*;

/// A frame line of any format, or `None`; `inside` lets formats whose bare
/// lines are too generic alone (Rust's `N:`, py-spy's `f (file:line)`) be
/// read inside their own trace only.
pub(super) fn frame(line: &str, trimmed: &str, first: u8, inside: Option<Format>) -> Option<Line> {
    let at = |format: Format, frame: TextFrame| Some(Line::Frame(format, frame));
    // Before gdb's: its regular expression would take `0x... NAME` for a
    // function name.
    if first == b'#' && trimmed.ends_with(')') && trimmed.contains(" 0x") {
        // (Not a sanitizer's `#1 0x... in NAME (/lib/MODULE+0x...)`.)
        if let Some(c) = COREDUMP_FRAME
            .captures(line)
            .filter(|c| !c[3].starts_with("in ") && (&c[4] == "n/a" || !c[4].contains('/')))
        {
            let module = c[4].to_string();
            return at(
                Format::SystemdCoredump,
                TextFrame {
                    index: number(&c, 1),
                    address: text(&c, 2).and_then(|a| hex(&a)),
                    function: named(text(&c, 3)).map(|f| demangle(&f)),
                    module_offset: text(&c, 5).and_then(|o| hex(&o)),
                    module: (module != "n/a").then_some(module),
                    ..TextFrame::default()
                },
            );
        }
    }
    let gdb_like =
        first == b'#' || (first.is_ascii_digit() && line.contains(" 0x") && line.contains(" in "));
    if gdb_like && !line.starts_with(' ') {
        if line.contains(" in ") || line.contains(" (") || line.contains(" at ") {
            // (gdb names a function or an address on every frame: `#12
            // at FILE` is another tool's line, Julia's closure `#12`.)
            if let Some(c) = GDB_FRAME.captures(line).filter(|c| {
                c.get(2).is_some() || !(c[3].trim().is_empty() || c[3].starts_with("at "))
            }) {
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
    if trimmed.contains('(') && (trimmed.contains(")[0x") || trimmed.contains(") [0x")) {
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
                    file: text(&c, 5),
                    line: number(&c, 6),
                    ..TextFrame::default()
                },
            );
        }
    }
    if trimmed.contains("Host Frame:") {
        if let Some(c) = CUDA_HOST_FRAME.captures(trimmed) {
            let mut frame = cuda_host_frame(&c[1]);
            frame.address = hex(&c[2]);
            if let Some(module) = text(&c, 3) {
                frame.module = Some(base(&module));
            }
            return at(Format::CudaSanitizer, frame);
        }
    }
    if inside == Some(Format::CudaSanitizer) {
        if let Some(c) = CUDA_MODULE_LINE.captures(trimmed) {
            return Some(Line::Module(base(&c[1])));
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
    // A Rust frame with its address (`  13:   0x7ff6b78e2639 - NAME`) is
    // distinctive alone: a backtrace pasted from its middle, without its
    // `stack backtrace:` line, is read from its first such frame.
    let inside = match first.is_ascii_digit() && RUST_ADDRESS_FRAME.is_match(line) {
        true => Some(Format::Rust),
        false => inside,
    };
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
                // `--native`: a frame with no symbol is its address.
                if let Some(address) = c[1].strip_prefix("0x").and_then(hex) {
                    return at(
                        Format::PySpy,
                        TextFrame {
                            address: Some(address),
                            module: Some(base(&location)),
                            ..TextFrame::default()
                        },
                    );
                }
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
    let symbol = c[1].trim().to_string();
    // An address with no module: nothing else to say.
    if let Some(address) = symbol
        .strip_prefix("0x")
        .and_then(|a| hex(&a.replace('`', "")))
    {
        return Some(Line::Frame(
            Format::WinDbg,
            TextFrame {
                address: Some(address),
                ..TextFrame::default()
            },
        ));
    }
    // `kp` adds the parameter list: not part of the name.
    let symbol = match symbol.find('(') {
        Some(at) if symbol.ends_with(')') && !symbol.starts_with('`') => symbol[..at].to_string(),
        _ => symbol,
    };
    let (module, function) = match symbol.split_once('!') {
        Some((module, function)) => (Some(module.to_string()), Some(function.to_string())),
        None => (Some(symbol), None),
    };
    // WinDbg names a module by its file name without the extension
    // (`ntdll`, `cudnn64_9`); rules and families name files. Nearly all
    // are DLLs: taken as `NAME.dll` (the report says so).
    let module = module.map(|m| {
        if m.contains('.') {
            m
        } else {
            format!("{m}.dll")
        }
    });
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

/// What a compute-sanitizer or cuda-memcheck host frame says before its
/// address: a module path (cuda-memcheck, with the function in
/// parentheses), `FUNC in FILE:LINE`, `FILE:LINE:FUNC`, a bare function, or
/// nothing.
fn cuda_host_frame(site: &str) -> TextFrame {
    if let Some(c) = CUDA_MODULE_FIRST.captures(site) {
        let function = demangle(&c[2]);
        return TextFrame {
            module: Some(base(&c[1])),
            function_offset: text(&c, 3).and_then(|o| hex(&o)),
            function: Some(function),
            ..TextFrame::default()
        };
    }
    if (site.starts_with('/') || site.starts_with("./") || is_library(site)) && !site.contains(':')
    {
        return TextFrame {
            module: Some(base(site)),
            ..TextFrame::default()
        };
    }
    if let Some(c) = CUDA_FILE_LINE_FUNC.captures(site) {
        return TextFrame {
            file: text(&c, 1),
            line: number(&c, 2),
            function: Some(demangle(&c[3])),
            ..TextFrame::default()
        };
    }
    if let Some(c) = CUDA_FUNC_IN_FILE.captures(site) {
        return TextFrame {
            function: named(Some(demangle(&c[1]))),
            file: text(&c, 2),
            line: number(&c, 3),
            ..TextFrame::default()
        };
    }
    TextFrame {
        function: named(Some(demangle(site))),
        ..TextFrame::default()
    }
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
