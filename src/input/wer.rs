//! Windows Error Reporting's report folders (`ReportArchive`,
//! `ReportQueue`: `AppCrash_NAME_...` with a `Report.wer`, and a
//! `.mdmp`/`.hdmp` when WER kept one).
//!
//! `Report.wer` is `Key=Value` lines, UTF-16LE after a byte-order mark as
//! Windows writes it. Its problem signature is `Sig[N].Name` /
//! `Sig[N].Value` pairs whose order depends on the event type (APPCRASH
//! puts the exception code at 6, BEX64 at 7), so each is read by its name:
//! `Application Name`, `Application Version`, `Fault Module Name`, `Fault
//! Module Version`, `Exception Code`, `Exception Offset`. `NsAppName`,
//! `AppName`, `AppPath`, `EventType`, `EventTime` (a FILETIME) and the
//! `LoadedModule[N]` paths complete it.
//!
//! With a dump beside it, the dump is analysed and the problem signature
//! said with it. Without one, the signature itself is the report: the
//! exception, and a crashing thread whose one frame is the faulting module
//! at the fault's offset (what a rule on a module or a code can use).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::dump::Analyzer;
use crate::model::{
    Exception, Frame, Module, ModuleSymbols, Process, Report, Source, SourceKind, Status,
    SymbolSource, Thread,
};

/// A `Report.wer` larger than this is not one.
const MAX_SIZE: u64 = 16 << 20;
/// FILETIME ticks (100 ns) from 1601 to 1970.
const FILETIME_UNIX: u64 = 116_444_736_000_000_000;

/// Whether `path` is named as WER names its reports.
pub(crate) fn is_report_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.eq_ignore_ascii_case("Report.wer"))
}

/// What a `Report.wer` says.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct WerReport {
    pub event_type: String,
    pub app_name: Option<String>,
    pub app_path: Option<String>,
    pub app_version: Option<String>,
    pub fault_module: Option<String>,
    pub fault_module_version: Option<String>,
    pub exception_code: Option<u32>,
    pub exception_offset: Option<u64>,
    /// UTC, RFC 3339.
    pub time: Option<String>,
    pub loaded_modules: Vec<String>,
    /// The signature as written, by name.
    pub signature: BTreeMap<String, String>,
}

impl WerReport {
    /// A hang, not a crash (`AppHang`, `AppHangB1`, ...).
    pub(crate) fn hang(&self) -> bool {
        self.event_type.to_ascii_lowercase().contains("hang")
    }

    /// One line: the event, the application and where it failed.
    pub(crate) fn describe(&self) -> String {
        let mut s = format!("Windows Error Reporting {}", self.event_type);
        if let Some(app) = &self.app_name {
            s.push_str(&format!(" of {app}"));
            if let Some(v) = &self.app_version {
                s.push_str(&format!(" {v}"));
            }
        }
        if let Some(module) = &self.fault_module {
            s.push_str(&format!(", faulting module {module}"));
            if let Some(v) = &self.fault_module_version {
                s.push_str(&format!(" {v}"));
            }
            if let Some(offset) = self.exception_offset {
                s.push_str(&format!(" at +{offset:#x}"));
            }
        }
        if let Some(code) = self.exception_code {
            s.push_str(&format!(", exception {code:#010x}"));
        }
        s
    }
}

