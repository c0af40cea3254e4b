//! `dumptriage pack`: the dumps or cores, every binary and symbol file the
//! analysis used, and its report, in one `.tar.zst` that `analyze` reads
//! on any machine with no symbol options and gives the same frames and
//! diagnosis.
//!
//! The files come from the analysis itself: each one the symbol search
//! accepted for a module (checked against its build id, PDB GUID and age
//! or debug id), placed in the archive's `symbols/` folder where a search
//! by that identity finds it (src/symbols/used.rs). Nothing is packed
//! because of its path alone. The layout:
//!
//! ```text
//! dumptriage-pack.json   the manifest, always first: what is in the pack,
//!                        where each file came from, and what was left out
//! NAME ...               the inputs, side by side
//! symbols/...            the binaries and symbol files, in store layouts
//! report.json            the analysis as made when packing
//! report.txt
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

pub use super::manifest::{LeftOut, Manifest, PackedFile, PackedInput};
use super::manifest::{FORMAT, MANIFEST, VERSION};
use crate::input::{sniff, Input};
use crate::model::{Report, SourceKind, Status};
use crate::report::{self, Format, Paint};
use crate::signatures::Database;
use crate::symbols::SymbolConfig;
use crate::BatchOptions;

/// Names the inputs cannot take.
const RESERVED: [&str; 4] = [MANIFEST, "symbols", "report.json", "report.txt"];

/// What to pack.
#[derive(Debug, Clone)]
pub struct PackOptions {
    pub inputs: Vec<Input>,
    pub output: PathBuf,
    pub symbols: SymbolConfig,
    /// Most bytes of binaries and symbol files packed; the rest is left
    /// out, and said.
    pub max_symbols: u64,
    /// Pack each core as the small minidump `convert` makes of it.
    pub convert: bool,
    pub jobs: usize,
}

/// What was packed.
#[derive(Debug, Clone)]
pub struct Packed {
    pub manifest: Manifest,
    /// The archive's size.
    pub bytes: u64,
    /// The bytes packed before compression.
    pub contents: u64,
}

impl Packed {
    /// What happened, for people.
    pub fn describe(&self, output: &Path) -> Vec<String> {
        use super::convert::size;
        let m = &self.manifest;
        let symbols: u64 = m.files.iter().map(|f| f.bytes).sum();
        let mut lines = vec![format!(
            "wrote {}: {} ({} before compression): {} input(s), {} binaries and symbol \
             files ({}), the report",
            output.display(),
            size(self.bytes),
            size(self.contents),
            m.inputs.len(),
            m.files.len(),
            size(symbols)
        )];
        for left in &m.left_out {
            lines.push(format!("left out: {}: {}", left.what, left.why));
        }
        lines
    }
}

/// `dumptriage pack`: the pack, and what to say.
pub fn command(options: &PackOptions, database: &Database) -> Result<super::Outcome, String> {
    let packed = pack(options, database)?;
    Ok(super::Outcome {
        said: packed.describe(&options.output),
        ..super::Outcome::default()
    })
}

/// A pack's inputs with the database of rules; the error is one line.
pub fn pack(options: &PackOptions, database: &Database) -> Result<Packed, String> {
    let output = &options.output;
    let fail = |e: String| format!("{}: {e}", output.display());
    let batch = BatchOptions {
        jobs: options.jobs.max(1),
        progress: false,
        debug_panic_on: None,
    };
    let (mut reports, used) =
        crate::analyze_inputs_using(&options.inputs, options.symbols.clone(), database, &batch);
    let mut gathered = Gathered::default();
    for input in &options.inputs {
        gathered.input(input, &reports, options);
    }
    let Gathered {
        inputs,
        scratch,
        mut left_out,
        ..
    } = gathered;
    let files = symbol_files(used, options.max_symbols, &mut left_out);
    rename_reports(&mut reports, &inputs);
    let manifest = Manifest {
        format: FORMAT.into(),
        version: VERSION,
        tool: format!("dumptriage {}", env!("CARGO_PKG_VERSION")),
        created: jiff::Timestamp::now()
            .round(jiff::Unit::Second)
            .map_or_else(|_| String::new(), |t| t.to_string()),
        inputs: inputs.iter().map(|(_, i)| i.clone()).collect(),
        files: files.iter().map(|(_, f)| f.clone()).collect(),
        left_out,
    };
    let dir = match output.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut archive = tempfile::Builder::new()
        .prefix(".dumptriage-pack-")
        .tempfile_in(&dir)
        .map_err(|e| fail(format!("cannot write in {}: {e}", dir.display())))?;
    let contents = write(archive.as_file_mut(), &manifest, &inputs, &files, &reports)
        .map_err(|e| fail(format!("cannot write: {e}")))?;
    let bytes = archive.as_file().metadata().map_or(0, |m| m.len());
    archive
        .persist(output)
        .map_err(|e| fail(format!("cannot write: {}", e.error)))?;
    drop(scratch);
    Ok(Packed {
        manifest,
        bytes,
        contents,
    })
}

