//! Fuzz target `read_artifact`: see fuzz/bodies.rs.
#![no_main]

#[path = "../bodies.rs"]
mod bodies;

libfuzzer_sys::fuzz_target!(init: bodies::keep_caught_panics(), |data: &[u8]| {
    bodies::fuzz_one("read_artifact", data)
});
