//! Stack traces in text: CI logs and bug reports, where most failures are
//! (issues 24 and 37). A log is cleaned of CI noise line by line
//! (clean.rs), split into its pieces (split.rs), and read by the trace
//! formats (formats/, one file each); runs of frames and thread headers
//! become traces (reader.rs), each its own report (report.rs), named by the
//! file and the line it starts at. Nothing the text does not say is
//! invented: a frame without an address has address 0 and `trust` "text
//! trace", a Python frame is its own kind, elided frames are said.

mod clean;
mod formats;
mod reader;
mod report;
mod split;

use crate::model::Report;

use clean::{clean_line, dedent_blocks};
use report::to_report;

/// Most traces read from one input: a log with more is cut with a warning.
const MAX_TRACES: usize = 1000;

/// Whether `bytes` look like text worth searching for traces: valid UTF-8
/// (or nearly), and no NUL bytes in its first 64 KiB.
pub fn looks_like_text(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64 * 1024)];
    !head.contains(&0)
        && std::str::from_utf8(head).map_or_else(|e| e.valid_up_to() + 4 >= head.len(), |_| true)
}

/// Every trace in `text`, a report each, named `label:LINE`. An error when
/// there is none.
pub fn read_traces(label: &str, text: &str) -> Result<Vec<Report>, String> {
    let raw: Vec<&str> = text.lines().collect();
    let mut lines: Vec<Option<String>> = raw.iter().map(|r| clean_line(r)).collect();
    dedent_blocks(&mut lines);
    reader::join_wrapped(&mut lines);
    let starts = split::piece_starts(&raw, &lines);
    let mut traces = reader::find_traces(&lines, &starts);
    let bounds: Vec<(usize, usize)> = traces.iter().map(|t| (t.first_line, t.last_line)).collect();
    for (i, trace) in traces.iter_mut().enumerate() {
        let previous = i.checked_sub(1).map_or(0, |p| bounds[p].1);
        let next = bounds.get(i + 1).map_or(usize::MAX, |n| n.0);
        trace.around = (previous, next);
    }
    if traces.is_empty() {
        return Err(
            "not a minidump, and no stack trace found in it (looked for gdb, lldb, WinDbg, Visual Studio, faulthandler, \
             Python traceback, pytest-timeout, py-spy, pystack, eu-stack, backtrace_symbols, \
             sanitizer and Rust backtraces)"
                .to_string(),
        );
    }
    let many = traces.len() > 1;
    let cut = traces.len() > MAX_TRACES;
    Ok(traces
        .into_iter()
        .take(MAX_TRACES)
        .map(|trace| {
            let mut report = to_report(&trace, &lines);
            report.path = if many || trace.first_line > 1 {
                format!("{label}:{}", trace.first_line)
            } else {
                label.to_string()
            };
            if cut {
                report.warnings.push(format!(
                    "the log holds more than {MAX_TRACES} traces: the rest were not read"
                ));
            }
            report
        })
        .collect())
}
