//! Each kind of message, in the forms runtimes, shells and test runners
//! print it, and look-alikes that are none.

use super::*;

fn kinds(log: &str) -> Vec<(MessageKind, Option<String>)> {
    let raw: Vec<&str> = log.lines().collect();
    let lines: Vec<Option<String>> = raw.iter().map(|l| Some(l.to_string())).collect();
    read(log, &raw, &lines)
        .into_iter()
        .map(|m| (m.kind, m.meaning))
        .collect()
}

fn one(line: &str) -> Option<(MessageKind, Option<String>)> {
    let mut all = kinds(line);
    assert!(all.len() <= 1, "{line}: {all:?}");
    all.pop()
}

#[test]
fn runtime_and_allocator_messages() {
    use MessageKind::*;
    for (line, kind) in [
        ("Fatal Python error: PyGILState_Release: thread state 0x55d0 must be current when releasing", PythonFatalError),
        ("Python runtime state: finalizing (tstate=0x000055d0c8a1b2f0)", PythonFinalizing),
        ("Error in atexit._run_exitfuncs:", PythonAtexitError),
        ("Exception ignored in atexit callback: <function shutdown at 0x7f5e2c1d3e20>:", PythonAtexitError),
        ("pure virtual method called", PureVirtualCall),
        ("libc++abi: Pure virtual function called!", PureVirtualCall),
        ("free(): invalid pointer", HeapCorruption),
        ("double free or corruption (!prev)", HeapCorruption),
        ("*** Error in `./render': double free or corruption (out): 0x0000000001a2b3c0 ***", HeapCorruption),
        ("free(): double free detected in tcache 2", HeapCorruption),
        ("munmap_chunk(): invalid pointer", HeapCorruption),
        // CPython's debug allocator (-X dev, PYTHONMALLOC=debug).
        ("Debug memory block at address p=0x7f00c0ffee10: API 'o'", HeapCorruption),
        ("    The 8 pad bytes at tail=0x7f00c0ffee30 are not all FORBIDDENBYTE (0xfd):", HeapCorruption),
        ("F0102 10:11:12.000001 4242 pool.cc:88] Check failed: status == 0 (3 vs. 0)", CheckFailed),
        ("Assertion failed: m_ready, file C:\\src\\gfx\\shaders.cpp, line 144", AssertionFailed),
        ("render: gfx/pool.c:88: pool_put: Assertion `p->refs > 0' failed.", AssertionFailed),
        ("  #  Assertion failed: (env) != nullptr", AssertionFailed),
        ("The operation was canceled.", TimedOut),
        ("The job running on runner ci-3 has exceeded the maximum execution time of 360 minutes.", TimedOut),
        ("ERROR: Job failed: execution took longer than 1h0m0s seconds", TimedOut),
        ("Build timed out (after 60 minutes). Marking the build as aborted.", TimedOut),
        ("  3/12 Test  #3: pool_test ........................***Timeout 1500.03 sec", TimedOut),
        ("timeout: sending signal TERM to command 'pytest'", TimedOut),
        (
            "[ERROR] [planner-1]: process[planner-1] failed to terminate '5' seconds after receiving 'SIGINT', escalating to 'SIGTERM'",
            TimedOut,
        ),
        ("[camera-2] escalating to SIGKILL", TimedOut),
        ("  Problem Event Name:\tAppHangB1", TimedOut),
        ("  Nome evento problema:\tMoAppHang", TimedOut),
        ("The program viewer.exe version 2.1.0.0 stopped interacting with Windows and was closed. To see if more information about the problem is available, check the problem history in the Security and Maintenance control panel.", TimedOut),
        ("Mar 3 10:00:01 host systemd[1]: db.service: State 'stop-sigterm' timed out. Killing.", TimedOut),
        ("//gfx:pool_test                                TIMEOUT in 300.1s", TimedOut),
        ("Sys_Signal: Received signal 11", ExitStatus),
        ("[crash] Caught signal SIGABRT, writing report", ExitStatus),
        ("Signal 11 caught", ExitStatus),
        ("Signal Received: 6 (Aborted)", ExitStatus),
        ("Signal: Segmentation fault (11)", ExitStatus),
        ("Exception thrown: read access violation.", DebuggerAnalysis),
        ("Exception thrown at 0x00007FF7BD56B497 in engine.exe: 0xC0000005: Access violation reading location 0x0000000000004148.", DebuggerAnalysis),
        ("Unhandled exception at 0x00007FFB1C2E2D8E (ucrtbase.dll) in app.exe: 0xC0000409: An invalid parameter was passed to a function that considers invalid parameters fatal.", DebuggerAnalysis),
        ("Unhandled exception thrown: write access violation.", DebuggerAnalysis),
        ("Вызвано исключение: нарушение доступа для чтения.", DebuggerAnalysis),
        ("Ausnahme ausgelöst: Lesezugriffsverletzung", DebuggerAnalysis),
    ] {
        assert_eq!(one(line).map(|m| m.0), Some(kind), "{line}");
    }
    // Rust's thread-local access error: on a host's thread or the main
    // one; a named worker's is no message, nor is the words in prose.
    for (log, want) in [
        ("thread '<unnamed>' panicked at src/lib.rs:9:5:\ncannot access a Thread Local Storage value during or after destruction: AccessError", true),
        ("thread 'main' panicked at 'cannot access a TLS value during or after it is destroyed: AccessError', src/libcore/result.rs:1:1", true),
        ("thread 'pool-1' panicked at src/lib.rs:9:5:\ncannot access a Thread Local Storage value during or after destruction: AccessError", false),
        ("Fixes the Thread Local Storage value during or after teardown docs", false),
    ] {
        let said = kinds(log).iter().any(|m| m.0 == RustTlsDestroyed);
        assert_eq!(said, want, "{log}");
    }
    // Words about the debug allocator are no finding of it; Python's
    // AssertionError is an exception; a debugger's stop and a signal of no
    // crash are no handler's report.
    for line in [
        "Run with PYTHONMALLOC=debug to get a Debug memory block dump",
        "FORBIDDENBYTE is 0xfd in pymem debug hooks",
        "AssertionError: Assertion failed: expected 3",
        "Program received signal SIGSEGV, Segmentation fault.",
        "Thread 3 \"worker\" received signal SIGSEGV, Segmentation fault.",
        "Received signal 15, shutting down",
        "Caught signal SIGINT",
        "Exception thrown: std::bad_alloc at memory location 0x0000002A",
        "The fix avoids a read access violation in the loader",
        "Assertion failed: expected 3 got 4",
        "The request was canceled by the user",
        "connect timed out, retrying",
        "retry after timeout: 30s",
    ] {
        assert_eq!(one(line), None, "{line}");
    }
    // Both messages of CPython's lock error at shutdown, on one line.
    let both = kinds("Fatal Python error: _enter_buffered_busy: could not acquire lock for <_io.BufferedWriter name='<stdout>'> at interpreter shutdown, possibly due to daemon threads");
    assert_eq!(
        both.iter().map(|m| m.0).collect::<Vec<_>>(),
        [PythonFatalError, PythonFinalizing]
    );
}

