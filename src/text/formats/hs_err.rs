//! The JVM's fatal error report (the `hs_err_pid*.log` file, and the
//! summary the JVM prints to the console): `#  SIGSEGV (0xb) at
//! pc=0x..., pid=N, tid=M` names the crash, `# Problematic frame:` the top
//! frame; the file's `Current thread (...):  JavaThread "NAME"` the thread,
//! and its `Native frames:` one frame a line, a letter for the frame's kind
//! (`C` native code, `V` the VM, `j` interpreted Java, `J` compiled Java)
//! then the module and offset in brackets and the function (`C
//! [libxcb.so.1+0x14d6b]  xcb_send_request_with_fds64+0x1b`, `V
//! [libjvm.so+0x8e6f1c]  before_exit(JavaThread*)+0x1cc`), or the Java
//! method (`j  java.lang.Shutdown.halt0(I)V+0 java.base`).

use super::common::*;

pub(super) struct HsErr;

re!(
    HS_SIGNAL,
    r"^#\s+(SIG[A-Z]+|EXCEPTION_[A-Z_]+) \((0x[0-9a-fA-F]+)\) at pc=0x[0-9a-fA-F]+"
);
re!(
    HS_NATIVE,
    r"^(?:#\s+)?[CVv]\s+\[([^\]+]+)(?:\+0x([0-9a-fA-F]+))?\](?:\s+(.+?)(?:\+0x([0-9a-fA-F]+))?)?\s*$"
);
re!(
    HS_JAVA,
    r"^[jJA]\s+(?:\d+\s+)?(?:c[12]\s+)?(?:%\s+)?([\w$.<>]+)\("
);
re!(
    HS_THREAD,
    r#"^Current thread \(0x[0-9a-fA-F]+\):\s+\w+ "([^"]+)""#
);

impl TraceFormat for HsErr {
    fn format(&self) -> Format {
        Format::HsErr
    }

    fn read(&self, t: &Text<'_>, inside: Option<Format>) -> Option<Line> {
        let trimmed = t.trimmed.trim_end();
        match t.first {
            b'#' => {
                if trimmed.contains("A fatal error has been detected by the Java Runtime") {
                    return Some(Line::Start(Format::HsErr));
                }
                if let Some(c) = HS_SIGNAL.captures(trimmed) {
                    let what = if c[1].starts_with("SIG") {
                        c[1].to_string()
                    } else {
                        format!("{:0>8}", c[2].trim_start_matches("0x").to_ascii_lowercase())
                    };
                    return Some(Line::Crash { what, thread: None });
                }
                // The problematic frame: `# C  [lib.so+0x1d6b]  f+0x1b`.
                let mut frame = native(trimmed)?;
                frame.index = Some(0);
                frame_line(Format::HsErr, frame)
            }
            b'C' if trimmed.starts_with("Current thread (") => {
                let c = HS_THREAD.captures(trimmed)?;
                Some(Line::Thread {
                    format: Format::HsErr,
                    number: None,
                    id: None,
                    name: text(&c, 1),
                    current: true,
                    event: true,
                })
            }
            _ if inside != Some(Format::HsErr) => None,
            b'C' | b'V' | b'v' => frame_line(Format::HsErr, native(trimmed)?),
            b'j' | b'J' | b'A' => {
                let c = HS_JAVA.captures(trimmed)?;
                frame_line(
                    Format::HsErr,
                    TextFrame {
                        function: text(&c, 1),
                        ..TextFrame::default()
                    },
                )
            }
            _ => None,
        }
    }
}

/// A native or VM frame: `C  [libxcb.so.1+0x14d6b]  f+0x1b`.
fn native(line: &str) -> Option<TextFrame> {
    let c = HS_NATIVE.captures(line)?;
    Some(TextFrame {
        module: Some(base(&c[1])),
        module_offset: text(&c, 2).and_then(|o| hex(&o)),
        function: named(text(&c, 3)),
        function_offset: text(&c, 4).and_then(|o| hex(&o)),
        ..TextFrame::default()
    })
}

#[cfg(test)]
mod tests {
    use super::super::classify;
    use super::*;

    #[test]
    fn the_reports_lines() {
        assert!(matches!(
            classify("#  SIGSEGV (0xb) at pc=0x000076d7b0016d6b, pid=15596, tid=15635", None),
            Some(Line::Crash { what, .. }) if what == "SIGSEGV"
        ));
        assert!(matches!(
            classify("#  EXCEPTION_ACCESS_VIOLATION (0xc0000005) at pc=0x00007ffa12345678, pid=4242, tid=77", None),
            Some(Line::Crash { what, .. }) if what == "c0000005"
        ));
        let Some(Line::Frame(_, top)) = classify(
            "# C  [libxcb.so.1+0x14d6b]  xcb_send_request_with_fds64+0x1b",
            None,
        ) else {
            panic!("the problematic frame");
        };
        assert_eq!(top.module.as_deref(), Some("libxcb.so.1"));
        assert_eq!(top.function.as_deref(), Some("xcb_send_request_with_fds64"));
        let inside = Some(Format::HsErr);
        let Some(Line::Frame(_, vm)) = classify(
            "V  [libjvm.so+0x8e6f1c]  before_exit(JavaThread*, bool)+0x1cc",
            inside,
        ) else {
            panic!("a VM frame");
        };
        assert_eq!(
            vm.function.as_deref(),
            Some("before_exit(JavaThread*, bool)")
        );
        let Some(Line::Frame(_, java)) =
            classify("j  java.lang.Shutdown.halt0(I)V+0 java.base", inside)
        else {
            panic!("a Java frame");
        };
        assert_eq!(java.function.as_deref(), Some("java.lang.Shutdown.halt0"));
        // Outside a report, a line of the same shape is no frame.
        assert_eq!(classify("C  [see the notes]", None), None);
        assert_eq!(
            classify("j  java.lang.Shutdown.halt0(I)V+0 java.base", None),
            None
        );
    }
}
