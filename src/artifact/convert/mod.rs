//! `dumptriage convert`: a Linux core (GBs) becomes a minidump (MBs) that
//! gives the same report.
//!
//! What is kept is what the analysis reads, found by recording it rather
//! than guessed: the core is analysed first, every read of the wait-chain
//! and Python readers is recorded (src/dump/mod.rs, `DumpMemory`), and the
//! minidump keeps every thread's registers and stack (from the red zone
//! below its stack pointer up, at most [`stream::MAX_STACK`]), the module
//! list with build ids, the signal, and those recorded ranges. The small
//! file is then analysed in turn and its report compared with the core's:
//! any difference is said, never hidden.

mod small;
mod stream;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::dump::Analyzer;
use crate::model::Report;
use crate::signatures::Database;
use crate::symbols::SymbolConfig;
use small::Range;

/// Bytes below a stack pointer kept (the x86-64 red zone).
const RED_ZONE: u64 = 128;
/// Ranges closer than this are kept as one (fewer, larger pieces).
const MERGE_GAP: u64 = 256;
/// Differences listed when the reports differ.
const MAX_DIFFERENCES: usize = 8;

/// What to convert, and where to.
#[derive(Debug, Clone)]
pub struct ConvertOptions {
    /// The core file; `None`: standard input (a `core_pattern` pipe).
    pub core: Option<PathBuf>,
    pub output: PathBuf,
    pub symbols: SymbolConfig,
    /// Standard input only: most bytes of writable memory kept beyond the
    /// stacks and the modules' data.
    pub heap_budget: u64,
}

/// What a conversion did.
#[derive(Debug, Clone)]
pub struct Conversion {
    /// Bytes of the core (read from the pipe, for standard input).
    pub core_bytes: u64,
    pub dump_bytes: u64,
    /// Memory ranges kept, and their bytes.
    pub ranges: usize,
    pub memory: u64,
    /// Ranges the wait and Python readers read.
    pub reads: usize,
    /// How the minidump's report differs from the core's: empty when they
    /// are the same.
    pub differences: Vec<String>,
    /// What a pipe conversion left out, one sentence each.
    pub notes: Vec<String>,
}

impl Conversion {
    /// What happened, for people: the sizes, then any difference or note.
    pub fn describe(&self, output: &Path) -> Vec<String> {
        let percent = self.percent();
        let shown = if percent < 0.1 {
            format!("{percent:.4}")
        } else {
            format!("{percent:.2}")
        };
        let mut lines = vec![format!(
            "wrote {}: {}, {shown}% of the {} core ({} memory ranges, {} of memory; the \
             wait and Python readers read {} ranges)",
            output.display(),
            size(self.dump_bytes),
            size(self.core_bytes),
            self.ranges,
            size(self.memory),
            self.reads
        )];
        lines.extend(self.notes.iter().map(|n| format!("note: {n}")));
        if self.differences.is_empty() {
            lines.push("the minidump gives the same report as the core".to_string());
        } else {
            lines.push("warning: the minidump's report differs from the core's:".to_string());
            lines.extend(self.differences.iter().map(|d| format!("  {d}")));
        }
        lines
    }

    /// The minidump's size as a percentage of the core's.
    pub fn percent(&self) -> f64 {
        if self.core_bytes == 0 {
            return 0.0;
        }
        self.dump_bytes as f64 * 100.0 / self.core_bytes as f64
    }
}

/// `dumptriage convert`: the conversion, what to say, and whether the
/// minidump's report differs from the core's.
pub fn command(options: &ConvertOptions) -> Result<super::Outcome, String> {
    let done = convert(options)?;
    Ok(super::Outcome {
        said: done.describe(&options.output),
        failed: !done.differences.is_empty(),
        ..super::Outcome::default()
    })
}

/// Converts a core; the error is one line naming the file and the problem.
pub fn convert(options: &ConvertOptions) -> Result<Conversion, String> {
    let dir = match options.output.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    match &options.core {
        Some(core) => convert_file(core, core, options, &dir, None),
        None => {
            let shown = Path::new("<stdin>");
            // The kept part of the stream, as a smaller core, beside the
            // output (the folder the user chose, and the same file system).
            let mut reduced = tempfile::Builder::new()
                .prefix(".dumptriage-core-")
                .tempfile_in(&dir)
                .map_err(|e| {
                    format!(
                        "{}: cannot write in {}: {e}",
                        shown.display(),
                        dir.display()
                    )
                })?;
            let stdin = std::io::stdin();
            let stats = stream::reduce(stdin.lock(), reduced.as_file_mut(), options.heap_budget)
                .map_err(|e| format!("{}: {e}", shown.display()))?;
            let path = reduced.path().to_path_buf();
            convert_file(&path, shown, options, &dir, Some(stats))
        }
    }
}

