//! The C programs of tests/programs/, built with gcc at test time, and a
//! Breakpad symbol store made from their symbol tables with `nm`.
//!
//! The store is test scaffolding: it gives frames their function names so
//! the tests can assert diagnoses on real captured dumps. (gcc needs
//! binutils, so `nm` and `readelf` are wherever gcc is.)

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const FLAGS: [&str; 3] = ["-g", "-O0", "-fno-omit-frame-pointer"];

/// Builds every test program once per test binary; returns their folder.
pub fn programs() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("capture-programs");
        std::fs::create_dir_all(&out).unwrap();
        let rpath = "-Wl,-rpath,$ORIGIN";
        gcc(
            &out,
            &["-fPIC", "-shared", "-o", "libpal.so"],
            &[src.join("libpal.c")],
            &["-lpthread"],
        );
        gcc(
            &out,
            &["-fPIC", "-shared", "-o", "libamdhip64.so"],
            &[src.join("libamdhip64.c")],
            &["-L.", "-lpal", rpath, "-lpthread"],
        );
        gcc(
            &out,
            &["-o", "hip_exit_hang"],
            &[src.join("hip_exit_hang.c")],
            &["-L.", "-lamdhip64", rpath, "-lpthread"],
        );
        gcc(
            &out,
            &["-fPIC", "-shared", "-o", "libplugin.so"],
            &[src.join("libplugin.c")],
            &[],
        );
        gcc(
            &out,
            &["-o", "unload_crash"],
            &[src.join("unload_crash.c")],
            &["-ldl"],
        );
        gcc(
            &out,
            &["-o", "exit_status"],
            &[src.join("exit_status.c")],
            &[],
        );
        out
    })
}

fn gcc(dir: &Path, args: &[&str], sources: &[PathBuf], libs: &[&str]) {
    let out = Command::new("gcc")
        .current_dir(dir)
        .args(FLAGS)
        .args(args)
        .args(sources)
        .args(libs)
        .output()
        .expect("gcc must be installed to build tests/programs");
    assert!(
        out.status.success(),
        "gcc {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The shared libraries every test program loads from the system (libc and
/// the dynamic loader): the same files this test process maps.
pub fn system_libraries() -> Vec<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mut found: Vec<PathBuf> = maps
        .lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .filter(|path| path.contains("/libc.so") || path.contains("/ld-linux"))
        .map(PathBuf::from)
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Writes a Breakpad store (`NAME/DEBUG_ID/NAME.sym`, FUNC lines only) for
/// `binaries` into `store`, from `nm` (the full symbol table, or the dynamic
/// one for stripped system libraries).
pub fn nm_symbol_store(store: &Path, binaries: &[PathBuf]) {
    for binary in binaries {
        let Some(debug_id) = breakpad_debug_id(binary) else {
            continue;
        };
        let name = binary.file_name().unwrap().to_string_lossy().into_owned();
        let mut functions = nm_functions(binary, false);
        if functions.is_empty() {
            functions = nm_functions(binary, true);
        }
        let mut text = format!("MODULE Linux x86_64 {debug_id} {name}\n");
        for (address, size, function) in functions {
            let _ = writeln!(text, "FUNC {address:x} {size:x} 0 {function}");
        }
        let dir = store.join(&name).join(&debug_id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.sym")), text).unwrap();
    }
}

fn nm_functions(binary: &Path, dynamic: bool) -> Vec<(u64, u64, String)> {
    let mut cmd = Command::new("nm");
    cmd.args(["--defined-only", "-S"]);
    if dynamic {
        cmd.arg("-D");
    }
    let out = cmd
        .arg(binary)
        .output()
        .expect("nm (binutils) must be installed");
    let mut functions: Vec<(u64, u64, String)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let address = u64::from_str_radix(parts.next()?, 16).ok()?;
            let size = u64::from_str_radix(parts.next()?, 16).ok()?;
            let kind = parts.next()?;
            let name = parts.next()?;
            let is_code = matches!(kind, "T" | "t" | "W" | "w" | "i");
            let name = name.split('@').next()?.to_string();
            (is_code && size > 0).then_some((address, size, name))
        })
        .collect();
    functions.sort();
    // One name per address (versioned aliases share one).
    functions.dedup_by_key(|(address, _, _)| *address);
    functions
}

/// Breakpad's debug id of an ELF file: its build id's first 16 bytes read
/// as a little-endian GUID, then the age 0.
fn breakpad_debug_id(binary: &Path) -> Option<String> {
    let out = Command::new("readelf")
        .arg("-n")
        .arg(binary)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let hex = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))?;
    let mut bytes: Vec<u8> = (0..hex.len() / 2)
        .filter_map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
        .collect();
    bytes.resize(16, 0);
    let mut id = String::new();
    for range in [0..4, 4..6, 6..8] {
        for byte in bytes[range].iter().rev() {
            let _ = write!(id, "{byte:02X}");
        }
    }
    for byte in &bytes[8..16] {
        let _ = write!(id, "{byte:02X}");
    }
    id.push('0');
    Some(id)
}
