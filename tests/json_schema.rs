//! The JSON output's contract (#38): the JSON Schema derived from the
//! report types (`dumptriage::model::schema::json_schema`) is the committed
//! docs/json-schema.json, the binary's real `--format json` output on the
//! sample dumps, the text corpus and bad inputs validates against it, and
//! docs/json-schema.md documents exactly the fields (and enumeration values)
//! it has. `DUMPTRIAGE_BLESS=1 cargo test --test integration json_schema::`
//! rewrites docs/json-schema.json; the Markdown is written by hand, and the test
//! names each field it lacks or has too many.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use common::{bin, shared_dir};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn schema() -> Value {
    dumptriage::model::schema::json_schema()
}

#[test]
fn the_committed_schema_is_the_types() {
    let file = root().join("docs/json-schema.json");
    let made = serde_json::to_string_pretty(&schema()).unwrap() + "\n";
    if std::env::var_os("DUMPTRIAGE_BLESS").is_some() {
        std::fs::write(&file, &made).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        committed == made,
        "docs/json-schema.json differs from the report types (src/model/). Refresh it \
         with: DUMPTRIAGE_BLESS=1 cargo test --test integration json_schema::"
    );
}

/// The schema with every object closed (`additionalProperties: false`): a
/// field the output has and the schema lacks fails validation. The
/// published schema stays open, since new fields may be added.
fn strict(mut schema: Value) -> Value {
    fn close(object: &mut Value) {
        if let Some(map) = object.as_object_mut() {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
        }
    }
    close(&mut schema);
    if let Some(defs) = schema.get_mut("$defs").and_then(Value::as_object_mut) {
        defs.values_mut().for_each(close);
    }
    schema
}

struct Validator {
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

impl Validator {
    fn new(schema: Value) -> Validator {
        let mut schemas = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        compiler
            .add_resource("urn:dumptriage:report", schema)
            .unwrap();
        let index = compiler
            .compile("urn:dumptriage:report", &mut schemas)
            .unwrap_or_else(|e| panic!("the schema does not compile: {e:#}"));
        Validator { schemas, index }
    }

