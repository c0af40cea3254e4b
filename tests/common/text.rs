//! The text tests' way of running the binary on a log: the reports of a
//! text, and the answer of a report.

use std::path::Path;

use serde_json::Value;

/// The reports of `text` read as a file named `name`.
pub fn analyze_text(name: &str, text: &str) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    analyze_path(&path)
}

/// The reports of the file at `path`.
pub fn analyze_path(path: &Path) -> Vec<Value> {
    let out = super::bin()
        .args(["analyze", "--format", "json"])
        .arg(path)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    doc["reports"].as_array().unwrap().clone()
}

/// A report's answer: its first diagnosis, or "none".
pub fn answer(report: &Value) -> String {
    match report["diagnoses"].as_array().and_then(|d| d.first()) {
        Some(d) => super::diagnosis_name(d),
        None => "none".to_string(),
    }
}

/// Each report of `text` (read as a file named `name`) as its source's
/// format ("error" for an error report) and its answer.
pub fn formats_and_answers(name: &str, text: &str) -> Vec<(String, String)> {
    analyze_text(name, text)
        .iter()
        .map(|r| {
            let format = r["source"]["format"].as_str().unwrap_or("error");
            (format.to_string(), answer(r))
        })
        .collect()
}
