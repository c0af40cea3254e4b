//! Windows wait chains through the real binary, on the lock samples (real
//! Wine processes dumped by capture.exe, sample-dumps/README.md): what each
//! blocked thread waits for, who holds it, the cycle of a deadlock, an
//! owner that ended; and the poorer forms of the same dumps (Wine's raw
//! output without the kept memory, no system export tables), which must
//! say "unknown" and never name a wrong holder.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-dumps")
        .join(name)
}

/// The sample's JSON report, with the samples' symbols and the store of
/// Windows binaries (ntdll's export table names the wait functions).
fn report(dump: &Path, system_exports: bool) -> Value {
    let store = sample("store");
    let symbols = sample("symbols");
    let mut args = vec!["analyze", "--format", "json", "--symbols"];
    args.push(symbols.to_str().unwrap());
    if system_exports {
        args.extend(["--symbols", store.to_str().unwrap()]);
    }
    args.push(dump.to_str().unwrap());
    let out = common::run(&args);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    doc["reports"][0].clone()
}

fn thread<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no thread {name:?}"))
}

fn ids(report: &Value) -> Vec<u64> {
    report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_u64().unwrap())
        .collect()
}

/// Every holder a report names is a thread of the dump that records the
/// lock as its own: here, never a thread the wait does not lead to.
fn holders(report: &Value) -> Vec<(u64, u64)> {
    report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| Some((t["id"].as_u64()?, t["wait"]["holder"].as_u64()?)))
        .collect()
}

#[test]
fn a_deadlock_through_the_loader_lock_names_both_threads_and_both_locks() {
    let dump = sample("loader-lock-deadlock-at-exit.dmp");
    let report = report(&dump, true);
    let main = thread(&report, "render-main");
    let worker = thread(&report, "encoder-worker");
    let (main_id, worker_id) = (main["id"].as_u64().unwrap(), worker["id"].as_u64().unwrap());
    // The exiting thread (FreeLibrary in the atexit handler) waits for the
    // loader lock, which the ending worker holds in DLL_THREAD_DETACH...
    assert_eq!(main["wait"]["kind"], "loader-lock", "{}", main["wait"]);
    assert_eq!(main["wait"]["holder"], worker_id);
    // Wine's NtWaitForAlertByThreadId under RtlEnterCriticalSection: the
    // calls show a lock wait (issue 39).
    assert_eq!(main["blocked"]["kind"], "lock", "{}", main["blocked"]);
    assert_eq!(worker["blocked"]["kind"], "lock", "{}", worker["blocked"]);
    assert!(main["wait"]["found"]
        .as_str()
        .unwrap()
        .contains("debug record checked"));
    // ...and the worker waits for the log lock the exiting thread holds,
    // a global of applog.dll; the loader lock is ntdll's.
    assert_eq!(worker["wait"]["kind"], "critical-section");
    assert_eq!(worker["wait"]["holder"], main_id);
    assert!(worker["wait"]["in_module"]
        .as_str()
        .unwrap()
        .starts_with("applog.dll+0x"));
    assert!(main["wait"]["in_module"]
        .as_str()
        .unwrap()
        .starts_with("ntdll.dll+0x"));
    let mut cycle: Vec<u64> = report["exit_phase"]["deadlock"]
        .as_array()
        .expect("a deadlock")
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    cycle.sort();
    let mut both = vec![main_id, worker_id];
    both.sort();
    assert_eq!(cycle, both);
    let diagnoses = common::diagnosis_names(&report);
    assert!(diagnoses.iter().any(|d| d == "deadlock"), "{diagnoses:?}");

    // The text says it as a person reads it.
    let out = common::run(&[
        "analyze",
        "--symbols",
        sample("symbols").to_str().unwrap(),
        "--symbols",
        sample("store").to_str().unwrap(),
        dump.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Deadlock: each waits for the next"), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("waits for the loader lock 0x"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains(&format!(
            "held by thread {worker_id} \"encoder-worker\" (blocked in"
        )),
        "{line}"
    );
}