#[test]
fn terminate_names_the_exception_and_its_what() {
    let log = "terminate called after throwing an instance of 'gpu::Error'\n  what():  cudaFreeHost failed: driver shutting down\nAborted (core dumped)\n";
    let all = kinds(log);
    let terminate = all.iter().find(|m| m.0 == MessageKind::Terminate).unwrap();
    assert_eq!(
        terminate.1.as_deref(),
        Some("std::terminate: an uncaught gpu::Error: cudaFreeHost failed: driver shutting down")
    );
    for kind in [
        MessageKind::ExceptionWhat,
        MessageKind::CudaRuntimeUnloading,
        MessageKind::ExitStatus,
    ] {
        assert!(all.iter().any(|m| m.0 == kind), "{kind:?} in {all:?}");
    }
    assert_eq!(
        one("terminate called without an active exception").map(|m| m.0),
        Some(MessageKind::Terminate)
    );
    assert_eq!(
        one("libc++abi: terminating due to uncaught exception of type std::runtime_error: closed")
            .map(|m| m.0),
        Some(MessageKind::Terminate)
    );
}

#[test]
fn cuda_unloading_in_its_forms() {
    for line in [
        "CUDA error at pool.cu:40 - cudaErrorCudartUnloading: driver shutting down",
        "E0102 stream.cc:12] Check failed: error == cudaSuccess (29 vs. 0) driver shutting down",
        "RuntimeError: CUDA error: driver shutting down",
        "what(): CUDA failure 4: unknown ; expr=cudaEventDestroy(e)",
        "cuMemFree returned CUDA_ERROR_DEINITIALIZED",
    ] {
        assert!(
            kinds(line)
                .iter()
                .any(|m| m.0 == MessageKind::CudaRuntimeUnloading),
            "{line}"
        );
    }
    // Other CUDA errors, and error 29 without the words, are not it.
    for line in [
        "CUDA error: an illegal memory access was encountered",
        "CUDA error 40: invalid",
        "Check failed: error == cudaSuccess (29 vs. 0)",
        "the graphics driver is updating",
    ] {
        assert!(
            !kinds(line)
                .iter()
                .any(|m| m.0 == MessageKind::CudaRuntimeUnloading),
            "{line}"
        );
    }
}