/// The pack's inputs as they are gathered: each file under a plain name of
/// its own, the small dumps made of cores (deleted once packed), and what
/// was left out.
#[derive(Default)]
struct Gathered {
    names: Vec<String>,
    inputs: Vec<(Source, PackedInput)>,
    scratch: Vec<tempfile::TempPath>,
    left_out: Vec<LeftOut>,
}

impl Gathered {
    fn input(&mut self, input: &Input, reports: &[Report], options: &PackOptions) {
        match input {
            Input::Invalid { path, error } => self.left_out.push(LeftOut {
                what: path.display().to_string(),
                why: error.clone(),
            }),
            Input::Text { label, text } => {
                let name = unique(&mut self.names, "stdin.txt");
                self.inputs.push((
                    Source::Bytes(text.clone().into_bytes()),
                    PackedInput {
                        name,
                        from: label.clone(),
                        bytes: text.len() as u64,
                        kind: "text".into(),
                    },
                ));
            }
            Input::Dump(path) | Input::Member { path, .. } => {
                self.file(input.shown(), path.clone(), reports, options);
            }
        }
    }

    /// A file input: packed as it is, or a core as its small minidump
    /// when `--convert` asks for it.
    fn file(
        &mut self,
        mut shown: String,
        mut path: PathBuf,
        reports: &[Report],
        options: &PackOptions,
    ) {
        // A Windows Error Reporting folder: its report is the dump
        // beside the Report.wer (whose problem signature is in the
        // pack's report); the dump is packed, analysed on its own.
        if sniff::kind(&path) == Some(sniff::Kind::Wer) {
            let beside = reports
                .iter()
                .map(|r| r.path.as_str())
                .find(|p| Path::new(p).parent() == path.parent() && *p != shown);
            if let Some(dump) = beside {
                self.left_out.push(LeftOut {
                    what: shown.clone(),
                    why: "its problem signature is in the pack's report; the dump \
                          beside it is packed, and read on its own"
                        .into(),
                });
                shown = dump.to_string();
                path = PathBuf::from(dump);
            }
        }
        let base = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "input".into());
        let report = reports.iter().find(|r| r.path == shown);
        let kind = match (
            sniff::kind(&path),
            report.map(|r| (r.status, r.source.kind)),
        ) {
            (Some(sniff::Kind::Core), _) => "core",
            (Some(sniff::Kind::Apport), _) => "apport crash report",
            (Some(sniff::Kind::Wer), _) => "Windows Error Reporting report",
            (_, Some((Status::Ok, SourceKind::Text))) => "text",
            _ => "minidump",
        };
        let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
        if kind == "core" && options.convert {
            match converted(&path, &options.output, &options.symbols) {
                Ok((small, dump_bytes)) => {
                    let name = unique(&mut self.names, &format!("{base}.dmp"));
                    self.inputs.push((
                        Source::File(small.to_path_buf()),
                        PackedInput {
                            name,
                            from: shown,
                            bytes: dump_bytes,
                            kind: "minidump converted from a core".into(),
                        },
                    ));
                    self.scratch.push(small);
                    return;
                }
                Err(why) => self.left_out.push(LeftOut {
                    what: format!("the small minidump of {shown}"),
                    why: format!("{why}; the core is packed instead"),
                }),
            }
        }
        let name = unique(&mut self.names, &base);
        self.inputs.push((
            Source::File(path),
            PackedInput {
                name,
                from: shown,
                bytes,
                kind: kind.into(),
            },
        ));
    }
}

/// The binaries and symbol files the analysis used, as long as they fit in
/// `max_symbols` bytes; the others are left out, saying why.
fn symbol_files(
    used: Vec<crate::symbols::UsedFile>,
    max_symbols: u64,
    left_out: &mut Vec<LeftOut>,
) -> Vec<(PathBuf, PackedFile)> {
    let mut files: Vec<(PathBuf, PackedFile)> = Vec::new();
    let mut total = 0u64;
    for file in used {
        let bytes = match std::fs::metadata(&file.path) {
            Ok(meta) if meta.is_file() => meta.len(),
            Ok(_) | Err(_) => {
                left_out.push(LeftOut {
                    what: file.path.display().to_string(),
                    why: format!("the {} of {} is no longer readable", file.kind, file.module),
                });
                continue;
            }
        };
        if total.saturating_add(bytes) > max_symbols {
            left_out.push(LeftOut {
                what: file.path.display().to_string(),
                why: format!(
                    "the {} of {} ({}) would pass --max-symbols {}",
                    file.kind,
                    file.module,
                    super::convert::size(bytes),
                    super::convert::size(max_symbols)
                ),
            });
            continue;
        }
        total += bytes;
        files.push((
            file.path.clone(),
            PackedFile {
                path: format!("symbols/{}", file.store_path),
                from: file.path.display().to_string(),
                module: file.module,
                id: file.id,
                kind: file.kind.into(),
                bytes,
            },
        ));
    }
    files
}

