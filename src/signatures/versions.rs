//! Has the version in the dump the fix? (issue 39). A rule's `[fixed]`
//! table names the component, the modules whose version is the
//! component's, the fix and the first release that carries it; the report
//! compares that release with the version the dump records for those
//! modules (a PE's version resource, an ELF library's version from its
//! file name, a Python interpreter's from its name) and says which side of
//! the fix the user is on, or why it cannot tell. Nothing is guessed: no
//! release, no version, or a version too coarse to decide is said as such.

use super::rule::Fixed;
use crate::model::{Report, VersionCheck, VersionVerdict};

/// `[fixed]`, checked: https links, a release made of numbers and named
/// with its source, module patterns that compile.
pub(crate) fn compile(
    spec: &super::schema::FixedSpec,
    problem: &mut dyn FnMut(&str, String),
) -> Option<super::rule::Fixed> {
    let https = |url: &str| url.starts_with("https://") && !url.contains(char::is_whitespace);
    let mut ok = true;
    if spec.component.trim().is_empty() {
        problem("fixed.component", "must not be empty".to_string());
        ok = false;
    }
    if !https(&spec.fix) {
        problem("fixed.fix", format!("{:?} is not an https URL", spec.fix));
        ok = false;
    }
    let release = match &spec.release {
        None => None,
        Some(text) => match numbers(text) {
            Some(numbers) => Some((numbers, text.clone())),
            None => {
                problem(
                    "fixed.release",
                    format!("{text:?} is not a version of dot-separated numbers"),
                );
                ok = false;
                None
            }
        },
    };
    match (&spec.release, &spec.source) {
        (Some(_), None) => {
            problem(
                "fixed.source",
                "a release needs the source that establishes it".to_string(),
            );
            ok = false;
        }
        (_, Some(source)) if !https(source) => {
            problem("fixed.source", format!("{source:?} is not an https URL"));
            ok = false;
        }
        _ => {}
    }
    if spec.release_digits == Some(0) {
        problem("fixed.release_digits", "must be at least 1".to_string());
        ok = false;
    }
    if spec.modules.is_empty() {
        problem(
            "fixed.modules",
            "name at least one module whose version is the component's".to_string(),
        );
        ok = false;
    }
    let mut modules = Vec::new();
    for (i, text) in spec.modules.iter().enumerate() {
        match crate::pattern::Pattern::new(text, crate::pattern::Case::Insensitive) {
            Ok(p) => modules.push(p),
            Err(e) => {
                problem(&format!("fixed.modules[{i}]"), e);
                ok = false;
            }
        }
    }
    ok.then(|| super::rule::Fixed {
        component: spec.component.clone(),
        module_names: spec.modules.clone(),
        modules,
        release_digits: spec.release_digits,
        fix: spec.fix.clone(),
        release,
        source: spec.source.clone(),
    })
}

/// The numbers of a version (`1.23.25.1021` -> 1, 23, 25, 1021; `3.11` ->
/// 3, 11). `None` unless it is only numbers and dots.
pub(crate) fn numbers(text: &str) -> Option<Vec<u64>> {
    let text = text.trim().trim_start_matches(['v', 'V']);
    if text.is_empty() {
        return None;
    }
    text.split('.').map(|part| part.parse().ok()).collect()
}

/// The version the dump gives a module: its recorded version, else the
/// one its name carries (`python3.11`, `libpython3.12.so.1.0`).
fn module_version(name: &str, recorded: Option<&str>) -> Option<String> {
    if let Some(version) = recorded.filter(|v| numbers(v).is_some()) {
        return Some(version.to_string());
    }
    let rest = name
        .strip_prefix("libpython")
        .or_else(|| name.strip_prefix("python"))?;
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let digits = digits.trim_end_matches('.');
    (digits.contains('.') && numbers(digits).is_some()).then(|| digits.to_string())
}

