//! Which names from a dump may become a path component, and which recorded
//! paths may be opened at all.
//!
//! A dump is input from anyone: its module names, debug file names and ids
//! end up as path components. Each one must be a single plain file name on
//! every OS ([`plain`]): nothing that `PathBuf::join` or Windows would read
//! as a separator, a parent, a drive (`C:x.pdb` leaves the folder on
//! Windows), an alternate data stream (`x.pdb:s`) or a device (`CON.pdb`).
//! Ids must be hex. Module paths the dump records are opened only when they
//! are local absolute paths of this OS ([`local_file`]): never a network
//! path, whose mere opening makes an SMB connection on Windows.

use std::path::PathBuf;

use crate::model::file_name;

/// The longest path component any common file system accepts, in bytes.
pub(super) const MAX_COMPONENT: usize = 255;

/// The longest id accepted (a GNU build id is 40 hex digits; some linkers
/// write longer ones).
const MAX_ID: usize = 128;

/// Whether `name` is one plain file name on every OS: not empty, at most
/// 255 bytes, no separator (`/`, `\`), no `:` (drive prefixes, alternate
/// data streams), no NUL or control character, none of the other
/// characters Windows forbids, not `.` or `..`, no trailing dot or space
/// (Windows drops them, so `x.pdb.` is `x.pdb`), and not a reserved Windows
/// device name with any extension (`CON`, `nul.pdb`, `COM1.dll`, ...).
pub(super) fn plain(name: &str) -> bool {
    if name.is_empty() || name.len() > MAX_COMPONENT || name == "." || name == ".." {
        return false;
    }
    if name.chars().any(|c| {
        c.is_control() || matches!(c, '/' | '\\' | ':' | '<' | '>' | '"' | '|' | '?' | '*')
    }) {
        return false;
    }
    if name.ends_with('.') || name.ends_with(' ') {
        return false;
    }
    !reserved_device(name)
}

/// `CON`, `PRN`, `AUX`, `NUL`, `COM0`-`COM9`, `LPT0`-`LPT9` (and the
/// superscript-digit forms Windows also reserves), `CONIN$`, `CONOUT$`:
/// Windows opens the device whatever the extension and the case.
fn reserved_device(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    let upper = stem.to_uppercase();
    if matches!(
        upper.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
    ) {
        return true;
    }
    let mut chars = upper.chars();
    let prefix: String = chars.by_ref().take(3).collect();
    let rest: Vec<char> = chars.collect();
    (prefix == "COM" || prefix == "LPT")
        && rest.len() == 1
        && (rest[0].is_ascii_digit() || matches!(rest[0], '¹' | '²' | '³'))
}

/// The file name at the end of a path a dump records (`C:\x\fakehip.pdb`
/// -> `fakehip.pdb`), when it is a [`plain`] name; `None` otherwise.
pub(super) fn component(recorded: &str) -> Option<&str> {
    let name = file_name(recorded);
    plain(name).then_some(name)
}

/// A name for messages: quoted and escaped, and cut short when long (a dump
/// may hold a 4 KB module name).
pub(super) fn shown(name: &str) -> String {
    const MAX: usize = 80;
    if name.chars().count() <= MAX {
        return format!("{name:?}");
    }
    let head: String = name.chars().take(MAX).collect();
    format!("{head:?}... ({} bytes)", name.len())
}

/// An id from a dump, when it is hex digits only (debug ids, code ids,
/// build ids are).
pub(super) fn hex_id(id: &str) -> Option<&str> {
    (!id.is_empty() && id.len() <= MAX_ID && id.bytes().all(|b| b.is_ascii_hexdigit()))
        .then_some(id)
}

/// A module path the dump records, when this machine may open it: a local
/// absolute path of this OS. Never a network path (`//host/share/x.dll`,
/// `\\host\share\x.dll`, `\\?\UNC\...`), a device path (`\\.\`, `/dev/`,
/// `/proc/`), a relative or drive-relative one, or one with `.`/`..`.
pub(super) fn local_file(recorded: &str) -> Option<PathBuf> {
    is_local_absolute(recorded, cfg!(windows)).then(|| PathBuf::from(recorded))
}

