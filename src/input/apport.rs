//! Ubuntu's apport crash reports (`/var/crash/*.crash`): RFC 822-like
//! `Key: value` fields, a value going on over the lines that start with a
//! space. Binary values say `base64` and follow as lines each encoded on
//! its own; together they are a gzip stream (a zstd one in newer apport,
//! a bare zlib one in old reports). `CoreDump` is the process's core.
//!
//! The core is decompressed, line by line, into a private temporary file
//! (bounded in size) and read as any core. Without one (apport removes it
//! after retracing, or kept none), the stacks apport's gdb printed
//! (`ThreadStacktrace`, else `Stacktrace`) are read as a text trace.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;

use base64::Engine as _;

use crate::dump::Analyzer;
use crate::model::{Report, Status};

/// A core larger than this once decompressed is refused.
const MAX_CORE: u64 = 64 << 30;
/// Lines longer than this are no apport report's.
const MAX_LINE: u64 = 1 << 20;
/// Most bytes kept of one text field.
const MAX_VALUE: usize = 16 << 20;
/// The text fields read.
const FIELDS: [&str; 8] = [
    "ProblemType",
    "ExecutablePath",
    "ProcCmdline",
    "Signal",
    "Package",
    "Title",
    "ThreadStacktrace",
    "Stacktrace",
];

/// The report of the apport crash report at `path`, undiagnosed.
pub(crate) fn reports(path: &Path, analyzer: &Analyzer) -> Vec<Report> {
    let shown = path.display().to_string();
    let failed = |why: String| vec![Report::failed(shown.clone(), "apport", why)];
    let parsed = match read(path) {
        Ok(parsed) => parsed,
        Err(why) => return failed(format!("apport crash report: {why}")),
    };
    let problem = parsed.fields.get("ProblemType").map_or("", String::as_str);
    if problem != "Crash" {
        return failed(format!(
            "an apport report of a {problem:?} problem, not of a crash: no process to read"
        ));
    }
    if let Some(core) = parsed.core {
        let mut report = analyzer.analyze(core.file.path());
        report.path = shown;
        if report.status == Status::Ok {
            let format = report.source.format.as_deref().unwrap_or("ELF core");
            report.source.format = Some(format!(
                "{format} in an apport crash report (CoreDump, {})",
                core.compression
            ));
            if let Some(why) = core.broken {
                report.warnings.insert(
                    0,
                    format!(
                        "the CoreDump field is cut or corrupt ({why}): what came before is read"
                    ),
                );
            }
            if let Some(process) = report.process.as_mut() {
                if process.command_line.is_none() {
                    process.command_line = parsed.fields.get("ProcCmdline").cloned();
                }
            }
        } else if let Some(error) = report.error.as_mut() {
            *error = format!("the core in the apport crash report (CoreDump): {error}");
        }
        return vec![report];
    }
    let trace = ["ThreadStacktrace", "Stacktrace"]
        .into_iter()
        .find_map(|field| Some((field, parsed.fields.get(field)?)));
    let Some((field, text)) = trace else {
        return failed(
            "an apport crash report with neither its core (CoreDump) nor a stack trace \
             (Stacktrace): apport kept nothing to read (`ulimit -c` was 0, or the core was \
             removed)"
                .to_string(),
        );
    };
    let text = gdb_context(&parsed.fields, field, text);
    match crate::text::read_traces(&shown, &text) {
        Ok(mut reports) => {
            for report in &mut reports {
                report.warnings.insert(
                    0,
                    format!(
                        "the apport crash report holds no core (CoreDump): read from its \
                         {field} field, the stacks apport's gdb printed"
                    ),
                );
            }
            reports
        }
        Err(why) => failed(format!(
            "apport crash report without a core: its {field} field: {why}"
        )),
    }
}

/// The stacks apport's gdb printed, with the two lines gdb itself prints
/// before them and apport keeps in fields of their own: the signal
/// (`Signal`) and which thread took it (the one whose stack is the
/// `Stacktrace` field).
fn gdb_context(fields: &BTreeMap<String, String>, field: &str, stacks: &str) -> String {
    let mut out = String::new();
    let signal = fields
        .get("Signal")
        .and_then(|s| s.trim().parse::<u32>().ok());
    let name = match signal {
        Some(3) => Some("SIGQUIT, Quit"),
        Some(4) => Some("SIGILL, Illegal instruction"),
        Some(5) => Some("SIGTRAP, Trace/breakpoint trap"),
        Some(6) => Some("SIGABRT, Aborted"),
        Some(7) => Some("SIGBUS, Bus error"),
        Some(8) => Some("SIGFPE, Arithmetic exception"),
        Some(11) => Some("SIGSEGV, Segmentation fault"),
        _ => None,
    };
    if let Some(name) = name {
        out.push_str(&format!("Program terminated with signal {name}.\n"));
    }
    if field == "ThreadStacktrace" {
        let first = |text: &str| {
            text.lines()
                .map(str::trim)
                .find(|l| l.starts_with("#0 "))
                .map(str::to_string)
        };
        let crashed = fields.get("Stacktrace").and_then(|s| first(s));
        // `Thread 1 (Thread 0x7f12 (LWP 28268)):` before that frame.
        let mut header: Option<&str> = None;
        for line in stacks.lines() {
            if line.starts_with("Thread ") {
                header = Some(line.trim_end_matches(':'));
            } else if crashed.as_deref().is_some_and(|c| line.trim() == c) {
                if let Some((number, rest)) = header
                    .and_then(|h| h.strip_prefix("Thread "))
                    .and_then(|h| h.split_once(' '))
                {
                    out.push_str(&format!("[Current thread is {number} {rest}]\n"));
                }
                break;
            }
        }
    }
    out.push_str(stacks);
    out
}

