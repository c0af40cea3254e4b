//! Capture: write a minidump of a live process (`attach`) or of a command
//! that crashes or hangs under `run`, then hand it to the analyzer.
//!
//! This file is the OS-independent order of the steps and their errors;
//! where a dump goes and what it is called is `naming.rs`, what is changed
//! in a written dump (the blamed thread, the environment) `postprocess.rs`.
//! How a process is stopped and read is in `linux/` (ptrace and
//! minidump-writer) and `windows.rs` (MiniDumpWriteDump).

use std::path::{Path, PathBuf};

use crate::model::{Capture, CaptureReason, Report, CAPTURE_STREAM};

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as os;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;

#[cfg(not(any(target_os = "linux", windows)))]
mod unsupported;
#[cfg(not(any(target_os = "linux", windows)))]
use unsupported as os;

mod naming;
mod postprocess;
mod types;

use naming::*;
use postprocess::*;
pub use types::{
    CaptureError, Captured, ExitStatus, Notice, RunEnd, RunOptions, StopOptions,
    DEFAULT_STOP_LIMIT, MAX_TREE_DUMPS,
};

/// `run`'s exit status when the command was still running at the hang
/// timeout (the status timeout(1) uses, so CI systems already know it).
pub const EXIT_HANG: u8 = 124;
/// `run`'s exit status when the command could not be started because it was
/// not found, and when it was found but could not be executed (the shell's
/// conventions).
pub const EXIT_NOT_FOUND: u8 = 127;
pub const EXIT_NOT_EXECUTABLE: u8 = 126;

/// Writes a minidump of the live process `pid` into `dir`, analyses it with
/// `analyze`, and records the blamed thread in the dump (see
/// [`record_blamed_thread`]). The process keeps running.
///
/// Every thread must stop within `stop.limit`; one that does not (a thread
/// in uninterruptible sleep) aborts the capture with
/// [`CaptureError::NotStopped`], and the process is let go as it was.
pub fn attach(
    pid: u32,
    dir: &Path,
    stop: StopOptions,
    analyze: &dyn Fn(&Path) -> Report,
) -> Result<Captured, CaptureError> {
    os::check_attachable(pid)?;
    prepare_dump_dir(dir)?;
    let record = capture_record(CaptureReason::Attach, pid, os::command_line(pid));
    let (mut file, path) = new_dump_file(dir, pid, &os::process_name(pid))?;
    let written = os::write_live_dump(pid, &mut file, &path, stop);
    drop(file);
    if let Err(error) = written.and_then(|()| check_has_threads(&path, || os::why_no_threads(pid)))
    {
        let _ = std::fs::remove_file(&path);
        return Err(error);
    }
    finish_live_dump(path, &record, analyze)
}

/// What `run` or `attach` records in a dump about why it was taken.
fn capture_record(reason: CaptureReason, pid: u32, command: Vec<String>) -> Capture {
    Capture {
        reason,
        after_seconds: None,
        signal: None,
        command,
        pid,
        root_pid: None,
        root_command: None,
        tool: format!("dumptriage {}", env!("CARGO_PKG_VERSION")),
        kept: None,
    }
}

/// Records why the dump was taken in it (the capture stream), after the
/// environment is scrubbed. A dump that cannot take the record is still
/// analysed; the report then says so and carries the record anyway.
fn record_capture(path: &Path, record: &Capture) -> Option<String> {
    append_stream(path, CAPTURE_STREAM, &record.to_bytes())
        .err()
        .map(|e| format!("why the dump was taken is not recorded in it: {e}"))
}

/// Analyses a dump `run` or `attach` wrote, with its capture record.
fn analyze_captured(
    path: &Path,
    record: &Capture,
    analyze: &dyn Fn(&Path) -> Report,
) -> Result<Report, CaptureError> {
    scrub_environment(path)?;
    let problem = record_capture(path, record);
    let mut report = analyze(path);
    if let Some(problem) = problem {
        report.warnings.push(problem);
        report.capture.get_or_insert_with(|| record.clone());
    }
    Ok(report)
}

/// The stuck processes below `pid` (`attach --tree`): the deepest that are
/// not just waiting for a child, at most MAX_TREE_DUMPS; Linux only (empty
/// elsewhere).
pub fn stuck_below(pid: u32) -> Vec<u32> {
    os::stuck_below(pid)
}

