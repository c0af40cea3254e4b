//! The fixtures the symbol-source tests share (tests/symbols_*.rs): the
//! synthesized dumps around tests/data/native/ (built by
//! scripts/native-fixtures.sh: fakehip.dll + fakehip.pdb, and
//! libfakeexit.so with its split debug file; the identities and function
//! offsets below are what that script printed), stores, CAB archives and
//! the runs of the binary. Each test file uses some of them.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use super::httpd::Httpd;
use super::shims;
use super::synth::{self, WinModule};
use super::{bin, data};

pub const HIP_BASE: u64 = 0x7ffa_2000_0000;

pub const HIP_TIMESTAMP: u32 = 0x6553_f100;

pub const HIP_SIZE: u32 = 0x6000;

pub const HIP_CODE_ID: &str = "6553F1006000";

pub const HIP_GUID: [u8; 16] = [
    0xa0, 0xa8, 0x7d, 0x17, 0x75, 0xfb, 0x0a, 0x17, 0x4c, 0x4c, 0x44, 0x20, 0x50, 0x44, 0x42, 0x2e,
];

pub const HIP_DEBUG_ID: &str = "177DA8A0FB75170A4C4C44205044422E1";

/// Offsets of fakehip.dll's functions (`__run_exit_handlers` is static:
/// only the PDB names it).
pub const UNREGISTER: u64 = 0x1000;

pub const RUN_EXIT_HANDLERS: u64 = 0x1030;

pub const STREAM_SYNCHRONIZE: u64 = 0x1050;

pub const ELF_BASE: u64 = 0x7f12_3400_0000;

pub const ELF_BUILD_ID: &str = "68548ea76ac0bc5d6b3a796c21c8a5cfde74dadd";

pub const ELF_RUN_EXIT_HANDLERS: u64 = 0x4a9;

pub const ELF_WAIT_FOR_STREAMS: u64 = 0x4cf;

pub fn native(name: &str) -> PathBuf {
    data("native").join(name)
}

pub fn hip_module(with_codeview: bool) -> WinModule {
    WinModule {
        path: "C:\\Program Files\\App\\fakehip.dll",
        base: HIP_BASE,
        size: HIP_SIZE,
        timestamp: HIP_TIMESTAMP,
        pdb: with_codeview.then_some((HIP_GUID, 1, "fakehip.pdb")),
    }
}

pub fn hip_dump(with_codeview: bool, offset: u64) -> Vec<u8> {
    synth::windows_crash(
        &[hip_module(with_codeview)],
        &[],
        HIP_BASE + offset,
        Vec::new(),
    )
}

pub fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
}

/// A Microsoft-style symbol store holding fakehip's binary and PDB.
pub fn ms_store(root: &Path) {
    copy(
        &native("fakehip.dll"),
        &root
            .join("fakehip.dll")
            .join(HIP_CODE_ID)
            .join("fakehip.dll"),
    );
    copy(&native("fakehip.pdb"), &pdb_dir(root).join("fakehip.pdb"));
}

pub struct Run {
    pub doc: Value,
    pub out: Output,
}