/// The check of `fixed` against the report's modules.
pub(crate) fn check(fixed: &Fixed, report: &Report) -> VersionCheck {
    let component = &fixed.component;
    let candidates: Vec<_> = report
        .modules
        .iter()
        .filter(|m| fixed.modules.iter().any(|p| p.matches(&m.name)))
        .collect();
    let versioned = candidates
        .iter()
        .find_map(|m| module_version(&m.name, m.version.as_deref()).map(|v| (m.name.clone(), v)));
    let fix = &fixed.fix;
    let release = fixed.release.as_ref().map(|(_, text)| text.clone());
    let mut out = VersionCheck {
        component: component.clone(),
        module: versioned
            .as_ref()
            .map(|(m, _)| m.clone())
            .or_else(|| candidates.first().map(|m| m.name.clone())),
        module_version: versioned.as_ref().map(|(_, v)| v.clone()),
        fixed_in: release.clone(),
        fix: fix.clone(),
        source: fixed.source.clone(),
        verdict: VersionVerdict::NoModule,
        summary: String::new(),
    };
    let Some(first) = candidates.first() else {
        out.summary = format!(
            "{component} is not among the dump's modules ({}): the version cannot be checked against the fix ({fix})",
            fixed.module_names.join(", ")
        );
        return out;
    };
    let Some((module, version)) = versioned else {
        out.verdict = VersionVerdict::NoVersion;
        out.summary = format!(
            "the dump records no version for {}: whether it has the fix ({fix}{}) cannot be told",
            first.name,
            release
                .as_deref()
                .map(|r| format!(", in {component} {r}"))
                .unwrap_or_default()
        );
        return out;
    };
    let Some((wanted, release)) = &fixed.release else {
        out.verdict = VersionVerdict::ReleaseUnknown;
        out.summary = format!(
            "{module} is {version}; no source establishes which {component} release first carries the fix ({fix})"
        );
        return out;
    };
    let have = numbers(&version).unwrap_or_default();
    let digits = fixed.release_digits.unwrap_or(wanted.len());
    let as_release = have
        .iter()
        .take(digits)
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".");
    // Compare on the numbers the module's version shares with releases.
    let at = |list: &[u64], i: usize| list.get(i).copied().unwrap_or(0);
    let order = (0..digits)
        .map(|i| at(&have, i).cmp(&at(wanted, i)))
        .find(|o| o.is_ne())
        .unwrap_or(std::cmp::Ordering::Equal);
    // Equal so far, but the release goes on with numbers the module's
    // version does not carry (a fix in 1.24.4, a DLL that says only 1.24).
    let finer = wanted.iter().skip(digits).any(|n| *n != 0);
    let shown = if as_release == version {
        version.clone()
    } else {
        format!("{version} ({component} {as_release})")
    };
    (out.verdict, out.summary) = match order {
        std::cmp::Ordering::Less => (
            VersionVerdict::PredatesFix,
            format!(
                "{module} {shown} predates the fix in {component} {release} ({fix}): upgrade to {release} or later"
            ),
        ),
        std::cmp::Ordering::Equal if finer => (
            VersionVerdict::Undecided,
            format!(
                "{module} {shown} does not say whether it is {component} {release} or earlier, which the fix ({fix}) first reached"
            ),
        ),
        _ => (
            VersionVerdict::HasFix,
            format!(
                "{module} {shown} already has the fix ({component} {release}, {fix}): look elsewhere"
            ),
        ),
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_numbers_only() {
        assert_eq!(numbers("1.23.25.1021"), Some(vec![1, 23, 25, 1021]));
        assert_eq!(numbers("v1.25.0"), Some(vec![1, 25, 0]));
        assert_eq!(numbers("1.25.0-rc1"), None);
        assert_eq!(numbers(""), None);
        assert_eq!(numbers("1..2"), None);
    }

    #[test]
    fn python_versions_come_from_the_interpreter_name() {
        assert_eq!(module_version("python3.11", None), Some("3.11".into()));
        assert_eq!(
            module_version("libpython3.12.so.1.0", None),
            Some("3.12".into())
        );
        assert_eq!(module_version("python3", None), None);
        assert_eq!(module_version("pythoncom311.dll", None), None);
        assert_eq!(
            module_version("onnxruntime.dll", Some("1.23.25.1021")),
            Some("1.23.25.1021".into())
        );
        assert_eq!(module_version("onnxruntime.dll", None), None);
    }
}