/// The reports, with each path as the pack's inputs name it.
fn rename_reports(reports: &mut [Report], inputs: &[(Source, PackedInput)]) {
    for report in reports {
        if let Some((_, input)) = inputs.iter().find(|(_, i)| {
            report.path == i.from || report.path.starts_with(&format!("{}:", i.from))
        }) {
            report.path = format!("{}{}", input.name, &report.path[input.from.len()..]);
        }
    }
}

/// Where an input's bytes come from.
enum Source {
    File(PathBuf),
    Bytes(Vec<u8>),
}

/// `name` made a plain file name no other input has.
fn unique(taken: &mut Vec<String>, name: &str) -> String {
    let plain: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let plain = plain.trim_start_matches('.').to_string();
    let plain = if plain.is_empty() {
        "input".to_string()
    } else {
        plain
    };
    let mut candidate = plain.clone();
    let mut n = 1;
    while taken.contains(&candidate) || RESERVED.contains(&candidate.as_str()) {
        n += 1;
        candidate = format!("{n}-{plain}");
    }
    taken.push(candidate.clone());
    candidate
}

/// The small minidump of a core, in a temporary file beside the output.
fn converted(
    core: &Path,
    output: &Path,
    symbols: &SymbolConfig,
) -> Result<(tempfile::TempPath, u64), String> {
    let dir = match output.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let small = tempfile::Builder::new()
        .prefix(".dumptriage-small-")
        .suffix(".dmp")
        .tempfile_in(&dir)
        .map_err(|e| e.to_string())?
        .into_temp_path();
    let done = super::convert::convert(&super::convert::ConvertOptions {
        core: Some(core.to_path_buf()),
        output: small.to_path_buf(),
        symbols: symbols.clone(),
        heap_budget: 0,
    })?;
    if !done.differences.is_empty() {
        return Err(format!(
            "its report differs from the core's ({})",
            done.differences.join("; ")
        ));
    }
    Ok((small, done.dump_bytes))
}

/// Writes the archive; returns the bytes packed (before compression).
fn write(
    file: &mut File,
    manifest: &Manifest,
    inputs: &[(Source, PackedInput)],
    files: &[(PathBuf, PackedFile)],
    reports: &[Report],
) -> io::Result<u64> {
    let encoder = zstd::stream::write::Encoder::new(BufWriter::with_capacity(1 << 20, file), 3)?;
    let mut tar = tar::Builder::new(encoder);
    let mtime = jiff::Timestamp::now().as_second().max(0) as u64;
    // The manifest first, in a plain ustar header (what `is_pack` reads).
    let text = serde_json::to_vec_pretty(manifest).map_err(io::Error::other)?;
    let mut header = tar::Header::new_ustar();
    header.set_path(MANIFEST)?;
    header.set_size(text.len() as u64);
    header.set_mode(0o644);
    header.set_mtime(mtime);
    header.set_entry_type(tar::EntryType::Regular);
    header.set_cksum();
    tar.append(&header, &text[..])?;
    let mut contents = text.len() as u64;
    let add = |tar: &mut tar::Builder<_>, name: &str, size: u64, data: &mut dyn Read| {
        let mut header = tar::Header::new_gnu();
        header.set_size(size);
        header.set_mode(0o644);
        header.set_mtime(mtime);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, name, data).map(|()| size)
    };
    for (source, input) in inputs {
        contents += match source {
            Source::Bytes(bytes) => {
                add(&mut tar, &input.name, bytes.len() as u64, &mut &bytes[..])?
            }
            Source::File(path) => {
                let file = File::open(path)?;
                let size = file.metadata()?.len();
                add(&mut tar, &input.name, size, &mut file.take(size))?
            }
        };
    }
    for (path, packed) in files {
        let file = File::open(path)?;
        let size = file.metadata()?.len();
        contents += add(&mut tar, &packed.path, size, &mut file.take(size))?;
    }
    let mut json = Vec::new();
    report::render(reports, Format::Json, Paint { enabled: false }, &mut json)?;
    contents += add(&mut tar, "report.json", json.len() as u64, &mut &json[..])?;
    let mut text = Vec::new();
    report::render(reports, Format::Text, Paint { enabled: false }, &mut text)?;
    contents += add(&mut tar, "report.txt", text.len() as u64, &mut &text[..])?;
    let encoder = tar.into_inner()?;
    let mut out = encoder.finish()?;
    out.flush()?;
    Ok(contents)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_names_are_plain_unique_and_never_the_packs_own() {
        let mut taken = Vec::new();
        assert_eq!(unique(&mut taken, "core"), "core");
        assert_eq!(unique(&mut taken, "core"), "2-core");
        assert_eq!(unique(&mut taken, "report.json"), "2-report.json");
        assert_eq!(unique(&mut taken, "../../x y"), "_.._x_y");
        assert_eq!(unique(&mut taken, ".."), "input");
        assert_eq!(unique(&mut taken, MANIFEST), format!("2-{MANIFEST}"));
    }
}