impl Run {
    pub fn report(&self) -> &Value {
        &self.doc["reports"][0]
    }
    pub fn frame0(&self) -> &Value {
        &self.report()["threads"][0]["frames"][0]
    }
    pub fn module(&self, name: &str) -> &Value {
        self.report()["modules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("no module {name}"))
    }
    pub fn warnings(&self) -> Vec<String> {
        self.report()["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_string())
            .collect()
    }
}

/// The fake HIP module's first frame, named from its PDB.
pub fn named_from_the_pdb(run: &Run) {
    assert_eq!(
        run.frame0()["function"],
        "__run_exit_handlers",
        "{:#}",
        run.report()
    );
    assert_eq!(run.frame0()["symbol_source"], "pdb");
}

/// One `dumptriage analyze` of a synthesized dump, written to the test's
/// folder as `crash.dmp`, with the symbol sources the test names in order:
/// the run every symbol test makes. The environment's symbol servers are
/// removed ([`bin`]) unless [`Analysis::env`] sets them.
pub struct Analysis {
    path: PathBuf,
    dump: Vec<u8>,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
}

impl Analysis {
    /// `dump`, to be written into `dir`.
    pub fn of(dir: &Path, dump: &[u8]) -> Analysis {
        Analysis {
            path: dir.join("crash.dmp"),
            dump: dump.to_vec(),
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    /// The fake HIP module (with its CodeView record) crashed in
    /// `__run_exit_handlers`, which only its PDB and .sym name: what most
    /// symbol tests analyse.
    pub fn hip(dir: &Path) -> Analysis {
        Analysis::of(dir, &hip_dump(true, RUN_EXIT_HANDLERS + 4))
    }

    /// `--symbols SOURCE`: a folder, a store, a server's URL.
    pub fn symbols(self, source: impl AsRef<OsStr>) -> Analysis {
        self.arg("--symbols").arg(source)
    }

    /// `--symbols-cache CACHE`: where what servers send is kept.
    pub fn cache(self, cache: &Path) -> Analysis {
        self.arg("--symbols-cache").arg(cache)
    }

    /// `--symbols URL --symbols-cache CACHE`: the test's server, and where
    /// what it sends is kept.
    pub fn server(self, server: &Httpd, cache: &Path) -> Analysis {
        self.symbols(&server.url).cache(cache)
    }

    /// `--symbols-timeout SECONDS`.
    pub fn timeout(self, seconds: u32) -> Analysis {
        self.arg("--symbols-timeout").arg(seconds.to_string())
    }

    /// Any other option.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Analysis {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// A variable of the run's environment.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Analysis {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    fn output(&self, format: &[&str]) -> Output {
        std::fs::write(&self.path, &self.dump).unwrap();
        bin()
            .arg("analyze")
            .args(format)
            .args(&self.args)
            .arg(&self.path)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap()
    }

    /// Runs it with `--format json`.
    pub fn run(&self) -> Run {
        let out = self.output(&["--format", "json"]);
        let doc = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
        Run { doc, out }
    }

    /// Runs it with the default format, text; the report.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.output(&[]).stdout).into_owned()
    }
}

/// Writes a Breakpad .sym for the fakehip module (its MODULE line, then
/// `records`) into the store at `root`, and returns its path.
pub fn write_hip_sym(root: &Path, records: &str) -> PathBuf {
    let sym = pdb_dir(root).join("fakehip.sym");
    std::fs::create_dir_all(sym.parent().unwrap()).unwrap();
    std::fs::write(
        &sym,
        format!("MODULE windows x86_64 {HIP_DEBUG_ID} fakehip.pdb\n{records}"),
    )
    .unwrap();
    sym
}

pub fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

pub fn build_id_bytes() -> Vec<u8> {
    (0..ELF_BUILD_ID.len() / 2)
        .map(|i| u8::from_str_radix(&ELF_BUILD_ID[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

pub fn elf_dump(offset: u64) -> Vec<u8> {
    synth::linux_crash(
        "/opt/gpu/lib/libfakeexit.so",
        ELF_BASE,
        0x4000,
        &build_id_bytes(),
        ELF_BASE + offset,
    )
}

/// Builds a shim that records every connect() and getaddrinfo() a process
/// makes (LD_PRELOAD). `None` when no C compiler is there.
pub fn network_shim(dir: &Path) -> Option<PathBuf> {
    shims::build(dir, "netlog", shims::NET_LOG)
}

// Issue 10.1: Microsoft symbol stores exactly as symstore lays them out.

/// fakehip.dll with another SizeOfImage (0x6a00): a size with a hex letter,
/// as most real images have. Its code id is `6553F1006a00`.
pub const WIDE_SIZE: u32 = 0x6a00;

pub const WIDE_CODE_ID: &str = "6553F1006a00";

pub fn wide_dll() -> Vec<u8> {
    let mut dll = std::fs::read(native("fakehip.dll")).unwrap();
    let pe = u32::from_le_bytes(dll[0x3c..0x40].try_into().unwrap()) as usize;
    // SizeOfImage: 56 bytes into the optional header (PE32 and PE32+).
    let at = pe + 24 + 56;
    dll[at..at + 4].copy_from_slice(&WIDE_SIZE.to_le_bytes());
    dll
}

pub fn put(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A Wine-style dump (no CodeView record) of the wide-size fakehip, loaded
/// as `path`.
pub fn wide_dump(path: &'static str) -> Vec<u8> {
    let module = WinModule {
        path,
        base: HIP_BASE,
        size: WIDE_SIZE,
        timestamp: HIP_TIMESTAMP,
        pdb: None,
    };
    synth::windows_crash(&[module], &[], HIP_BASE + RUN_EXIT_HANDLERS + 4, Vec::new())
}

// Issue 13: names from a dump never leave the symbol folders.

/// Every file below `root`, with its size.
pub fn tree(root: &Path) -> BTreeSet<(PathBuf, u64)> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                out.insert((path.strip_prefix(root).unwrap().to_path_buf(), meta.len()));
            }
        }
    }
    out
}

// Issue 13: symbol files and the cache.

pub const OTHER_DEBUG_ID: &str = "177DA8A0FB75170A4C4C44205044422F1";

/// The .sym file the hip dump needs, padded to `size` bytes with records
/// that change nothing.
pub fn padded_sym(size: usize) -> String {
    let mut text = format!(
        "MODULE windows x86_64 {HIP_DEBUG_ID} fakehip.pdb\nFILE 0 fakehip.c\n\
         FUNC 1030 11 0 __run_exit_handlers\n1030 11 9 0\n"
    );
    let mut n = 0;
    while text.len() < size {
        text.push_str(&format!("PUBLIC {:x} 0 padding_{n}\n", 0x5000 + n));
        n += 1;
    }
    text
}

/// A CAB archive of `file`, holding it as `name`, MSZIP-compressed as
/// makecab writes by default: every 32 KB frame a "CK" block of raw
/// deflate.
pub fn mszip_cab(file: &Path, name: &str, archive: &Path) {
    use std::io::Write;
    let data = std::fs::read(file).unwrap();
    let blocks: Vec<(Vec<u8>, u16)> = data
        .chunks(32768)
        .map(|frame| {
            let mut deflate =
                flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
            deflate.write_all(frame).unwrap();
            let mut block = b"CK".to_vec();
            block.extend(deflate.finish().unwrap());
            (block, frame.len() as u16)
        })
        .collect();
    std::fs::create_dir_all(archive.parent().unwrap()).unwrap();
    std::fs::write(archive, cab_archive(data.len(), blocks, name, 1)).unwrap();
}

/// A CAB archive of `data` named `name`, LZX-compressed as symstore
/// /compress writes them (LZX, 2 MB window), in one LZX block of the
/// uncompressed kind: no LZX encoder is at hand, and an uncompressed block
/// still takes the archive through the LZX decoder (its block header, the
/// R0-R2 registers, the 32 KB frames split across CFDATA blocks).
pub fn lzx_cab(data: &[u8], name: &str) -> Vec<u8> {
    assert!(data.len() < 1 << 24);
    let size = data.len() as u32;
    // E8 translation off (1 bit), block type 3 (3 bits), 24-bit size, then
    // padding to the 16-bit word; words are little-endian, read from their
    // high bit.
    let head: u32 = (0b0011 << 28) | (size << 4);
    let mut first = Vec::new();
    first.extend(((head >> 16) as u16).to_le_bytes());
    first.extend((head as u16).to_le_bytes());
    for _ in 0..3 {
        first.extend(1u32.to_le_bytes());
    }
    let frames: Vec<&[u8]> = data.chunks(32768).collect();
    let mut blocks: Vec<(Vec<u8>, u16)> = Vec::new();
    for (i, frame) in frames.iter().enumerate() {
        let mut block = if i == 0 { first.clone() } else { Vec::new() };
        block.extend_from_slice(frame);
        blocks.push((block, frame.len() as u16));
    }
    cab_archive(data.len(), blocks, name, 3 | (21 << 8)) // LZX, window 2^21
}

/// A one-folder, one-file CAB archive of the given data blocks
/// (compressed bytes, uncompressed size) with the folder's compression
/// type.
pub fn cab_archive(
    size: usize,
    blocks: Vec<(Vec<u8>, u16)>,
    name: &str,
    compression: u16,
) -> Vec<u8> {
    let size = size as u32;
    let name_bytes = [name.as_bytes(), &[0]].concat();
    let header = 36;
    let folder = 8;
    let files_at = header + folder;
    let data_at = files_at + 16 + name_bytes.len();
    let total = data_at + blocks.iter().map(|(b, _)| 8 + b.len()).sum::<usize>();
    let mut cab = Vec::new();
    cab.extend(b"MSCF");
    cab.extend(0u32.to_le_bytes());
    cab.extend((total as u32).to_le_bytes());
    cab.extend(0u32.to_le_bytes());
    cab.extend((files_at as u32).to_le_bytes());
    cab.extend(0u32.to_le_bytes());
    cab.extend([3u8, 1u8]); // version 1.3
    cab.extend(1u16.to_le_bytes()); // folders
    cab.extend(1u16.to_le_bytes()); // files
    cab.extend(0u16.to_le_bytes()); // flags
    cab.extend(0u16.to_le_bytes()); // set id
    cab.extend(0u16.to_le_bytes()); // cabinet index
    cab.extend((data_at as u32).to_le_bytes());
    cab.extend((blocks.len() as u16).to_le_bytes());
    cab.extend(compression.to_le_bytes());
    cab.extend(size.to_le_bytes());
    cab.extend(0u32.to_le_bytes()); // offset in the folder
    cab.extend(0u16.to_le_bytes()); // folder
    cab.extend(0x5821u16.to_le_bytes()); // date
    cab.extend(0u16.to_le_bytes()); // time
    cab.extend(0x20u16.to_le_bytes()); // archive attribute
    cab.extend(&name_bytes);
    assert_eq!(cab.len(), data_at);
    for (block, uncompressed) in blocks {
        cab.extend(0u32.to_le_bytes()); // no checksum
        cab.extend((block.len() as u16).to_le_bytes());
        cab.extend(uncompressed.to_le_bytes());
        cab.extend(block);
    }
    assert_eq!(cab.len(), total);
    cab
}

/// Where a store keeps the files of fakehip's PDB build:
/// `ROOT/fakehip.pdb/DEBUGID/`.
pub fn pdb_dir(root: &Path) -> PathBuf {
    root.join("fakehip.pdb").join(HIP_DEBUG_ID)
}
