//! How rules name things: module families (`family:NAME`, families.toml
//! beside this file) and function regular expressions that must name
//! whole identifiers. Function groups (`functions:NAME`) are crate-wide:
//! see `crate::functions`.

/// A module family of families.toml.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Family {
    pattern: String,
    /// Every spelling the family must match (checked by a unit test).
    #[allow(dead_code)]
    names: Vec<String>,
    /// Near misses it must not match.
    #[allow(dead_code)]
    not: Vec<String>,
}

/// The module families rules name as `family:NAME` (families.toml).
static FAMILIES: std::sync::LazyLock<std::collections::BTreeMap<String, Family>> =
    std::sync::LazyLock::new(|| {
        // Compiled into the binary (as JSON: build.rs) and checked by a
        // unit test.
        serde_json::from_str(include_str!(concat!(env!("OUT_DIR"), "/families.json")))
            .expect("src/signatures/families.toml is valid")
    });

/// A pattern as a rule writes it, with `family:NAME` replaced by the
/// family's pattern.
pub(super) fn resolve_family(source: &str) -> Result<&str, String> {
    let Some(name) = source.strip_prefix("family:") else {
        return Ok(source);
    };
    FAMILIES
        .get(name)
        .map(|f| f.pattern.as_str())
        .ok_or_else(|| {
            format!(
                "unknown module family {name:?} (known: {})",
                FAMILIES.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        })
}

/// A function's regular expression must name whole identifiers: it starts
/// at the start of the name or of a `::` component, so `probe` does not
/// match `ReflectionProbeRender` (a glob always matches the whole name).
pub(super) fn anchored(source: &str) -> Result<(), String> {
    let Some(expr) = source.strip_prefix("re:") else {
        return Ok(());
    };
    let expr = expr.strip_prefix("(?i)").unwrap_or(expr);
    if expr.starts_with('^') || expr.starts_with("(^|") {
        Ok(())
    } else {
        Err(format!(
            "the regular expression {source:?} is not anchored: begin it with `^` (the start of the name) or `(^|::)` (the start of a name component), so it matches whole identifiers, not substrings"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::{Case, Pattern};

    /// Every family matches each spelling it lists and none of its near
    /// misses.
    #[test]
    fn module_families_match_every_spelling() {
        assert!(FAMILIES.len() >= 10);
        for (name, family) in FAMILIES.iter() {
            let pattern = Pattern::new(&family.pattern, Case::Insensitive).unwrap();
            for spelling in &family.names {
                assert!(pattern.matches(spelling), "{name} must match {spelling}");
            }
            for miss in &family.not {
                assert!(!pattern.matches(miss), "{name} must not match {miss}");
            }
        }
        assert!(resolve_family("family:nope").is_err());
        assert_eq!(resolve_family("x.dll"), Ok("x.dll"));
    }

    #[test]
    fn function_regexes_must_name_whole_identifiers() {
        for good in [
            "re:^vkDestroyDevice$",
            "re:(^|::)(cudnnDestroy\\w*)$",
            "re:(?i)(^|::)wait_?idle$",
            "re:(?i)^fence",
            "vk*Destroy*",
            "functions:exit",
        ] {
            assert!(anchored(good).is_ok(), "{good}");
        }
        for bad in ["re:probe", "re:(?i)(fence|waitidle)", "re:GetDevice\\w*$"] {
            let err = anchored(bad).unwrap_err();
            assert!(err.contains("not anchored"), "{err}");
        }
    }
}