/// macOS's and FreeBSD's shells, Go's os/exec, systemd's unit result.
#[test]
fn exit_statuses_of_other_shells_runtimes_and_service_managers() {
    for (line, meaning) in [
        ("Abort trap: 6", "SIGABRT"),
        ("Abort trap (core dumped)", "SIGABRT"),
        ("signal: segmentation fault (core dumped)", "SIGSEGV"),
        ("signal: aborted", "SIGABRT"),
        (
            "Oct 30 21:21:42 host systemd[1]: media.service: Main process exited, code=dumped, status=11/SEGV",
            "SIGSEGV (the process was killed by signal 11)",
        ),
    ] {
        assert_eq!(
            one(line),
            Some((MessageKind::ExitStatus, Some(meaning.to_string()))),
            "{line}"
        );
    }
    // A unit killed by its manager on a signal of no crash, Go's kill.
    for line in [
        "systemd[1]: media.service: Main process exited, code=killed, status=15/TERM",
        "signal: killed",
    ] {
        assert_eq!(one(line), None, "{line}");
    }
}

#[test]
fn exit_statuses_in_every_spelling() {
    for (line, meaning) in [
        ("Segmentation fault (core dumped)", "SIGSEGV"),
        ("Aborted (core dumped)", "SIGABRT"),
        ("Aborted", "SIGABRT"),
        (
            "/home/ci/run.sh: line 4:  4242 Segmentation fault      (core dumped) ctest",
            "SIGSEGV",
        ),
        (
            "[1]+  Aborted                 (core dumped) ./server --port 80",
            "SIGABRT",
        ),
        (
            "./ci/test.sh: line 12: 31337 Segmentation fault: 11  ./bin/unit",
            "SIGSEGV",
        ),
        ("[1]    51234 segmentation fault  ./bin/unit", "SIGSEGV"),
        ("[2] 8080 abort (core dumped) ./server", "SIGABRT"),
        ("zsh: abort      ./server", "SIGABRT"),
        (
            "Error: Process completed with exit code 139.",
            "SIGSEGV (exit status 139 = 128 + 11)",
        ),
        (
            "make: the unit tests exited with code 134",
            "SIGABRT (exit status 134 = 128 + 6)",
        ),
        (
            "subprocess failed: returncode=-6",
            "SIGABRT (killed by signal 6)",
        ),
        (
            "worker exited with exit code -11",
            "SIGSEGV (killed by signal 11)",
        ),
        (
            "script returned exit code -1073741819",
            "STATUS_ACCESS_VIOLATION (0xC0000005)",
        ),
        (
            "Process finished with exit code 3221225477",
            "STATUS_ACCESS_VIOLATION (0xC0000005)",
        ),
        (
            "exit code: 0xC0000409",
            "STATUS_STACK_BUFFER_OVERRUN (fail-fast) (0xC0000409)",
        ),
        (
            "The job exited with code 3221226505",
            "STATUS_STACK_BUFFER_OVERRUN (fail-fast) (0xC0000409)",
        ),
        (
            "exit code -1073740940",
            "STATUS_HEAP_CORRUPTION (0xC0000374)",
        ),
        // Azure Pipelines quotes it; Travis says no "code".
        (
            "##[error]Bash exited with code '134'.",
            "SIGABRT (exit status 134 = 128 + 6)",
        ),
        (
            "The command \"ctest --output-on-failure\" exited with 139.",
            "SIGSEGV (exit status 139 = 128 + 11)",
        ),
        // make's status of a recipe: the shell's 128 + N.
        (
            "make[1]: *** [Makefile:40: check] Error 134",
            "SIGABRT (exit status 134 = 128 + 6)",
        ),
        // The signal named: Python's subprocess, JetBrains IDEs, cargo.
        (
            "subprocess.CalledProcessError: Command '['./bench']' died with <Signals.SIGABRT: 6>.",
            "SIGABRT (the process was killed by signal 6)",
        ),
        (
            "Process finished with exit code 139 (interrupted by signal 11: SIGSEGV)",
            "SIGSEGV (the process was killed by signal 11)",
        ),
        // (Some IDE versions print no blank after the colon.)
        (
            "139 (interrupted by signal 11:SIGSEGV)",
            "SIGSEGV (the process was killed by signal 11)",
        ),
        (
            "  process didn't exit successfully: `/ci/target/debug/deps/store-0a1b2c3d` (signal: 11, SIGSEGV: invalid memory reference)",
            "SIGSEGV (the process was killed by signal 11)",
        ),
        // Gradle's and Java's Process words: an exit *value*.
        (
            "> Process 'command 'python3'' finished with non-zero exit value 134",
            "SIGABRT (exit status 134 = 128 + 6)",
        ),
    ] {
        assert_eq!(
            one(line),
            Some((MessageKind::ExitStatus, Some(meaning.to_string()))),
            "{line}"
        );
    }
}

