//! The integration tests: one test binary (`cargo test --test integration`),
//! each `tests/NAME.rs` one module of it, sharing `tests/common/`. One
//! binary links the library and its dependencies once instead of once per
//! file, and builds the test programs of tests/programs/ once per run.
//!
//! Run one module with a filter: `cargo test --test integration capture::`.
//! CONTRIBUTING.md ("Tests") says how to add a module.
// On Linux every module is compiled, so an unused helper is a warning
// there. Elsewhere the Linux-only modules (`#![cfg(target_os = "linux")]`)
// are left out and the helpers only they use are unused.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

mod common;

mod artifacts;
mod attach_windows;
mod baseline;
mod blocking_waits;
mod capture;
mod capture_stops;
mod ci_recipe;
mod cli;
mod cores;
mod corpus;
mod corruption;
mod debuginfod;
mod docs_links;
mod formats;
mod fuzz_regressions;
mod github;
mod html;
mod json_schema;
mod layout;
mod linux_twins;
mod merge;
mod os_inputs;
mod output;
mod python_culprit;
mod python_stacks;
mod reference;
mod run_tree;
mod samples;
mod sarif;
mod signature;
mod signatures;
mod skip_policy;
mod symbol_index;
mod symbols_files;
mod symbols_servers;
mod symbols_stores;
mod text_corpus;
mod text_formats;
mod text_messages;
mod text_pastes;
mod text_traces;
mod text_windows;
mod text_words;
mod truncated;
mod twins;
mod unloaded_caller;
mod unwind;
mod vendor;
mod versions;
mod waits_windows;
mod workflow;

/// Cargo builds only this binary (`autotests = false` in Cargo.toml): a
/// file added to tests/ and not declared above would never run, and this
/// test says so.
#[test]
fn every_test_file_is_a_module_of_this_binary() {
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let main = std::fs::read_to_string(tests.join("main.rs")).unwrap();
    let declared: Vec<&str> = main
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&tests).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let is_module = path.extension().is_some_and(|e| e == "rs") && name != "main";
        // A folder with a main.rs is a test target of its own to cargo's
        // discovery, which is off here.
        if (is_module || path.join("main.rs").is_file()) && !declared.contains(&name) {
            missing.push(format!(
                "tests/{}",
                path.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "not modules of tests/main.rs, so never built or run: {missing:?} \
         (add `mod NAME;` there, see CONTRIBUTING.md, \"Tests\")"
    );
}
