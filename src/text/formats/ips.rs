//! macOS crash reports in the JSON form macOS 12 and later write (`.ips`):
//! a one-line header (`{"app_name":...,"bug_type":"309",...}`), then one
//! JSON document with the exception (`"exception" : {"type":
//! "EXC_BAD_ACCESS", "signal": "SIGSEGV"}`), the crashed thread
//! (`"triggered": true`, `"faultingThread"`), every thread's frames
//! (`{"imageOffset":..., "symbol":..., "symbolLocation":..., "imageIndex":
//! ...}`, innermost first) and the images the frames index
//! (`"usedImages"`). People paste it whole, pretty-printed or on one line.
//!
//! It is no line format: the document is found where a line opens one that
//! holds threads, and read with a JSON parser from there (a log without
//! the report's words is passed over at the cost of one search; other JSON
//! documents are each parsed once and skipped).

use serde_json::Value;

use super::common::{Format, TextFrame};
use crate::text::trace::{TextThread, Trace};

/// The crash reports of `lines` (cleaned, 0-based), as traces.
pub(in crate::text) fn read(lines: &[Option<String>]) -> Vec<Trace> {
    let has = |word: &str| lines.iter().flatten().any(|l| l.contains(word));
    if !has("\"usedImages\"") || !has("\"frames\"") {
        return Vec::new();
    }
    // The log as one text, and where each line starts in it: a document
    // is parsed from its first line's offset, once.
    let mut text = String::new();
    let mut starts = Vec::with_capacity(lines.len());
    for line in lines {
        starts.push(text.len());
        text.push_str(line.as_deref().unwrap_or(""));
        text.push('\n');
    }
    let mut traces = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let opens = lines[i]
            .as_deref()
            .is_some_and(|l| l.trim_start().starts_with('{') && !is_header(l));
        if !opens {
            i += 1;
            continue;
        }
        let mut stream =
            serde_json::Deserializer::from_str(&text[starts[i]..]).into_iter::<Value>();
        let value = match stream.next() {
            Some(Ok(value)) => value,
            // Unclosed to the end: nothing opened after it closes either
            // (it is read as part of this one). Broken at a line: no
            // document opened before that line and still open is whole.
            // Either way each line is parsed from at most once more.
            Some(Err(e)) if e.is_eof() => break,
            Some(Err(e)) => {
                i += e.line().max(1);
                continue;
            }
            None => break,
        };
        // The line the document ends on; past it, whatever it was.
        let end = starts[i] + stream.byte_offset();
        let last = starts
            .partition_point(|&s| s < end)
            .saturating_sub(1)
            .max(i);
        if value.get("threads").is_some_and(Value::is_array) {
            if let Some(trace) = to_trace(&value, i + 1, last + 1) {
                traces.push(trace);
            }
        }
        i = last + 1;
    }
    traces
}

/// The `.ips` header line: its own small document, not the report.
fn is_header(line: &str) -> bool {
    line.contains("\"bug_type\"") && line.trim_end().ends_with('}') && !line.contains("\"threads\"")
}

