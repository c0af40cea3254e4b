//! Windows-side texts of exit-time failures (issue #37), each written here
//! in the tool's own shape with our own names, and each with a look-alike
//! of the same shape that is no exit-time failure: .NET's unhandled
//! exception reports (the console's and the event log's), the .NET
//! runtime's own shutdown in a WinDbg stack, and a Visual Studio Call Stack
//! whose exit frame is an MSVC lambda, with a row of dots where frames were
//! left out; and a process viewer's thread list, which is no stack.

use crate::common::text::{analyze_text, answer, formats_and_answers};

use serde_json::Value;

fn one(name: &str, text: &str) -> (String, String) {
    let all = formats_and_answers(name, text);
    assert_eq!(all.len(), 1, "{name}: {all:?}");
    all.into_iter().next().unwrap()
}

/// The Application event log's record of an unhandled .NET exception
/// (Event 1026), thrown from the runtime's exit path, and the same record
/// from a button's handler while the program ran.
#[test]
fn dotnet_event_log_records() {
    let at_exit = "\
Log Name:      Application
Source:        .NET Runtime
Event ID:      1026
Description:
Application: Lantern.exe
Framework Version: v4.0.30319
Description: The process was terminated due to an unhandled exception.
Exception Info: exception code c0000005, exception address 00007FFB12345678
Stack:
   at Lantern.Native.Tray.Release(IntPtr)
   at Lantern.Shell.OnProcessExiting(System.Object, System.EventArgs)
   at System.Environment._Exit(Int32)
   at System.Environment.Exit(Int32)
   at Lantern.Program.Main(System.String[])
";
    assert_eq!(
        one("event-1026-exit.txt", at_exit),
        ("dotnet".to_string(), "crash-during-exit".to_string())
    );
    let at_work = "\
Application: Lantern.exe
CoreCLR Version: 8.0.124.61009
.NET Version: 8.0.1
Description: The process was terminated due to an unhandled exception.
Exception Info: System.NullReferenceException: Object reference not set to an instance of an object.
   at Lantern.Views.Settings.OnApplyClicked(Object sender, RoutedEventArgs e) in C:\\src\\lantern\\Views\\Settings.xaml.cs:line 88
   at System.Windows.EventRoute.InvokeHandlersImpl(Object source, RoutedEventArgs args, Boolean reRaised)
--- End of stack trace from previous location ---
   at System.Windows.Threading.Dispatcher.Run()
   at Lantern.App.Main()
";
    let (format, said) = one("event-1026-work.txt", at_work);
    assert_eq!((format.as_str(), said.as_str()), ("dotnet", "none"));
    // The runtime's unload of a window (an `Unloaded` handler) is no exit.
    let unloaded = at_work.replace(
        "Lantern.Views.Settings.OnApplyClicked",
        "Lantern.Views.Settings.OnUnloaded",
    );
    assert_eq!(one("event-1026-unloaded.txt", &unloaded).1, "none");
}

/// The console's report of an unhandled exception (`Unhandled exception.`)
/// raised by a ProcessExit handler, and by ordinary work.
#[test]
fn dotnet_console_reports() {
    let at_exit = "\
Unhandled exception. System.ObjectDisposedException: Cannot access a disposed object.
Object name: 'Channel'.
   at Relay.Hub.Flush() in /src/relay/Hub.cs:line 41
   at Relay.Program.<>c.<Main>b__0_0(Object _, EventArgs _) in /src/relay/Program.cs:line 12
   at System.AppContext.OnProcessExit()
";
    assert_eq!(
        one("console-exit.txt", at_exit).1,
        "crash-during-exit".to_string()
    );
    let at_work = "\
Unhandled exception. System.ObjectDisposedException: Cannot access a disposed object.
Object name: 'Channel'.
   at Relay.Hub.Flush() in /src/relay/Hub.cs:line 41
   at Relay.Hub.Tick(Object state) in /src/relay/Hub.cs:line 60
   at System.Threading.TimerQueueTimer.CallCallback(Boolean isThreadPool)
";
    assert_eq!(one("console-work.txt", at_work).1, "none");
    // A Java stack has the same `at a.b(c)` shape: no .NET trace.
    let java = "\
Exception in thread \"main\" java.lang.IllegalStateException: closed
\tat org.relay.Hub.flush(Hub.java:41)
\tat org.relay.Main.main(Main.java:12)
";
    assert!(formats_and_answers("java.txt", java)
        .iter()
        .all(|(format, said)| format != "dotnet" && said == "none"));
}