/// Reads the text of a `Report.wer`: UTF-16 after its byte-order mark, or
/// UTF-8.
pub(crate) fn parse(bytes: &[u8]) -> Result<WerReport, String> {
    let text = match bytes {
        [0xff, 0xfe, rest @ ..] => utf16(rest, u16::from_le_bytes),
        [0xfe, 0xff, rest @ ..] => utf16(rest, u16::from_be_bytes),
        [0xef, 0xbb, 0xbf, rest @ ..] => String::from_utf8_lossy(rest).into_owned(),
        _ => String::from_utf8_lossy(bytes).into_owned(),
    };
    let mut values: BTreeMap<String, String> = BTreeMap::new();
    for line in text.lines() {
        if let Some((key, value)) = line.split_once('=') {
            values.insert(key.trim().to_string(), value.trim().to_string());
        }
    }
    if !values.contains_key("Version") || !values.contains_key("EventType") {
        return Err("not a Windows Error Reporting report (no Version and EventType)".into());
    }
    // Sig[N] and DynamicSig[N]: the name and the value share N.
    let mut signature = BTreeMap::new();
    for prefix in ["Sig", "DynamicSig"] {
        for (key, name) in &values {
            let Some(n) = key
                .strip_prefix(prefix)
                .and_then(|k| k.strip_prefix('['))
                .and_then(|k| k.strip_suffix("].Name"))
            else {
                continue;
            };
            if let Some(value) = values.get(&format!("{prefix}[{n}].Value")) {
                signature
                    .entry(name.clone())
                    .or_insert_with(|| value.clone());
            }
        }
    }
    let get = |name: &str| {
        signature
            .get(name)
            .cloned()
            .filter(|v: &String| !v.is_empty())
    };
    let hex = |text: Option<String>| {
        text.and_then(|t| u64::from_str_radix(t.trim_start_matches("0x"), 16).ok())
    };
    let mut loaded: Vec<(u32, String)> = values
        .iter()
        .filter_map(|(k, v)| {
            let n = k.strip_prefix("LoadedModule[")?.strip_suffix(']')?;
            Some((n.parse().ok()?, v.clone()))
        })
        .collect();
    loaded.sort();
    // StackHash_XXXX: WER could not tell the module (the fault address
    // is in no module); not a module name.
    let fault_module = get("Fault Module Name").filter(|m| !m.starts_with("StackHash_"));
    Ok(WerReport {
        event_type: values.get("EventType").cloned().unwrap_or_default(),
        app_name: get("Application Name")
            .or_else(|| values.get("NsAppName").cloned())
            .or_else(|| values.get("AppName").cloned()),
        app_path: values.get("AppPath").cloned(),
        app_version: get("Application Version"),
        fault_module,
        fault_module_version: get("Fault Module Version"),
        exception_code: hex(get("Exception Code")).and_then(|c| u32::try_from(c).ok()),
        exception_offset: hex(get("Exception Offset")),
        time: values
            .get("EventTime")
            .and_then(|t| t.parse::<u64>().ok())
            .and_then(filetime),
        loaded_modules: loaded.into_iter().map(|(_, path)| path).collect(),
        signature,
    })
}

fn utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> String {
    let units: Vec<u16> = bytes.chunks_exact(2).map(|c| unit([c[0], c[1]])).collect();
    String::from_utf16_lossy(&units)
}

fn filetime(ticks: u64) -> Option<String> {
    let seconds = i64::try_from(ticks.checked_sub(FILETIME_UNIX)? / 10_000_000).ok()?;
    jiff::Timestamp::from_second(seconds)
        .ok()
        .map(|t| t.to_string())
}

/// The reports of the `Report.wer` at `path`: its dump's, with the problem
/// signature said, or the signature's own.
pub(crate) fn reports(path: &Path, analyzer: &Analyzer) -> Vec<Report> {
    let shown = path.display().to_string();
    let bytes = match std::fs::metadata(path) {
        Ok(meta) if meta.len() > MAX_SIZE => {
            return vec![Report::failed(
                shown,
                "wer",
                format!("larger than {} MiB: not a Report.wer", MAX_SIZE >> 20),
            )]
        }
        _ => match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) => {
                return vec![Report::failed(
                    shown,
                    "unreadable",
                    format!("cannot read file: {e}"),
                )]
            }
        },
    };
    let wer = match parse(&bytes) {
        Ok(wer) => wer,
        Err(why) => return vec![Report::failed(shown, "wer", why)],
    };
    match dump_beside(path) {
        Some(dump) => {
            let mut report = analyzer.analyze(&dump);
            report.path = dump.display().to_string();
            if report.status == Status::Ok {
                report.source.format = Some(format!("with {shown}: {}", wer.describe()));
                let code = report.exception.as_ref().map(|e| e.code);
                match (wer.exception_code, code) {
                    (Some(want), Some(have)) if want != have => report.warnings.push(format!(
                        "{shown} names exception {want:#010x}, the dump {have:#010x}: they may \
                         not be of the same crash"
                    )),
                    (Some(want), None) => report.warnings.push(format!(
                        "{shown} names exception {want:#010x}, the dump records none: they may \
                         not be of the same crash"
                    )),
                    _ => {}
                }
            }
            vec![report]
        }
        None => vec![signature_report(shown, &wer)],
    }
}

