//! The rules of tests/common/skip.rs (issue 27): under CI a test that
//! cannot run fails unless it is allowed to skip on that platform, with a
//! reason; outside CI it skips and says so in the skip log .ci/run reads.
//! Each case runs the test binary again as a child with its own
//! environment, so no variable of this process is changed.

use crate::common;

use common::skip::ALLOWED;

/// The child: skips as `DT_SKIP_ID` with a reason, then prints a line
/// that shows it went on (a skip returns; a refused one panics).
#[test]
#[ignore = "a child of the other tests of this file, run by skip_case"]
fn child_skip() {
    let id = std::env::var("DT_SKIP_ID").expect("run by skip_case with DT_SKIP_ID");
    common::skip::skip(&id, "the reason given");
    println!("RETURNED");
}

/// Runs `child_skip` as `id` with `CI` as given; its output, its status and
/// the skip log it left.
fn skip_case(id: &str, ci: Option<&str>) -> (bool, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("skips.txt");
    let mut cmd = common::this_binary_running("skip_policy::child_skip");
    cmd.env("DT_SKIP_ID", id).env("DUMPTRIAGE_SKIP_LOG", &log);
    match ci {
        Some(value) => cmd.env("CI", value),
        None => cmd.env_remove("CI"),
    };
    let out = cmd.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    (out.status.success(), text, logged)
}

#[test]
fn outside_ci_a_skip_returns_and_is_logged_with_its_reason() {
    for ci in [None, Some(""), Some("false"), Some("0")] {
        let (ok, text, logged) = skip_case("policy::not_listed", ci);
        assert!(ok, "CI={ci:?}: {text}");
        assert!(text.contains("RETURNED"), "CI={ci:?}: {text}");
        assert!(text.contains("skipped: policy::not_listed"), "{text}");
        assert_eq!(logged.lines().count(), 1, "{logged}");
        assert!(logged.contains("the reason given"), "{logged}");
    }
}

#[test]
fn under_ci_a_skip_not_allowed_here_fails() {
    for ci in ["true", "1"] {
        let (ok, text, logged) = skip_case("policy::not_listed", Some(ci));
        assert!(!ok, "CI={ci}: a skip under CI must fail: {text}");
        assert!(!text.contains("RETURNED"), "{text}");
        assert!(
            text.contains("the reason given"),
            "the failure says why: {text}"
        );
        assert!(logged.is_empty(), "a failure is no skip: {logged}");
    }
}

#[test]
fn under_ci_an_allowed_skip_returns_with_both_reasons() {
    let os = std::env::consts::OS;
    let Some((id, _, why)) = ALLOWED.iter().find(|(_, on, _)| *on == os) else {
        // Nothing may skip on this platform (Linux): every allowed entry
        // must then fail here, which the test above shows for one id.
        for (id, on, _) in ALLOWED {
            assert_ne!(*on, os);
            let (ok, text, _) = skip_case(id, Some("true"));
            assert!(!ok, "{id} is allowed on {on} only, not on {os}: {text}");
        }
        return;
    };
    let (ok, text, logged) = skip_case(id, Some("true"));
    assert!(ok, "{text}");
    assert!(text.contains("RETURNED"), "{text}");
    assert!(
        logged.contains("the reason given") && logged.contains(why),
        "{logged}"
    );
}

/// The list itself: Linux, where .ci/run installs everything, allows no
/// skip; every entry has a reason and is used by a test.
#[test]
fn the_allowed_list_is_short_and_every_entry_is_used() {
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let sources: String = std::fs::read_dir(&tests)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .filter(|e| e.file_name() != "skip_policy.rs")
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    for (id, os, why) in ALLOWED {
        assert!(["windows", "macos"].contains(os), "{id}: {os}");
        assert!(why.len() > 20, "{id} on {os}: say why");
        assert!(
            sources.contains(&format!("\"{id}\"")),
            "{id} is used by no test"
        );
    }
}