/// Statuses of no crash, and the words in a sentence, are no exit status.
#[test]
fn no_crash_status_and_words_in_a_sentence_are_no_exit_status() {
    for line in [
        "Error: Process completed with exit code 1.",
        "exit code 137",
        "exited with code 0",
        "> Process 'command 'make'' finished with non-zero exit value 2",
        "make: *** [Makefile:7: all] Error 2",
        "Command '['./bench']' died with <Signals.SIGKILL: 9>.",
        "Process finished with exit code 130 (interrupted by signal 2: SIGINT)",
        "the build exited with 3 warnings",
        "Process finished with exit code 0",
        "exit code 3221225781",
        "exit code -1073741510",
        "This patch fixes a Segmentation fault in the parser",
        "Aborted by user request",
        "Segmentation fault is fixed now",
        "Program received signal SIGSEGV, Segmentation fault.",
        "Fatal Python error: Segmentation fault",
        "Call abort() when the config is missing",
        "*** Aborted at 1700000000 (unix time) try \"date -d @1700000000\" ***",
    ] {
        assert!(
            !kinds(line).iter().any(|m| m.0 == MessageKind::ExitStatus),
            "{line}"
        );
    }
}

#[test]
fn windows_error_reports() {
    let event = "Faulting application name: viewer.exe, version: 2.1.0.0, time stamp: 0x5f000000
Faulting module name: gfxdrv64.dll, version: 31.0.15.1, time stamp: 0x61000000
Exception code: 0xc0000005
Fault offset: 0x00000000001a2b3c
Faulting process id: 0x1f40";
    assert_eq!(
        kinds(event),
        [(
            MessageKind::WindowsErrorReport,
            Some(
                "STATUS_ACCESS_VIOLATION (0xC0000005) in gfxdrv64.dll at offset 0x00000000001a2b3c"
                    .to_string()
            )
        )]
    );
    // Italian, Portuguese, Polish, Dutch and Korean builds' code lines.
    for line in [
        "  Codice eccezione:\te06d7363",
        "  Código de exceção:\tc0000005",
        "  Kod wyjątku:\tc0000005",
        "  Uitzonderingscode:\tc0000005",
        "  예외 코드:\tc0000005",
    ] {
        assert_eq!(kinds(line)[0].0, MessageKind::WindowsErrorReport, "{line}");
    }
    let signature = "  Fault Module Name:\tucrtbase.dll\n  Exception Code:\tc0000409\n  Exception Offset:\t000000000007286e";
    assert_eq!(
        kinds(signature)[0].1.as_deref(),
        Some("STATUS_STACK_BUFFER_OVERRUN (fail-fast) (0xC0000409) in ucrtbase.dll at offset 000000000007286e")
    );
}

