//! Turns the paths a user gave into the list of dumps to analyse, and
//! reads what the OS kept in formats of its own: apport's `.crash` files
//! ([`apport`]), Windows Error Reporting's `Report.wer` ([`wer`]), and
//! packs (src/artifact/unpack.rs); all recognised by content ([`sniff`]).

pub(crate) mod apport;
pub(crate) mod sniff;
pub(crate) mod wer;

use std::path::{Path, PathBuf};

/// One thing to analyse: a dump file, or a path that could not be used (kept
/// so it is reported in its place instead of silently dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Dump(PathBuf),
    /// A file taken out of a pack into a temporary folder, shown as
    /// `label` (`PACK.tar.zst/NAME`).
    Member {
        path: PathBuf,
        label: String,
    },
    /// Text read already (standard input), named `label`.
    Text {
        label: String,
        text: String,
    },
    Invalid {
        path: PathBuf,
        error: String,
    },
}

/// File extensions taken as minidumps when a folder is searched (`hdmp`:
/// Windows Error Reporting's heap dumps).
const DUMP_EXTENSIONS: [&str; 3] = ["dmp", "mdmp", "hdmp"];

/// What the paths a user gave hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Collected {
    pub inputs: Vec<Input>,
    /// Folders that exist but hold no dump. Not an error: a CI job's dump
    /// folder is empty when nothing crashed or hung (issue 11).
    pub empty_folders: Vec<PathBuf>,
    /// The packs taken out for the inputs: their folders live as long as
    /// this does.
    pub packs: Vec<Pack>,
}

/// A pack's files, taken out into a temporary folder (removed when the
/// last copy of this is dropped).
#[derive(Clone)]
pub struct Pack(std::sync::Arc<crate::artifact::unpack::Unpacked>);

impl Pack {
    /// Where its files are.
    pub fn dir(&self) -> &Path {
        self.0.dir.path()
    }
}

impl std::fmt::Debug for Pack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pack({})", self.dir().display())
    }
}

impl PartialEq for Pack {
    fn eq(&self, other: &Pack) -> bool {
        self.dir() == other.dir()
    }
}

impl Eq for Pack {}

impl Input {
    /// The path or label the input's reports are named by.
    pub fn shown(&self) -> String {
        match self {
            Input::Dump(path) | Input::Invalid { path, .. } => path.display().to_string(),
            Input::Member { label, .. } | Input::Text { label, .. } => label.clone(),
        }
    }

    /// A report of this input, its file names as the user knows them: a
    /// pack's temporary folder named as the pack (`PACK.tar.zst/symbols/...`).
    pub(crate) fn relabel(&self, report: &mut crate::model::Report) {
        let Input::Member { path, label } = self else {
            return;
        };
        let (Some(dir), Some((pack, _))) = (path.parent(), label.rsplit_once('/')) else {
            return;
        };
        let dir = dir.display().to_string();
        let swap = |text: &mut String| {
            if text.contains(&dir) {
                *text = text.replace(&dir, pack);
            }
        };
        for module in &mut report.modules {
            module.symbol_file.as_mut().map(swap);
            module.unwind_info.as_mut().map(swap);
            module.symbols_tried.iter_mut().for_each(swap);
        }
        report.warnings.iter_mut().for_each(swap);
    }

    /// The file to read, when the input is one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Input::Dump(path) | Input::Member { path, .. } => Some(path),
            Input::Text { .. } | Input::Invalid { .. } => None,
        }
    }
}

/// Expands folders recursively into their `*.dmp` / `*.mdmp` / `*.hdmp`
/// files, core files (`core`, `core.*`, `*.core`), and the files whose
/// content is a core (plain or compressed), an apport crash report, a
/// Windows Error Reporting report or a pack, whatever their names (sorted,
/// so output order is stable). A folder holding a `Report.wer` is one
/// Windows Error Reporting report: its `Report.wer` stands for it (the
/// dump beside it is read with it). Files named directly are taken whatever
/// their extension; a pack is taken out and its inputs listed. Symbolic
/// links to folders are not followed, so a link loop cannot make the search
/// endless.
pub fn collect(paths: &[PathBuf]) -> Collected {
    collect_with(paths, false)
}

/// File extensions read for stack traces when a folder is searched with
/// `--text`.
const TEXT_EXTENSIONS: [&str; 2] = ["txt", "log"];

/// As [`collect`]; with `text`, folders give their `*.txt` and `*.log`
/// files too, and `-` is standard input, read now.
pub fn collect_with(paths: &[PathBuf], text: bool) -> Collected {
    let mut inputs = Vec::new();
    let mut empty_folders = Vec::new();
    let mut packs = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            inputs.push(read_stdin());
            continue;
        }
        match std::fs::metadata(path) {
            Err(e) => inputs.push(Input::Invalid {
                path: path.clone(),
                error: format!("cannot read: {e}"),
            }),
            Ok(meta) if meta.is_dir() => {
                let before = inputs.len();
                walk(path, text, &mut inputs, &mut packs);
                if inputs.len() == before {
                    empty_folders.push(path.clone());
                }
            }
            Ok(meta) if meta.is_file() && crate::artifact::unpack::is_pack(path) => {
                take_out(path, &mut inputs, &mut packs)
            }
            Ok(_) => inputs.push(Input::Dump(path.clone())),
        }
    }
    Collected {
        inputs,
        empty_folders,
        packs,
    }
}

