//! Bad input never panics, hangs or balloons: 1,200 deterministic corruptions
//! of real dumps (bit flips, truncations, zeroed ranges, absurd counts, sizes
//! and offsets) each give a report or one clear line of error, at a cost of
//! the same order as the intact dump's (CPU time, measured in the same run)
//! and in bounded memory.
//!
//! The cases run in a process of their own (this test binary again, with
//! only them), so the process's peak memory (VmHWM) measures them alone.

use crate::common;
use crate::common::cpu;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use dumptriage::dump::Analyzer;
use dumptriage::model::Status;
use dumptriage::signatures::Database;
use dumptriage::symbols::SymbolConfig;

const CASES_PER_SEED: usize = 150;
/// How many times the intact dump's CPU time one corruption of it may cost:
/// a count or size taken at its word would cost thousands of times.
const COST_FACTOR: u32 = 25;
const PEAK_MEMORY_LIMIT_KB: u64 = 400 * 1024;

/// Real dumps of every flavour the corpus has: Windows x86 and amd64 (with
/// thread names, Crashpad annotations, CET xsave), Linux, macOS with inlines.
const SEEDS: [&str; 8] = [
    "breakpad/minidump2.dmp",
    "breakpad/thread_name_list.dmp",
    "breakpad/linux_inline.dmp",
    "breakpad/tiny-exe-with-cet-xsave.dmp",
    "rust-minidump/linux-mini.dmp",
    "rust-minidump/pipeline-inlines-macos-segv.dmp",
    "rust-minidump/simple-crashpad.dmp",
    "rust-minidump/invalid-parameter.dmp",
];

/// splitmix64: a fixed seed gives the same corruptions on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn put_u32(data: &mut [u8], at: usize, value: u32) {
    if let Some(slot) = data.get_mut(at..at + 4) {
        slot.copy_from_slice(&value.to_le_bytes());
    }
}

fn get_u32(data: &[u8], at: usize) -> u32 {
    data.get(at..at + 4)
        .map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap()))
}

/// Offsets of the stream directory entries: (entry offset, stream rva).
fn directory(data: &[u8]) -> Vec<(usize, usize)> {
    let count = get_u32(data, 8) as usize;
    let rva = get_u32(data, 12) as usize;
    (0..count.min(64))
        .map(|i| rva + 12 * i)
        .filter(|&e| e + 12 <= data.len())
        .map(|e| (e, get_u32(data, e + 8) as usize))
        .collect()
}

const ABSURD: [u32; 5] = [0xffff_ffff, 0x7fff_ffff, 0x1000_0000, 0x0100_0000, 0xffff];

/// One corruption of `data`, chosen by `kind`; returns what was done.
fn corrupt(data: &mut Vec<u8>, kind: usize, rng: &mut Rng) -> String {
    let len = data.len();
    let streams = directory(data);
    match kind {
        0 => {
            let flips = 1 + rng.below(16);
            for _ in 0..flips {
                let at = rng.below(len);
                data[at] ^= 1 << rng.below(8);
            }
            format!("{flips} bit flips")
        }
        1 => {
            let keep = rng.below(len);
            data.truncate(keep);
            format!("truncated to {keep} bytes")
        }
        2 => {
            let at = rng.below(len);
            let n = 1 + rng.below(4096);
            let end = (at + n).min(len);
            data[at..end].fill(0);
            format!("zeroed {at}..{end}")
        }
        3 => {
            // Absurd element count at the start of a stream (list streams begin with it).
            let Some(&(_, rva)) = streams.get(rng.below(streams.len())) else {
                return "no streams".into();
            };
            let value = ABSURD[rng.below(ABSURD.len())];
            put_u32(data, rva, value);
            format!("count {value:#x} at stream {rva:#x}")
        }
        4 => {
            // Absurd stream size in the directory.
            let Some(&(entry, _)) = streams.get(rng.below(streams.len())) else {
                return "no streams".into();
            };
            let value = ABSURD[rng.below(ABSURD.len())];
            put_u32(data, entry + 4, value);
            format!("stream size {value:#x} at entry {entry:#x}")
        }
        5 => {
            // Stream offset pointing elsewhere, possibly past the end.
            let Some(&(entry, _)) = streams.get(rng.below(streams.len())) else {
                return "no streams".into();
            };
            let value = if rng.below(2) == 0 {
                ABSURD[rng.below(ABSURD.len())]
            } else {
                rng.below(len) as u32
            };
            put_u32(data, entry + 8, value);
            format!("stream rva {value:#x} at entry {entry:#x}")
        }
        6 => {
            // Absurd header: stream count or directory offset.
            let field = if rng.below(2) == 0 { 8 } else { 12 };
            let value = ABSURD[rng.below(ABSURD.len())];
            put_u32(data, field, value);
            format!("header field {field} = {value:#x}")
        }
        _ => {
            // Random u32s inside one stream: counts, sizes and rvas of its records.
            let Some(&(entry, rva)) = streams.get(rng.below(streams.len())) else {
                return "no streams".into();
            };
            let size = get_u32(data, entry + 4) as usize;
            for _ in 0..8 {
                let at = rva + 4 * rng.below(size / 4 + 1);
                let value = ABSURD[rng.below(ABSURD.len())];
                put_u32(data, at, value);
            }
            format!("8 absurd words in stream at {rva:#x}")
        }
    }
}

fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn corrupted_dumps_give_a_report_or_one_clear_error() {
    common::run_alone("corruption::corruptions_alone");
}

#[test]
#[ignore = "run alone in its own process by corrupted_dumps_give_a_report_or_one_clear_error"]
fn corruptions_alone() {
    common::assert_alone("corruption::corruptions_alone");
    let corpus = common::shared_dir().join("corpus/public");
    let dir = tempfile::tempdir().unwrap();
    let config = SymbolConfig {
        stores: vec![
            corpus.join("breakpad/symbols"),
            corpus.join("rust-minidump/symbols"),
        ],
        ..SymbolConfig::default()
    };
    let analyzer = Analyzer::new(config.sources());
    let signatures = Database::builtin().expect("built-in rules");

    // A case that never ends must fail the test, not stall CI: the watchdog
    // aborts when one has used far more CPU than it may (a wait that uses
    // none is left to CI's own limit).
    let current = Arc::new(std::sync::Mutex::new((
        String::new(),
        Duration::ZERO,
        Duration::MAX,
    )));
    let done = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let (current, done) = (Arc::clone(&current), Arc::clone(&done));
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let (label, started, limit) = current.lock().unwrap().clone();
                if cpu::process().saturating_sub(started) > limit.saturating_mul(4) {
                    eprintln!("runs on and on: {label}");
                    std::process::abort();
                }
            }
        })
    };

    let mut rng = Rng(0x5eed_d00d);
    let (mut analysed, mut errors) = (0usize, 0usize);
    let mut costliest = (0.0f64, String::new());
    for seed in SEEDS {
        let original = std::fs::read(corpus.join(seed)).unwrap();
        // What analysing the intact dump costs, its symbols found and
        // parsed (its first analysis: the cases share the caches it fills).
        let intact_path = dir.path().join("intact.dmp");
        std::fs::write(&intact_path, &original).unwrap();
        let before = cpu::process();
        let report = dumptriage::diagnose(analyzer.analyze(&intact_path), &signatures);
        let intact = cpu::process() - before;
        assert_eq!(report.status, Status::Ok, "{seed}: {:?}", report.error);
        let limit = intact * COST_FACTOR;
        for case in 0..CASES_PER_SEED {
            let mut data = original.clone();
            let what = corrupt(&mut data, case % 8, &mut rng);
            let label = format!("{seed} case {case}: {what}");
            let path: PathBuf = dir.path().join(format!("case-{case}.dmp"));
            std::fs::write(&path, &data).unwrap();

            let before = cpu::process();
            *current.lock().unwrap() = (label.clone(), before, limit);
            let report = dumptriage::diagnose(analyzer.analyze(&path), &signatures);
            let took = cpu::process() - before;

            assert!(
                took <= limit,
                "{label}: {took:?} of CPU, the intact dump {intact:?}"
            );
            let ratio = took.as_secs_f64() / intact.as_secs_f64();
            if ratio > costliest.0 {
                costliest = (ratio, label.clone());
            }
            match report.status {
                Status::Ok => analysed += 1,
                Status::Error => {
                    errors += 1;
                    let error = report.error.as_deref().unwrap_or("");
                    assert!(!error.is_empty(), "{label}: empty error");
                    assert!(!error.contains('\n'), "{label}: multi-line error {error:?}");
                    assert!(
                        !error.starts_with("internal error"),
                        "{label}: the analyzer panicked: {error}"
                    );
                }
            }
        }
    }
    done.store(true, Ordering::Relaxed);
    watchdog.join().unwrap();

    let total = SEEDS.len() * CASES_PER_SEED;
    assert_eq!(analysed + errors, total);
    assert!(total >= 1000);
    // Both outcomes must occur, or the corruptions are not exercising anything.
    assert!(
        analysed > 100 && errors > 100,
        "{analysed} analysed, {errors} errors"
    );
    if let Some(peak) = peak_rss_kb() {
        assert!(peak < PEAK_MEMORY_LIMIT_KB, "peak memory {peak} kB");
        eprintln!(
            "{total} corruptions: {analysed} analysed, {errors} clear errors; \
             costliest {:.1} times its intact dump ({}); peak RSS {peak} kB",
            costliest.0, costliest.1
        );
    }
}
