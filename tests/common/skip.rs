//! The one way a test says it cannot run here (issue 27). Outside CI it
//! prints why and the test returns; under CI (`CI` set, as .ci/run and
//! hosted runners set it) it fails, unless the test is listed in [`ALLOWED`]
//! for this platform with the reason. Either way, a skip is appended to the
//! file named by `DUMPTRIAGE_SKIP_LOG` (set by .ci/run, which prints the
//! count and the reasons at the end), so a green run says what it did not
//! check.

use std::io::Write;

/// Tests that may skip under CI, on one platform (`std::env::consts::OS`),
/// and why: what the test needs that the runner of that platform cannot
/// have. Everything else must run wherever CI runs.
pub const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "vendor::with_the_real_dlls",
        "windows",
        "sample-dumps/vendor/fetch.sh (bash, npm, sha256sum) runs in the Linux job only",
    ),
    (
        "vendor::with_the_real_dlls",
        "macos",
        "sample-dumps/vendor/fetch.sh (bash, npm, sha256sum) runs in the Linux job only",
    ),
    (
        "vendor::with_wine_dlls",
        "windows",
        "Wine's x86-64 DLLs come from Debian's libwine: the Linux job only",
    ),
    (
        "vendor::with_wine_dlls",
        "macos",
        "Wine's x86-64 DLLs come from Debian's libwine: the Linux job only",
    ),
    (
        "formats::junit_schema",
        "windows",
        "the Windows runner has no xmllint",
    ),
    (
        "pty::util_linux_script",
        "macos",
        "macOS has BSD `script`, which lacks util-linux's -q -e -c",
    ),
    (
        "pty::util_linux_script",
        "windows",
        "Windows has no `script` and no pseudo-terminals of that kind",
    ),
];

/// Whether this run is CI's: `CI` set to anything but empty, `0` or `false`.
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// Says that test `id` (a stable `file::what` name, as [`ALLOWED`] spells
/// it) cannot run here because of `reason`. Returns when skipping is
/// acceptable (the caller then returns); panics under CI when `id` is not
/// allowed to skip on this platform.
pub fn skip(id: &str, reason: &str) {
    let os = std::env::consts::OS;
    let allowed = ALLOWED
        .iter()
        .find(|(test, on, _)| *test == id && *on == os)
        .map(|(_, _, why)| *why);
    if under_ci() && allowed.is_none() {
        panic!(
            "{id} cannot run here ({reason}), and under CI a test must run: install what \
             it needs (.ci/run and scripts/ci-setup-linux.sh do on Linux), or list it in \
             tests/common/skip.rs ALLOWED for {os} with the reason"
        );
    }
    let line = match allowed {
        Some(why) => format!("{id} ({os}): {reason}; allowed: {why}"),
        None => format!("{id} ({os}): {reason}"),
    };
    eprintln!("skipped: {line}");
    if let Some(log) = std::env::var_os("DUMPTRIAGE_SKIP_LOG") {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .unwrap_or_else(|e| panic!("DUMPTRIAGE_SKIP_LOG {}: {e}", log.to_string_lossy()));
        // One write per line: tests run in parallel threads and processes.
        file.write_all(format!("{line}\n").as_bytes())
            .expect("write the skip log");
    }
}

/// Whether util-linux `script` (with -q -e -c and a pseudo-terminal) is
/// here; BSD `script` (macOS) answers `--version` with an error.
pub fn util_linux_script() -> bool {
    std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|out| {
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("util-linux")
        })
}