#[test]
fn a_critical_section_whose_owner_ended_is_said_and_no_holder_is_invented() {
    let report = report(&sample("critical-section-owner-gone-at-exit.dmp"), true);
    let main = thread(&report, "queue-main");
    let wait = &main["wait"];
    assert_eq!(wait["kind"], "critical-section", "{wait}");
    assert!(wait["holder"].is_null());
    let gone = wait["gone_owner"].as_u64().expect("the recorded owner");
    assert!(
        !ids(&report).contains(&gone),
        "the owner is not in the dump"
    );
    assert!(wait["note"].as_str().unwrap().contains("ended"), "{wait}");
    let evidence = report["diagnoses"][0]["evidence"].to_string();
    assert!(
        evidence.contains(&format!("whose owner, thread {gone}, ended")),
        "{evidence}"
    );
}

#[test]
fn a_thread_starting_under_a_dllmain_waits_for_the_loader_lock_its_caller_holds() {
    let report = report(&sample("loader-lock-at-startup.dmp"), true);
    let main = thread(&report, "plugin-host-main");
    let main_id = main["id"].as_u64().unwrap();
    // DllMain waits on the new thread's handle: which object, the dump
    // does not say, and the report does not guess.
    assert_eq!(main["wait"]["kind"], "handle", "{}", main["wait"]);
    assert!(main["wait"]["holder"].is_null());
    let starting: Vec<&Value> = report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["wait"]["kind"] == "loader-lock")
        .collect();
    assert_eq!(starting.len(), 1, "{}", report["threads"]);
    assert_eq!(starting[0]["wait"]["holder"], main_id);
    // Start-up, not exit, and no cycle the dump proves: no answer.
    assert_eq!(report["diagnoses"], serde_json::json!([]));
}

#[test]
fn a_dllmain_waiting_for_its_thread_holds_the_loader_lock_that_thread_needs() {
    let report = report(&sample("dllmain-waits-for-thread-at-exit.dmp"), true);
    let main = thread(&report, "media-main");
    let decoder = thread(&report, "codec-decoder");
    // The ending decoder thread waits for the loader lock, which the
    // exiting thread holds (FreeLibrary running the plugin's DllMain)...
    assert_eq!(
        decoder["wait"]["kind"], "loader-lock",
        "{}",
        decoder["wait"]
    );
    assert_eq!(decoder["wait"]["holder"], main["id"]);
    // ...which waits on a handle the dump cannot resolve: no cycle is
    // claimed, and the holder is named with what it is blocked in.
    assert_eq!(main["wait"]["kind"], "handle");
    assert!(main["wait"]["holder"].is_null());
    // WaitForSingleObject does not say what it waits for: no kind.
    assert!(main["blocked"]["kind"].is_null(), "{}", main["blocked"]);
    assert_eq!(decoder["blocked"]["kind"], "lock");
    assert!(report["exit_phase"]["deadlock"].is_null());
    let evidence = report["diagnoses"][0]["evidence"].to_string();
    assert!(
        evidence.contains(&format!(
            "waiting for the loader lock held by thread {}",
            main["id"]
        )),
        "{evidence}"
    );
    let names = common::diagnosis_names(&report);
    assert!(
        names.iter().any(|n| n == "loader-lock-at-exit"),
        "{names:?}"
    );
}

#[test]
fn poorer_forms_of_the_lock_samples_say_unknown_and_never_name_a_wrong_holder() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "loader-lock-deadlock-at-exit",
        "critical-section-owner-gone-at-exit",
        "loader-lock-at-startup",
        "dllmain-waits-for-thread-at-exit",
    ] {
        // Wine's own output: stacks only, none of the kept memory.
        let raw = dir.path().join(format!("{name}.dmp"));
        std::fs::copy(sample("raw").join(format!("{name}.wine.mdmp.raw")), &raw).unwrap();
        let full = report(&sample(&format!("{name}.dmp")), true);
        let truth = holders(&full);
        for (form, report) in [
            ("raw", report(&raw, true)),
            (
                "no system export tables",
                report(&sample(&format!("{name}.dmp")), false),
            ),
        ] {
            for (waiter, holder) in holders(&report) {
                assert!(
                    truth.contains(&(waiter, holder)),
                    "{name} ({form}): thread {waiter} said to wait for thread {holder}"
                );
            }
            for thread in report["threads"].as_array().unwrap() {
                assert!(
                    thread["wait"]["gone_owner"].is_null() || form != "raw",
                    "{name} ({form}): an owner that ended, without the section's memory: {}",
                    thread["wait"]
                );
            }
        }
        // Without the kept memory the waits are still recognised, their
        // holders unknown.
        let raw_report = report(&raw, true);
        assert!(
            holders(&raw_report).is_empty(),
            "{name}: {}",
            raw_report["threads"]
        );
    }
}
