//! `--format sarif` (issue 40) through the real binary, validated against
//! the official SARIF 2.1.0 schema (../shared/data/sarif/, JSON Schema
//! draft-04, formats checked): one result per failed dump, its rule with
//! help, the blamed thread as a stack and a code flow, the crash signature
//! as the partial fingerprint, and the baseline's state and issue.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

fn validator() -> jsonschema::Validator {
    let path = common::shared_dir().join("data/sarif/sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    jsonschema::draft4::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap()
}

fn validate(sarif: &Value) {
    let validator = validator();
    let errors: Vec<String> = validator
        .iter_errors(sarif)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps")
}

/// One SARIF result against the JSON report of its dump: its rule, its
/// fingerprint, the blamed thread whole as a stack and a code flow, and its
/// baseline state.
fn check_result(result: &Value, report: &Value, rules: &[Value]) {
    let index = result["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(rules[index]["id"], result["ruleId"]);
    let want = report["diagnoses"][0]["signature"]
        .as_str()
        .unwrap_or("unexplained-crash");
    assert_eq!(result["ruleId"], want, "{}", report["path"]);
    assert_eq!(
        result["partialFingerprints"]["crashSignature/v2"],
        report["crash_signature"]
    );
    assert_eq!(result["properties"]["dump"], report["path"]);
    // The blamed thread, whole, as a stack and as a code flow.
    let thread_id = report["diagnoses"][0]["thread_id"]
        .as_u64()
        .or_else(|| report["exception"]["thread_id"].as_u64())
        .unwrap();
    let thread = report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == thread_id)
        .unwrap();
    let frames = thread["frames"].as_array().unwrap().len();
    assert_eq!(
        result["stacks"][0]["frames"].as_array().unwrap().len(),
        frames
    );
    let flow = result["codeFlows"][0]["threadFlows"][0]["locations"]
        .as_array()
        .unwrap();
    assert_eq!(flow.len(), frames);
    // The outermost call first.
    if let (Some(first), Some(last)) = (
        flow.first()
            .and_then(|l| l["location"]["logicalLocations"][0]["fullyQualifiedName"].as_str()),
        thread["frames"]
            .as_array()
            .unwrap()
            .last()
            .and_then(|f| f["function"].as_str()),
    ) {
        assert_eq!(first, last);
    }
    let known = report["baseline"]["known"] == true;
    assert_eq!(
        result["baselineState"],
        if known { "unchanged" } else { "new" }
    );
    if known {
        assert_eq!(
            result["workItemUris"][0],
            "https://github.com/example/app/issues/9"
        );
        assert_eq!(result["level"], "warning");
    }
}

#[test]
fn sarif_of_the_samples_is_valid_and_says_what_json_says() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("not a dump #1.dmp");
    std::fs::write(&junk, b"MDMP and then nothing").unwrap();
    let baseline = dir.path().join("baseline.toml");
    std::fs::write(
        &baseline,
        "crash_signature_version = 2\n[[failure]]\nsignature = \"[mutex wait] | flush_log\"\n\
         issue = \"https://github.com/example/app/issues/9\"\n",
    )
    .unwrap();
    let run = |format: &str| {
        let out = common::bin()
            .args(["analyze", "--format", format, "--baseline"])
            .arg(&baseline)
            .arg(samples())
            .arg(&junk)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "the junk input is unreadable");
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let sarif = run("sarif");
    let json = run("json");
    validate(&sarif);

    assert_eq!(sarif["version"], "2.1.0");
    let run0 = &sarif["runs"][0];
    let rules = run0["tool"]["driver"]["rules"].as_array().unwrap();
    let results = run0["results"].as_array().unwrap();
    let reports = json["reports"].as_array().unwrap();
    let failed: Vec<&Value> = reports
        .iter()
        .filter(|r| r["status"] == "ok" && !r["baseline"].is_null())
        .collect();
    assert_eq!(results.len(), failed.len(), "one result per failed dump");
    assert!(results.len() >= 30, "{}", results.len());
    // Rules: each once, each with its help.
    let mut ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), rules.len());
    for rule in rules {
        assert!(
            rule["help"]["text"].as_str().unwrap().len() > 20,
            "{rule:#}"
        );
        assert!(!rule["shortDescription"]["text"]
            .as_str()
            .unwrap()
            .is_empty());
    }
    for (result, report) in results.iter().zip(&failed) {
        check_result(result, report, rules);
    }
    // The unreadable input: an error notification, its name a valid URI.
    let notes = run0["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    assert_eq!(run0["invocations"][0]["executionSuccessful"], false);
    assert_eq!(notes.len(), 1);
    let uri = notes[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .unwrap();
    assert!(uri.ends_with("/not%20a%20dump%20%231.dmp"), "{uri}");
}

/// A result the schema must refuse is refused: the validator is really at
/// work on these documents.
#[test]
fn the_validator_refuses_broken_sarif() {
    let out = common::bin()
        .args(["analyze", "--format", "sarif"])
        .arg(samples().join("linux/abort-during-exit-linux.dmp"))
        .output()
        .unwrap();
    let mut sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    validate(&sarif);
    sarif["runs"][0]["results"][0]["level"] = Value::from("fatal");
    assert!(!validator().is_valid(&sarif));
    sarif["runs"][0]["results"][0]["level"] = Value::from("error");
    validate(&sarif);
    sarif["$schema"] = Value::from("not a URI");
    assert!(!validator().is_valid(&sarif), "formats are checked");
}