/// WinDbg's `kc` of a .NET host waiting while the runtime shuts down (the
/// runtime's own shutdown frames are exit frames), and the finalizer
/// thread's ordinary wait while the program runs.
#[test]
fn clr_shutdown_in_windbg() {
    let at_exit = "\
 # Call Site
00 ntdll!NtWaitForMultipleObjects
01 KERNELBASE!WaitForMultipleObjectsEx
02 coreclr!CLREventBase::WaitEx
03 coreclr!FinalizerThread::RaiseShutdownEvents
04 coreclr!EEShutDownHelper
05 coreclr!EEShutDown
06 coreclr!coreclr_shutdown_2
07 hostrun!RunApp
08 hostrun!wmain
09 kernel32!BaseThreadInitThunk
0a ntdll!RtlUserThreadStart
";
    assert_eq!(
        one("clr-shutdown.txt", at_exit),
        ("windbg".to_string(), "hang-during-exit".to_string())
    );
    let at_work = "\
 # Call Site
00 ntdll!NtWaitForMultipleObjects
01 KERNELBASE!WaitForMultipleObjectsEx
02 coreclr!CLREventBase::WaitEx
03 coreclr!FinalizerThread::WaitForFinalizerEvent
04 coreclr!FinalizerThread::FinalizerThreadWorker
05 coreclr!FinalizerThread::FinalizerThreadStart
06 kernel32!BaseThreadInitThunk
07 ntdll!RtlUserThreadStart
";
    let (_, said) = one("clr-finalizer.txt", at_work);
    assert!(
        !said.contains("exit"),
        "a finalizer's wait is no exit: {said}"
    );
}

