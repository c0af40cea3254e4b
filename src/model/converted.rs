//! What a minidump written by `dumptriage convert` was made from: a small
//! stream of our own, read back into every report of such a dump, so the
//! small file says what the core said (its warnings: a truncated core, a
//! dump on request, build ids read from this machine's files).

use serde::{Deserialize, Serialize};

/// The minidump stream type of the record ("DT" and 3; see
/// [`super::CAPTURE_STREAM`]).
pub const CONVERTED_STREAM: u32 = 0x4454_0003;

/// The record `convert` writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Converted {
    /// How the core was stored (`ELF core`, `zstd-compressed ELF core`).
    pub from: String,
    /// Whether the core came on standard input (`convert --from-stdin`, a
    /// `core_pattern` pipe): read once, in order, so less was kept.
    #[serde(default)]
    pub streamed: bool,
    /// The core's own warnings, as its analysis gave them.
    pub warnings: Vec<String>,
    /// The program and version that wrote the record.
    pub tool: String,
}

impl Converted {
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a conversion record serializes")
    }

    /// The record read from a dump's stream; an error names what is wrong.
    pub fn from_bytes(bytes: &[u8]) -> Result<Converted, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("unreadable conversion record: {e}"))
    }

    /// The report's source format: what the minidump was made from.
    pub fn describe(&self) -> String {
        let how = if self.streamed {
            "a Linux core read from a pipe"
        } else {
            "a Linux core file"
        };
        format!("converted by {} from {how} ({})", self.tool, self.from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_reads_back_and_a_corrupt_one_is_named() {
        let record = Converted {
            from: "ELF core".into(),
            streamed: false,
            warnings: vec!["the core is incomplete".into()],
            tool: "dumptriage 0.1.0".into(),
        };
        assert_eq!(Converted::from_bytes(&record.to_bytes()).unwrap(), record);
        let error = Converted::from_bytes(b"{\"from\":").unwrap_err();
        assert!(error.starts_with("unreadable conversion record"), "{error}");
    }
}
