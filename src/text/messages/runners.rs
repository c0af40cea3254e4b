//! Test runners' summaries and test lines: the shape of a test log (every
//! test passed, some failed, a test started and never ended). Each runner's
//! words are tested on a line's first characters before its pattern.

use std::sync::LazyLock;

use regex_lite::Regex;

pub(super) enum Summary {
    /// Every test passed: how many, as the runner says it.
    Passed(String),
    Failed,
    /// The last summary of a run in which some tests failed: what it says.
    Ended(String),
    /// A test started and did not end: which, in words (`test Pool.Drain`).
    Running(String),
}

macro_rules! pattern {
    ($name:ident, $expr:expr) => {
        static $name: LazyLock<Regex> = LazyLock::new(|| Regex::new($expr).expect($expr));
    };
}

pattern!(
    PYTEST,
    r"^=*\s*(\d+) passed\b([^=]*?)(?: in [\d.]+m?s(?: \([^)]*\))?)?\s*=*\s*$"
);
pattern!(PYTEST_FAILED, r"^=+ .*\b\d+ failed\b.* in [\d.]+m?s\b.*=+$");
pattern!(
    CTEST,
    r"^(\d+)% tests passed, (\d+) tests? failed out of (\d+)"
);
pattern!(GTEST, r"^\[  PASSED  \] (\d+) tests?\.");
pattern!(RUN, r"^\[ RUN      \] (\S+)");
pattern!(
    CATCH,
    r"^All tests passed \((\d+) assertions? in (\d+) test cases?\)"
);
pattern!(UNITTEST, r"^Ran (\d+) tests? in [\d.]+s");
pattern!(
    CARGO,
    r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed"
);
pattern!(
    JEST,
    r"^Tests:\s+(?:(\d+) failed, )?(?:\d+ \w+, )*(\d+) passed, (\d+) total"
);
pattern!(CARGO_RUNNING, r"^running (\d+) tests?$");
pattern!(MOCHA, r"^(\d+) (passing|failing)\b");

/// A test runner's summary or test line.
pub(super) fn test_summary(line: &str, i: usize, lines: &[Option<String>]) -> Option<Summary> {
    let t = line.trim();
    let first = t.bytes().next()?;
    let numeric = first.is_ascii_digit();
    if (first == b'=' || numeric) && t.contains(" passed") {
        if let Some(c) = PYTEST.captures(t) {
            let rest = &c[2];
            if rest.contains("failed") || rest.contains("error") {
                return Some(Summary::Failed);
            }
            return Some(Summary::Passed(format!("{} tests passed", &c[1])));
        }
        if t.starts_with('=') && t.contains(" failed") {
            // pytest's last line, with the session's time: the run ended.
            if PYTEST_FAILED.is_match(t) {
                return Some(ended());
            }
            return Some(Summary::Failed);
        }
    }
    if numeric && t.contains("% tests passed") {
        let c = CTEST.captures(t)?;
        return Some(if &c[2] == "0" {
            Summary::Passed(format!("{} tests passed", &c[3]))
        } else {
            ended()
        });
    }
    if numeric && (t.contains(" passing") || t.contains(" failing")) {
        let c = MOCHA.captures(t)?;
        return Some(match &c[2] {
            "failing" => Summary::Failed,
            _ => Summary::Passed(format!("{} tests passed", &c[1])),
        });
    }
    if first == b'[' {
        return gtest(t, i, lines);
    }
    if t.starts_with("All tests passed (") {
        let c = CATCH.captures(t)?;
        return Some(Summary::Passed(format!("all {} test cases passed", &c[2])));
    }
    if t.starts_with("Ran ") {
        let c = UNITTEST.captures(t)?;
        let verdict = first_after(lines, i, 3, |l| !l.is_empty())?;
        if verdict == "OK" || verdict.starts_with("OK (") {
            return Some(Summary::Passed(format!("{} tests passed", &c[1])));
        }
        return verdict.starts_with("FAILED").then(ended);
    }
    if t.starts_with("running ") {
        return cargo_binary(t, i, lines);
    }
    if t.starts_with("test result:") {
        let c = CARGO.captures(t)?;
        return Some(if &c[1] == "ok" && &c[3] == "0" {
            Summary::Passed(format!("{} tests passed", &c[2]))
        } else {
            ended()
        });
    }
    if t.starts_with("Tests:") {
        let c = JEST.captures(t)?;
        return Some(match c.get(1) {
            Some(_) => ended(),
            None => Summary::Passed(format!("{} tests passed", &c[2])),
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
            Some(ended())
        }
        _ => script_verdict(t),
    }
}

/// cargo's test binary starting its tests (`running 8 tests`), when its
/// summary does not follow before the next binary's start: the binary
/// failed while its tests ran (a crash at its exit would come after the
/// summary it prints).
fn cargo_binary(t: &str, i: usize, lines: &[Option<String>]) -> Option<Summary> {
    let c = CARGO_RUNNING.captures(t)?;
    let ended = first_after(lines, i, 200_000, |l| {
        l.starts_with("test result:") || CARGO_RUNNING.is_match(l)
    })
    .is_some_and(|l| l.starts_with("test result:"));
    (!ended).then(|| Summary::Running(format!("a test binary's {} tests", &c[1])))
}

/// A runner's last summary of a run some tests failed in.
fn ended() -> Summary {
    Summary::Ended("the run ended, some tests failed".to_string())
}

/// A test script's own verdict of its run: a bare `All tests passed!`, or
/// `PASS — name` / `PASS - name` with what it tested (automake's
/// `PASS: name` is one test of several, and is not).
fn script_verdict(t: &str) -> Option<Summary> {
    if matches!(
        t,
        "All tests passed" | "All tests passed." | "All tests passed!"
    ) {
        return Some(Summary::Passed("all tests passed".to_string()));
    }
    let rest = t
        .strip_prefix("PASS \u{2014} ")
        .or_else(|| t.strip_prefix("PASS \u{2013} "))
        .or_else(|| t.strip_prefix("PASS - "))?;
    (!rest.trim().is_empty()).then(|| Summary::Passed("the test passed".to_string()))
}

/// gtest's lines: the summary that every test passed, a failed test, and
/// a test that started and did not end before the log's next test marker
/// (the process failed while it ran).
fn gtest(t: &str, i: usize, lines: &[Option<String>]) -> Option<Summary> {
    if let Some(c) = GTEST.captures(t) {
        return Some(Summary::Passed(format!("{} tests passed", &c[1])));
    }
    if t.starts_with("[  FAILED  ]") {
        return Some(Summary::Failed);
    }
    let c = RUN.captures(t)?;
    let name = &c[1];
    // (gtest's next marker after a RUN: its end, or the next RUN.)
    let next = first_after(lines, i, 2000, |l| {
        l.starts_with("[       OK ]")
            || l.starts_with("[  FAILED  ]")
            || l.starts_with("[ RUN      ]")
    });
    let ended = next.is_some_and(|l| !l.starts_with("[ RUN") && l.contains(name));
    (!ended).then(|| Summary::Running(format!("test {name}")))
}

/// The first of the `reach` lines after line `i` (trimmed) that is
/// `wanted`: the runner's next word on a test or a run.
fn first_after(
    lines: &[Option<String>],
    i: usize,
    reach: usize,
    wanted: impl Fn(&str) -> bool,
) -> Option<&str> {
    lines
        .iter()
        .skip(i + 1)
        .take(reach)
        .flatten()
        .map(|l| l.trim())
        .find(|l| wanted(l))
}