fn convert_file(
    core: &Path,
    shown: &Path,
    options: &ConvertOptions,
    dir: &Path,
    streamed: Option<stream::Reduced>,
) -> Result<Conversion, String> {
    let fail = |e: String| format!("{}: {e}", shown.display());
    let analyzer = Analyzer::new(
        options
            .symbols
            .clone()
            .with_dump_neighbours([core])
            .sources(),
    );
    let crate::dump::RecordedCore {
        mut report,
        core: opened,
        reads,
    } = analyzer
        .analyze_core_recorded(core)
        .map_err(|e| fail(e.to_string()))?;
    let keep = ranges(&opened.view[..], &reads).map_err(fail)?;
    let mut notes = Vec::new();
    let mut warnings = opened.warnings.clone();
    if let Some(stats) = &streamed {
        let mut note = format!(
            "read from a pipe: every thread's stack, the first pages of the mapped files and \
             the modules' data were kept, and {} of the other writable memory (the heap)",
            size(stats.heap)
        );
        if stats.over_budget > 0 {
            note.push_str(&format!(
                "; {} of it was left out (over --heap-budget): what the wait and Python \
                 readers would read there is missing",
                size(stats.over_budget)
            ));
        }
        notes.extend(stats.notes.iter().cloned());
        notes.push(note.clone());
        // After the core's own warnings, in both reports.
        let at = opened.warnings.len().min(report.warnings.len());
        report.warnings.insert(at, note.clone());
        warnings.push(note);
    }
    let record = crate::model::Converted {
        from: opened.format.clone(),
        streamed: streamed.is_some(),
        warnings,
        tool: format!("dumptriage {}", env!("CARGO_PKG_VERSION")),
    }
    .to_bytes();
    let mut file = tempfile::Builder::new()
        .prefix(".dumptriage-dmp-")
        .tempfile_in(dir)
        .map_err(|e| fail(format!("cannot write in {}: {e}", dir.display())))?;
    let written = {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file.as_file_mut());
        let written = small::write(&opened.view[..], &keep, &record, &mut out).map_err(fail)?;
        out.flush()
            .map_err(|e| fail(format!("cannot write {}: {e}", options.output.display())))?;
        written
    };
    let core_bytes = match &streamed {
        Some(stats) => stats.read,
        None => std::fs::metadata(core).map_or(0, |m| m.len()),
    };
    drop(opened);
    // A pipe handler runs as root in a folder others may write: it never
    // replaces a file that is there (nor follows a link put in its place).
    let persisted = if streamed.is_some() {
        file.persist_noclobber(&options.output).map_err(|e| e.error)
    } else {
        file.persist(&options.output).map_err(|e| e.error)
    };
    persisted.map_err(|e| fail(format!("cannot write {}: {e}", options.output.display())))?;

    let database = Database::load(&[]).map_err(|problems| {
        fail(format!(
            "{} problem(s) in the built-in rules",
            problems.len()
        ))
    })?;
    let before = crate::diagnose(report, &database);
    let after = crate::diagnose(analyzer.analyze(&options.output), &database);
    analyzer.finish();
    Ok(Conversion {
        core_bytes,
        dump_bytes: written.bytes,
        ranges: written.ranges,
        memory: written.memory,
        reads: reads.len(),
        differences: differences(&before, &after),
        notes,
    })
}

/// For the fuzz target `read_artifact`: `data` read as a core from a pipe
/// (`--from-stdin`), into memory. Bad input must be an error, never a
/// panic or a hang.
#[doc(hidden)]
pub fn fuzz_stream(data: &[u8]) {
    let mut out = std::io::Cursor::new(Vec::new());
    if let Err(error) = stream::reduce(data, &mut out, 1 << 20) {
        assert!(!error.contains('\n'), "a multi-line error: {error:?}");
    }
}

/// A size for people: `412 KB`, `8.9 MB`, `4.8 GB`.
pub(crate) fn size(bytes: u64) -> String {
    let b = bytes as f64;
    if bytes < 1 << 20 {
        format!("{:.0} KB", (b / 1024.0).ceil())
    } else if bytes < 1 << 30 {
        format!("{:.1} MB", b / f64::from(1 << 20))
    } else {
        format!("{:.2} GB", b / f64::from(1 << 30))
    }
}