/// Visual Studio's Call Stack with a row of dots where the person left
/// frames out, the static destructor's code in an MSVC lambda of the C
/// runtime's atexit table (`_execute_onexit_table::__l2::<lambda>`); and
/// the same window at start-up, in the lambda of the function that
/// registers a handler.
#[test]
fn visual_studio_lambda_frames_and_elisions() {
    let at_exit = ">\tgauge.exe!Gauge::Sink::Flush(const char * text=0x0000000000000000) Line 77\tC++
 \tgauge.exe!Gauge::Sink::~Sink() Line 31\tC++
.....
 \tgauge.exe!_execute_onexit_table::__l2::<lambda>() Line 206\tC++
 \tgauge.exe!__crt_seh_guarded_call<int>::operator()<void <lambda>(void)>(__acrt_lock_and_call::__l2::void <lambda>(void) && setup={...}) Line 204\tC++
 \tgauge.exe!common_exit(const int return_code=0, const _crt_exit_cleanup_mode cleanup_mode=_crt_exit_full_cleanup, const _crt_exit_return_mode return_mode=_crt_exit_terminate_process) Line 281\tC++
";
    let all = formats_and_answers("vs-lambda-exit.txt", at_exit);
    assert_eq!(
        all,
        [("visual-studio".to_string(), "crash-during-exit".to_string())],
        "one stack, dots and all"
    );
    // Without `common_exit` the lambda alone says it.
    let lambda_only: String = at_exit
        .lines()
        .filter(|l| !l.contains("common_exit"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(
        one("vs-lambda-only.txt", &lambda_only).1,
        "crash-during-exit"
    );
    let at_start = ">\tgauge.exe!Gauge::Sink::Open(const char * path=0x0000000000000000) Line 19\tC++
 \tgauge.exe!_register_onexit_function::__l2::<lambda>() Line 112\tC++
.....
 \tgauge.exe!_initterm(void(*)() * first=0x00007ff6a1b2c000, void(*)() * last=0x00007ff6a1b2c010) Line 22\tC++
 \tgauge.exe!__scrt_common_main_seh() Line 258\tC++
";
    assert_eq!(one("vs-lambda-start.txt", at_start).1, "none");
}

/// ctest's `--output-on-failure` on a Windows runner: the crashed test's
/// status line (`Exit code 0xc0000005`) first, then the test program's own
/// output, whose last word is that every test passed: the program crashed
/// on its way out. The same log whose output stops inside a test is a crash
/// during the work.
#[test]
fn ctest_output_after_the_status_line() {
    let log = "\
Test project D:/a/beacon/build
    Start 1: beacon_io
1/2 Test #1: beacon_io ........................   Passed    0.21 sec
    Start 2: beacon_gpu
2/2 Test #2: beacon_gpu .......................Exit code 0xc0000005
***Exception:   1.02 sec
Running main() from gmock_main.cc
[==========] Running 4 tests from 1 test suite.
[ RUN      ] Gpu.Upload
[       OK ] Gpu.Upload (3 ms)
[----------] 4 tests from Gpu (40 ms total)
[==========] 4 tests from 1 test suite ran. (41 ms total)
[  PASSED  ] 4 tests.

50% tests passed, 1 tests failed out of 2

The following tests FAILED:
\t  2 - beacon_gpu (Exit code 0xc0000005)
";
    assert_eq!(one("ctest-exit.txt", log).1, "crash-during-exit");
    let during: String = log
        .lines()
        .take_while(|l| !l.starts_with("[       OK ]"))
        .chain(["", "50% tests passed, 1 tests failed out of 2"])
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(one("ctest-work.txt", &during).1, "none");
}

/// Node.js's fatal error with its native stack (Windows's form: nearest
/// export and a decimal offset) from an addon's destructor under the
/// environment's cleanup, and the same error from the event loop.
#[test]
fn node_native_stacks() {
    let at_exit = "\
FATAL ERROR: v8::HandleScope::CreateHandle() Cannot create a handle without a HandleScope
----- Native stack trace -----

 1: 00007FF71A2B3C4D node::OnFatalError+1014
 2: 00007FF71B3C4D5E v8::HandleScope::CreateHandle+51
 3: 00007FFA11223344 napi_get_reference_value+40
 4: 00007FFA11223400 quill!Quill::Store::~Store+88
 5: 00007FF71A2B1111 node::Environment::RunCleanup+200
 6: 00007FF71A2B2222 node::FreeEnvironment+300
 7: 00007FF71A2B3333 node::Start+400
";
    assert_eq!(
        one("node-exit.txt", at_exit),
        ("node".to_string(), "abort-during-exit".to_string())
    );
    let at_work = at_exit
        .replace(
            "quill!Quill::Store::~Store+88",
            "quill!Quill::Store::Get+88",
        )
        .replace("node::Environment::RunCleanup+200", "uv_run+200")
        .replace("node::FreeEnvironment+300", "node::SpinEventLoop+300");
    assert_eq!(one("node-work.txt", &at_work).1, "none");
}

/// A debugger's stack of a process ending itself (`NtTerminateProcess`
/// under the C runtime's exit) with no exception named: the process was
/// stopped at its exit, which is no crash. The same stack under an access
/// violation the debugger names is one.
#[test]
fn a_process_ending_itself_is_no_crash() {
    let stack = "\
0:000> kn
 # Child-SP          RetAddr           Call Site
00 000000a1`11aff6d8 00007ffb`2c1e3d8f ntdll!NtTerminateProcess+0x14
01 000000a1`11aff6e0 00007ffb`2b0ed9da ntdll!RtlExitUserProcess+0xbf
02 000000a1`11aff710 00007ffb`29a129a7 KERNEL32!ExitProcessImplementation+0xa
03 000000a1`11aff740 00007ff6`12a1fde4 ucrtbase!exit_or_terminate_process+0x44
04 000000a1`11aff770 00007ff6`12a1c0de ucrtbase!common_exit+0x6f
05 000000a1`11aff7c0 00007ffb`2b0e8c14 lathe!wmain+0x2e4
06 000000a1`11aff800 00007ffb`2c1a7e11 KERNEL32!BaseThreadInitThunk+0x14
07 000000a1`11aff830 00000000`00000000 ntdll!RtlUserThreadStart+0x21
";
    let (format, said) = one("ending-itself.txt", stack);
    assert_eq!((format.as_str(), said.as_str()), ("windbg", "none"));
    let crashed = format!(
        "(2a4c.1f30): Access violation - code c0000005 (first chance)\n{}",
        stack.replace(
            "00 000000a1`11aff6d8 00007ffb`2c1e3d8f ntdll!NtTerminateProcess+0x14\n",
            "00 000000a1`11aff6d8 00007ffb`2c1e3d8f lathe!Spindle::~Spindle+0x14\n"
        )
    );
    assert_eq!(one("crashed-at-exit.txt", &crashed).1, "crash-during-exit");
}

/// faulthandler on Windows logs an exception as it is raised, before any
/// handler: a COM error (`code 0x80010108`) or a C++ exception (`code
/// 0xe06d7363`) printed after a passing run is no crash, while an access
/// violation or a heap corruption (`code 0xc0000374`) there is one at exit.
#[test]
fn windows_faulthandler_codes_that_are_no_crash() {
    let log = |said: &str| {
        format!(
            "\
tests/test_panel.py::test_render PASSED                                  [100%]

============================== 6 passed in 3.02s ==============================
Windows fatal exception: {said}

Thread 0x00001b2c (most recent call first):
  File \"C:\\venv\\lib\\site-packages\\panelkit\\session.py\", line 88 in close
  File \"C:\\Python311\\Lib\\atexit.py\", line 10 in _run_exitfuncs
"
        )
    };
    for handled in ["code 0x80010108", "code 0xe06d7363", "code 0x800706ba"] {
        let all = formats_and_answers("handled.txt", &log(handled));
        assert!(
            all.iter().all(|(_, said)| said == "none"),
            "{handled}: {all:?}"
        );
    }
    for fatal in ["access violation", "code 0xc0000374"] {
        let all = formats_and_answers("fatal.txt", &log(fatal));
        assert!(
            all.iter()
                .any(|(_, said)| said.ends_with("during-exit") || said.contains("at-exit")),
            "{fatal}: {all:?}"
        );
    }
}

/// A crash handler's or the debugger dialog's words for the exception
/// (`Unhandled exception at 0x... in app.exe: 0xC0000005: ...`,
/// `Unhandled exception 0xc0000005`) name the crash of the `module!name+0x..`
/// frames under them, and the offset is no part of the name.
#[test]
fn unhandled_exception_lines_and_offsets() {
    for said in [
        "Unhandled exception at 0x00007FFB1A2B3C4D (gfxdrv64.dll) in loom.exe: 0xC0000005: Access violation reading location 0x0000000000000010.",
        "Unhandled exception 0xc0000005",
        "Unhandled exception: c0000005",
    ] {
        let text = format!(
            "{said}\n\ngfxdrv64.dll!DrvSwapLayers+0x3f1\nloom.exe!Loom::Canvas::~Canvas+0x48\nloom.exe!Loom::Window::~Window+0x12\n"
        );
        let reports = analyze_text("unhandled.txt", &text);
        assert_eq!(reports.len(), 1, "{said}");
        let report = &reports[0];
        assert_eq!(report["exception"]["code"], "0xc0000005", "{said}");
        let frames = report["threads"][0]["frames"].as_array().unwrap();
        assert_eq!(frames[1]["function"], "Loom::Canvas::~Canvas", "{said}");
    }
    // Prose that starts the same names no exception.
    let prose = "Unhandled exceptions are written to the log below.\n\nloom.exe!Loom::Canvas::Draw+0x48\nloom.exe!Loom::Window::Paint+0x12\nloom.exe!wWinMain+0x90\n";
    let reports = analyze_text("prose.txt", prose);
    assert!(
        reports
            .iter()
            .all(|r| r["exception"]["code"] != "0xc0000005"),
        "{reports:#?}"
    );
}

/// Visual Studio's first-chance report the debugger stopped on: an access
/// violation (`Exception thrown at ...: 0xC0000005: ...`) is the crash of
/// the Call Stack under it; a C++ exception's report (`Microsoft C++
/// exception: ...`), which a handler may catch, names none.
#[test]
fn visual_studio_exception_thrown_lines() {
    let stack = ">\tucrtbased.dll!free_dbg_nolock(void * const block=0x0000020c1a2b3c40, const int block_use=1) Line 996\tC++
 \tquern.exe!Quern::Pool::~Pool() Line 40\tC++
 \tquern.exe!`dynamic atexit destructor for 'g_pool''() Line 12\tC++
 \tucrtbased.dll!_execute_onexit_table::__l2::<lambda>() Line 206\tC++
";
    let av = format!("Exception thrown at 0x00007FFB2A1B0C11 (ucrtbased.dll) in quern.exe: 0xC0000005: Access violation reading location 0xFFFFFFFFFFFFFFFF.\n\n{stack}");
    let reports = analyze_text("thrown-av.txt", &av);
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["exception"]["code"], "0xc0000005");
    assert_eq!(answer(&reports[0]), "crash-in-static-destructor");
    let cpp = "Exception thrown at 0x00007FFB2A1B0C11 in quern.exe: Microsoft C++ exception: std::runtime_error at memory location 0x000000A1B2C3D4E0.\n\n>\tKernelBase.dll!RaiseException() Line 12\tC++\n \tquern.exe!Quern::Pool::Load() Line 40\tC++\n \tquern.exe!main() Line 12\tC++\n";
    let reports = analyze_text("thrown-cpp.txt", cpp);
    assert!(reports
        .iter()
        .all(|r| r["exception"]["code"] != "0xc0000005" && answer(r) == "none"));
}

/// Event Viewer writes a WER record in the system's language: the
/// exception code and the faulting module are read in German, Russian
/// (the problem signature's tab-separated form) and Chinese as in English.
/// A record alone shows no exit, and none is claimed.
#[test]
fn localized_error_reports() {
    let records = [
        (
            "de.txt",
            "Name der fehlerhaften Anwendung: kiln.exe, Version: 1.2.0.0, Zeitstempel: 0x6a1b2c3d\nName des fehlerhaften Moduls: glaze.dll, Version: 1.2.0.0, Zeitstempel: 0x6a1b2c3e\nAusnahmecode: 0xc0000005\nFehleroffset: 0x000000000001a2b3\n",
            "0xc0000005",
        ),
        (
            "ru.txt",
            "Сигнатура проблемы:\n  Имя события проблемы:\tAPPCRASH\n  Имя приложения:\tkiln.exe\n  Имя модуля с ошибкой:\tglaze.dll\n  Код исключения:\tc0000374\n  Смещение исключения:\t0001a2b3\n",
            "0xc0000374",
        ),
        (
            "zh.txt",
            "错误应用程序名称: kiln.exe，版本: 1.2.0.0\n错误模块名称: glaze.dll，版本: 1.2.0.0\n异常代码: 0xc0000409\n错误偏移量: 0x000000000001a2b3\n",
            "0xc0000409",
        ),
    ];
    for (name, text, code) in records {
        let reports = analyze_text(name, text);
        assert_eq!(reports.len(), 1, "{name}");
        let report = &reports[0];
        assert_eq!(report["exception"]["code"], code, "{name}");
        let said = report["source"]["messages"].to_string();
        assert!(said.contains("glaze.dll"), "{name}: {said}");
        assert_eq!(answer(report), "none", "{name}");
    }
    // A line that starts the same but is no record.
    let prose = "Code de sortie du programme : 0\nAusnahmecode wird nicht angezeigt\n";
    assert!(analyze_text("prose.txt", prose)
        .iter()
        .all(|r| r["exception"]["code"].is_null() || r["status"] != "ok"));
}

/// .NET's `Fatal error.` for an access violation the runtime will not let
/// the program catch, from a finalizer run at exit and from ordinary work.
#[test]
fn dotnet_fatal_errors() {
    let at_exit = "\
Fatal error. System.AccessViolationException: Attempted to read or write protected memory. This is often an indication that other memory is corrupt.
   at Kiln.Native.Interop.kiln_close(IntPtr)
   at Kiln.Session.Finalize()
   at System.AppContext.OnProcessExit()
";
    let reports = analyze_text("fatal-exit.txt", at_exit);
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["exception"]["code"], "0xc0000005");
    assert_eq!(answer(&reports[0]), "crash-during-exit");
    let at_work = at_exit
        .replace("Kiln.Session.Finalize()", "Kiln.Session.Flush()")
        .replace(
            "System.AppContext.OnProcessExit()",
            "Kiln.Program.Main(System.String[])",
        );
    assert_eq!(one("fatal-work.txt", &at_work).1, "none");
}

/// A crash handler's log over WinDbg-shaped rows (OBS Studio's: `Thread
/// A2C: name (Crashed)`, then `Stack EIP Arg0 ... Address` rows): each
/// thread is its own, and the one marked crashed is the crash's.
#[test]
fn crash_handler_thread_headers() {
    let log = "\
Unhandled exception: c0000005
Fault address: 7FF95BE81D09 (c:\\program files\\easel\\plugins\\brush.dll)

Thread 1B2C: render_worker (Crashed)
Stack            EIP              Arg0             Arg1             Arg2             Arg3             Address
00000094390FF8C0 00007FF95BE81D09 0000000000000001 0000000000000002 0000000000000003 0000000000000004 brush.dll!brush_destroy+0x9
00000094390FF8F0 00007FF956A227C1 0000000000000001 0000000000000002 0000000000000003 0000000000000004 easel.dll!source_release+0xd1
00000094390FF950 00007FF9569F96CA 0000000000000001 0000000000000002 0000000000000003 0000000000000004 easel.dll!render_worker_main+0x3e8

Thread 2D40
Stack            EIP              Arg0             Arg1             Arg2             Arg3             Address
000000943A0FF5C8 00007FFD708530D4 0000000000000000 0000000000000000 0000000000000000 0000000000000010 ntdll.dll!0x7ffd708530d4
000000943A0FF5D0 00007FFD70800204 0000000000000000 0000000000000000 0000000000000000 0000000000000000 kernelbase.dll!0x7ffd70800204
000000943A0FF8C0 00007FFD6DD27974 0000000000000000 0000000000000000 0000000000000000 0000000000000000 kernel32.dll!0x7ffd6dd27974
";
    let reports = analyze_text("handler.txt", log);
    assert_eq!(reports.len(), 1, "{reports:#?}");
    let report = &reports[0];
    let threads = report["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2, "{threads:#?}");
    let crashing: Vec<&Value> = threads.iter().filter(|t| t["crashing"] == true).collect();
    assert_eq!(crashing.len(), 1);
    assert_eq!(crashing[0]["frames"][0]["function"], "brush_destroy");
    assert_eq!(report["exception"]["code"], "0xc0000005");
}

/// Process Explorer's or Process Hacker's Threads tab copied as text: each
/// row a thread id and the function the thread started in, no stack. It is
/// not read as a call stack (with or without its header, tab- or
/// space-separated); a file of nothing else is an error that says what it
/// is, and a Call Stack beside it is read alone.
#[test]
fn process_viewer_thread_lists_are_no_stacks() {
    let rows = [
        ("7312", "", "", "loom.exe!wmainCRTStartup"),
        ("6140", "", "", "ntdll.dll!TppWorkerThread"),
        (
            "5524",
            "< 0.01",
            "1,024,512",
            "ucrtbase.dll!thread_start<unsigned int (__cdecl*)(void *),1>",
        ),
    ];
    let tabs: String = rows
        .iter()
        .map(|(tid, cpu, cycles, start)| format!("{tid}\t{cpu}\t{cycles}\t{start}\n"))
        .collect();
    let spaces: String = rows
        .iter()
        .map(|(tid, cpu, cycles, start)| format!("{tid:<8}{cpu:<8}{cycles:<16}{start}\n"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    for (name, text, header) in [
        (
            "tabs.txt",
            format!("TID\tCPU\tCycles Delta\tStart Address\n{tabs}"),
            true,
        ),
        (
            "spaces.txt",
            format!("TID     CPU     Cycles Delta    Start Address\n{spaces}"),
            true,
        ),
        (
            "hacker.txt",
            format!("TID\tCPU\tCycles delta\tStart address\tPriority (symbolic)\n{tabs}"),
            true,
        ),
        ("rows.txt", tabs.clone(), false),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, &text).unwrap();
        let out = crate::common::bin()
            .arg("analyze")
            .arg(&path)
            .output()
            .unwrap();
        // The error is the input's report: on standard output.
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(!out.status.success(), "{name}: {said}");
        assert!(
            said.contains(&format!("error: {}: ", path.display())),
            "{name}: {said}"
        );
        assert_eq!(said.contains("a thread list"), header, "{name}: {said}");
    }

    // Beside a Call Stack the list is left out, and the stack is read as it
    // would be alone.
    let stack = "Unhandled exception at 0x00007FFB1A2B3C4D (gfxdrv64.dll) in loom.exe: 0xC0000005: Access violation reading location 0x0000000000000010.\n\n\
>\tgfxdrv64.dll!DrvSwapLayers() Line 210\tC++\n\
 \tloom.exe!Loom::Canvas::~Canvas() Line 48\tC++\n\
 \tloom.exe!Loom::Window::~Window() Line 12\tC++\n";
    let both = format!("TID\tCPU\tCycles Delta\tStart Address\n{tabs}\nThe call stack:\n{stack}");
    for (name, text) in [("both.txt", both.as_str()), ("stack.txt", stack)] {
        let reports = analyze_text(name, text);
        assert_eq!(reports.len(), 1, "{name}: {reports:#?}");
        let report = &reports[0];
        assert_eq!(report["source"]["format"], "visual-studio", "{name}");
        assert_eq!(report["exception"]["code"], "0xc0000005", "{name}");
        let functions: Vec<&str> = report["threads"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|t| t["frames"].as_array().unwrap())
            .filter_map(|f| f["function"].as_str())
            .collect();
        assert_eq!(
            functions,
            [
                "DrvSwapLayers()",
                "Loom::Canvas::~Canvas()",
                "Loom::Window::~Window()"
            ],
            "{name}"
        );
    }

    // A Call Stack written as numbered rows (`0<TAB>module!name`) is still
    // a stack: one column before the frame is no thread list.
    let numbered = "0\tloom.exe!Loom::Canvas::Draw\n1\tloom.exe!Loom::Window::Paint\n2\tloom.exe!wWinMain\n3\tloom.exe!__scrt_common_main_seh\n";
    let reports = analyze_text("numbered.txt", numbered);
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert_eq!(
        reports[0]["threads"][0]["frames"][0]["function"],
        "Loom::Canvas::Draw"
    );
}
