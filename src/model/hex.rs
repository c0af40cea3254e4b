//! Addresses, offsets and codes are numbers in the model; the JSON spells
//! them as hex strings, as the text does (docs/json-schema.md). These are
//! the serializers every report type uses for them.

use serde::{Deserialize, Deserializer, Serializer};

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

// Reading them back (`dumptriage merge` reads the JSON reports of other
// runs): the same spellings, refused with the field's error otherwise.

fn parse_hex<E: serde::de::Error>(text: &str) -> Result<u64, E> {
    let digits = text
        .strip_prefix("0x")
        .ok_or_else(|| E::custom(format!("{text:?} is not 0x-prefixed hexadecimal")))?;
    u64::from_str_radix(digits, 16).map_err(|e| E::custom(format!("{text:?}: {e}")))
}

pub(super) fn de_hex_u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    parse_hex(&String::deserialize(d)?)
}

pub(super) fn de_hex_u32<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let value = parse_hex::<D::Error>(&String::deserialize(d)?)?;
    u32::try_from(value).map_err(serde::de::Error::custom)
}

pub(super) fn de_hex_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
    Vec::<String>::deserialize(d)?
        .iter()
        .map(|s| parse_hex(s))
        .collect()
}

pub(super) fn de_hex_option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Option::<String>::deserialize(d)?
        .map(|s| parse_hex(&s))
        .transpose()
}

/// Registers in the document's order (the CPU's), as written.
pub(super) fn de_register_list<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Vec<(String, u64)>, D::Error> {
    struct Registers;
    impl<'de> serde::de::Visitor<'de> for Registers {
        type Value = Vec<(String, u64)>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object of registers")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some((name, value)) = map.next_entry::<String, String>()? {
                out.push((name, parse_hex(&value)?));
            }
            Ok(out)
        }
    }
    d.deserialize_map(Registers)
}
