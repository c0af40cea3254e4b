//! Addresses, offsets and codes are numbers in the model; the JSON spells
//! them as hex strings, as the text does (docs/json-schema.md). These are
//! the serializers every report type uses for them.

use serde::Serializer;

pub(super) fn hex_u64<S: Serializer>(value: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&format_args!("{value:#x}"))
}

pub(super) fn hex_u32<S: Serializer>(value: &u32, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&format_args!("{value:#x}"))
}

pub(super) fn hex_list<S: Serializer>(values: &[u64], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(values.iter().map(|v| format!("{v:#x}")))
}

pub(super) fn hex_option<S: Serializer>(value: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => hex_u64(value, s),
        None => s.serialize_none(),
    }
}

/// Registers as a JSON object in the CPU's order: `{"rip": "0x...", ...}`.
pub(super) fn register_list<S: Serializer>(
    values: &[(String, u64)],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(values.iter().map(|(name, v)| (name, format!("{v:#x}"))))
}

/// What the serializers above write, for the JSON Schema
/// (`#[schemars(with = "Hex")]`): lowercase hexadecimal with `0x`.
pub(super) struct Hex;

impl schemars::JsonSchema for Hex {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Hex".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A number (address, offset or code) in lowercase hexadecimal with a 0x prefix.",
            "type": "string",
            "pattern": "^0x[0-9a-f]+$"
        })
    }
}