#[test]
fn test_runner_summaries() {
    use MessageKind::*;
    for (line, kind) in [
        ("============ 12 passed in 3.40s ============", TestsPassed),
        ("12 passed, 1 skipped, 2 warnings in 3.40s", TestsPassed),
        ("===== 1 failed, 11 passed in 3.40s =====", TestRunEnded),
        ("[  PASSED  ] 31 tests.", TestsPassed),
        ("[  FAILED  ] Pool.Drain", TestsFailed),
        ("100% tests passed, 0 tests failed out of 9", TestsPassed),
        ("89% tests passed, 1 tests failed out of 9", TestRunEnded),
        (
            "test result: FAILED. 39 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out",
            TestRunEnded,
        ),
        ("Tests:       1 failed, 39 passed, 40 total", TestRunEnded),
        (
            "All tests passed (120 assertions in 8 test cases)",
            TestsPassed,
        ),
        (
            "test result: ok. 40 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out",
            TestsPassed,
        ),
        ("Tests:       40 passed, 40 total", TestsPassed),
        ("End Result: TEST PASSED", TestsPassed),
        ("All tests passed!", TestsPassed),
        ("PASS \u{2014} cache eviction tests", TestsPassed),
        ("# fail 0", TestsPassed),
        ("# fail 2", TestsFailed),
    ] {
        assert_eq!(one(line).map(|m| m.0), Some(kind), "{line}");
    }
    let unittest = "Ran 7 tests in 0.031s\n\nOK\n";
    assert_eq!(kinds(unittest)[0].0, TestsPassed);
    let unittest = "Ran 7 tests in 0.031s\n\nFAILED (failures=1)\n";
    assert!(kinds(unittest).iter().all(|m| m.0 == TestRunEnded));
    // cargo's test binary that started its tests and printed no summary
    // before the next binary's start, or the log's end, failed in them.
    let cargo = "running 1 test\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n\n     Running target/debug/deps/b-1\n\nrunning 8 tests\nerror: process didn't exit successfully: `b-1` (signal: 11, SIGSEGV: invalid memory reference)\n";
    let all = kinds(cargo);
    assert_eq!(
        all.iter().map(|m| m.0).collect::<Vec<_>>(),
        [TestsPassed, TestRunning, ExitStatus]
    );
    // A test started and not ended: running; one that ended is nothing.
    let gtest = "[ RUN      ] Pool.Fill\n[       OK ] Pool.Fill (2 ms)\n[ RUN      ] Pool.Drain\nSegmentation fault (core dumped)\n";
    let all = kinds(gtest);
    assert_eq!(
        all.iter()
            .filter(|m| m.0 == TestRunning)
            .collect::<Vec<_>>(),
        [&(TestRunning, Some("test Pool.Drain".to_string()))]
    );
    for line in [
        "the retry passed",
        "PASSED",
        "PASS",
        "PASS: test_evict",
        "PASS - ",
        "All tests passed except two",
        "OK",
        "test_pool.py::test_fill PASSED",
    ] {
        assert!(!kinds(line).iter().any(|m| m.0 == TestsPassed), "{line}");
    }
}