/// A pack's inputs, or its one error.
fn take_out(path: &Path, inputs: &mut Vec<Input>, packs: &mut Vec<Pack>) {
    match crate::artifact::unpack::unpack(path) {
        Ok(unpacked) => {
            for (member, label) in &unpacked.inputs {
                inputs.push(Input::Member {
                    path: member.clone(),
                    label: label.clone(),
                });
            }
            packs.push(Pack(std::sync::Arc::new(unpacked)));
        }
        Err(error) => inputs.push(Input::Invalid {
            path: path.to_path_buf(),
            error: format!("dumptriage pack: {error}"),
        }),
    }
}

/// The reports of a file the OS wrote in a format of its own (an apport
/// crash report, a Windows Error Reporting report), not yet diagnosed;
/// `None` for any other file.
pub(crate) fn os_reports(
    path: &Path,
    analyzer: &crate::dump::Analyzer,
) -> Option<Vec<crate::model::Report>> {
    match sniff::kind(path)? {
        sniff::Kind::Apport => Some(apport::reports(path, analyzer)),
        sniff::Kind::Wer => Some(wer::reports(path, analyzer)),
        sniff::Kind::Core | sniff::Kind::Pack => None,
    }
}

/// Standard input, read whole (up to 1 GiB), as one text input.
fn read_stdin() -> Input {
    use std::io::Read;
    let mut bytes = Vec::new();
    match std::io::stdin()
        .lock()
        .take(1 << 30)
        .read_to_end(&mut bytes)
    {
        Ok(_) => Input::Text {
            label: "<stdin>".to_string(),
            text: String::from_utf8_lossy(&bytes).into_owned(),
        },
        Err(e) => Input::Invalid {
            path: PathBuf::from("-"),
            error: format!("cannot read standard input: {e}"),
        },
    }
}

fn walk(dir: &Path, text: bool, out: &mut Vec<Input>, packs: &mut Vec<Pack>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            out.push(Input::Invalid {
                path: dir.to_path_buf(),
                error: format!("cannot list folder: {e}"),
            });
            return;
        }
    };
    let mut children: Vec<(PathBuf, bool)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let kind = entry.file_type().ok()?;
            Some((entry.path(), kind.is_dir()))
        })
        .collect();
    children.sort();
    // A Windows Error Reporting report folder: its Report.wer reads the
    // dump beside it, so the dumps are not taken again on their own.
    let wer = children
        .iter()
        .find(|(path, is_dir)| !is_dir && wer::is_report_name(path))
        .map(|(path, _)| path.clone());
    if let Some(report) = &wer {
        out.push(Input::Dump(report.clone()));
    }
    for (path, is_dir) in children {
        if is_dir {
            walk(&path, text, out, packs);
        } else if wer.is_some() {
            continue;
        } else if is_dump_name(&path) || (text && is_text_name(&path)) {
            out.push(Input::Dump(path));
        } else {
            match sniff::kind(&path) {
                Some(sniff::Kind::Pack) => take_out(&path, out, packs),
                Some(_) => out.push(Input::Dump(path)),
                None => {}
            }
        }
    }
}

fn is_dump_name(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| DUMP_EXTENSIONS.iter().any(|d| e.eq_ignore_ascii_case(d)))
        || is_core_name(path)
}

/// Linux core files as the kernel (`core`, `core.PID`), systemd-coredump
/// (`core.NAME.UID.BOOTID.PID.TIME.zst`) and people (`NAME.core`) name
/// them (`core.py` is not one). Their content decides whether they are
/// read as cores.
fn is_core_name(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let Some(rest) = name.strip_prefix("core.") else {
        return name == "core" || name.ends_with(".core");
    };
    // core.PID, or systemd's core.NAME.UID.BOOTID.PID.TIME[.zst|.lz4|.xz];
    // not a source file such as core.py.
    rest.bytes().all(|b| b.is_ascii_digit()) || rest.split('.').count() >= 5
}

fn is_text_name(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| TEXT_EXTENSIONS.iter().any(|t| t.eq_ignore_ascii_case(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_searched_recursively_and_sorted() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("b");
        std::fs::create_dir(&sub).unwrap();
        for name in [
            "z.dmp",
            "a.MDMP",
            "notes.txt",
            "core.1234",
            "core.py.0.ab.12.34.zst",
            "core.py",
        ] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        std::fs::write(sub.join("c.dmp"), b"").unwrap();
        let found = collect(&[dir.path().to_path_buf()]).inputs;
        assert_eq!(
            found,
            vec![
                Input::Dump(dir.path().join("a.MDMP")),
                Input::Dump(sub.join("c.dmp")),
                Input::Dump(dir.path().join("core.1234")),
                Input::Dump(dir.path().join("core.py.0.ab.12.34.zst")),
                Input::Dump(dir.path().join("z.dmp")),
            ]
        );
    }

    #[test]
    fn missing_paths_are_reported_and_empty_folders_listed() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.dmp");
        let found = collect(&[missing.clone(), dir.path().to_path_buf()]);
        assert_eq!(found.inputs.len(), 1);
        assert!(matches!(&found.inputs[0], Input::Invalid { path, .. } if *path == missing));
        assert_eq!(found.empty_folders, vec![dir.path().to_path_buf()]);
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_do_not_hang_the_search() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(dir.path(), dir.path().join("loop")).unwrap();
        std::fs::write(dir.path().join("x.dmp"), b"").unwrap();
        let found = collect(&[dir.path().to_path_buf()]).inputs;
        assert_eq!(found, vec![Input::Dump(dir.path().join("x.dmp"))]);
    }
}
