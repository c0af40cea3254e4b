//! `dumptriage merge`: the JSON reports of several runs (shards of one
//! folder analysed on several machines) read back into one list of
//! reports, which every format then renders as if one run had analysed
//! every dump: the summary is made again from the reports, so groups and
//! counts are those of a single run.
//!
//! The JSON carries each dump's whole report (docs/json-schema.md), not
//! only its group, for exactly this. The reports are put in path order,
//! which is the order a single run over the shards' common folder gives
//! (folders are walked in sorted path order); the reports of one file
//! (several traces in a log) keep their order.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::model::{Report, SCHEMA_VERSION};
use crate::printable::clean;
use crate::signature;

/// A JSON report as `--format json` writes it; the summary is made again.
#[derive(Deserialize)]
struct Shard {
    schema_version: u32,
    /// Absent from the JSON of versions before signatures were versioned.
    crash_signature_version: Option<u32>,
    reports: Vec<Report>,
}

/// What merging found.
#[derive(Debug, Default)]
pub struct Merged {
    /// Every shard's reports, in path order; a shard that could not be read
    /// is an error report in its place (named by the shard's path).
    pub reports: Vec<Report>,
    /// Dumps found in more than one shard: kept from the first, said here.
    pub warnings: Vec<String>,
}

/// Reads the shards.
pub fn merge(paths: &[PathBuf]) -> Merged {
    let mut merged = Merged::default();
    // Which shard each dump came from, to find one analysed twice.
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (n, path) in paths.iter().enumerate() {
        let reports = match read(path) {
            Ok(reports) => reports,
            Err(error) => {
                merged.reports.push(Report::failed(
                    path.display().to_string(),
                    "not_a_report",
                    error,
                ));
                continue;
            }
        };
        for report in reports {
            match seen.get(&report.path) {
                Some(&first) if first != n => {
                    merged.warnings.push(format!(
                        "{} is in {} and in {}: kept from the first",
                        clean(&report.path),
                        clean(&paths[first].display().to_string()),
                        clean(&path.display().to_string())
                    ));
                    continue;
                }
                _ => {
                    seen.insert(report.path.clone(), n);
                }
            }
            merged.reports.push(report);
        }
    }
    merged
        .reports
        .sort_by(|a, b| Path::new(&a.path).cmp(Path::new(&b.path)));
    merged
}

fn read(path: &Path) -> Result<Vec<Report>, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let shard: Shard = serde_json::from_reader(std::io::BufReader::new(file))
        .map_err(|e| format!("not a dumptriage JSON report (`analyze --format json`): {e}"))?;
    if shard.schema_version != SCHEMA_VERSION {
        return Err(format!(
            "JSON schema version {}; this dumptriage reads version {SCHEMA_VERSION}: analyse \
             the shard again with this version",
            shard.schema_version
        ));
    }
    match shard.crash_signature_version {
        Some(v) if v == signature::VERSION => Ok(shard.reports),
        other => Err(format!(
            "crash signature version {}; this dumptriage computes version {}: its groups \
             would not compare, analyse the shard again with this version",
            other.map_or_else(|| "1".to_string(), |v| v.to_string()),
            signature::VERSION
        )),
    }
}
