//! What the OS kept, in its own formats (issue #41), through the real
//! binary: an apport `.crash` made from a sample core (the core's
//! diagnosis; without its core, the stacks gdb printed for apport), a
//! `Report.wer` of the published layout (its faulting module and code;
//! with a dump beside it, the dump's report), and a systemd-coredump
//! folder whose cores are found by content, with look-alikes that are not.
#![cfg(target_os = "linux")]

use crate::common;
use crate::common::cores;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;
use serde_json::Value;

fn analyze(paths: &[&Path]) -> (Vec<Value>, std::process::Output) {
    let (doc, out) = common::analyze_json(paths);
    (doc["reports"].as_array().unwrap().clone(), out)
}

fn answer(report: &Value) -> String {
    match report["diagnoses"].as_array().and_then(|d| d.first()) {
        Some(d) => common::diagnosis_name(d),
        None => format!("none ({})", report["error"].as_str().unwrap_or("")),
    }
}

/// A `.crash` laid out as apport writes one: text fields, multi-line
/// fields on lines that start with a space, and `CoreDump: base64`
/// followed by the gzip header, the raw deflate stream in pieces and the
/// gzip trailer, each line base64-encoded on its own.
fn crash_file(core: Option<&[u8]>, fields: &[(&str, &str)]) -> Vec<u8> {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let mut out = Vec::new();
    for (key, value) in fields {
        let mut lines = value.lines();
        writeln!(out, "{key}: {}", lines.next().unwrap_or("")).unwrap();
        for line in lines {
            writeln!(out, " {line}").unwrap();
        }
    }
    if let Some(core) = core {
        writeln!(out, "CoreDump: base64").unwrap();
        writeln!(out, " {}", b64(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff")).unwrap();
        let mut deflate =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        let mut crc = flate2::Crc::new();
        for block in core.chunks(1 << 20) {
            deflate.write_all(block).unwrap();
            crc.update(block);
            let piece = std::mem::take(deflate.get_mut());
            if !piece.is_empty() {
                writeln!(out, " {}", b64(&piece)).unwrap();
            }
        }
        let mut last = deflate.finish().unwrap();
        last.extend(crc.sum().to_le_bytes());
        last.extend((core.len() as u32).to_le_bytes());
        writeln!(out, " {}", b64(&last)).unwrap();
    }
    writeln!(
        out,
        "Title: tls_exit_crash crashed with SIGSEGV in ___pthread_mutex_lock()"
    )
    .unwrap();
    out
}

/// gdb's `bt full` and `thread apply all bt full` of a core, as apport
/// keeps them (`Stacktrace`, `ThreadStacktrace`).
fn gdb_stacks(program: &Path, core: &Path) -> (String, String) {
    let run = |command: &str| {
        let out = Command::new("gdb")
            .args(["-q", "-batch", "-nx", "-ex", command])
            .arg(program)
            .arg(core)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let bt = run("bt full");
    let bt = bt[bt.find("#0").unwrap()..].to_string();
    let all = run("thread apply all bt full");
    let all = all[all.find("\nThread ").unwrap() + 1..].to_string();
    (bt, format!(".\n{all}"))
}

/// An apport crash report made from a sample core gives the core's
/// diagnosis; without its core, the stacks apport's gdb printed give the
/// same frames on the crashing thread; a `.crash` with neither, or of a
/// package failure, is one line of error; a text that merely starts like
/// one is no apport report.
#[test]
fn an_apport_crash_report_of_a_sample_core_gives_its_diagnosis() {
    if !cores::kernel_cores_land_here() || !cores::has_gdb() {
        common::skip::skip(
            "os_inputs::apport",
            "kernel.core_pattern does not write cores into the process's folder, or no gdb",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = cores::workdir(dir.path(), "tls");
    let program = work.join("tls_exit_crash");
    let core = cores::crash_core(&program, &[], &[], &work);
    let bytes = std::fs::read(&core).unwrap();
    let (bt, all) = gdb_stacks(&program, &core);
    let fields = [
        ("ProblemType", "Crash"),
        ("Date", "Thu Nov 27 11:31:19 2026"),
        ("ExecutablePath", "/tmp/tls_exit_crash"),
        ("ProcCmdline", "./tls_exit_crash"),
        ("Signal", "11"),
    ];
    let crashes = dir.path().join("var-crash");
    std::fs::create_dir(&crashes).unwrap();
    let write = |name: &str, data: Vec<u8>| {
        let path = crashes.join(name);
        std::fs::write(&path, data).unwrap();
        path
    };
    let with_core = write(
        "_tmp_tls_exit_crash.0.crash",
        crash_file(Some(&bytes), &fields),
    );
    let mut text_fields = fields.to_vec();
    text_fields.push(("Stacktrace", &bt));
    text_fields.push(("ThreadStacktrace", &all));
    let retraced = write("_tmp_tls_retraced.0.crash", crash_file(None, &text_fields));
    let empty = write("_tmp_nothing.0.crash", crash_file(None, &fields));
    let package = write(
        "dpkg.crash",
        b"ProblemType: Package\nPackage: foo 1.0\nErrorMessage: subprocess failed\n".to_vec(),
    );
    let notes = write(
        "notes.txt",
        b"ProblemType: a word in a note, not a report\n".to_vec(),
    );

    // Found in the folder by content (notes.txt is not searched: no --text).
    let (reports, _) = analyze(&[&crashes]);
    let names: Vec<&str> = reports
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(!names.iter().any(|n| n.ends_with("notes.txt")));
    let of = |path: &Path| {
        reports
            .iter()
            .find(|r| r["path"] == path.display().to_string())
            .unwrap()
    };
    let (core_reports, _) = analyze(&[&core]);
    let want = answer(&core_reports[0]);
    assert_eq!(want, "tls-destructor-crash-at-exit");
    let report = of(&with_core);
    assert_eq!(answer(report), want);
    assert_eq!(report["source"]["kind"], "core");
    assert!(
        report["source"]["format"]
            .as_str()
            .unwrap()
            .contains("apport"),
        "{}",
        report["source"]
    );
    assert_eq!(report["threads"], core_reports[0]["threads"]);

    check_retraced(of(&retraced), &core_reports[0]);

    for (path, says) in [
        (&empty, "neither its core"),
        (&package, "\"Package\" problem"),
    ] {
        let error = of(path)["error"].as_str().unwrap();
        assert!(error.contains(says) && !error.contains('\n'), "{error}");
    }
    // Named directly, a text that starts like a report is read as text.
    let (reports, _) = analyze(&[&notes]);
    assert_eq!(reports[0]["error_kind"], "not_minidump");

    // A cut CoreDump field: what came before is read, and said.
    let whole = crash_file(Some(&bytes), &fields);
    let cut = write("_tmp_cut.0.crash", whole[..whole.len() * 7 / 10].to_vec());
    let (reports, _) = analyze(&[&cut]);
    let warnings = reports[0]["warnings"].to_string();
    assert!(
        warnings.contains("CoreDump field is cut or corrupt"),
        "{:#}",
        reports[0]
    );
}

/// The report of the `.crash` without its core: gdb's stacks, the crashing
/// thread as apport's Stacktrace field names it, with the core's frames.
fn check_retraced(report: &Value, core_report: &Value) {
    assert_eq!(report["source"]["kind"], "text", "{report:#}");
    assert!(report["warnings"][0]
        .as_str()
        .unwrap()
        .contains("holds no core"));
    let crashing = &report["threads"][0];
    assert_eq!(crashing["crashing"], true);
    let names = common::function_names;
    let from_core = names(&core_report["threads"][0]);
    let from_text = names(crashing);
    assert!(
        from_text.iter().any(|f| f == "cache_release")
            && from_core.iter().any(|f| f == "cache_release"),
        "core {from_core:?}, text {from_text:?}"
    );
    assert_eq!(crashing["id"], core_report["threads"][0]["id"]);
}

/// A Report.wer of an access violation in a graphics driver.
const REPORT_WER: &str = "Version=1\r\nEventType=APPCRASH\r\nEventTime=134079738790000000\r\n\
ReportType=2\r\nConsent=1\r\nReportIdentifier=9b0a6b52-3c1e-4d7a-9a61-0f3c1d2e4b5a\r\n\
NsAppName=game.exe\r\nSig[0].Name=Application Name\r\nSig[0].Value=game.exe\r\n\
Sig[1].Name=Application Version\r\nSig[1].Value=1.0.4.2\r\n\
Sig[2].Name=Application Timestamp\r\nSig[2].Value=66f6b1a4\r\n\
Sig[3].Name=Fault Module Name\r\nSig[3].Value=nvwgf2umx.dll\r\n\
Sig[4].Name=Fault Module Version\r\nSig[4].Value=31.0.15.5222\r\n\
Sig[5].Name=Fault Module Timestamp\r\nSig[5].Value=6633c5e1\r\n\
Sig[6].Name=Exception Code\r\nSig[6].Value=c0000005\r\n\
Sig[7].Name=Exception Offset\r\nSig[7].Value=00000000001a2b3c\r\n\
DynamicSig[1].Name=OS Version\r\nDynamicSig[1].Value=10.0.22631.2.0.0.256.48\r\n\
LoadedModule[0]=C:\\Games\\game.exe\r\nLoadedModule[1]=C:\\Windows\\SYSTEM32\\ntdll.dll\r\n\
LoadedModule[2]=C:\\Windows\\System32\\DriverStore\\FileRepository\\nv.inf_amd64\\nvwgf2umx.dll\r\n\
FriendlyEventName=Stopped working\r\nAppName=Game\r\nAppPath=C:\\Games\\game.exe\r\n";

/// [`REPORT_WER`] as WER writes it: UTF-16LE with a byte-order mark.
fn report_wer() -> Vec<u8> {
    let mut wer = vec![0xff, 0xfe];
    wer.extend(REPORT_WER.encode_utf16().flat_map(u16::to_le_bytes));
    wer
}

/// A `Report.wer` of the published field layout (UTF-16LE): its faulting
/// module, offset and exception code; with a WER dump beside it, the
/// folder is one report, the dump's; a Report.wer that is no WER report is
/// one line of error.
#[test]
fn a_report_wer_gives_its_faulting_module_and_code() {
    let wer = report_wer();
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("ReportArchive");
    let alone = archive.join("AppCrash_game.exe_4f2c_1a2b3c4d");
    std::fs::create_dir_all(&alone).unwrap();
    std::fs::write(alone.join("Report.wer"), &wer).unwrap();
    // A ReportQueue folder with the dumps WER kept of another crash.
    let queue = dir.path().join("ReportQueue/AppCrash_hip_repro.exe_77aa");
    std::fs::create_dir_all(&queue).unwrap();
    std::fs::write(queue.join("Report.wer"), &wer).unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-dumps/hip-unregister-fatbinary-hang.dmp");
    std::fs::copy(&sample, queue.join("memory.hdmp")).unwrap();
    std::fs::copy(&sample, queue.join("minidump.mdmp")).unwrap();
    // Its symbols beside it, as beside the sample.
    std::os::unix::fs::symlink(
        sample.parent().unwrap().join("symbols"),
        queue.join("symbols"),
    )
    .unwrap();

    let (reports, _) = analyze(&[&archive]);
    assert_eq!(reports.len(), 1);
    let report = &reports[0];
    assert_eq!(report["source"]["kind"], "wer");
    assert_eq!(report["exception"]["code"], "0xc0000005");
    assert!(report["exception"]["name"]
        .as_str()
        .unwrap()
        .contains("ACCESS_VIOLATION"));
    let top = &report["threads"][0]["frames"][0];
    assert_eq!(top["module"], "nvwgf2umx.dll");
    assert_eq!(top["module_offset"], "0x1a2b3c");
    assert_eq!(report["process"]["name"], "game.exe");
    let nv = report["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "nvwgf2umx.dll")
        .unwrap();
    assert_eq!(nv["version"], "31.0.15.5222");
    let text = common::run(&["analyze", archive.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("a Windows Error Reporting report (APPCRASH), without a dump"),
        "{text}"
    );

    // With the dumps: one report, the heap dump's, the signature said.
    let (reports, _) = analyze(&[&dir.path().join("ReportQueue")]);
    assert_eq!(reports.len(), 1, "one crash, one report");
    let (want, _) = analyze(&[&sample]);
    assert!(reports[0]["path"]
        .as_str()
        .unwrap()
        .ends_with("memory.hdmp"));
    assert_eq!(answer(&reports[0]), answer(&want[0]));
    let format = reports[0]["source"]["format"].as_str().unwrap();
    assert!(
        format.contains("Report.wer") && format.contains("nvwgf2umx.dll"),
        "{format}"
    );
    // The dump's exception differs from the Report.wer's: said.
    assert!(
        reports[0]["warnings"]
            .to_string()
            .contains("names exception 0xc0000005"),
        "{:#}",
        reports[0]["warnings"]
    );

    // Packed: the dump WER kept (the signature stays in the pack's
    // report), and the pack gives the same answer.
    let pack = dir.path().join("wer.tar.zst");
    let out = common::bin()
        .arg("pack")
        .arg(dir.path().join("ReportQueue"))
        .arg("-o")
        .arg(&pack)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("Report.wer: its problem signature"));
    let (packed, _) = analyze(&[&pack]);
    assert_eq!(packed.len(), 1);
    assert!(packed[0]["path"]
        .as_str()
        .unwrap()
        .ends_with("wer.tar.zst/memory.hdmp"));
    assert_eq!(answer(&packed[0]), answer(&want[0]));

    // Named Report.wer, but not one.
    let fake = dir.path().join("fake");
    std::fs::create_dir(&fake).unwrap();
    std::fs::write(fake.join("Report.wer"), b"Version=1\nsomething else\n").unwrap();
    let (reports, out) = analyze(&[&fake.join("Report.wer")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!reports[0]["error"].as_str().unwrap().contains('\n'));
}

/// A systemd-coredump folder (cores named any way, compressed three ways)
/// is searched by content: the cores are found, and compressed or ELF
/// files that are no core are not.
#[test]
fn a_systemd_coredump_folder_is_searched_by_content() {
    if !cores::kernel_cores_land_here() {
        common::skip::skip(
            "os_inputs::coredump",
            "kernel.core_pattern does not write cores into the process's folder",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = cores::workdir(dir.path(), "tls");
    let core = cores::crash_core(&work.join("tls_exit_crash"), &[], &[], &work);
    let bytes = std::fs::read(&core).unwrap();
    let folder = dir.path().join("coredump");
    std::fs::create_dir(&folder).unwrap();
    let put = |name: &str, data: &[u8]| std::fs::write(folder.join(name), data).unwrap();
    put("crash-4242.zst", &zstd::encode_all(&bytes[..], 3).unwrap());
    let mut lz4 = lz4_flex::frame::FrameEncoder::new(Vec::new());
    lz4.write_all(&bytes).unwrap();
    put("tls.4242.lz4", &lz4.finish().unwrap());
    let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 1);
    xz.write_all(&bytes).unwrap();
    put("saved-core", &xz.finish().unwrap());
    // Look-alikes: compressed text, an ELF executable, a journal file.
    put("log.zst", &zstd::encode_all(&b"just a log"[..], 3).unwrap());
    std::fs::copy(work.join("tls_exit_crash"), folder.join("tls_exit_crash")).unwrap();
    put("system.journal", b"LPKSHHRH\0\0\0\0");
    let (reports, _) = analyze(&[&folder]);
    let found: Vec<PathBuf> = reports
        .iter()
        .map(|r| PathBuf::from(r["path"].as_str().unwrap()))
        .collect();
    assert_eq!(
        found,
        vec![
            folder.join("crash-4242.zst"),
            folder.join("saved-core"),
            folder.join("tls.4242.lz4")
        ]
    );
    for report in &reports {
        assert_eq!(answer(report), "tls-destructor-crash-at-exit", "{report:#}");
    }
}
