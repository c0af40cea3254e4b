//! Embeds every rule file of signatures/ in the binary, so the tool works
//! from any folder, and turns the TOML data files the binary reads at every
//! start (the rules, the exit-phase frame tables, the module families, the
//! function groups) into JSON.
//!
//! Why JSON: parsing TOML is the slow part of a start. Measured with
//! callgrind on `dumptriage signatures list`, toml_edit took 32M of 65M
//! instructions for the 24 rule files (136 kB); serde_json reads the same
//! content, deserialized through the same serde types and the same checks,
//! in a small fraction of that. The TOML text is still embedded: it is what
//! `signatures show` prints and what problems in a rule refer to.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let dir = root.join("signatures");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("signatures/ folder")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut code = String::from(
        "/// (file name, TOML text, the same content without its examples as\n\
         /// JSON, or \"\" when the TOML does not parse: then the rule loader\n\
         /// reports the TOML error) of every built-in rule file.\n\
         pub(crate) const BUILTIN: &[(&str, &str, &str)] = &[\n",
    );
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy();
        // The examples are half the text and only `signatures lint` and
        // `signatures test` read them: those parse the TOML.
        let json = to_value(path)
            .map(|mut rule| {
                if let Some(table) = rule.as_object_mut() {
                    table.remove("examples");
                }
                rule.to_string()
            })
            .unwrap_or_default();
        let json_path = out.join(format!("{name}.json"));
        std::fs::write(&json_path, json).expect("write JSON");
        writeln!(
            code,
            "    ({name:?}, include_str!({:?}), include_str!({:?})),",
            path.display().to_string(),
            json_path.display().to_string(),
        )
        .unwrap();
    }
    code.push_str("];\n");
    std::fs::write(out.join("builtin_signatures.rs"), code).expect("write rule table");

    // Tables compiled into the binary whose validity a unit test checks:
    // a broken one fails the build here already.
    for (source, target) in [
        ("src/exit_phase/frames.toml", "frames.json"),
        ("src/signatures/families.toml", "families.json"),
        ("src/functions.toml", "functions.json"),
        ("src/signature.toml", "signature.json"),
    ] {
        let path = root.join(source);
        let json = to_value(&path).unwrap_or_else(|e| panic!("{source}: {e}"));
        std::fs::write(out.join(target), json.to_string()).expect("write JSON");
    }
}

/// A TOML file's content as a JSON value.
fn to_value(path: &Path) -> Result<serde_json::Value, String> {
    println!("cargo:rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    toml::from_str(&text).map_err(|e| e.to_string())
}
