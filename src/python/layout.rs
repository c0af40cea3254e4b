//! What the walk needs to know of one CPython: its structure offsets (per
//! version, offsets.toml) and where its globals are in the process.

use std::collections::HashMap;
use std::sync::OnceLock;

/// One version's offsets.
pub(crate) struct Layout {
    major: u32,
    minor: u32,
    fields: HashMap<String, u64>,
}

impl Layout {
    fn all() -> &'static HashMap<String, HashMap<String, u64>> {
        static TABLES: OnceLock<HashMap<String, HashMap<String, u64>>> = OnceLock::new();
        TABLES.get_or_init(|| toml::from_str(include_str!("offsets.toml")).unwrap_or_default())
    }

    pub(crate) fn for_version(major: u32, minor: u32) -> Option<Layout> {
        let fields = Self::all().get(&format!("{major}.{minor}"))?.clone();
        Some(Layout {
            major,
            minor,
            fields,
        })
    }

    pub(crate) fn get(&self, name: &str) -> Option<u64> {
        self.fields.get(name).copied()
    }

    pub(crate) fn need(&self, name: &str) -> Result<u64, String> {
        self.get(name)
            .ok_or_else(|| format!("no offset {name} for CPython {}.{}", self.major, self.minor))
    }

    /// 3.11+: `_PyInterpreterFrame`s; 3.10: frame objects.
    pub(crate) fn is_interpreter_frame(&self) -> bool {
        self.fields.contains_key("frame_previous")
    }

    /// 3.12+: C-stack shim frames mark each entry into the evaluator.
    pub(crate) fn has_shims(&self) -> bool {
        self.version_at_least(3, 12)
    }

    pub(crate) fn version_at_least(&self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }

    pub(crate) fn version(&self) -> String {
        format!("{}.{}", self.major, self.minor)
    }
}

/// Where the interpreter's globals are in the process: `_PyRuntime` and the
/// type objects the walk checks objects against (their names live in the
/// binary's read-only data, which dumps and cores leave out).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Globals {
    pub runtime: u64,
    pub code_type: u64,
    pub str_type: u64,
    pub bytes_type: u64,
}

/// Where a capture keeps the interpreter's version and globals in its
/// memory stream: a non-canonical address no process maps, so no pointer
/// of the walk reads it by accident.
pub(crate) const GLOBALS_RECORD: u64 = 0xfff0_0000_0000_0000;
const GLOBALS_MAGIC: &[u8; 4] = b"PYG1";

impl Globals {
    /// The record a capture keeps, for the interpreter of `layout`.
    pub(crate) fn to_record(self, layout: &Layout) -> Vec<u8> {
        let mut out = GLOBALS_MAGIC.to_vec();
        out.extend((layout.major as u16).to_le_bytes());
        out.extend((layout.minor as u16).to_le_bytes());
        for value in [self.runtime, self.code_type, self.str_type, self.bytes_type] {
            out.extend(value.to_le_bytes());
        }
        out
    }

    pub(crate) fn from_record(raw: &[u8]) -> Option<(u32, u32, Globals)> {
        if raw.get(..4)? != GLOBALS_MAGIC {
            return None;
        }
        let word = |i: usize| {
            Some(u64::from_le_bytes(
                raw.get(8 + i * 8..16 + i * 8)?.try_into().ok()?,
            ))
        };
        let major = u16::from_le_bytes(raw.get(4..6)?.try_into().ok()?);
        let minor = u16::from_le_bytes(raw.get(6..8)?.try_into().ok()?);
        Some((
            u32::from(major),
            u32::from(minor),
            Globals {
                runtime: word(0)?,
                code_type: word(1)?,
                str_type: word(2)?,
                bytes_type: word(3)?,
            },
        ))
    }
}