fn to_trace(report: &Value, first_line: usize, last_line: usize) -> Option<Trace> {
    let images: Vec<Option<String>> = report
        .get("usedImages")
        .and_then(Value::as_array)
        .map(|images| {
            images
                .iter()
                .map(|i| i.get("name").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let faulting = report.get("faultingThread").and_then(Value::as_u64);
    let mut threads = Vec::new();
    for (n, thread) in report.get("threads")?.as_array()?.iter().enumerate() {
        let triggered = thread.get("triggered").and_then(Value::as_bool) == Some(true)
            || faulting == Some(n as u64);
        let frames: Vec<TextFrame> = thread
            .get("frames")
            .and_then(Value::as_array)
            .map(|frames| {
                frames
                    .iter()
                    .enumerate()
                    .map(|(index, f)| frame(index, f, &images))
                    .collect()
            })
            .unwrap_or_default();
        let name = ["name", "queue"]
            .iter()
            .find_map(|key| thread.get(*key).and_then(Value::as_str))
            .map(str::to_string);
        threads.push(TextThread {
            number: Some(n as u64),
            id: thread.get("id").and_then(Value::as_u64),
            name,
            current: triggered,
            event: triggered,
            frames,
            format: Some(Format::AppleCrashReport),
            line: first_line,
        });
    }
    if !threads.iter().any(|t| !t.frames.is_empty()) {
        return None;
    }
    let crash = report.get("exception").and_then(|e| {
        let signal = e.get("signal").and_then(Value::as_str);
        let kind = e.get("type").and_then(Value::as_str);
        let what = match (kind, signal) {
            (Some(k), Some(s)) => format!("{k} ({s})"),
            (Some(k), None) => k.to_string(),
            (None, Some(s)) => s.to_string(),
            (None, None) => return None,
        };
        let thread = threads.iter().find(|t| t.event).and_then(|t| t.number);
        Some((what, thread))
    });
    Some(Trace {
        format: Some(Format::AppleCrashReport),
        first_line,
        last_line,
        threads,
        crash_line: if crash.is_some() { first_line } else { 0 },
        crash,
        ..Trace::default()
    })
}

fn frame(index: usize, f: &Value, images: &[Option<String>]) -> TextFrame {
    let number = |key: &str| f.get(key).and_then(Value::as_u64);
    let module =
        number("imageIndex").and_then(|i| images.get(usize::try_from(i).ok()?).cloned().flatten());
    TextFrame {
        index: Some(index),
        module,
        function: f
            .get("symbol")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        function_offset: number("symbolLocation"),
        module_offset: number("imageOffset"),
        ..TextFrame::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Option<String>> {
        text.lines().map(|l| Some(l.to_string())).collect()
    }

    #[test]
    fn a_report_pretty_or_on_one_line() {
        let body = r#"{
  "procName" : "viewer",
  "exception" : {"type":"EXC_BAD_ACCESS","signal":"SIGSEGV"},
  "faultingThread" : 0,
  "threads" : [{"triggered":true,"id":77,"queue":"com.apple.main-thread","frames":[{"imageOffset":4096,"symbol":"Atlas::~Atlas()","symbolLocation":12,"imageIndex":1},{"imageOffset":28492,"symbol":"__cxa_finalize_ranges","symbolLocation":464,"imageIndex":0}]},{"id":78,"frames":[{"imageOffset":1200,"symbol":"__psynch_cvwait","symbolLocation":8,"imageIndex":2}]}],
  "usedImages" : [{"name":"libsystem_c.dylib"},{"name":"libatlas.dylib"},{"name":"libsystem_kernel.dylib"}]
}"#;
        let header = r#"{"app_name":"viewer","bug_type":"309","os_version":"macOS 14.4"}"#;
        for text in [
            format!("some output\n{header}\n{body}\nmore output\n"),
            format!("{header}\n{}\n", body.replace('\n', " ")),
        ] {
            let traces = read(&lines(&text));
            assert_eq!(traces.len(), 1, "{text}");
            let t = &traces[0];
            assert_eq!(
                t.crash.as_ref().map(|c| c.0.as_str()),
                Some("EXC_BAD_ACCESS (SIGSEGV)")
            );
            assert_eq!(t.threads.len(), 2);
            let top = &t.threads[0].frames[0];
            assert_eq!(top.function.as_deref(), Some("Atlas::~Atlas()"));
            assert_eq!(top.module.as_deref(), Some("libatlas.dylib"));
            assert!(t.threads[0].event && !t.threads[1].event);
        }
    }

    #[test]
    fn other_json_and_broken_reports_are_passed_over() {
        for text in [
            "{\"threads\": 4, \"frames\": 10, \"usedImages\": 0}\n",
            "{\"level\":\"info\",\"msg\":\"usedImages frames\"}\n",
            "{\n  \"threads\" : [{\"frames\":[{\"imageIndex\":9}\n",
            "{\"threads\":[],\"usedImages\":[],\"frames\":1}\n",
            // Unclosed documents, nested deep and broken mid-way.
            &"{\"frames\": [1], \"usedImages\": [\n".repeat(300),
            &"{\"frames\": [1], \"usedImages\": [2], \"x\": \n".repeat(300),
        ] {
            assert!(read(&lines(text)).is_empty(), "{text}");
        }
    }
}
