//! The JSON Schema of `--format json`, derived from the report types
//! themselves (schemars reads the same serde attributes the output is
//! written with), so it cannot drift from the output. docs/json-schema.md
//! explains each field; tests/json_schema.rs checks both against the real
//! output of the binary.

use super::Output;

/// The schema (JSON Schema 2020-12) of the document `--format json`
/// prints. Fields absent from it may be added in later versions without
/// a new `schema_version` (docs/json-schema.md, "Stability").
pub fn json_schema() -> serde_json::Value {
    // The schema of what is written, not read: a field serde skips when
    // empty (`skip_serializing_if`) is optional, every other is present.
    schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<Output<'static>>()
        .to_value()
}
