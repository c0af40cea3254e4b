//! Why a dump was taken, as the tool that took it recorded it: a small
//! stream of our own in every dump `run` and `attach` write, read back into
//! every report of such a dump.

use serde::{Deserialize, Serialize};

/// The minidump stream type of the record: user streams start above
/// 0xffff; "DT" and 1, clear of Breakpad's 0x4767xxxx and Crashpad's
/// 0x4350xxxx.
pub const CAPTURE_STREAM: u32 = 0x4454_0001;

/// Why the dump was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CaptureReason {
    /// `run`: the command was still running at its hang timeout.
    HangTimeout,
    /// `run`: the command died of a crash signal.
    Crash,
    /// `attach`: on request, the process kept running.
    Attach,
    /// `run`: a process the command started crashed, and the kernel wrote
    /// its core file, which `run` collected.
    DescendantCore,
}

impl CaptureReason {
    pub fn as_str(self) -> &'static str {
        match self {
            CaptureReason::HangTimeout => "hang-timeout",
            CaptureReason::Crash => "crash",
            CaptureReason::Attach => "attach",
            CaptureReason::DescendantCore => "descendant-core",
        }
    }
}

/// The record: what `run` or `attach` knew when it wrote the dump.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Capture {
    pub reason: CaptureReason,
    /// Seconds from the command's start to the dump (`run` only).
    pub after_seconds: Option<f64>,
    /// The crash signal's name (`SIGSEGV`), for a crash.
    pub signal: Option<String>,
    /// The dumped process's own command line (/proc/PID/cmdline when it
    /// was stopped), one word per argument: for a process below a wrapper
    /// (`make test` -> `sh` -> `./prog`), `./prog`'s, not the wrapper's.
    /// Empty for a core file `run` collected (the core's own record, in
    /// the report's process, stands in).
    pub command: Vec<String>,
    /// The process the dump is of.
    pub pid: u32,
    /// For a process of `run`'s process tree other than the command
    /// itself: the command's pid (the tree's root).
    pub root_pid: Option<u32>,
    /// For such a process: the command `run` ran, as it was given.
    #[serde(default)]
    pub root_command: Option<Vec<String>>,
    /// The program and version that wrote the record.
    pub tool: String,
    /// What the capture kept beyond the writer's own memory (the wait
    /// objects and the Python state, in its own stream), as the analysis
    /// found it; not part of the stored record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<KeptMemory>,
}

/// The memory a capture kept in its own stream: how many ranges, how many
/// bytes (bounded: 256 wait objects of 48 bytes, 8 MB of Python state).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KeptMemory {
    pub ranges: usize,
    pub bytes: u64,
}

impl Capture {
    /// The record as stored in the dump: one JSON object.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a capture record serializes")
    }

    /// The record read from a dump's stream; an error names what is wrong.
    pub fn from_bytes(bytes: &[u8]) -> Result<Capture, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("unreadable capture record: {e}"))
    }

    /// One line for people: why the dump was taken.
    pub fn describe(&self) -> String {
        let after = self
            .after_seconds
            .map(|s| format!(" after {s:.1} s"))
            .unwrap_or_default();
        let what = match self.reason {
            CaptureReason::HangTimeout => {
                format!("taken by `dumptriage run`: still running{after} (hang timeout)")
            }
            CaptureReason::Crash => format!(
                "taken by `dumptriage run` at a crash{}{after}",
                self.signal
                    .as_deref()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default()
            ),
            CaptureReason::Attach => "taken by `dumptriage attach` on request".to_string(),
            CaptureReason::DescendantCore => format!(
                "core file of a crash{}, written by the kernel and collected by `dumptriage run`",
                self.signal
                    .as_deref()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default()
            ),
        };
        let tree = self
            .root_pid
            .map(|root| match self.root_command.as_deref() {
                Some(command) if !command.is_empty() => format!(
                    "; a descendant of the command `{}` (pid {root})",
                    crate::printable::shell_words(command)
                ),
                _ => format!("; a descendant of the command (pid {root})"),
            })
            .unwrap_or_default();
        let kept = self
            .kept
            .map(|k| {
                format!(
                    "; kept {} range{} ({} bytes) of wait objects and interpreter state beyond the stacks",
                    k.ranges,
                    if k.ranges == 1 { "" } else { "s" },
                    k.bytes
                )
            })
            .unwrap_or_default();
        format!("{what}; process {}{tree}{kept}", self.pid)
    }
}

/// The words of a Linux command line as /proc/PID/cmdline and the dumps'
/// copy of it hold it: each argument ends with a NUL. An empty argument is
/// kept (it is `''` to a shell); a program that rewrote its arguments
/// (setproctitle) may leave one word with spaces, or no final NUL.
pub fn command_words(raw: &[u8]) -> Vec<String> {
    if raw.is_empty() {
        return Vec::new();
    }
    let raw = raw.strip_suffix(&[0]).unwrap_or(raw);
    raw.split(|b| *b == 0)
        .map(|word| String::from_utf8_lossy(word).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_keep_empty_words_and_rewritten_ones() {
        assert_eq!(command_words(b"./p\0\0a b\0"), ["./p", "", "a b"]);
        assert_eq!(
            command_words(b"nginx: worker process"),
            ["nginx: worker process"]
        );
        assert_eq!(command_words(b"\0"), [""]);
        assert!(command_words(b"").is_empty());
    }

    #[test]
    fn the_record_round_trips_and_bad_bytes_are_refused() {
        let capture = Capture {
            reason: CaptureReason::HangTimeout,
            after_seconds: Some(2.5),
            signal: None,
            command: vec!["./hang_exit".into(), "a b".into()],
            pid: 42,
            root_pid: Some(40),
            root_command: Some(vec!["sh".into(), "-c".into(), "./hang_exit 'a b'".into()]),
            tool: "dumptriage 0.1.0".into(),
            kept: None,
        };
        assert_eq!(Capture::from_bytes(&capture.to_bytes()).unwrap(), capture);
        assert!(capture
            .describe()
            .contains("still running after 2.5 s (hang timeout)"));
        let said = capture.describe();
        assert!(
            said.contains(r"descendant of the command `sh -c './hang_exit '\''a b'\'''` (pid 40)"),
            "{said}"
        );
        // A record written before `root_command` existed still reads.
        let old = br#"{"reason":"attach","after_seconds":null,"signal":null,"command":["x"],"pid":1,"root_pid":null,"tool":"dumptriage 0.1.0"}"#;
        assert_eq!(Capture::from_bytes(old).unwrap().root_command, None);
        let err = Capture::from_bytes(b"\xff{not json").unwrap_err();
        assert!(err.starts_with("unreadable capture record"), "{err}");
    }
}
