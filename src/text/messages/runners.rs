//! Test runners' summaries and test lines: the shape of a test log (every
//! test passed, some failed, a test started and never ended).

use std::sync::LazyLock;

use regex_lite::Regex;

pub(super) enum Summary {
    /// Every test passed: how many, as the runner says it.
    Passed(String),
    Failed,
    /// A test started: its name.
    Running(String),
}

/// A test runner's summary or test line.
pub(super) fn test_summary(line: &str, i: usize, lines: &[Option<String>]) -> Option<Summary> {
    static PYTEST: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^=*\s*(\d+) passed\b([^=]*?)(?: in [\d.]+m?s(?: \([^)]*\))?)?\s*=*\s*$")
            .expect("pytest summary pattern")
    });
    static CTEST: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(\d+)% tests passed, (\d+) tests? failed out of (\d+)")
            .expect("ctest pattern")
    });
    static GTEST: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\[  PASSED  \] (\d+) tests?\.").expect("gtest pattern"));
    static RUN: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\[ RUN      \] (\S+)").expect("gtest run pattern"));
    static CATCH: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^All tests passed \((\d+) assertions? in (\d+) test cases?\)")
            .expect("Catch2 pattern")
    });
    static UNITTEST: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^Ran (\d+) tests? in [\d.]+s").expect("unittest pattern"));
    static CARGO: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed")
            .expect("cargo pattern")
    });
    static JEST: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^Tests:\s+(?:(\d+) failed, )?(?:\d+ \w+, )*(\d+) passed, (\d+) total")
            .expect("jest pattern")
    });
    static MOCHA: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(\d+) (passing|failing)\b").expect("mocha pattern"));
    let t = line.trim();
    if let Some(c) = PYTEST.captures(t) {
        let rest = &c[2];
        if rest.contains("failed") || rest.contains("error") {
            return Some(Summary::Failed);
        }
        return Some(Summary::Passed(format!("{} tests passed", &c[1])));
    }
    if t.contains(" failed") && t.starts_with('=') && t.contains(" passed") {
        return Some(Summary::Failed);
    }
    if let Some(c) = CTEST.captures(t) {
        return Some(if &c[2] == "0" {
            Summary::Passed(format!("{} tests passed", &c[3]))
        } else {
            Summary::Failed
        });
    }
    if let Some(c) = GTEST.captures(t) {
        return Some(Summary::Passed(format!("{} tests passed", &c[1])));
    }
    if t.starts_with("[  FAILED  ]") {
        return Some(Summary::Failed);
    }
    if let Some(c) = RUN.captures(t) {
        // Running until the failure: no end of it in the log after it.
        let name = &c[1];
        let ended = lines.iter().skip(i + 1).take(2000).flatten().any(|l| {
            let l = l.trim();
            (l.starts_with("[       OK ]") || l.starts_with("[  FAILED  ]")) && l.contains(name)
        });
        return (!ended).then(|| Summary::Running(name.to_string()));
    }
    if let Some(c) = CATCH.captures(t) {
        return Some(Summary::Passed(format!("all {} test cases passed", &c[2])));
    }
    if let Some(c) = UNITTEST.captures(t) {
        let verdict = lines
            .iter()
            .skip(i + 1)
            .take(3)
            .flatten()
            .map(|l| l.trim())
            .find(|l| !l.is_empty())?;
        if verdict == "OK" || verdict.starts_with("OK (") {
            return Some(Summary::Passed(format!("{} tests passed", &c[1])));
        }
        return verdict.starts_with("FAILED").then_some(Summary::Failed);
    }
    if let Some(c) = CARGO.captures(t) {
        return Some(if &c[1] == "ok" && &c[3] == "0" {
            Summary::Passed(format!("{} tests passed", &c[2]))
        } else {
            Summary::Failed
        });
    }
    if let Some(c) = JEST.captures(t) {
        return Some(match c.get(1) {
            Some(_) => Summary::Failed,
            None => Summary::Passed(format!("{} tests passed", &c[2])),
        });
    }
    if let Some(c) = MOCHA.captures(t) {
        return Some(match &c[2] {
            "failing" => Summary::Failed,
            _ => Summary::Passed(format!("{} tests passed", &c[1])),
        });
    }
    // TAP (node --test, tape): `# pass 171` ... `# fail 0`.
    if let Some(n) = t.strip_prefix("# fail ") {
        return Some(match n.trim() {
            "0" => {
                let passed = lines.iter().take(i).rev().take(6).flatten().find_map(|l| {
                    l.trim()
                        .strip_prefix("# pass ")
                        .map(|n| n.trim().to_string())
                });
                Summary::Passed(format!(
                    "{} tests passed",
                    passed.unwrap_or_else(|| "all".into())
                ))
            }
            _ => Summary::Failed,
        });
    }
    match t {
        "End Result: TEST PASSED" | "TEST PASSED" | "Test passed" | "Result = PASS" => {
            Some(Summary::Passed("the test passed".to_string()))
        }
        _ if t.starts_with("FAILED (failures=") || t.starts_with("FAILED (errors=") => {
            Some(Summary::Failed)
        }
        _ => None,
    }
}
