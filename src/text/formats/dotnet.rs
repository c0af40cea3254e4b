//! .NET's stack of an unhandled exception: the runtime's console report
//! (`Unhandled exception. System.X: message`, .NET Framework's `Unhandled
//! Exception: System.X`) and the Application event log's record of it
//! (Event 1026, `.NET Runtime`: `Description: The process was terminated
//! due to an unhandled exception.`, `Exception Info: System.X` or
//! `exception code c0000005, exception address ...`, `Stack:`) and
//! .NET's `Fatal error.` (a corrupted-state exception), each
//! followed by managed frames, innermost first: `   at
//! Namespace.Type.Method(Type arg)` with ` in path:line N` when the
//! program's symbols were there.
//!
//! A frame's line alone (`at a.b(c)`) is also a Java frame's shape; Java's
//! parentheses hold a place (`Main.java:12`), .NET's the parameter types,
//! and JavaScript's `at f (file.js:1:2)` has a blank before them.

use super::common::*;

pub(super) struct Dotnet;

re!(
    DOTNET_FRAME,
    r"^\s*at ([\w.`<>$|+\[\],~-]+?\.[\w.`<>$|+\[\],~-]+)\(([^()]*)\)(?: in (.+):line (\d+))?\s*$"
);
re!(
    EXCEPTION_INFO,
    r"^Exception Info: (?:exception code ([0-9a-fA-F]{8})\b.*|(\S.*))$"
);

/// The code Windows gives an exception thrown by the CLR: what an
/// unhandled managed exception ends the process with.
const CLR_EXCEPTION: &str = "e0434352";

/// The Windows code of a managed exception the line names: an access
/// violation the runtime turned into `AccessViolationException` is still
/// one; any other exception is the CLR's.
fn managed_code(line: &str) -> &'static str {
    if line.contains("System.AccessViolationException") {
        "c0000005"
    } else {
        CLR_EXCEPTION
    }
}

/// A .NET exception's first line: a type of the runtime's or Microsoft's
/// namespaces ending in `Exception`, then its message.
fn thrown_header(line: &str) -> bool {
    let Some((name, _)) = line.split_once(": ") else {
        return false;
    };
    (name.starts_with("System.") || name.starts_with("Microsoft."))
        && name.ends_with("Exception")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_')
}

impl TraceFormat for Dotnet {
    fn format(&self) -> Format {
        Format::Dotnet
    }