/// The dump WER kept beside its report: the heap dump (more memory for the
/// wait readers), else the minidump.
fn dump_beside(report: &Path) -> Option<PathBuf> {
    let dir = report.parent()?;
    let mut dumps: Vec<(usize, PathBuf)> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter_map(|p| {
            let ext = p.extension()?.to_str()?.to_ascii_lowercase();
            let rank = ["hdmp", "mdmp", "dmp"].iter().position(|e| *e == ext)?;
            Some((rank, p))
        })
        .collect();
    dumps.sort();
    dumps.into_iter().next().map(|(_, p)| p)
}

/// The problem signature as a report: the exception, and a crashing thread
/// whose one frame is the faulting module at the fault's offset.
pub(crate) fn signature_report(path: String, wer: &WerReport) -> Report {
    let crash = !wer.hang() && wer.exception_code.is_some();
    let mut frame = Frame::from_text(0);
    frame.module = wer.fault_module.clone();
    frame.module_offset = wer.exception_offset.filter(|_| wer.fault_module.is_some());
    let frames = if frame.module.is_some() {
        vec![frame]
    } else {
        Vec::new()
    };
    let thread = Thread {
        crashing: crash,
        frames,
        ..Thread::new(0)
    };
    let exception = wer.exception_code.filter(|_| crash).map(|code| Exception {
        code,
        name: minidump::CrashReason::from_windows_code(code).to_string(),
        address: 0,
        access_address: None,
        parameters: Vec::new(),
        abort: None,
        cpp_type: None,
        cpp_in_flight: None,
        thread_id: 0,
        crash: true,
        not_a_crash: None,
        ip_in_no_module: false,
    });
    let name_of = |p: &str| crate::model::file_name(p).to_string();
    let modules = wer
        .loaded_modules
        .iter()
        .map(|path| {
            let name = name_of(path);
            let version = wer.fault_module_version.clone().filter(|_| {
                wer.fault_module
                    .as_deref()
                    .is_some_and(|f| f.eq_ignore_ascii_case(&name))
            });
            Module {
                name,
                path: path.clone(),
                base: 0,
                size: 0,
                version,
                debug_file: None,
                debug_id: None,
                code_id: None,
                symbols: ModuleSymbols::NotNeeded,
                symbol_source: SymbolSource::None,
                symbol_file: None,
                symbols_tried: Vec::new(),
                unwind_info: None,
            }
        })
        .collect();
    let mut warnings = vec![format!(
        "{}: no dump beside the report, so no stacks: the problem signature is all there is",
        wer.describe()
    )];
    if wer.hang() {
        warnings.push("a hang report: which thread hung is not in the signature".to_string());
    }
    let source = Source {
        kind: SourceKind::Wer,
        format: Some(wer.event_type.clone()),
        ..Source::default()
    };
    Report {
        process: Some(Process {
            name: wer.app_name.clone(),
            dump_time: wer.time.clone(),
            command_line: wer.app_path.clone(),
            ..Process::default()
        }),
        exception,
        threads: vec![thread],
        modules,
        warnings,
        ..Report::new(path, source)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A Report.wer of an APPCRASH, laid out as Windows writes one (the
    /// published field layout), in UTF-16LE after a byte-order mark.
    pub(crate) fn appcrash() -> Vec<u8> {
        let text = "Version=1\r\nEventType=APPCRASH\r\nEventTime=134079738790000000\r\n\
ReportType=2\r\nConsent=1\r\nReportIdentifier=9b0a6b52-3c1e-4d7a-9a61-0f3c1d2e4b5a\r\n\
NsAppName=python.exe\r\nSig[0].Name=Application Name\r\nSig[0].Value=python.exe\r\n\
Sig[1].Name=Application Version\r\nSig[1].Value=3.12.7150.1013\r\n\
Sig[2].Name=Application Timestamp\r\nSig[2].Value=66f6b1a4\r\n\
Sig[3].Name=Fault Module Name\r\nSig[3].Value=nvwgf2umx.dll\r\n\
Sig[4].Name=Fault Module Version\r\nSig[4].Value=31.0.15.5222\r\n\
Sig[5].Name=Fault Module Timestamp\r\nSig[5].Value=6633c5e1\r\n\
Sig[6].Name=Exception Code\r\nSig[6].Value=c0000005\r\n\
Sig[7].Name=Exception Offset\r\nSig[7].Value=00000000001a2b3c\r\n\
DynamicSig[1].Name=OS Version\r\nDynamicSig[1].Value=10.0.22631.2.0.0.256.48\r\n\
LoadedModule[0]=C:\\Python312\\python.exe\r\n\
LoadedModule[1]=C:\\Windows\\SYSTEM32\\ntdll.dll\r\n\
LoadedModule[2]=C:\\Windows\\System32\\DriverStore\\FileRepository\\nv.inf_amd64\\nvwgf2umx.dll\r\n\
AppName=Python\r\nAppPath=C:\\Python312\\python.exe\r\n";
        let mut bytes = vec![0xff, 0xfe];
        bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        bytes
    }

    #[test]
    fn the_signature_is_read_by_name_whatever_its_order() {
        let wer = parse(&appcrash()).unwrap();
        assert_eq!(wer.event_type, "APPCRASH");
        assert_eq!(wer.app_name.as_deref(), Some("python.exe"));
        assert_eq!(wer.fault_module.as_deref(), Some("nvwgf2umx.dll"));
        assert_eq!(wer.exception_code, Some(0xc000_0005));
        assert_eq!(wer.exception_offset, Some(0x1a_2b3c));
        assert_eq!(wer.loaded_modules.len(), 3);
        assert!(
            wer.time.as_deref().is_some_and(|t| t.starts_with("20")),
            "{:?}",
            wer.time
        );
        // BEX64 swaps the offset and the code.
        let bex = "Version=1\nEventType=BEX64\nSig[0].Name=Application Name\nSig[0].Value=a.exe\n\
Sig[3].Name=Fault Module Name\nSig[3].Value=StackHash_0000\nSig[6].Name=Exception Offset\n\
Sig[6].Value=PCH_84\nSig[7].Name=Exception Code\nSig[7].Value=c0000409\n";
        let wer = parse(bex.as_bytes()).unwrap();
        assert_eq!(wer.exception_code, Some(0xc000_0409));
        assert_eq!(wer.exception_offset, None);
        assert_eq!(wer.fault_module, None, "StackHash_ is no module");
        assert!(parse(b"Key=Value\n").is_err());
    }

    #[test]
    fn the_signature_report_has_the_code_and_the_faulting_module() {
        let report = signature_report("Report.wer".into(), &parse(&appcrash()).unwrap());
        let exception = report.exception.as_ref().unwrap();
        assert_eq!(exception.code, 0xc000_0005);
        assert!(
            exception.name.contains("ACCESS_VIOLATION"),
            "{}",
            exception.name
        );
        let top = &report.threads[0].frames[0];
        assert_eq!(top.module.as_deref(), Some("nvwgf2umx.dll"));
        assert_eq!(top.module_offset, Some(0x1a_2b3c));
        assert!(report.crashed());
    }
}