/// A core taken out of the report.
#[derive(Debug)]
struct Core {
    file: tempfile::NamedTempFile,
    compression: &'static str,
    /// Why decompression stopped early, when it did.
    broken: Option<String>,
}

#[derive(Debug)]
struct Parsed {
    fields: BTreeMap<String, String>,
    core: Option<Core>,
}

fn read(path: &Path) -> Result<Parsed, String> {
    let file = File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut fields: BTreeMap<String, String> = BTreeMap::new();
    let mut core: Option<CoreWriter> = None;
    // The field the continuation lines belong to.
    let mut current = Current::Skip;
    let mut line = Vec::new();
    let mut number = 0usize;
    loop {
        line.clear();
        let n = (&mut reader)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("cannot read: {e}"))?;
        if n == 0 {
            break;
        }
        number += 1;
        if n as u64 > MAX_LINE {
            return Err(format!(
                "line {number} is longer than 1 MiB: not an apport report"
            ));
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        if let Some(rest) = text.strip_prefix(b" ") {
            match &mut current {
                Current::Skip => {}
                Current::Text(key) => {
                    let value = fields.entry(key.clone()).or_default();
                    if value.len() < MAX_VALUE {
                        value.push('\n');
                        value.push_str(&String::from_utf8_lossy(rest));
                    }
                }
                Current::Core => {
                    if let Some(writer) = core.as_mut() {
                        writer.line(rest)?;
                    }
                }
            }
            continue;
        }
        let Some(colon) = text.iter().position(|b| *b == b':') else {
            if number == 1 {
                return Err("its first line is not a `Key: value` field".into());
            }
            current = Current::Skip;
            continue;
        };
        let key = String::from_utf8_lossy(&text[..colon]).into_owned();
        let value = String::from_utf8_lossy(&text[colon + 1..])
            .trim()
            .to_string();
        current = if key == "CoreDump" && value == "base64" {
            core = Some(CoreWriter::new()?);
            Current::Core
        } else if FIELDS.contains(&key.as_str()) && value != "base64" {
            fields.insert(key.clone(), value);
            Current::Text(key)
        } else {
            Current::Skip
        };
    }
    let core = match core {
        Some(writer) => writer.finish()?,
        None => None,
    };
    Ok(Parsed { fields, core })
}

enum Current {
    Skip,
    Text(String),
    Core,
}

/// Decodes the CoreDump lines into a temporary file.
struct CoreWriter {
    file: Option<tempfile::NamedTempFile>,
    decoder: Option<Decoder>,
    compression: &'static str,
    broken: Option<String>,
}

enum Decoder {
    Gzip(flate2::write::GzDecoder<Bounded>),
    Zlib(flate2::write::ZlibDecoder<Bounded>),
    Zstd(zstd::stream::write::Decoder<'static, Bounded>),
}

impl CoreWriter {
    fn new() -> Result<CoreWriter, String> {
        let file = tempfile::Builder::new()
            .prefix("dumptriage-apport-")
            .tempfile()
            .map_err(|e| format!("no temporary file for its core: {e}"))?;
        Ok(CoreWriter {
            file: Some(file),
            decoder: None,
            compression: "gzip",
            broken: None,
        })
    }

    /// One line of the field: base64 on its own.
    fn line(&mut self, line: &[u8]) -> Result<(), String> {
        if self.broken.is_some() {
            return Ok(());
        }
        let bytes = match base64::engine::general_purpose::STANDARD.decode(line.trim_ascii()) {
            Ok(bytes) => bytes,
            Err(e) => {
                self.broken = Some(format!("a line is not base64: {e}"));
                return Ok(());
            }
        };
        if self.decoder.is_none() {
            let Some(file) = self.file.as_ref() else {
                return Ok(());
            };
            let out = Bounded {
                file: file
                    .as_file()
                    .try_clone()
                    .map_err(|e| format!("cannot write its core: {e}"))?,
                written: 0,
            };
            self.decoder = Some(if bytes.starts_with(&[0x1f, 0x8b, 0x08]) {
                Decoder::Gzip(flate2::write::GzDecoder::new(out))
            } else if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
                self.compression = "zstd";
                Decoder::Zstd(
                    zstd::stream::write::Decoder::new(out)
                        .map_err(|e| format!("cannot decompress its core: {e}"))?,
                )
            } else {
                self.compression = "zlib";
                Decoder::Zlib(flate2::write::ZlibDecoder::new(out))
            });
        }
        let result = match self.decoder.as_mut() {
            Some(Decoder::Gzip(d)) => d.write_all(&bytes),
            Some(Decoder::Zlib(d)) => d.write_all(&bytes),
            Some(Decoder::Zstd(d)) => d.write_all(&bytes),
            None => Ok(()),
        };
        match result {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::FileTooLarge => Err(format!(
                "its core decompresses to more than {} GiB: refused",
                MAX_CORE >> 30
            )),
            Err(e)
                if e.kind() == io::ErrorKind::Other
                    || e.kind() == io::ErrorKind::InvalidInput
                    || e.kind() == io::ErrorKind::InvalidData =>
            {
                self.broken = Some(e.to_string());
                Ok(())
            }
            Err(e) => Err(format!("cannot write its core: {e}")),
        }
    }