    fn check(&self, document: &Value) -> Result<(), String> {
        self.schemas
            .validate(document, self.index)
            .map_err(|e| format!("{e:#}"))
    }
}

/// `dumptriage analyze --format json ARGS`, parsed.
fn json_of(args: &[&std::ffi::OsStr]) -> Value {
    let out = bin()
        .args(["analyze", "--format", "json", "-q"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {out:?}"))
}

/// Real output: every sample dump (Windows and Linux, with their symbols),
/// every trace of the text corpus, a core file, and inputs that are not
/// dumps (error reports).
fn real_documents() -> Vec<(String, Value)> {
    let scratch = tempfile::tempdir().unwrap();
    let not_a_dump = scratch.path().join("notes.dmp");
    std::fs::write(&not_a_dump, [0u8, 1, 2, 3, 4, 5, 6, 7]).unwrap();
    let empty = scratch.path().join("empty.dmp");
    std::fs::write(&empty, b"").unwrap();
    let missing = scratch.path().join("missing.dmp");
    let samples = root().join("sample-dumps");
    let text = shared_dir().join("corpus/text/cases");
    let core = root().join("fuzz/regressions/read_core/seed-kernel-core-notes.core");
    let inputs: Vec<(&str, Vec<PathBuf>, bool)> = vec![
        ("sample dumps", vec![samples], false),
        ("text corpus", vec![text], true),
        (
            "core and bad inputs",
            vec![core, not_a_dump, empty, missing],
            false,
        ),
    ];
    inputs
        .into_iter()
        .map(|(name, paths, text)| {
            let mut args: Vec<&std::ffi::OsStr> = Vec::new();
            if text {
                args.push("--text".as_ref());
            }
            args.extend(paths.iter().map(|p| p.as_os_str()));
            (name.to_string(), json_of(&args))
        })
        .collect()
}

#[test]
fn real_output_validates_against_the_schema() {
    let validator = Validator::new(strict(schema()));
    let documents = real_documents();
    let mut reports = 0;
    let mut kinds = BTreeSet::new();
    for (name, document) in &documents {
        if let Err(error) = validator.check(document) {
            panic!("{name}: the output does not match the schema:\n{error}");
        }
        for report in document["reports"].as_array().unwrap() {
            reports += 1;
            kinds.insert(format!(
                "{} {}",
                report["status"].as_str().unwrap(),
                report["source"]["kind"].as_str().unwrap()
            ));
        }
    }
    // What was validated: dumps, text traces and errors, in numbers.
    assert!(reports > 90, "{reports} reports");
    for kind in ["ok minidump", "ok text", "error minidump"] {
        assert!(kinds.contains(kind), "no {kind} report among {kinds:?}");
    }
}

/// The validation can fail: a number where the schema says hex, a field
/// it does not have, or a field missing each make a real document invalid.
#[test]
fn the_validator_rejects_what_the_schema_forbids() {
    let validator = Validator::new(strict(schema()));
    let document = json_of(&[root().join("sample-dumps/dxc-after-unload.dmp").as_os_str()]);
    validator.check(&document).unwrap();
    let frame = "/reports/0/threads/0/frames/0";
    type Mutation = (&'static str, fn(&mut Value));
    let mutations: [Mutation; 4] = [
        ("a number for a hex string", |d| {
            d.pointer_mut("/reports/0/threads/0/frames/0/instruction")
                .map(|v| *v = Value::from(4096))
                .unwrap()
        }),
        ("upper-case hex", |d| {
            d.pointer_mut("/reports/0/threads/0/frames/0/instruction")
                .map(|v| *v = Value::from("0xABC"))
                .unwrap()
        }),
        ("an unknown field", |d| {
            d.pointer_mut("/reports/0/threads/0/frames/0")
                .and_then(Value::as_object_mut)
                .map(|f| f.insert("colour".into(), Value::from("red")))
                .unwrap();
        }),
        ("a missing field", |d| {
            d.pointer_mut("/reports/0/threads/0")
                .and_then(Value::as_object_mut)
                .map(|t| t.remove("walk"))
                .unwrap();
        }),
    ];
    assert!(document.pointer(frame).is_some());
    for (what, mutate) in mutations {
        let mut changed = document.clone();
        mutate(&mut changed);
        assert!(validator.check(&changed).is_err(), "{what} passed");
    }
}

/// `SummaryGroup` -> `summary group`: how docs/json-schema.md names a type.
fn words(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// The Markdown's field tables: section (its heading's words before any
/// parenthesis, lower case) -> field -> the row's text.
fn documented(markdown: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut sections: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut section = String::new();
    let mut in_table = false;
    for line in markdown.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            section = heading
                .split(" (")
                .next()
                .unwrap_or_default()
                .replace('`', "")
                .trim()
                .to_lowercase();
            in_table = false;
        } else if line.starts_with("| field |") {
            in_table = true;
            sections.entry(section.clone()).or_default();
        } else if !line.starts_with('|') {
            in_table = false;
        } else if in_table {
            let first = line.split('|').nth(1).unwrap_or_default().trim();
            if let Some(field) = first.strip_prefix('`').and_then(|f| f.strip_suffix('`')) {
                sections
                    .entry(section.clone())
                    .or_default()
                    .insert(field.to_string(), line.to_string());
            }
        }
    }
    sections
}

/// The string values a property can take, with the type that defines them
/// (through `$ref`, `anyOf` with null, array items and `oneOf`).
fn enum_values(schema: &Value, defs: &Value, out: &mut Vec<(String, String)>, via: &str) {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.trim_start_matches("#/$defs/");
        enum_values(&defs[name], defs, out, name);
    }
    for key in ["anyOf", "oneOf"] {
        for alternative in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            enum_values(alternative, defs, out, via);
        }
    }
    if let Some(items) = schema.get("items") {
        enum_values(items, defs, out, via);
    }
    let listed = schema
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for value in listed.chain(schema.get("const")) {
        if let Some(value) = value.as_str() {
            out.push((value.to_string(), via.to_string()));
        }
    }
}

/// What docs/json-schema.md lacks or has too many, one line each.
fn documentation_problems(schema: &Value, markdown: &str) -> Vec<String> {
    let defs = &schema["$defs"];
    let mut types: BTreeMap<String, (&str, &Value)> = BTreeMap::new();
    let title = schema["title"].as_str().unwrap();
    types.insert(words(title), (title, schema));
    for (name, def) in defs.as_object().unwrap() {
        if def.get("properties").is_some() {
            types.insert(words(name), (name, def));
        }
    }
    let docs = documented(markdown);
    let mut problems = Vec::new();
    for (section, (name, def)) in &types {
        let Some(rows) = docs.get(section) else {
            problems.push(format!(
                "no `## {section}` section with a field table for {name} (fields: {})",
                def["properties"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            continue;
        };
        for (field, property) in def["properties"].as_object().unwrap() {
            let Some(row) = rows.get(field) else {
                problems.push(format!(
                    "`## {section}`: field `{field}` of {name} is not documented"
                ));
                continue;
            };
            let mut values = Vec::new();
            enum_values(property, defs, &mut values, name);
            for (value, from) in values {
                if !row.contains(&format!("`{value}`")) && !row.contains(&format!("\"{value}\"")) {
                    problems.push(format!(
                        "`## {section}`, `{field}`: value \"{value}\" ({from}) is not documented"
                    ));
                }
            }
        }
        for field in rows.keys() {
            if def["properties"].get(field).is_none() {
                problems.push(format!(
                    "`## {section}`: documents `{field}`, which {name} does not have"
                ));
            }
        }
    }
    for section in docs.keys() {
        if !types.contains_key(section) {
            problems.push(format!(
                "`## {section}` has a field table, but the schema has no such type"
            ));
        }
    }
    problems
}

#[test]
fn the_markdown_documents_every_field_and_nothing_else() {
    let markdown = std::fs::read_to_string(root().join("docs/json-schema.md")).unwrap();
    let problems = documentation_problems(&schema(), &markdown);
    assert!(
        problems.is_empty(),
        "docs/json-schema.md and the report types (src/model/) disagree:\n{}",
        problems.join("\n")
    );
    // It cites files that exist.
    for cited in markdown.split('`').filter(|s| s.starts_with("src/")) {
        let path = cited.split([' ', ':']).next().unwrap();
        assert!(
            root().join(path).exists(),
            "docs/json-schema.md cites {path}"
        );
    }
}

/// The check names what is missing: a field, a value, a type.
#[test]
fn the_documentation_check_names_what_is_missing() {
    let schema = serde_json::json!({
        "title": "Output",
        "properties": { "reports": {"type": "array"}, "wait": {"$ref": "#/$defs/WaitKind"} },
        "$defs": {
            "WaitKind": {"type": "string", "enum": ["mutex", "futex"]},
            "SummaryGroup": {"properties": {"key": {"type": "string"}}}
        }
    });
    let markdown = "## Output (the top level)\n\n| field | type | meaning |\n| --- | --- | --- |\n\
                    | `wait` | string | `\"mutex\"` |\n| `extra` | string | |\n";
    let problems = documentation_problems(&schema, markdown);
    assert_eq!(
        problems,
        [
            "`## output`: field `reports` of Output is not documented",
            "`## output`, `wait`: value \"futex\" (WaitKind) is not documented",
            "`## output`: documents `extra`, which Output does not have",
            "no `## summary group` section with a field table for SummaryGroup (fields: key)",
        ]
    );
}