/// The one process named `name` (its name, or its program file's name).
pub fn find_by_name(name: &str) -> Result<u32, String> {
    let found = os::processes_named(name)?;
    match found.as_slice() {
        [pid] => Ok(*pid),
        [] => Err(format!("no process named {name:?}")),
        many => Err(format!(
            "{} processes are named {name:?} ({}): give the PID",
            many.len(),
            many.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Analyses a dump of a live or hung process, records the blamed thread in
/// it, and analyses it again when that changed what the dump says.
fn finish_live_dump(
    path: PathBuf,
    record: &Capture,
    analyze: &dyn Fn(&Path) -> Report,
) -> Result<Captured, CaptureError> {
    let mut report = analyze_captured(&path, record, analyze)?;
    let mut recorded_thread = report.exception.as_ref().map(|e| e.thread_id);
    if let Some(blamed) = report.exit_phase.blamed_thread {
        if record_blamed_thread(&path, blamed)? {
            let capture = report.capture.take();
            report = analyze(&path);
            report.capture = report.capture.take().or(capture);
            recorded_thread = Some(blamed);
        }
    }
    Ok(Captured {
        path,
        report,
        recorded_thread,
    })
}

/// Runs a command with its standard streams passed through, and captures a
/// dump when it crashes or is still running at the hang timeout (see
/// README, "dumptriage run"). What it has to say while the command runs
/// goes to `notice` as it happens.
pub fn run(
    options: &RunOptions,
    analyze: &dyn Fn(&Path) -> Report,
    notice: &dyn Fn(Notice),
) -> Result<(RunEnd, Vec<Captured>), CaptureError> {
    prepare_dump_dir(&options.dump_dir)?;
    let command: Vec<String> = options
        .command
        .iter()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let (end, descendants) = os::supervise(options, notice)?;
    // Crashes of processes the command started, from their core files:
    // analysed as they are (a core has no room for the capture record,
    // which the report gets instead).
    let descendants = descendants
        .into_iter()
        .map(|(pid, signal, path, root)| {
            let mut report = analyze(&path);
            // The core's own record of its command line (80 bytes at
            // most) is the report's: the process is gone.
            report.capture = Some(Capture {
                signal: (signal != 0).then(|| signal_name(signal)),
                root_pid: Some(root),
                root_command: Some(command.clone()),
                ..capture_record(CaptureReason::DescendantCore, pid, Vec::new())
            });
            Captured {
                path,
                recorded_thread: report.exception.as_ref().map(|e| e.thread_id),
                report,
            }
        })
        .collect();
    let end = match end {
        RunEnd::Exited(status) => RunEnd::Exited(status),
        RunEnd::Crashed {
            pid,
            signal,
            status,
            dump,
        } => RunEnd::Crashed {
            pid,
            signal,
            status,
            dump: dump.and_then(|written| {
                let record = Capture {
                    signal: Some(signal_name(signal)),
                    ..capture_record(CaptureReason::Crash, pid, written.command)
                };
                let path = written.path;
                let report = analyze_captured(&path, &record, analyze)?;
                let recorded_thread = report.exception.as_ref().map(|e| e.thread_id);
                Ok(Captured {
                    path,
                    report,
                    recorded_thread,
                })
            }),
        },
        RunEnd::Hung {
            pid,
            after,
            killed,
            dumps,
        } => RunEnd::Hung {
            pid,
            after,
            killed,
            dumps: dumps
                .into_iter()
                .map(|(process, dump)| {
                    let dump = dump.and_then(|written| {
                        let below = process != pid;
                        let record = Capture {
                            after_seconds: Some(after.as_secs_f64()),
                            root_pid: below.then_some(pid),
                            root_command: below.then(|| command.clone()),
                            ..capture_record(CaptureReason::HangTimeout, process, written.command)
                        };
                        finish_live_dump(written.path, &record, analyze)
                    });
                    (process, dump)
                })
                .collect(),
        },
    };
    Ok((end, descendants))
}

/// Ends this process the way `status` ended the command: the same exit
/// code, or death by the same signal (so a shell or CI sees exactly what it
/// would have seen without the wrapper).
pub fn exit_like(status: ExitStatus) -> ! {
    os::exit_like(status)
}

/// The name of a signal (`SIGSEGV`), for messages.
pub fn signal_name(signal: i32) -> String {
    os::signal_name(signal)
}

#[cfg(test)]
mod tests {
    use minidump::{Minidump, MinidumpException, MinidumpThreadList};

    use super::*;

    const AT: LocalTime = LocalTime {
        year: 2026,
        month: 3,
        day: 7,
        hour: 9,
        minute: 5,
        second: 1,
    };

    #[test]
    fn dump_names_are_procdump_like() {
        assert_eq!(
            dump_file_name("python3.11", 4242, AT),
            "python3.11_4242_260307_090501.dmp"
        );
    }

    #[test]
    fn dump_names_cannot_escape_the_folder() {
        assert_eq!(
            dump_file_name("../a b", 1, AT),
            ".._a_b_1_260307_090501.dmp"
        );
        assert_eq!(dump_file_name("..", 1, AT), "process_1_260307_090501.dmp");
        assert_eq!(dump_file_name("", 1, AT), "process_1_260307_090501.dmp");
        assert_eq!(dump_file_name("a/b\n", 1, AT), "a_b__1_260307_090501.dmp");
    }

    /// The exception of a real crash is the crash: it is never renamed.
    #[test]
    fn a_crash_dump_keeps_its_exception_thread() {
        // The public corpus lives in ../shared beside the checkout.
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/corpus/public/breakpad/linux_null_dereference.dmp");
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("crash.dmp");
        std::fs::copy(&corpus, &copy).unwrap();
        let dump = Minidump::read_path(&copy).unwrap();
        let crashing = dump
            .get_stream::<MinidumpException>()
            .unwrap()
            .raw
            .thread_id;
        let other = dump
            .get_stream::<MinidumpThreadList>()
            .unwrap()
            .threads
            .iter()
            .map(|t| t.raw.thread_id)
            .find(|&id| id != crashing);
        drop(dump);
        assert!(!record_blamed_thread(&copy, other.unwrap_or(1)).unwrap());
        assert_eq!(
            std::fs::read(&copy).unwrap(),
            std::fs::read(&corpus).unwrap()
        );
    }

    /// A minimal minidump: header, one directory entry (the environ
    /// stream), the stream, then `body` (standing in for stack memory).
    fn dump_with_environ(environ: &[u8], body: &[u8]) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(b"MDMP");
        bytes.extend_from_slice(&0xa793u32.to_le_bytes()); // version
        bytes.extend_from_slice(&1u32.to_le_bytes()); // stream count
        bytes.extend_from_slice(&32u32.to_le_bytes()); // directory rva
        bytes.extend_from_slice(&[0; 16]); // checksum, time, flags
        let stream_rva = 32 + 12;
        bytes.extend_from_slice(&LINUX_ENVIRON_STREAM.to_le_bytes());
        bytes.extend_from_slice(&(environ.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&(stream_rva as u32).to_le_bytes());
        bytes.extend_from_slice(environ);
        bytes.extend_from_slice(body);
        bytes
    }

    /// Issue 13: scrubbing streams the file in chunks; every copy of an
    /// entry is zeroed even where it straddles two reads, the stream and
    /// its directory entry are blanked, and nothing else changes.
    #[test]
    fn scrubbing_streams_and_finds_entries_across_chunks() {
        let secret = b"CI_TOKEN=s3cr3t-value";
        let environ = b"CI_TOKEN=s3cr3t-value\0HOME=/root\0A=b\0";
        let mut body = Vec::new();
        for i in 0..40u8 {
            body.extend(std::iter::repeat_n(i, usize::from(i % 7)));
            body.extend_from_slice(secret);
            body.extend_from_slice(b"HOME=/root");
        }
        let original = dump_with_environ(environ, &body);
        for chunk in [1, 5, 7, 16, 64, 1 << 20] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("x.dmp");
            std::fs::write(&path, &original).unwrap();
            scrub_environment_in_chunks(&path, chunk).unwrap();
            let after = std::fs::read(&path).unwrap();
            assert_eq!(after.len(), original.len());
            assert!(
                memchr::memmem::find(&after, secret).is_none(),
                "chunk {chunk}"
            );
            assert!(memchr::memmem::find(&after, b"HOME=/root").is_none());
            // The directory entry and the stream are zeroed.
            assert!(after[32..32 + 12 + environ.len()].iter().all(|&b| b == 0));
            // Nothing else changed.
            let mut expected = original.clone();
            expected[32..32 + 12 + environ.len()].fill(0);
            for needle in [&secret[..], b"HOME=/root"] {
                let found: Vec<usize> = memchr::memmem::find_iter(&original, needle).collect();
                for at in found {
                    expected[at..at + needle.len()].fill(0);
                }
            }
            assert!(after == expected, "chunk {chunk}");
            // Only the dump is left: the temporary file was renamed over it.
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        }
    }

    #[test]
    fn a_second_dump_in_the_same_second_does_not_replace_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let (_, first) = create_dump_file(dir.path(), "p_1_260307_090501.dmp").unwrap();
        let (_, second) = create_dump_file(dir.path(), "p_1_260307_090501.dmp").unwrap();
        assert_eq!(first, dir.path().join("p_1_260307_090501.dmp"));
        assert_eq!(second, dir.path().join("p_1_260307_090501-2.dmp"));
    }
}
