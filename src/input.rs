//! Turns the paths a user gave into the list of dumps to analyse.

use std::path::{Path, PathBuf};

/// One thing to analyse: a dump file, or a path that could not be used (kept
/// so it is reported in its place instead of silently dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Dump(PathBuf),
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

/// File extensions taken as minidumps when a folder is searched.
const DUMP_EXTENSIONS: [&str; 2] = ["dmp", "mdmp"];

/// What the paths a user gave hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Collected {
    pub inputs: Vec<Input>,
    /// Folders that exist but hold no dump. Not an error: a CI job's dump
    /// folder is empty when nothing crashed or hung (issue 11).
    pub empty_folders: Vec<PathBuf>,
}

/// Expands folders recursively into their `*.dmp` / `*.mdmp` files and core
/// files (`core`, `core.*`, `*.core`) (sorted,
/// so output order is stable); files named directly are taken whatever their
/// extension. Symbolic links to folders are not followed, so a link loop
/// cannot make the search endless.
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
                walk(path, text, &mut inputs);
                if inputs.len() == before {
                    empty_folders.push(path.clone());
                }
            }
            Ok(_) => inputs.push(Input::Dump(path.clone())),
        }
    }
    Collected {
        inputs,
        empty_folders,
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

fn walk(dir: &Path, text: bool, out: &mut Vec<Input>) {
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
    for (path, is_dir) in children {
        if is_dir {
            walk(&path, text, out);
        } else if is_dump_name(&path) || (text && is_text_name(&path)) {
            out.push(Input::Dump(path));
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