/// The memory to keep: each thread's stack from the red zone below its
/// stack pointer up (at most [`stream::MAX_STACK`]), and every range read;
/// each clipped to the core's memory, sorted and merged.
fn ranges(view: &[u8], reads: &[(u64, u64)]) -> Result<Vec<Range>, String> {
    use minidump::{Minidump, MinidumpThreadList};
    let dump = Minidump::read(view).map_err(|e| format!("the core's minidump view: {e}"))?;
    let memory = dump.get_memory().unwrap_or_default();
    let mut wanted: Vec<Range> = Vec::new();
    if let Ok(threads) = dump.get_stream::<MinidumpThreadList>() {
        for thread in &threads.threads {
            // The stack: in the region of the stack pointer only (the
            // regions above it are other mappings).
            let sp = thread.raw.stack.start_of_memory_range;
            let Some(region) = memory.memory_at_address(sp) else {
                continue;
            };
            let top = region.base_address().saturating_add(region.size());
            wanted.push(Range {
                start: sp.saturating_sub(RED_ZONE).max(region.base_address()),
                end: sp.saturating_add(stream::MAX_STACK).min(top),
            });
        }
    }
    for (address, len) in reads {
        wanted.push(Range {
            start: *address,
            end: address.saturating_add(*len),
        });
    }
    // Clipped to the regions the core holds (a range may span two).
    let mut regions: Vec<Range> = memory
        .iter()
        .map(|r| Range {
            start: r.base_address(),
            end: r.base_address().saturating_add(r.size()),
        })
        .collect();
    regions.sort();
    let mut kept: Vec<Range> = Vec::new();
    for range in wanted {
        let first = regions.partition_point(|r| r.end <= range.start);
        for region in regions[first..].iter().take_while(|r| r.start < range.end) {
            let piece = Range {
                start: range.start.max(region.start),
                end: range.end.min(region.end),
            };
            if piece.start < piece.end {
                kept.push(piece);
            }
        }
    }
    kept.sort();
    // Merged, but never across a region's edge (each piece is read from
    // one region).
    let region_of = |address: u64| regions.partition_point(|r| r.start <= address);
    let mut merged: Vec<Range> = Vec::new();
    for range in kept {
        match merged.last_mut() {
            Some(last)
                if range.start <= last.end.saturating_add(MERGE_GAP)
                    && region_of(range.start) == region_of(last.start) =>
            {
                last.end = last.end.max(range.end);
            }
            _ => merged.push(range),
        }
    }
    Ok(merged)
}

/// Where the converted dump's report differs from the core's, as
/// `where: core VALUE, minidump VALUE` lines (the path and the source are
/// expected to differ).
fn differences(core: &Report, small: &Report) -> Vec<String> {
    let as_value = |report: &Report| {
        let mut value = serde_json::to_value(report).unwrap_or(Value::Null);
        if let Some(map) = value.as_object_mut() {
            map.remove("path");
            map.remove("source");
        }
        value
    };
    let mut out = Vec::new();
    diff("", &as_value(core), &as_value(small), &mut out);
    out
}

fn diff(at: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    if out.len() >= MAX_DIFFERENCES || a == b {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (key, left) in x {
                diff(
                    &format!("{at}.{key}"),
                    left,
                    y.get(key).unwrap_or(&Value::Null),
                    out,
                );
            }
            for (key, right) in y.iter().filter(|(k, _)| !x.contains_key(*k)) {
                diff(&format!("{at}.{key}"), &Value::Null, right, out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (left, right)) in x.iter().zip(y).enumerate() {
                diff(&format!("{at}[{i}]"), left, right, out);
            }
        }
        _ => {
            let shown = |v: &Value| {
                let text = v.to_string();
                match text.char_indices().nth(120) {
                    Some((cut, _)) => format!("{}...", &text[..cut]),
                    None => text,
                }
            };
            out.push(format!(
                "{}: the core gives {}, the minidump {}",
                at.trim_start_matches('.'),
                shown(a),
                shown(b)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_the_field_and_both_values() {
        let a = serde_json::json!({"threads": [{"id": 1, "frames": [1, 2]}], "x": "same"});
        let b = serde_json::json!({"threads": [{"id": 1, "frames": [1, 3]}], "x": "same"});
        let mut out = Vec::new();
        diff("", &a, &b, &mut out);
        assert_eq!(
            out,
            vec!["threads[0].frames[1]: the core gives 2, the minidump 3"]
        );
        let c = serde_json::json!({"threads": [{"id": 1, "frames": [1]}], "x": "same"});
        out.clear();
        diff("", &a, &c, &mut out);
        assert_eq!(out.len(), 1);
        assert!(out[0].starts_with("threads[0].frames:"), "{out:?}");
    }
}
