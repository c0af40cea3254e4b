//! The CPython interpreters of this machine the Python tests run:
//! pyenv's 3.10 to 3.13, and Debian's own python3.11.

use std::path::PathBuf;

/// pyenv's interpreters 3.10 to 3.13: (version, python binary).
pub fn interpreters() -> Vec<(String, PathBuf)> {
    let root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| dirs_home().join(".pyenv"))
        .join("versions");
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(&root)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    let version = e.file_name().to_string_lossy().into_owned();
                    let minor = version
                        .strip_prefix("3.")?
                        .split('.')
                        .next()?
                        .parse::<u32>()
                        .ok()?;
                    if !(10..=13).contains(&minor) || version.split('.').count() != 3 {
                        return None;
                    }
                    let python = e.path().join(format!("bin/python3.{minor}"));
                    python.exists().then(|| (format!("3.{minor}"), python))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found.dedup_by(|a, b| a.0 == b.0);
    // Debian's own, statically linked (_PyRuntime in the executable).
    let debian = PathBuf::from("/usr/bin/python3.11");
    if debian.exists() {
        found.push(("3.11 (Debian)".to_string(), debian));
    }
    found
}

fn dirs_home() -> PathBuf {
    PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
}
