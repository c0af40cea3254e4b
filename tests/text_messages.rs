//! What a failure says, not only its frames (issue #37): the messages of a
//! log (a runtime's fatal error, terminate, CUDA's unloading, glibc's heap
//! checks, exit statuses, WER records, test summaries) as facts the rules
//! use, reports of messages alone, exit evidence from the log's shape, the
//! stop inferred from the top frame, and a thread's exit told from the
//! process's. Every log here is written for these tests, each with a
//! look-alike from normal work that must not be read as an exit failure.

use crate::common::text::{analyze_text, answer};

use serde_json::Value;

/// The one report of `text`, and its answer.
fn one(name: &str, text: &str) -> (Value, String) {
    let reports = analyze_text(name, text);
    assert_eq!(reports.len(), 1, "{name}: {reports:#?}");
    let answer = answer(&reports[0]);
    (reports[0].clone(), answer)
}

fn kinds(report: &Value) -> Vec<String> {
    report["source"]["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|m| m["kind"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// A log with no stack at all: the messages alone make the report, which
/// says so, and the rules answer from them.
#[test]
fn reports_of_messages_alone() {
    let cases = [
        (
            "cuda-terminate.log",
            "[render] frame 2000 done\nterminate called after throwing an instance of 'gfx::DeviceError'\n  what():  cudaFreeHost failed: cudaErrorCudartUnloading: driver shutting down\nAborted (core dumped)\n",
            "cuda-runtime-teardown-at-exit",
        ),
        (
            "cuda-errors.log",
            "pool.cu:88 cudaStreamDestroy failed: driver shutting down\npool.cu:91 cudaFree failed: driver shutting down\n",
            "cuda-runtime-teardown-at-exit",
        ),
        (
            "daemon-thread.log",
            "uploaded 12 files\nFatal Python error: _enter_buffered_busy: could not acquire lock for <_io.BufferedWriter name='<stdout>'> at interpreter shutdown, possibly due to daemon threads\nPython runtime state: finalizing (tstate=0x000055d0c8a1b2f0)\n\nCurrent thread 0x00007f3a16e39740 (most recent call first):\n  <no Python frame>\n",
            "python-thread-after-finalization",
        ),
    ];
    for (name, text, want) in cases {
        let (report, got) = one(name, text);
        assert_eq!(got, want, "{name}: {report:#}");
        if report["source"]["format"] == "messages" {
            assert_eq!(report["source"]["messages_only"], true, "{name}");
            let warnings = report["warnings"].to_string();
            assert!(warnings.contains("messages alone"), "{name}: {warnings}");
        }
    }
    // The same messages during the work: no exit-time answer. Another CUDA
    // error is not the runtime unloading; a fatal error while the
    // interpreter runs is not its finalization; glibc's abort alone names
    // no time.
    for (name, text) in [
        ("cuda-work.log", "terminate called after throwing an instance of 'gfx::DeviceError'\n  what():  CUDA error: an illegal memory access was encountered\nAborted (core dumped)\n"),
        ("python-work.log", "Fatal Python error: PyThreadState_Get: the function must be called with the GIL held\nPython runtime state: initialized\n"),
        ("heap-work.log", "frame 88 decoded\ndouble free or corruption (out)\nAborted (core dumped)\n"),
    ] {
        let (report, got) = one(name, text);
        assert_eq!(got, "none", "{name}: {report:#}");
        assert_eq!(report["exception"]["name"], "SIGABRT", "{name}");
    }
}

/// The shape of a test log: every test had passed before the failure, so
/// the failure came at exit, and the report says which fact decided it;
/// a test still running (or a failed run) says no such thing.
#[test]
fn a_test_run_that_had_ended() {
    let passed = "\
[==========] 12 tests from 3 test suites ran. (40 ms total)
[  PASSED  ] 12 tests.
Segmentation fault (core dumped)
";
    let (report, got) = one("gtest.log", passed);
    assert_eq!(got, "crash-during-exit", "{report:#}");
    let evidence = report["source"]["exit_evidence"].as_str().unwrap();
    assert!(evidence.contains("12 tests passed"), "{evidence}");
    let diagnosis = report["diagnoses"][0]["evidence"].to_string();
    assert!(diagnosis.contains("the test run had ended"), "{diagnosis}");
    // (A faulthandler dump of a collection with no Python frame names its
    // own rule, the more specific answer.)
    for (name, text) in [
        ("pytest.log", "tests/test_tiles.py ........ [100%]\n\n============ 8 passed in 1.20s ============\nFatal Python error: Segmentation fault\n\nCurrent thread 0x00007f3a16e39740 (most recent call first):\n  Garbage-collecting\n  <no Python frame>\n"),
        ("ctest.log", "100% tests passed, 0 tests failed out of 9\n\nTotal Test time (real) =   2.31 sec\n/home/ci/run.sh: line 4:  4242 Segmentation fault      (core dumped) ctest\n"),
        ("tap.log", "# tests 40\n# pass 40\n# fail 0\n1..40\n/tmp/job.sh: line 1: 31337 Segmentation fault: 11  npm test\nError: Process completed with exit code 139.\n"),
        ("windows.log", "Ran 31 tests in 4.200s\n\nOK\nThe job exited with code 3221225477\n"),
        ("script.log", "PASS \u{2014} cache eviction behaviour tests\nSegmentation fault (core dumped)\n##[error]Process completed with exit code 1.\n"),
        ("script-all.log", "checking 14 fixtures\nAll tests passed!\nSegmentation fault (core dumped)\n"),
        // A run that ended with failures had ended all the same.
        ("failed.log", "===== 1 failed, 7 passed in 1.20s =====\nSegmentation fault (core dumped)\n"),
    ] {
        let (report, got) = one(name, text);
        let want = if name == "pytest.log" {
            "python-gc-crash-at-exit"
        } else {
            "crash-during-exit"
        };
        assert_eq!(got, want, "{name}: {report:#}");
    }
    let windows = one(
        "windows.log",
        "Ran 31 tests in 4.200s\n\nOK\nThe job exited with code -1073741819\n",
    )
    .0;
    assert_eq!(windows["exception"]["code"], "0xc0000005");
    // Look-alikes: a crash inside a running test, a failed test's line, a
    // summary after the crash (ctest's, of the others).
    for (name, text) in [
        ("running.log", "[ RUN      ] Tiles.Load\n[       OK ] Tiles.Load (3 ms)\n[ RUN      ] Tiles.Evict\nSegmentation fault (core dumped)\n"),
        ("failed-test.log", "[  FAILED  ] Tiles.Evict (3 ms)\nSegmentation fault (core dumped)\n"),
        ("ctest-after.log", "7/9 Test #7: Tiles.Evict ........***Exception: SegFault  0.34 sec\n\n89% tests passed, 1 tests failed out of 9\n"),
        ("automake.log", "PASS: test_tiles_load\nSegmentation fault (core dumped)\n"),
        ("words.log", "All tests passed except the evict ones\nSegmentation fault (core dumped)\n"),
    ] {
        let (report, got) = one(name, text);
        assert_eq!(got, "none", "{name}: {report:#}");
    }
    let running = one("running.log", "[ RUN      ] Tiles.Load\n[       OK ] Tiles.Load (3 ms)\n[ RUN      ] Tiles.Evict\nSegmentation fault (core dumped)\n").0;
    let ruled_out = running["source"]["exit_ruled_out"].as_str().unwrap();
    assert!(ruled_out.contains("Tiles.Evict"), "{ruled_out}");
}

/// Exit statuses, Windows codes in their forms, a fail-fast's subcode and
/// a WER record are read, and alone they claim no exit.
#[test]
fn statuses_and_error_reports() {
    for (text, code, name) in [
        ("worker failed: returncode=-11\n", "0xb", "SIGSEGV"),
        (
            "Error: Process completed with exit code 134.\n",
            "0x6",
            "SIGABRT",
        ),
        (
            "script returned exit code 0xC0000409\n",
            "0xc0000409",
            "STATUS_STACK_BUFFER_OVERRUN",
        ),
        (
            "exit code: 3221226356\n",
            "0xc0000374",
            "STATUS_HEAP_CORRUPTION",
        ),
    ] {
        let (report, got) = one("status.log", text);
        assert_eq!(report["exception"]["code"], code, "{text}");
        assert_eq!(report["exception"]["name"], name, "{text}");
        assert_eq!(got, "none", "{text}");
        assert_eq!(kinds(&report), ["exit-status"], "{text}");
    }
    let event = "\
Faulting application name: atlas.exe, version: 3.2.0.0, time stamp: 0x65000000
Faulting module name: gfxdrv64.dll, version: 31.0.15.1, time stamp: 0x61000000
Exception code: 0xc0000005
Fault offset: 0x00000000001a2b3c
Faulting process id: 0x1f40
";
    let (report, got) = one("event.txt", event);
    assert_eq!(got, "none", "nothing says exit: {report:#}");
    assert_eq!(report["exception"]["code"], "0xc0000005");
    let meaning = report["source"]["messages"][0]["meaning"].as_str().unwrap();
    assert!(meaning.contains("gfxdrv64.dll"), "{meaning}");
    // The same record after the app's last words at exit, with the tests
    // passed: the shape says exit.
    let (_, got) = one(
        "event-exit.txt",
        &format!("All tests passed (40 assertions in 8 test cases)\n{event}"),
    );
    assert_eq!(got, "crash-during-exit");
}

/// A debugger's stack without its signal line: a wait or sleep at the top
/// is a hang, anything else most likely a crash (said as an inference);
/// the exit machinery below decides the phase. A debugger stopping the
/// process (Ctrl-C) is no crash, and several threads of a live process are
/// no inference.
#[test]
fn the_stop_inferred_from_the_top_frame() {
    let crash = "\
(gdb) bt
#0  0x00007f3a16e9c3a1 in unlink_chunk (p=0x55d0c8a1b2f0, av=0x7f3a17001c80 <main_arena>) at malloc.c:1628
#1  0x00007f3a16e9e2b0 in _int_free (av=0x7f3a17001c80 <main_arena>, p=0x55d0c8a1b2e0, have_lock=0) at malloc.c:4557
#2  0x000055d0c0a0b0c0 in Atlas::~Atlas() ()
#3  0x00007f3a16e3e495 in __run_exit_handlers (status=0, listp=0x7f3a16ffd838 <__exit_funcs>, run_list_atexit=true, run_dtors=true) at exit.c:113
#4  0x00007f3a16e3e610 in __GI_exit (status=<optimized out>) at exit.c:143
";
    let (report, got) = one("bt.txt", crash);
    assert_eq!(got, "crash-in-static-destructor", "{report:#}");
    assert_eq!(report["exception"]["code"], "0x0");
    let warnings = report["warnings"].to_string();
    assert!(
        warnings
            .contains("`unlink_chunk`, is no wait or sleep, so the stop is most likely a crash"),
        "{warnings}"
    );
    let hang = crash.replace(
        "unlink_chunk (p=0x55d0c8a1b2f0, av=0x7f3a17001c80 <main_arena>) at malloc.c:1628",
        "__futex_abstimed_wait_common64 (private=0) at futex-internal.c:57",
    );
    let (report, got) = one("bt-wait.txt", &hang);
    assert_eq!(got, "hang-during-exit", "{report:#}");
    assert!(report["exception"].is_null());
    let interrupted = format!("^C\nProgram received signal SIGINT, Interrupt.\n{crash}");
    let (report, got) = one("bt-ctrl-c.txt", &interrupted);
    assert!(report["exception"].is_null(), "{report:#}");
    assert_eq!(got, "none");
    let live = "\
Thread 2 (Thread 0x7f10a2b3c700 (LWP 5102) \"scan\"):
#0  0x00007f10a4c2d3e4 in memcpy () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007f10a4c2f111 in Scanner::step() () from /opt/atlas/lib/libscan.so
Thread 1 (Thread 0x7f10a4e58740 (LWP 5101) \"atlas\"):
#0  0x00007f10a4c2d3e4 in Index::rebuild() () from /opt/atlas/lib/libindex.so
#1  0x000055d0c0a0b0c0 in main ()
";
    let (report, got) = one("live.txt", live);
    assert!(report["exception"].is_null(), "{report:#}");
    assert_eq!(got, "none");
}

/// `__call_tls_dtors` under `start_thread` is a worker's own teardown: the
/// same rules name what is torn down (a cuDNN handle destroyed from a
/// thread-local destructor), as a thread's exit; under exit() it is the
/// process's.
#[test]
fn a_thread_exit_is_not_a_process_exit() {
    let worker = "\
Thread 3 \"infer-7\" received signal SIGSEGV, Segmentation fault.
#0  0x00007f0e10a0b0c0 in ?? () from /usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9
#1  0x00007f0e11b2c3d4 in cudnnDestroy () from /usr/lib/x86_64-linux-gnu/libcudnn.so.9
#2  0x00007f0e12c3d4e5 in Session::HandleCache::~HandleCache() () from /opt/infer/lib/libinfer.so
#3  0x00007f0e1c23a5ef in __GI___call_tls_dtors () at cxa_thread_atexit_impl.c:156
#4  0x00007f0e1c28b1f5 in start_thread (arg=<optimized out>) at pthread_create.c:448
#5  0x00007f0e1c31d8ec in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:78
";
    let (report, got) = one("worker.txt", worker);
    assert_eq!(got, "cuda-library-handle-at-exit", "{report:#}");
    assert_eq!(report["diagnoses"][0]["thread_exit"], true);
    let evidence = report["diagnoses"][0]["evidence"].to_string();
    assert!(
        evidence.contains("a thread's exit, not the process's"),
        "{evidence}"
    );
    assert!(report["threads"][0]["ending"].is_object());
    assert_eq!(report["exit_phase"]["process_exiting"], false);
    // Generic rules are about the process's exit: none of them answers.
    assert!(
        !report["diagnoses"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["generic"] == true),
        "{report:#}"
    );
    // The main thread's thread-locals under exit(): the process's exit.
    let main = worker
        .replace("Thread 3 \"infer-7\"", "Thread 1 \"infer\"")
        .replace(
            "#4  0x00007f0e1c28b1f5 in start_thread (arg=<optimized out>) at pthread_create.c:448\n#5  0x00007f0e1c31d8ec in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:78",
            "#4  0x00007f0e1c23a9ff in __run_exit_handlers (status=0) at exit.c:108\n#5  0x00007f0e1c23aa8e in __GI_exit (status=<optimized out>) at exit.c:148",
        );
    let (report, got) = one("main.txt", &main);
    assert_eq!(got, "cuda-library-handle-at-exit", "{report:#}");
    assert!(report["diagnoses"][0]["thread_exit"].is_null());
    assert_eq!(report["exit_phase"]["process_exiting"], true);
    // A worker crashing while it works, not ending: nothing of the kind.
    let working = worker.replace(
        "#3  0x00007f0e1c23a5ef in __GI___call_tls_dtors () at cxa_thread_atexit_impl.c:156\n",
        "#3  0x00007f0e12c3e000 in Session::run() () from /opt/infer/lib/libinfer.so\n",
    );
    let (report, got) = one("working.txt", &working);
    assert!(
        !got.starts_with("cuda-library-handle-at-exit"),
        "{report:#}"
    );
}

/// An abort whose frames say a destructor went wrong (#37): the C++
/// runtime's pure-virtual handler called from named code, or the noexcept
/// landing pad right above a destructor. With exit frames below, the
/// answer; a pasted stack cut off above them, a possible finding; the same
/// faults while main runs, or std::terminate straight from a joinable
/// std::thread's destructor, no exit-time answer.
#[test]
fn aborts_from_destructors() {
    let pure_virtual = "\
Program received signal SIGABRT, Aborted.
(gdb) bt
#0  0x00007ffff7a4e9fc in __pthread_kill_implementation () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007ffff79fa476 in raise () from /lib/x86_64-linux-gnu/libc.so.6
#2  0x00007ffff79e07f3 in abort () from /lib/x86_64-linux-gnu/libc.so.6
#3  0x00007ffff7ca2b9e in ?? () from /lib/x86_64-linux-gnu/libstdc++.so.6
#4  0x00007ffff7cae20c in std::terminate() () from /lib/x86_64-linux-gnu/libstdc++.so.6
#5  0x00007ffff7caef55 in __cxa_pure_virtual () from /lib/x86_64-linux-gnu/libstdc++.so.6
#6  0x00005555555562d1 in MetricsSink::flush (this=0x55555556aeb0) at sink.cc:41
#7  0x0000555555556402 in Reporter::~Reporter (this=0x55555556aea0) at reporter.cc:18
";
    let (_, got) = one("pure-virtual-cut.txt", pure_virtual);
    assert_eq!(got, "possibly: abort-in-destructor-at-exit");
    let at_exit = format!(
        "{pure_virtual}\
#8  0x00007ffff79fd8a7 in __run_exit_handlers (status=0, listp=<optimized out>, run_list_atexit=true, run_dtors=true) at ./stdlib/exit.c:113
#9  0x00007ffff79fda60 in __GI_exit (status=<optimized out>) at ./stdlib/exit.c:143
"
    );
    let (_, got) = one("pure-virtual-exit.txt", &at_exit);
    assert_eq!(got, "abort-in-destructor-at-exit");
    // Look-alike: a base constructor's virtual call while main runs.
    let working = pure_virtual
        .replace("MetricsSink::flush", "Widget::Widget")
        .replace("Reporter::~Reporter", "main");
    let (_, got) = one("pure-virtual-work.txt", &working);
    assert_eq!(got, "none", "{working}");

    let escaped = "\
* thread #1, queue = 'com.apple.main-thread', stop reason = signal SIGABRT
  * frame #0: 0x000000018d9f2a60 libsystem_kernel.dylib`__pthread_kill + 8
    frame #1: 0x000000018da2ac20 libsystem_pthread.dylib`pthread_kill + 288
    frame #2: 0x000000018d937a30 libsystem_c.dylib`abort + 180
    frame #3: 0x000000018d9e1d08 libc++abi.dylib`abort_message + 132
    frame #4: 0x000000018d9d1fa4 libc++abi.dylib`demangling_terminate_handler() + 320
    frame #5: 0x000000018d9e10dc libc++abi.dylib`std::__terminate(void (*)()) + 16
    frame #6: 0x000000018d9e1080 libc++abi.dylib`std::terminate() + 56
    frame #7: 0x0000000104a1c2e4 libstore.dylib`__clang_call_terminate + 16
    frame #8: 0x0000000104a3f0b8 libstore.dylib`BlockCache::~BlockCache() + 212
";
    let (_, got) = one("escaped-cut.txt", escaped);
    assert_eq!(got, "possibly: abort-in-destructor-at-exit");
    // Look-alike: std::terminate called by a joinable std::thread's
    // destructor (no exception; the same at any time).
    let joinable = escaped
        .replace(
            "libstore.dylib`__clang_call_terminate + 16",
            "libstore.dylib`std::__1::thread::~thread() + 40",
        )
        .replace(
            "libstore.dylib`BlockCache::~BlockCache() + 212",
            "libstore.dylib`Loader::start() + 96",
        );
    let (_, got) = one("joinable.txt", &joinable);
    assert_eq!(got, "none", "{joinable}");
}

/// faulthandler's `Garbage-collecting` then `<no Python frame>` (#37): the
/// collector ran from C with no Python code on the stack, as the
/// interpreter's collections during finalization do. A fact of its own;
/// alone, a possible finding; after a test run that had passed, the
/// answer. A collection under Python code, or no Python frame without a
/// collection, is no exit-time answer.
#[test]
fn a_collection_with_no_python_frame() {
    let dump = "\
loading weights ... done
Fatal Python error: Segmentation fault

Current thread 0x00007f3a9c1ff740 (most recent call first):
  Garbage-collecting
  <no Python frame>
";
    let (report, got) = one("gc.txt", dump);
    assert!(
        kinds(&report).contains(&"python-gc-without-frame".to_string()),
        "{report:#}"
    );
    assert_eq!(got, "possibly: python-gc-crash-at-exit");
    let passed = format!("tests/test_io.py ....                    [100%]\n\n============ 4 passed in 2.31s ============\n{dump}");
    let (_, got) = one("gc-after-tests.txt", &passed);
    assert_eq!(got, "python-gc-crash-at-exit");
    // Look-alikes: a collection an allocation in Python code triggered, and
    // a C thread with no Python frame that was not collecting.
    let under_python = dump.replace(
        "  <no Python frame>\n",
        "  File \"/srv/app/train.py\", line 88 in step\n  File \"/srv/app/train.py\", line 120 in <module>\n",
    );
    let (report, got) = one("gc-in-work.txt", &under_python);
    assert!(!kinds(&report).contains(&"python-gc-without-frame".to_string()));
    assert_eq!(got, "none", "{under_python}");
    let no_frame = dump.replace("  Garbage-collecting\n", "");
    let (_, got) = one("no-frame.txt", &no_frame);
    assert_eq!(got, "none", "{no_frame}");
}

/// A sanitizer's report that a CUDA call failed because the runtime was
/// unloading (#37): a math library (cuFFT here) freeing a plan from a static
/// destructor is the runtime's teardown, a cuBLAS handle pool in the same
/// place the library-handle failure; the same report of another error while
/// main runs is no exit-time answer at all.
#[test]
fn a_sanitizer_report_of_the_runtime_unloading() {
    let fft = "\
========= COMPUTE-SANITIZER
spectra: 512 transforms written to out.bin
========= Program hit cudaErrorCudartUnloading (error 4) due to \"driver shutting down\" on CUDA API call to cudaFree.
=========     Saved host backtrace up to driver entry point at error
=========     Host Frame: [0x2eb2f5] in libcuda.so.1
=========     Host Frame: [0x61a2c0] in libcufft.so.11
=========     Host Frame:cufftDestroy [0x1f0c4] in libcufft.so.11
=========     Host Frame:PlanCache::~PlanCache() [0x4a10] in libspectra.so
=========     Host Frame:__cxa_finalize [0x45d9e] in libc.so.6
=========     Host Frame: [0x3c21] in libspectra.so
=========
";
    let (report, got) = one("fft.txt", fft);
    assert_eq!(got, "cuda-runtime-teardown-at-exit", "{report:#}");
    assert!(kinds(&report).contains(&"cuda-runtime-unloading".to_string()));
    assert_eq!(report["exit_phase"]["process_exiting"], true);
    let blas = fft
        .replace("cufftDestroy", "cublasDestroy_v2")
        .replace("libcufft.so.11", "libcublas.so.12")
        .replace("PlanCache::~PlanCache()", "BlasPool::~BlasPool()");
    let (report, got) = one("blas.txt", &blas);
    assert_eq!(got, "cuda-library-handle-at-exit", "{report:#}");
    let work = fft
        .replace(
            "cudaErrorCudartUnloading (error 4) due to \"driver shutting down\"",
            "cudaErrorInvalidValue (error 1) due to \"invalid argument\"",
        )
        .replace(
            "__cxa_finalize [0x45d9e] in libc.so.6",
            "Spectrum::compute() [0x5b20] in libspectra.so",
        )
        .replace(" [0x3c21] in libspectra.so", "main [0x2a10] in spectra")
        .replace("512 transforms written to out.bin", "transform 17 of 512");
    assert!(!work.contains("Unloading") && !work.contains("__cxa_finalize"));
    let (report, got) = one("work.txt", &work);
    assert_eq!(got, "none", "{report:#}");
    assert_eq!(
        report["diagnoses"].as_array().map(Vec::len),
        Some(0),
        "{report:#}"
    );
}

/// A Jenkins/Gradle log (a time of day on each line, Gradle's "exit
/// value") and CPython's debug allocator stopping the process (its block
/// dump, then the abort) after a passed run: both end the run at exit. The
/// same failures while a test runs, or after a failed run, do not.
#[test]
fn timestamped_ci_logs_and_the_debug_allocator() {
    let cases = [
        (
            "gradle.log",
            "\
07:41:02  tests/test_ingest.py ......                                    [100%]
07:41:02  ============ 6 passed, 2 skipped in 12.04s ============
07:41:09  > Process 'command 'python3'' finished with non-zero exit value 139
07:41:09  ##[error]Process completed with exit code 1.
",
            "SIGSEGV (exit status 139 = 128 + 11)",
        ),
        (
            "dev-mode.log",
            "\
tests/test_cache.py ...                                                  [100%]

============================== 3 passed in 0.41s ===============================
Debug memory block at address p=0x55d1c0ffee40: API 'o'
    24 bytes originally requested
    The 7 pad bytes at p-7 are not all FORBIDDENBYTE (0xfd):
        at p-7: 0xdd *** OUCH
",
            "a bad block (CPython's debug allocator)",
        ),
    ];
    for (name, text, meaning) in cases {
        let (report, got) = one(name, text);
        assert!(
            got == "crash-during-exit" || got == "abort-during-exit",
            "{name}: {got}: {report:#}"
        );
        let evidence = report["source"]["exit_evidence"].as_str().unwrap();
        assert!(evidence.contains("the test run had ended"), "{evidence}");
        let said = report["source"]["messages"].to_string();
        assert!(said.contains(meaning), "{name}: {said}");
    }
    // Look-alikes: the same endings while a test ran, or after a failed
    // test's line.
    for (name, text) in [
        (
            "gradle-running.log",
            "07:41:02  [ RUN      ] Ingest.Batch\n07:41:09  > Process 'command 'unit'' finished with non-zero exit value 139\n",
        ),
        (
            "dev-mode-failed.log",
            "FAILED tests/test_ingest.py::test_batch - AssertionError\nDebug memory block at address p=0x55d1c0ffee40: API 'o'\n    The 7 pad bytes at p-7 are not all FORBIDDENBYTE (0xfd):\n",
        ),
    ] {
        let (report, got) = one(name, text);
        assert_eq!(got, "none", "{name}: {report:#}");
    }
}

/// Rust's panic on a destroyed thread-local, on an unnamed thread
/// (a C++ host's: `<unnamed>`), with the backtrace cut before any exit
/// frame: a thread-local teardown, possibly the process's. A named worker
/// Rust started is only that worker ending, and gets no exit answer.
#[test]
fn a_rust_tls_panic_on_a_host_thread() {
    let host = "\
thread '<unnamed>' (90211) panicked at /rustc/0000/library/std/src/thread/local.rs:281:25:
cannot access a Thread Local Storage value during or after destruction: AccessError
stack backtrace:
   0: rust_begin_unwind
   1: core::panicking::panic_fmt
   2: core::result::unwrap_failed
   3: metrics::registry::current
   4: metrics_flush
   5: _ZN4host7ExporterD1Ev
";
    let (report, got) = one("host.log", host);
    assert_eq!(got, "possibly: tls-destructor-crash-at-exit", "{report:#}");
    assert!(kinds(&report).contains(&"rust-tls-destroyed".to_string()));
    let worker = host.replace("'<unnamed>' (90211)", "'ingest-worker-3'");
    let (report, got) = one("worker.log", &worker);
    assert_eq!(got, "none", "{report:#}");
    assert!(!kinds(&report).contains(&"rust-tls-destroyed".to_string()));
}

/// A gdb stack cut before its exit frames still shows exit when a
/// destructor runs on a static object: gdb names the global `this` points
/// to. A destructor on a heap object (no name) during work, or an address
/// gdb names after a vtable, says nothing of exit.
#[test]
fn a_destructor_on_a_static_object_is_exit() {
    let trace = |this: &str| {
        format!(
            "\
Program received signal SIGSEGV, Segmentation fault.
0x0000000000412a10 in std::_Rb_tree<int, int, std::_Identity<int>, std::less<int>, std::allocator<int> >::size (this=0x8)
(gdb) bt
#0  0x0000000000412a10 in std::_Rb_tree<int, int, std::_Identity<int>, std::less<int>, std::allocator<int> >::size (this=0x8)
#1  0x0000000000412b22 in telemetry::Sink::enabled (this=0x0, level=2) at sink.cc:40
#2  0x0000000000413c31 in Journal::~Journal ({this},
    __in_chrg=<optimized out>) at journal.cc:77
#3  0x00007f3c1a04a495 in ?? ()
"
        )
    };
    let (report, got) = one("static.txt", &trace("this=0x61a040 <g_journal>"));
    assert_eq!(got, "crash-during-exit", "{report:#}");
    let evidence = report["source"]["exit_evidence"].as_str().unwrap();
    assert!(evidence.contains("static object `g_journal`"), "{evidence}");
    // Look-alikes: a heap object's destructor, and a vtable's name.
    for (name, this) in [
        ("heap.txt", "this=0x55d0c0ffee10"),
        ("vtable.txt", "this=0x61a040 <vtable for Journal+16>"),
    ] {
        let (report, _) = one(name, &trace(this));
        assert!(
            report["source"]["exit_evidence"].is_null(),
            "{name}: {report:#}"
        );
        let exit_time = report["diagnoses"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["signature"] != "hang-during-work")
            .count();
        assert_eq!(exit_time, 0, "{name}: {report:#}");
    }
}

/// Sanitizer reports beyond a crash: ThreadSanitizer's data race in a
/// static destructor under exit is an exit-time failure, the same race
/// between two workers is not, and a LeakSanitizer report after a passed
/// run (leak checking runs at exit by design) is no failure at exit. An
/// AddressSanitizer report's history stacks (where the block was freed)
/// are not the thread's: a use during work of a block freed at exit is not
/// read as exit.
#[test]
fn sanitizer_reports_beyond_a_crash() {
    let race = |writer: &str| {
        format!(
            "\
==================
WARNING: ThreadSanitizer: data race (pid=5150)
  Write of size 8 at 0x7b1000000020 by main thread:
    #0 operator delete(void*) <null> (libtsan.so.2+0x8a3d9)
{writer}
  Previous read of size 8 at 0x7b1000000020 by thread T3:
    #0 metrics::Counter::add(long) /src/metrics.cc:51 (svc+0x51a20)
    #1 pump_loop /src/pump.cc:30 (svc+0x52b10)

  Thread T3 (tid=5154, running) created by main thread at:
    #0 pthread_create <null> (libtsan.so.2+0x5f0a6)
    #1 main /src/main.cc:44 (svc+0x53c00)

SUMMARY: ThreadSanitizer: data race /src/metrics.cc:22
==================
"
        )
    };
    let at_exit = race(
        "    #1 metrics::Counter::~Counter() /src/metrics.cc:22 (svc+0x51900)\n    #2 __run_exit_handlers stdlib/exit.c:113 (libc.so.6+0x45494)\n    #3 exit stdlib/exit.c:143 (libc.so.6+0x4560f)",
    );
    let (report, got) = one("tsan.log", &at_exit);
    assert_eq!(got, "crash-in-static-destructor", "{report:#}");
    assert_eq!(report["exception"]["name"], "ThreadSanitizer: data race");
    let working = race(
        "    #1 metrics::Registry::drop(int) /src/metrics.cc:22 (svc+0x51900)\n    #2 handle_request /src/server.cc:90 (svc+0x54000)\n    #3 start_thread nptl/pthread_create.c:442 (libc.so.6+0x94ac2)",
    );
    let (report, got) = one("tsan-work.log", &working);
    assert_eq!(got, "none", "{report:#}");

    let leaks = "\
[==========] 9 tests from 2 test suites ran. (31 ms total)
[  PASSED  ] 9 tests.

=================================================================
==6120==ERROR: LeakSanitizer: detected memory leaks

Direct leak of 32 byte(s) in 1 object(s) allocated from:
    #0 0x7f9a1c2b1887 in __interceptor_malloc (/lib/x86_64-linux-gnu/libasan.so.8+0xb8887)
    #1 0x55c0d1a2b3c4 in parser_new /src/parser.c:14
    #2 0x7f9a1bf29d8f in __libc_start_call_main ../sysdeps/nptl/libc_start_call_main.h:58

SUMMARY: AddressSanitizer: 32 byte(s) leaked in 1 allocation(s).
";
    let reports = crate::common::text::analyze_text("lsan.log", leaks);
    let exit_time: Vec<String> = reports
        .iter()
        .flat_map(|r| r["diagnoses"].as_array().cloned().unwrap_or_default())
        .map(|d| d["signature"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(exit_time.is_empty(), "{reports:#?}");
    // A log with nothing else says what it holds, not "no stack trace".
    let error = reports[0]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("LeakSanitizer report") && error.contains("no crash or hang"),
        "{reports:#?}"
    );
    assert!(!error.contains("no stack trace found"), "{error}");
    // The same report in a log that also crashed: the crash is answered.
    let leaks_then_crash = format!(
        "{leaks}\n$ ./build/tests/cache_test\n[ RUN      ] Cache.Evict\nSegmentation fault (core dumped)\n"
    );
    let reports = crate::common::text::analyze_text("lsan-then-crash.log", &leaks_then_crash);
    assert!(
        reports
            .iter()
            .any(|r| r["error"].is_null() && r["exception"]["name"].is_string()),
        "{reports:#?}"
    );
    assert!(
        reports.iter().all(|r| !r["error"]
            .as_str()
            .unwrap_or_default()
            .contains("LeakSanitizer")),
        "{reports:#?}"
    );

    let use_during_work = "\
==7001==ERROR: AddressSanitizer: heap-use-after-free on address 0x603000000010 at pc 0x55e1 bp 0x7ffc sp 0x7ffc
READ of size 4 at 0x603000000010 thread T1
    #0 0x55e1a0b1c2d3 in Job::run() /src/job.cc:20
    #1 0x55e1a0b1c9e0 in worker /src/pool.cc:61
    #2 0x7f00c0e94ac2 in start_thread nptl/pthread_create.c:442

0x603000000010 is located 0 bytes inside of 24-byte region [0x603000000010,0x603000000028)
freed by thread T0 here:
    #0 0x7f00c12b624f in operator delete(void*) (/lib/x86_64-linux-gnu/libasan.so.8+0xdc24f)
    #1 0x55e1a0b1d000 in Queue::~Queue() /src/queue.cc:9
    #2 0x7f00c0e45495 in __run_exit_handlers stdlib/exit.c:113
    #3 0x7f00c0e45610 in exit stdlib/exit.c:143

SUMMARY: AddressSanitizer: heap-use-after-free /src/job.cc:20 in Job::run()
==7001==ABORTING
";
    let (report, _) = one("asan-history.log", use_during_work);
    let threads = report["threads"].as_array().unwrap();
    assert_eq!(
        threads.len(),
        1,
        "only the failing access is a thread: {report:#}"
    );
}

/// GPU runtimes that say they are at exit: PyTorch's ProcessGroupNCCL
/// destructor warning that the program exits without destroying the group,
/// and HIP's hipErrorDeinitialized (its runtime already torn down). The
/// same crashes after a collective timing out during training, or after
/// another HIP error, say nothing of exit.
#[test]
fn gpu_runtimes_that_say_the_program_exits() {
    for (name, text, want) in [
        (
            "nccl.log",
            "[rank1]: epoch 3 done\n[rank1]:[W0412 08:15:02.000000001 ProcessGroupNCCL.cpp:1501] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources. (function operator())\nSegmentation fault (core dumped)\n",
            "crash-during-exit",
        ),
        (
            "nccl-old.log",
            "[rank0]:[W0412 08:15:02.000000001 ProcessGroupNCCL.cpp:1168] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group. (function operator())\nAborted (core dumped)\n",
            "abort-during-exit",
        ),
        (
            "hip.log",
            "inference done\nterminate called after throwing an instance of 'std::runtime_error'\n  what():  hipFree failed: hipErrorDeinitialized\nAborted (core dumped)\n",
            "abort-during-exit",
        ),
        (
            "nccl-timeout.log",
            "[rank0]:[E0412 08:15:02.000000001 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=812, OpType=ALLREDUCE) ran for 600012 milliseconds before timing out.\nterminate called after throwing an instance of 'c10::DistBackendError'\nAborted (core dumped)\n",
            "none",
        ),
        (
            "hip-other.log",
            "step 40\nterminate called after throwing an instance of 'std::runtime_error'\n  what():  hipMalloc failed: hipErrorOutOfMemory\nAborted (core dumped)\n",
            "none",
        ),
    ] {
        let (report, got) = one(name, text);
        assert_eq!(got, want, "{name}: {report:#}");
    }
}

/// How runners say a signal ended the process: an IDE's "interrupted by
/// signal", Python's subprocess, cargo, make's status, Azure's quoted code.
/// After a passed run they are a crash at exit; while a test runs, not.
#[test]
fn runners_name_the_signal() {
    for (name, end, want) in [
        (
            "ide.log",
            "Process finished with exit code 134 (interrupted by signal 6: SIGABRT)",
            "abort-during-exit",
        ),
        (
            "nox.log",
            "nox > Command pytest failed: Command '['pytest', '-q']' died with <Signals.SIGSEGV: 11>.",
            "crash-during-exit",
        ),
        (
            "make.log",
            "make: *** [Makefile:31: test] Error 139",
            "crash-during-exit",
        ),
        (
            "azure.log",
            "##[error]Bash exited with code '139'.",
            "crash-during-exit",
        ),
    ] {
        let text = format!("tests/test_kv.py .....  [100%]\n\n====== 5 passed in 0.80s ======\n{end}\n");
        let (report, got) = one(name, &text);
        assert_eq!(got, want, "{name}: {report:#}");
        let running = format!("[ RUN      ] Kv.Compact\n{end}\n");
        let (report, got) = one(name, &running);
        assert_eq!(got, "none", "{name} (a test running): {report:#}");
    }
}