    fn read(&self, t: &Text<'_>, inside: Option<Format>) -> Option<Line> {
        let trimmed = t.trimmed;
        match t.first {
            b'a' => {
                let c = DOTNET_FRAME.captures(trimmed)?;
                // Java's arguments are a place (`File.java:12`, `Native
                // Method`, `Unknown Source`); .NET's are types.
                let java =
                    c[2].contains(':') || matches!(&c[2], "Native Method" | "Unknown Source");
                if java && inside != Some(Format::Dotnet) {
                    return None;
                }
                let function = format!("{}({})", &c[1], &c[2]);
                frame_line(
                    Format::Dotnet,
                    TextFrame {
                        function: Some(function),
                        file: text(&c, 3),
                        line: number(&c, 4),
                        ..TextFrame::default()
                    },
                )
            }
            b'D' if trimmed.starts_with(
                "Description: The process was terminated due to an unhandled exception",
            ) =>
            {
                Some(Line::Start(Format::Dotnet))
            }
            b'E' if trimmed.starts_with("Exception Info: ") => {
                let c = EXCEPTION_INFO.captures(trimmed.trim_end())?;
                let what = match c.get(1) {
                    Some(code) => code.as_str().to_ascii_lowercase(),
                    None => managed_code(trimmed).to_string(),
                };
                Some(Line::Crash { what, thread: None })
            }
            b'U' if trimmed.starts_with("Unhandled exception. ")
                || trimmed.starts_with("Unhandled Exception: ") =>
            {
                Some(Line::Crash {
                    what: managed_code(trimmed).to_string(),
                    thread: None,
                })
            }
            // The runtime's own end: a corrupted-state exception it does
            // not let the program catch (`Fatal error. System.
            // AccessViolationException: ...`, `Fatal error. Internal CLR
            // error. (0x80131506)`).
            b'F' if trimmed.starts_with("Fatal error. ") => Some(Line::Crash {
                what: managed_code(trimmed).to_string(),
                thread: None,
            }),
            // A .NET exception as it prints itself, its frames under it
            // (`System.ObjectDisposedException: Cannot access a disposed
            // object.`), with no host's words around it (a Windows Forms
            // dialog's `Exception Text`, a log): the exception the stack is
            // of.
            b'S' | b'M' if thrown_header(trimmed) => Some(Line::Crash {
                what: managed_code(trimmed).to_string(),
                thread: None,
            }),

            b'-' if trimmed.starts_with("--- End of stack trace from previous location")
                && inside == Some(Format::Dotnet) =>
            {
                Some(Line::Elided)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{classify, Format, Line};

    fn frame(line: &str, inside: Option<Format>) -> Option<(Option<String>, Option<u32>)> {
        match classify(line, inside)? {
            Line::Frame(Format::Dotnet, f) => Some((f.function, f.line)),
            _ => None,
        }
    }

    #[test]
    fn managed_frames() {
        assert_eq!(
            frame(
                "   at Kiln.Oven.Heat(Int32 degrees) in C:\\src\\Oven.cs:line 12",
                None
            ),
            Some((Some("Kiln.Oven.Heat(Int32 degrees)".into()), Some(12)))
        );
        assert_eq!(
            frame("   at System.Environment._Exit(Int32)", None),
            Some((Some("System.Environment._Exit(Int32)".into()), None))
        );
        // Java's frames and JavaScript's are no .NET frames.
        assert_eq!(frame("\tat org.kiln.Oven.heat(Oven.java:12)", None), None);
        assert_eq!(frame("\tat org.kiln.Oven.heat(Native Method)", None), None);
        assert_eq!(
            frame("    at Oven.heat (/srv/kiln/oven.js:12:7)", None),
            None
        );
        // Prose that says "at" is no frame.
        assert_eq!(
            frame("  at least one oven (the big one) failed", None),
            None
        );
    }

    #[test]
    fn an_exceptions_own_first_line_is_the_stop() {
        assert!(matches!(
            classify(
                "System.ObjectDisposedException: Cannot access a disposed object.",
                None
            ),
            Some(Line::Crash { .. })
        ));
        assert!(matches!(
            classify("System.AccessViolationException: Attempted to read or write protected memory.", None),
            Some(Line::Crash { what, .. }) if what == "c0000005"
        ));
        // Another namespace's type, a sentence, no message.
        for line in [
            "MyApp.Storage.CorruptException: bad page",
            "System.Text.Json is the serializer: see docs",
            "System.InvalidOperationException",
        ] {
            assert_eq!(classify(line, None), None, "{line}");
        }
    }

    #[test]
    fn the_report_lines() {
        assert_eq!(
            classify(
                "Description: The process was terminated due to an unhandled exception.",
                None
            ),
            Some(Line::Start(Format::Dotnet))
        );
        assert!(matches!(
            classify("Exception Info: exception code c0000005, exception address 00007FF612340000", None),
            Some(Line::Crash { what, .. }) if what == "c0000005"
        ));
        assert!(matches!(
            classify("Unhandled exception. System.InvalidOperationException: closed", None),
            Some(Line::Crash { what, .. }) if what == "e0434352"
        ));
        assert_eq!(
            classify(
                "--- End of stack trace from previous location ---",
                Some(Format::Dotnet)
            ),
            Some(Line::Elided)
        );
        assert_eq!(
            classify("Unhandled exceptions are logged below.", None),
            None
        );
        assert!(matches!(
            classify("Fatal error. System.AccessViolationException: Attempted to read or write protected memory.", None),
            Some(Line::Crash { what, .. }) if what == "c0000005"
        ));
    }
}
