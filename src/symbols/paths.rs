//! Paths built from names a dump records: every component is checked to
//! stay inside its folder.

use std::path::Path;

use memmap2::Mmap;

use crate::model::file_name;

/// Maps a file read-only.
pub(super) fn map_file(path: &Path) -> std::io::Result<Mmap> {
    let file = std::fs::File::open(path)?;
    // SAFETY: read-only private map; see native::pdb.
    unsafe { Mmap::map(&file) }
}

/// A name from a dump used as one path component, or `None` when it could
/// escape its folder (`..`, separators) or is empty.
pub(super) fn safe(name: &str) -> Option<&str> {
    let name = file_name(name);
    (!name.is_empty() && name != "." && name != ".." && !name.contains('\0')).then_some(name)
}

/// `NAME.pdb` -> `NAME.sym`, `NAME.dll` -> `NAME.sym`, `libc.so.6` ->
/// `libc.so.6.sym`: the Breakpad symbol file's name.
pub(super) fn sym_name(debug_file: &str) -> String {
    let lower = debug_file.to_ascii_lowercase();
    for ext in [".pdb", ".dll", ".exe"] {
        if lower.ends_with(ext) {
            return format!("{}.sym", &debug_file[..debug_file.len() - ext.len()]);
        }
    }
    format!("{debug_file}.sym")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_a_dump_stay_inside_their_folder() {
        assert_eq!(safe("C:\\x\\fakehip.pdb"), Some("fakehip.pdb"));
        assert_eq!(safe("/usr/lib/libc.so.6"), Some("libc.so.6"));
        assert_eq!(safe(".."), None);
        assert_eq!(safe("a\\.."), None);
        assert_eq!(safe(""), None);
        assert_eq!(sym_name("fakehip.pdb"), "fakehip.sym");
        assert_eq!(sym_name("libc.so.6"), "libc.so.6.sym");
    }
}
