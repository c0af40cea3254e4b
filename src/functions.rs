//! Named function groups (`functions.toml` beside this file): lists of
//! function names written once and used as `functions:NAME` by the
//! exit-phase tables and by rules.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use serde::Deserialize;

use crate::pattern::{Case, Compile, Pattern};

/// What names a group as a pattern source: `functions:NAME`.
pub(crate) const PREFIX: &str = "functions:";

/// A group as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Group {
    pub(crate) about: String,
    /// Its functions run only while the process exits or a module is
    /// unloaded.
    #[serde(default)]
    pub(crate) exit_only: bool,
    pub(crate) functions: Vec<String>,
    /// Names the group's patterns would take that are another group's
    /// (a DLL entry point has a TLS callback's parameters): where the
    /// group is used by name, they do not match. A group with exceptions
    /// is included in no other group (a test checks it).
    #[serde(default)]
    except: Vec<String>,
    /// Names the group must match (checked by a unit test).
    #[allow(dead_code)]
    names: Vec<String>,
    /// Near misses it must not match.
    #[allow(dead_code)]
    not: Vec<String>,
}

/// functions.toml, compiled into the binary as JSON (build.rs) and checked
/// by unit tests.
pub(crate) static GROUPS: LazyLock<BTreeMap<String, Group>> = LazyLock::new(|| {
    serde_json::from_str(include_str!(concat!(env!("OUT_DIR"), "/functions.json")))
        .expect("src/functions.toml is valid")
});

/// Every group's patterns and exceptions, compiled once on first use.
type Compiled = (Arc<[Pattern]>, Arc<[Pattern]>);

static COMPILED: LazyLock<BTreeMap<String, Compiled>> = LazyLock::new(|| {
    let compile = |items: &[String]| -> Option<Arc<[Pattern]>> {
        let patterns: Vec<Pattern> = expand(items)
            .ok()?
            .iter()
            .filter_map(|s| Pattern::compile(s, Case::Sensitive, Compile::OnFirstUse).ok())
            .collect();
        Some(patterns.into())
    };
    GROUPS
        .iter()
        .filter_map(|(name, group)| {
            let patterns = compile(&[format!("{PREFIX}{name}")])?;
            let except = compile(&group.except)?;
            Some((name.clone(), (patterns, except)))
        })
        .collect()
});

/// The entries of a list with every `functions:NAME` replaced by the
/// group's own entries, recursively, each once, in order.
pub(crate) fn expand(items: &[String]) -> Result<Vec<String>, String> {
    expand_in(&GROUPS, items)
}

fn expand_in(groups: &BTreeMap<String, Group>, items: &[String]) -> Result<Vec<String>, String> {
    fn walk(
        groups: &BTreeMap<String, Group>,
        items: &[String],
        trail: &mut Vec<String>,
        out: &mut Vec<String>,
    ) -> Result<(), String> {
        for item in items {
            let Some(name) = item.strip_prefix(PREFIX) else {
                if !out.contains(item) {
                    out.push(item.clone());
                }
                continue;
            };
            if trail.iter().any(|t| t == name) {
                return Err(format!(
                    "function group {name:?} includes itself ({} -> {name})",
                    trail.join(" -> ")
                ));
            }
            let group = groups.get(name).ok_or_else(|| unknown(name))?;
            trail.push(name.to_string());
            walk(groups, &group.functions, trail, out)?;
            trail.pop();
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(groups, items, &mut Vec::new(), &mut out)?;
    Ok(out)
}

/// The pattern a rule writes as `functions:NAME`, or `None` for any other
/// pattern source.
pub(crate) fn resolve(source: &str) -> Result<Option<Pattern>, String> {
    let Some(name) = source.strip_prefix(PREFIX) else {
        return Ok(None);
    };
    COMPILED
        .get(name)
        .map(|(patterns, except)| Some(Pattern::any_of(source, patterns.clone(), except.clone())))
        .ok_or_else(|| unknown(name))
}

fn unknown(name: &str) -> String {
    format!(
        "unknown function group {name:?} (known: {})",
        GROUPS.keys().cloned().collect::<Vec<_>>().join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bare_name;

    #[test]
    fn every_group_resolves_and_matches_what_it_lists() {
        for (name, group) in GROUPS.iter() {
            assert!(!group.about.trim().is_empty(), "{name}: about");
            let entries = expand(&[format!("{PREFIX}{name}")]).unwrap();
            for entry in &entries {
                Pattern::new(entry, Case::Sensitive).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
            let pattern = resolve(&format!("{PREFIX}{name}")).unwrap().unwrap();
            let hit = |n: &str| pattern.matches(n) || pattern.matches(bare_name(n));
            for spelling in &group.names {
                assert!(hit(spelling), "{name} must match {spelling:?}");
            }
            for miss in &group.not {
                assert!(!hit(miss), "{name} must not match {miss:?}");
            }
        }
        // A group with exceptions keeps them only where it is used by name.
        for (name, _) in GROUPS.iter().filter(|(_, g)| !g.except.is_empty()) {
            let included = format!("{PREFIX}{name}");
            for (other, g) in GROUPS.iter() {
                assert!(!g.functions.contains(&included), "{other} includes {name}");
            }
        }
        assert!(resolve("functions:nope").is_err());
        assert!(resolve("exit").unwrap().is_none());
    }

    /// A group that includes itself is refused, not expanded forever.
    #[test]
    fn cycles_are_refused() {
        let group = |functions: &[&str]| Group {
            about: "x".into(),
            exit_only: false,
            functions: functions.iter().map(|s| s.to_string()).collect(),
            except: Vec::new(),
            names: Vec::new(),
            not: Vec::new(),
        };
        let groups: BTreeMap<String, Group> = [
            ("a".to_string(), group(&["f", "functions:b"])),
            ("b".to_string(), group(&["g", "functions:a"])),
            ("c".to_string(), group(&["f", "functions:d", "h"])),
            ("d".to_string(), group(&["f", "g"])),
        ]
        .into_iter()
        .collect();
        let err = expand_in(&groups, &["functions:a".to_string()]).unwrap_err();
        assert!(err.contains("includes itself (a -> b -> a)"), "{err}");
        let flat = expand_in(&groups, &["functions:c".to_string()]).unwrap();
        assert_eq!(flat, ["f", "g", "h"]);
        let err = expand_in(&groups, &["functions:nope".to_string()]).unwrap_err();
        assert!(err.contains("unknown function group"), "{err}");
    }
}
