//! Messages of a text log as facts: what a runtime, the C library, a
//! shell or a test runner printed about the failure, with the line it is
//! on. A log without any stack often says all there is to say in them;
//! rules use them (`said`) as they use frames, and the exit phase weighs
//! them with the frames.

use serde::{Deserialize, Serialize};

/// A message of a text log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Message {
    pub kind: MessageKind,
    /// Its line in the log (from 1).
    pub line: usize,
    /// The message as the log has it (at most 200 characters).
    pub text: String,
    /// What it means, where that needs saying: the signal or Windows status
    /// an exit code stands for, the exception type `terminate` names, how
    /// many tests passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meaning: Option<String>,
}

/// What kind of message it is. The JSON value and the name rules write in
/// `said` are the kebab-case names.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum MessageKind {
    /// CPython's `Fatal Python error: ...` (it then aborts).
    PythonFatalError,
    /// CPython saying it is shutting down: `Python runtime state:
    /// finalizing`, `... at interpreter shutdown, possibly due to daemon
    /// threads`, `Python is finalizing`.
    PythonFinalizing,
    /// CPython's `Error in atexit._run_exitfuncs` (3.12 and later:
    /// `Exception ignored in atexit callback`): an exit handler failed.
    PythonAtexitError,
    /// The C++ runtime ending the process: `terminate called after throwing
    /// an instance of ...`, `terminate called without an active exception`,
    /// `libc++abi: terminating ...`.
    Terminate,
    /// The exception `terminate` names: `what():  ...`.
    ExceptionWhat,
    /// CUDA's runtime unloading: `cudaErrorCudartUnloading`, `driver
    /// shutting down`, CUDA error 4.
    CudaRuntimeUnloading,
    /// A call of a pure virtual function: `pure virtual method called`.
    PureVirtualCall,
    /// faulthandler's thread section `Garbage-collecting` then `<no Python
    /// frame>`: the collector ran with no Python code on the thread's
    /// stack, called from C, as the interpreter's own collections during
    /// finalization are.
    PythonGcWithoutFrame,
    /// The C library stopping the process on a corrupt heap: glibc's
    /// `free(): invalid pointer`, `double free or corruption (out)`, ...
    HeapCorruption,
    /// glog's `Check failed: ...` (it then aborts).
    CheckFailed,
    /// The C runtime's `assert` failing (it then aborts): MSVC's `Assertion
    /// failed: EXPR, file FILE, line N`, glibc's `PROG: FILE:N: FUNC:
    /// Assertion `EXPR' failed.`
    AssertionFailed,
    /// How the process ended, as a shell, a CI runner or a test driver
    /// reports it: `Segmentation fault (core dumped)`, `Aborted`, exit
    /// code 139, -11, 3221225477, 0xC0000005.
    ExitStatus,
    /// A Windows Error Reporting record (Event 1000, a WER problem
    /// signature): the faulting module, exception code and offset.
    WindowsErrorReport,
    /// A debugger's analysis of a crash: WinDbg's exception record
    /// (`ExceptionCode:`, a fail-fast's subcode), `!analyze -v`'s
    /// `FAILURE_BUCKET_ID` and `EXCEPTION_CODE_STR`.
    DebuggerAnalysis,
    /// A test runner's summary that every test passed (`5 passed`, `[
    /// PASSED ]`, `100% tests passed`, `All tests passed`, `OK`).
    TestsPassed,
    /// A test runner's summary or line saying a test failed.
    TestsFailed,
    /// A test runner's last summary of a run in which some tests failed
    /// (`1 failed, 22095 passed in 1093.27s`, `test result: FAILED.`,
    /// `90% tests passed, 1 tests failed out of 10`): the run had ended.
    TestRunEnded,
    /// The process was stopped for taking too long: a CI job's time limit
    /// or cancel (`The operation was canceled.`, `exceeded the maximum
    /// execution time`, GitLab's `execution took longer than`, Jenkins'
    /// `Build timed out`), ctest's `***Timeout`, Bazel's `TIMEOUT`,
    /// coreutils' `timeout: sending signal`. A hang, not a crash.
    TimedOut,
    /// A test runner's line saying a test started, with no end of it before
    /// the failure: the process failed while that test ran.
    TestRunning,
    /// Rust's panic on a thread-local used after its destructor ran
    /// (`cannot access a Thread Local Storage value during or after
    /// destruction`), on the main thread or an unnamed one (`'<unnamed>'`:
    /// a C or C++ host's thread, its main thread among them, or a worker
    /// spawned without a name): a thread's teardown, the process's when
    /// that thread is the main one.
    RustTlsDestroyed,
}

impl MessageKind {
    /// The kebab-case name (`cuda-runtime-unloading`).
    pub fn name(self) -> &'static str {
        match self {
            MessageKind::PythonFatalError => "python-fatal-error",
            MessageKind::PythonFinalizing => "python-finalizing",
            MessageKind::PythonAtexitError => "python-atexit-error",
            MessageKind::Terminate => "terminate",
            MessageKind::ExceptionWhat => "exception-what",
            MessageKind::CudaRuntimeUnloading => "cuda-runtime-unloading",
            MessageKind::PureVirtualCall => "pure-virtual-call",
            MessageKind::PythonGcWithoutFrame => "python-gc-without-frame",
            MessageKind::HeapCorruption => "heap-corruption",
            MessageKind::CheckFailed => "check-failed",
            MessageKind::AssertionFailed => "assertion-failed",
            MessageKind::ExitStatus => "exit-status",
            MessageKind::WindowsErrorReport => "windows-error-report",
            MessageKind::DebuggerAnalysis => "debugger-analysis",
            MessageKind::TestsPassed => "tests-passed",
            MessageKind::TestsFailed => "tests-failed",
            MessageKind::TestRunning => "test-running",
            MessageKind::TestRunEnded => "test-run-ended",
            MessageKind::TimedOut => "timed-out",
            MessageKind::RustTlsDestroyed => "rust-tls-destroyed",
        }
    }

    /// A test runner's line (a summary, a test that started or failed):
    /// the shape of the log, not the failure.
    pub fn is_test(self) -> bool {
        matches!(
            self,
            MessageKind::TestsPassed
                | MessageKind::TestsFailed
                | MessageKind::TestRunning
                | MessageKind::TestRunEnded
        )
    }

    /// A message that by itself says the process (or its runtime) was
    /// shutting down: exit evidence like an exit frame.
    pub fn says_exit(self) -> bool {
        matches!(
            self,
            MessageKind::PythonFinalizing
                | MessageKind::PythonAtexitError
                | MessageKind::CudaRuntimeUnloading
        )
    }
}

/// The exit evidence messages give by themselves, in the words a report
/// uses: the first message that says the process was shutting down.
pub fn exit_said(messages: &[Message]) -> Option<String> {
    let m = messages.iter().find(|m| m.kind.says_exit())?;
    Some(match m.kind {
        MessageKind::CudaRuntimeUnloading => format!(
            "CUDA reported its runtime unloading (line {}: `{}`)",
            m.line, m.text
        ),
        MessageKind::PythonAtexitError => format!(
            "the interpreter was running its exit handlers (line {}: `{}`)",
            m.line, m.text
        ),
        _ => format!("the runtime printed `{}` (line {})", m.text, m.line),
    })
}