/// [`local_file`]'s rule for Windows (`windows`) or Unix paths.
fn is_local_absolute(path: &str, windows: bool) -> bool {
    if path.is_empty() || path.len() > 4096 || path.contains('\0') {
        return false;
    }
    if windows {
        // `X:\` then plain components; `\\` and `//` (UNC, `\\?\`, `\\.\`)
        // and a lone `\` (the current drive's root) are refused.
        let bytes = path.as_bytes();
        if bytes.len() < 4
            || !bytes[0].is_ascii_alphabetic()
            || bytes[1] != b':'
            || !matches!(bytes[2], b'\\' | b'/')
        {
            return false;
        }
        path[3..].split(['\\', '/']).all(plain)
    } else {
        // One leading `/` (POSIX leaves `//` to the system: some read it as
        // a network root), no backslash (a Windows path), and none of the
        // pseudo file systems.
        let Some(rest) = path.strip_prefix('/') else {
            return false;
        };
        if rest.starts_with('/') || path.contains('\\') {
            return false;
        }
        if matches!(rest.split('/').next(), Some("dev" | "proc" | "sys")) {
            return false;
        }
        rest.split('/')
            .all(|p| !p.is_empty() && p != "." && p != ".." && p.len() <= MAX_COMPONENT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_a_dump_stay_inside_their_folder() {
        assert_eq!(component("C:\\x\\fakehip.pdb"), Some("fakehip.pdb"));
        assert_eq!(component("/usr/lib/libc.so.6"), Some("libc.so.6"));
        assert_eq!(component("..\\..\\x.dll"), Some("x.dll"));
        assert_eq!(component("//host/share/x.dll"), Some("x.dll"));
        for bad in [
            "..",
            "a\\..",
            "",
            ".",
            "C:evil.pdb",
            "x.pdb:stream",
            "CON.pdb",
            "con",
            "Nul.txt",
            "COM1.dll",
            "lpt9",
            "COM¹.dll",
            "AUX .pdb",
            "x.pdb.",
            "x.pdb ",
            "a\0b",
            "a|b",
            "a?b",
            "a*b",
            "a\nb",
        ] {
            assert_eq!(component(bad), None, "{bad:?}");
        }
        assert!(component(&"a".repeat(255)).is_some());
        assert!(component(&"a".repeat(256)).is_none());
        // Names that only look like devices are fine.
        for good in [
            "console.dll",
            "COM10.dll",
            "nullable.pdb",
            "LPT.dll",
            "com.pdb",
        ] {
            assert!(plain(good), "{good}");
        }
    }

    #[test]
    fn only_local_absolute_paths_are_opened() {
        for (path, ok) in [
            ("/usr/lib/libc.so.6", true),
            ("/opt/app/lib:x.so", true),
            ("//host/share/x.dll", false),
            ("\\\\host\\share\\x.dll", false),
            ("relative/x.so", false),
            ("/usr/../etc/x", false),
            ("/proc/self/mem", false),
            ("/dev/zero", false),
            ("C:\\Windows\\x.dll", false),
            ("", false),
        ] {
            assert_eq!(is_local_absolute(path, false), ok, "unix {path}");
        }
        for (path, ok) in [
            ("C:\\Windows\\System32\\ntdll.dll", true),
            ("d:/app/x.dll", true),
            ("\\\\host\\share\\x.dll", false),
            ("//host/share/x.dll", false),
            ("\\\\?\\UNC\\host\\share\\x.dll", false),
            ("\\\\?\\C:\\x.dll", false),
            ("\\\\.\\pipe\\x", false),
            ("\\x.dll", false),
            ("C:x.dll", false),
            ("C:\\app\\..\\x.dll", false),
            ("C:\\app\\x.dll:stream", false),
            ("C:\\app\\CON.dll", false),
            ("/usr/lib/libc.so.6", false),
        ] {
            assert_eq!(is_local_absolute(path, true), ok, "windows {path}");
        }
    }
}