    fn finish(mut self) -> Result<Option<Core>, String> {
        let ended = match self.decoder.take() {
            Some(Decoder::Gzip(d)) => d.finish().map(drop),
            Some(Decoder::Zlib(d)) => d.finish().map(drop),
            Some(Decoder::Zstd(mut d)) => d.flush(),
            None => return Ok(None),
        };
        if let Err(e) = ended {
            self.broken.get_or_insert(e.to_string());
        }
        let Some(file) = self.file.take() else {
            return Ok(None);
        };
        if file.as_file().metadata().map_or(0, |m| m.len()) == 0 {
            return Err(format!(
                "its CoreDump field holds no data ({})",
                self.broken.unwrap_or_else(|| "empty".into())
            ));
        }
        Ok(Some(Core {
            file,
            compression: self.compression,
            broken: self.broken,
        }))
    }
}

/// The temporary file, refusing to grow past [`MAX_CORE`].
struct Bounded {
    file: File,
    written: u64,
}

impl Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written.saturating_add(buf.len() as u64) > MAX_CORE {
            return Err(io::Error::new(io::ErrorKind::FileTooLarge, "too large"));
        }
        let n = self.file.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An apport crash report as apport writes one: text fields, then
    /// `CoreDump: base64` with each line of the gzip stream encoded on its
    /// own (the gzip header first, the deflate data in pieces).
    pub(crate) fn crash_file(core: &[u8], stacktrace: Option<&str>) -> Vec<u8> {
        use flate2::write::GzEncoder;
        let mut out = b"ProblemType: Crash\nDate: Thu Nov 27 11:31:19 2026\nExecutablePath: /usr/bin/prog\nProcCmdline: prog --flag\nSignal: 11\n".to_vec();
        if let Some(trace) = stacktrace {
            out.extend(b"ThreadStacktrace:\n");
            for line in trace.lines() {
                out.extend(b" ");
                out.extend(line.as_bytes());
                out.extend(b"\n");
            }
        }
        if !core.is_empty() {
            let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(core).unwrap();
            let packed = gz.finish().unwrap();
            out.extend(b"CoreDump: base64\n");
            for chunk in packed.chunks(57) {
                out.extend(b" ");
                out.extend(
                    base64::engine::general_purpose::STANDARD
                        .encode(chunk)
                        .as_bytes(),
                );
                out.extend(b"\n");
            }
        }
        out.extend(b"Title: prog crashed with SIGSEGV\n");
        out
    }

    #[test]
    fn the_core_comes_out_whole_and_a_cut_one_says_so() {
        let core: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.crash");
        std::fs::write(&path, crash_file(&core, None)).unwrap();
        let parsed = read(&path).unwrap();
        assert_eq!(parsed.fields["ProcCmdline"], "prog --flag");
        assert_eq!(parsed.fields["Title"], "prog crashed with SIGSEGV");
        let out = parsed.core.unwrap();
        assert_eq!(std::fs::read(out.file.path()).unwrap(), core);
        assert!(out.broken.is_none());

        let whole = crash_file(&core, None);
        let cut = &whole[..whole.len() / 2];
        std::fs::write(&path, cut).unwrap();
        let out = read(&path).unwrap().core.unwrap();
        assert!(out.broken.is_some());
        let kept = std::fs::read(out.file.path()).unwrap();
        assert!(!kept.is_empty() && core.starts_with(&kept));
    }

    #[test]
    fn text_fields_span_lines_and_garbage_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.crash");
        std::fs::write(
            &path,
            crash_file(&[], Some("Thread 1 (LWP 5):\n#0  f () at a.c:1")),
        )
        .unwrap();
        let parsed = read(&path).unwrap();
        assert!(parsed.core.is_none());
        assert_eq!(
            parsed.fields["ThreadStacktrace"],
            "\nThread 1 (LWP 5):\n#0  f () at a.c:1"
        );
        std::fs::write(&path, b"not a report\n").unwrap();
        assert!(read(&path).is_err());
        let mut long = b"ProblemType: Crash\nX: ".to_vec();
        long.extend(vec![b'a'; 2 << 20]);
        std::fs::write(&path, long).unwrap();
        assert!(read(&path).unwrap_err().contains("longer than"));
    }
}
