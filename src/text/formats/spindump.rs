//! macOS's sampling call trees: spindump (`Thread 0x13d1168 ... 1000
//! samples`, then `1000  name + 41 (module + 1020249) [0x...]`) and `sample`
//! (`2738 Thread_2849013`, then `+ 2738 name  (in module) + 56
//! [0x...]`). Each frame line holds how many samples were in it; the tree
//! lists the outermost call first, each callee indented under its caller,
//! the busiest branch first. A thread is read as its busiest path (the
//! first branch at each level): where the process spent its time.

use super::common::*;

pub(super) struct Spindump;

re!(
    SPINDUMP_THREAD,
    r"^\s*Thread (0x[0-9a-fA-F]+)\b.*?\b\d+ samples?\b"
);
re!(
    SAMPLE_THREAD,
    r"^[\s+!:|]*\d+ Thread_(\d+)(?:\s+(.*?))?\s*$"
);
re!(
    SPINDUMP_FRAME,
    r"^(\s*)(\d+)\s+(.+?)(?: \+ (\d+))? \((\S.*?) \+ (\d+)\) \[(0x[0-9a-fA-F]+)\]\s*$"
);
re!(
    SAMPLE_FRAME,
    r"^([\s+!:|]*)(\d+)\s+(.+?)\s+\(in (\S+)\)(?: \+ (\d+))?\s+\[(0x[0-9a-fA-F]+)[^\]]*\]\s*$"
);

impl TraceFormat for Spindump {
    fn format(&self) -> Format {
        Format::Spindump
    }

    fn read(&self, t: &Text<'_>, _inside: Option<Format>) -> Option<Line> {
        let line = t.line;
        if t.first == b'T' {
            let c = SPINDUMP_THREAD.captures(line)?;
            return Some(Line::Thread {
                format: Format::Spindump,
                number: None,
                id: text(&c, 1).and_then(|t| hex(&t)),
                name: None,
                current: false,
                event: false,
            });
        }
        if !(t.first.is_ascii_digit() || matches!(t.first, b'+' | b'!' | b':' | b'|')) {
            return None;
        }
        if line.contains(" Thread_") {
            let c = SAMPLE_THREAD.captures(line)?;
            return Some(Line::Thread {
                format: Format::Spindump,
                number: None,
                id: number(&c, 1),
                name: text(&c, 2),
                current: false,
                event: false,
            });
        }
        // The depth in the tree: where the sample count stands.
        if let Some(c) = SPINDUMP_FRAME.captures(line) {
            return frame_line(
                Format::Spindump,
                TextFrame {
                    index: Some(c[1].len() + 1),
                    samples: number(&c, 2),
                    function: named(text(&c, 3)),
                    function_offset: number(&c, 4),
                    module: text(&c, 5),
                    module_offset: number(&c, 6),
                    address: hex(&c[7]),
                    ..TextFrame::default()
                },
            );
        }
        let c = SAMPLE_FRAME.captures(line)?;
        frame_line(
            Format::Spindump,
            TextFrame {
                index: Some(c[1].len() + 1),
                samples: number(&c, 2),
                function: named(text(&c, 3)),
                module: text(&c, 4),
                function_offset: number(&c, 5),
                address: hex(&c[6]),
                ..TextFrame::default()
            },
        )
    }
}

/// A call tree's busiest path, outermost first: each frame indented deeper
/// than the one before; a line no deeper is another branch, and ends it.
pub(in crate::text) fn busiest_path(frames: &[TextFrame]) -> Vec<TextFrame> {
    let mut path: Vec<TextFrame> = Vec::new();
    for frame in frames {
        let deeper = match (path.last().and_then(|f| f.index), frame.index) {
            (Some(last), Some(depth)) => depth > last,
            _ => true,
        };
        if !deeper {
            break;
        }
        path.push(frame.clone());
    }
    for frame in &mut path {
        frame.index = None;
    }
    path
}

/// Whether a call tree's busiest path (outermost first) held every sample
/// of its thread down to the innermost frame: the thread never left that
/// frame while it was sampled, blocked or spinning there, which is what a
/// hang is to a sampling profiler. A thread whose samples spread over
/// several branches or leaves was making progress.
pub(in crate::text) fn every_sample_in(path: &[TextFrame]) -> Option<u64> {
    let all = path.first()?.samples?;
    (path.len() >= 2 && all > 1 && path.last()?.samples? == all).then_some(all)
}
