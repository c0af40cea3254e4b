//! Text traces, round two (issue #37): the formats read since, each in its
//! own words written here (our own names and text) with a look-alike that
//! must not read as a trace, several traces of one log as several reports,
//! and lldb's own output (`--batch`, attached and launched) on the Linux
//! sample programs against the dumps' answers.

use crate::common;
use crate::common::text::{analyze_path, analyze_text, answer, formats_and_answers};

use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

/// The functions of a report's first thread, innermost first.
fn functions(report: &Value) -> Vec<String> {
    report["threads"][0]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap_or("?").to_string())
        .collect()
}

fn is_error(report: &Value) -> bool {
    report["status"] == "error"
}

/// Two processes' `thread apply all bt` a few lines apart, two fenced
/// traces in one issue, two traces each in a GitHub Actions group: a report
/// each, never one report with the same thread twice.
#[test]
fn several_traces_in_one_log_are_several_reports() {
    let server = "\
Thread 2 (Thread 0x7f10a2b3c700 (LWP 5102) \"flusher\"):
#0  0x00007f10a4c2d3e4 in __futex_abstimed_wait_common64 () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007f10a4c2f111 in Journal::drain() () from /opt/relay/lib/libjournal.so
Thread 1 (Thread 0x7f10a4e58740 (LWP 5101) \"relayd\"):
#0  0x00007f10a4c2d3e4 in __futex_abstimed_wait_common64 () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007f10a4c31abc in __pthread_clockjoin_ex () from /lib/x86_64-linux-gnu/libc.so.6
#2  0x00007f10a3a1c220 in Journal::~Journal() () from /opt/relay/lib/libjournal.so
#3  0x00007f10a4bd9495 in __run_exit_handlers () from /lib/x86_64-linux-gnu/libc.so.6
#4  0x00007f10a4bd9610 in exit () from /lib/x86_64-linux-gnu/libc.so.6
";
    let client = "\
Thread 2 (Thread 0x7f55c0a1b700 (LWP 5202) \"poller\"):
#0  0x00007f55c2b1e4aa in epoll_wait () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007f55c1f0a0b0 in Poller::run() () from /opt/relay/lib/libnet.so
Thread 1 (Thread 0x7f55c2d47740 (LWP 5201) \"relay-cli\"):
#0  0x00007f55c2b1e4aa in poll () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007f55c1f0b111 in Client::wait_reply() () from /opt/relay/lib/libnet.so
#2  0x000055d0a0b0c0d0 in main ()
";
    let logs = [
        ("apart.log", format!("$ gdb -p 5101 -batch -ex 'thread apply all bt'\n{server}\n$ gdb -p 5201 -batch -ex 'thread apply all bt'\n{client}")),
        ("issue.md", format!("The server:\n\n```\n{server}```\n\nand the client:\n\n```\n{client}```\n")),
        ("ci.log", format!("##[group]server\n{server}##[endgroup]\n##[group]client\n{client}##[endgroup]\n")),
    ];
    for (name, text) in logs {
        let reports = analyze_text(name, &text);
        assert_eq!(reports.len(), 2, "{name}: {reports:#?}");
        for report in &reports {
            let ids: Vec<u64> = report["threads"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["id"].as_u64().unwrap())
                .collect();
            let mut unique = ids.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), ids.len(), "{name}: a thread twice: {ids:?}");
        }
        assert_eq!(answer(&reports[0]), "hang-during-exit", "{name}");
        assert_eq!(answer(&reports[1]), "none", "{name}");
    }
    // One process's stack cut into two fences by its reporter goes on
    // counting: one trace.
    let cut = "```\n#0  0x00007f10a4c2d3e4 in __futex_abstimed_wait_common64 () from /lib/x86_64-linux-gnu/libc.so.6\n#1  0x00007f10a4c31abc in __pthread_clockjoin_ex () from /lib/x86_64-linux-gnu/libc.so.6\n```\n...\n```\n#2  0x00007f10a3a1c220 in Journal::~Journal() () from /opt/relay/lib/libjournal.so\n#3  0x00007f10a4bd9495 in __run_exit_handlers () from /lib/x86_64-linux-gnu/libc.so.6\n```\n";
    assert_eq!(
        formats_and_answers("cut.md", cut),
        [("gdb".to_string(), "hang-during-exit".to_string())]
    );
}

/// lldb's `--batch` transcript of a process it attached to: the stop header
/// shows each thread's top frame, then `bt all` the whole stacks (read once,
/// not twice), and lldb's own failure to load its Python scripting is no
/// trace of the process.
#[test]
fn an_lldb_batch_transcript_is_one_trace() {
    let transcript = "\
Traceback (most recent call last):
  File \"<string>\", line 1, in <module>
ModuleNotFoundError: No module named 'lldb.embedded_interpreter'
(lldb) process attach --pid 7310
Process 7310 stopped
* thread #1, name = 'indexer', stop reason = signal SIGSTOP
    frame #0: 0x00007f3a10457f16 libc.so.6`__futex_abstimed_wait_common at futex-internal.c:57:12
  thread #2, name = 'indexer', stop reason = signal SIGSTOP
    frame #0: 0x00007f3a104a5df2 libc.so.6`__libc_pause at pause.c:29:10
Executable module set to \"/opt/index/bin/indexer\".
Architecture set to: x86_64-pc-linux-gnu.
(lldb) bt all
* thread #1, name = 'indexer', stop reason = signal SIGSTOP
  * frame #0: 0x00007f3a10457f16 libc.so.6`__futex_abstimed_wait_common at futex-internal.c:57:12
    frame #1: 0x00007f3a1045cce3 libc.so.6`__pthread_clockjoin_ex(threadid=139, thread_return=0x0, clockid=0, abstime=0x0, block=<unavailable>) at pthread_join_common.c:102:14
    frame #2: 0x0000560e0a0c1194 indexer`Index::close() at index.c:40:3
    frame #3: 0x00007f3a1041055d libc.so.6`__run_exit_handlers(status=0, listp=0x00007f3a105a5820, run_list_atexit=true, run_dtors=true) at exit.c:116:8
    frame #4: 0x00007f3a1041069a libc.so.6`__GI_exit(status=<unavailable>) at exit.c:146:3
  thread #2, name = 'indexer', stop reason = signal SIGSTOP
    frame #0: 0x00007f3a104a5df2 libc.so.6`__libc_pause at pause.c:29:10
    frame #1: 0x0000560e0a0c117a indexer`scan(arg=0x0) at index.c:12:5
    frame #2: 0x00007f3a1045b1f5 libc.so.6`start_thread(arg=<unavailable>) at pthread_create.c:442:8
";
    let reports = analyze_text("lldb.txt", transcript);
    assert_eq!(reports.len(), 1, "{reports:#?}");
    let report = &reports[0];
    assert_eq!(report["source"]["format"], "lldb");
    assert_eq!(report["threads"].as_array().unwrap().len(), 2);
    assert_eq!(functions(report).len(), 5, "the whole stack, once");
    assert_eq!(answer(report), "hang-during-exit");
    // An attach's SIGSTOP is the debugger's stop, not a crash.
    assert!(report["exception"].is_null());
}

/// lldb itself, attached to the Linux samples' hangs and running their
/// crashes (`--batch`, `-k 'bt all'` on the crash), gives the dumps'
/// answers: the same programs (sample-dumps/linux/bin), the same rules.
#[cfg(target_os = "linux")]
#[test]
fn lldb_renderings_of_the_linux_samples_give_the_dumps_diagnosis() {
    if std::process::Command::new("lldb")
        .arg("--version")
        .output()
        .is_err()
    {
        common::skip::skip(
            "text_formats::lldb_round_trips",
            "lldb is not installed (scripts/ci-setup-linux.sh installs it)",
        );
        return;
    }
    let linux = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps/linux");
    let bin = linux.join("bin");
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut compare = |program: &str, sample: &str, text: &[u8]| {
        let path = dir.path().join(format!("{program}.lldb.txt"));
        std::fs::write(&path, text).unwrap();
        let reports = analyze_path(&path);
        let got = reports.first().map(answer).unwrap_or_default();
        let want = answer(&analyze_path(&linux.join(format!("{sample}-linux.dmp")))[0]);
        if reports.len() != 1 || got != want {
            failures.push(format!(
                "{program}: {} reports, lldb text {got}, dump {want}\n{}",
                reports.len(),
                String::from_utf8_lossy(text)
            ));
        }
    };
    for (program, sample) in [
        ("cuda_exit_crash", "cuda-runtime-teardown-at-exit"),
        ("tls_exit_crash", "tls-destructor-crash-at-exit"),
        ("static_dtor_throw", "abort-during-exit"),
    ] {
        let out = std::process::Command::new("lldb")
            // (lldb runs `-o` after a crash on some stops and `-k` on
            // others: both, and a stack printed twice is read once.)
            .args(["--batch", "-o", "run", "-o", "bt all", "-k", "bt all", "--"])
            .arg(bin.join(program))
            .current_dir(&bin)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        compare(program, sample, &out.stdout);
    }
    for (program, sample) in [
        ("hip_exit_hang", "hip-unregister-fatbinary-hang"),
        ("dlopen_exit_hang", "glibc-loader-lock-at-exit"),
    ] {
        let mut child = std::process::Command::new(bin.join(program))
            .current_dir(&bin)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let out = std::process::Command::new("lldb")
            .args(["--batch", "-p"])
            .arg(child.id().to_string())
            .args(["-o", "bt all"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let _ = child.kill();
        let _ = child.wait();
        compare(program, sample, &out.stdout);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// WinDbg's `!analyze -v`: the exception record (a fail-fast and its
/// subcode), FAILURE_BUCKET_ID and STACK_TEXT. The subcode 7 is abort()'s
/// FAST_FAIL_FATAL_APP_EXIT, which says nothing of process exit.
#[test]
fn windbg_analyze_output() {
    let head = "\
KEY_VALUES_STRING: 1

    Key  : Analysis.CPU.mSec
    Value: 812

EXCEPTION_RECORD:  (.exr -1)
ExceptionAddress: 00007ffb1a2b4ace (ucrtbase!abort+0x000000000000004e)
   ExceptionCode: c0000409 (Security check failure or stack buffer overrun)
  ExceptionFlags: 00000001
NumberParameters: 1
   Parameter[0]: 0000000000000007
Subcode: 0x7 FAST_FAIL_FATAL_APP_EXIT

PROCESS_NAME:  tiler.exe

";
    let stack_work = "\
STACK_TEXT:  
000000c1`2e7fb760 00007ffb`1a2a1f2e     : 00000000`00000003 00000000`00000003 00000000`00000000 00000000`00000000 : ucrtbase!abort+0x4e
000000c1`2e7fb790 00007ffa`e0c0a111     : 00000000`00000000 00000000`00000000 00000000`00000000 00000000`00000000 : ucrtbase!terminate+0x1e
000000c1`2e7fb7c0 00007ffa`e0c01234     : 00000000`00000000 00000000`00000000 00000000`00000000 00000000`00000000 : tiler!Tiler::Render+0x91
000000c1`2e7fb800 00007ffb`1c017034     : 00000000`00000000 00000000`00000000 00000000`00000000 00000000`00000000 : tiler!main+0x54

FAILURE_BUCKET_ID:  FAIL_FAST_FATAL_APP_EXIT_c0000409_tiler.exe!Tiler::Render
";
    let reports = analyze_text("analyze.txt", &format!("{head}{stack_work}"));
    assert_eq!(reports.len(), 1, "{reports:#?}");
    let report = &reports[0];
    assert_eq!(report["source"]["format"], "windbg");
    assert_eq!(report["exception"]["code"], "0xc0000409");
    assert!(
        report["exception"]["abort"]
            .as_str()
            .unwrap()
            .contains("FAST_FAIL_FATAL_APP_EXIT"),
        "{}",
        report["exception"]
    );
    assert_eq!(functions(report)[2], "Tiler::Render");
    assert_eq!(answer(report), "none");
    // The same abort in a static destructor under the C runtime's exit.
    let stack_exit = stack_work
        .replace("tiler!Tiler::Render+0x91", "tiler!Tiler::~Tiler+0x91")
        .replace(
            "tiler!main+0x54",
            "tiler!`dynamic atexit destructor for 'g_tiler''+0x15",
        )
        + "000000c1`2e7fb840 00007ffb`1c017034     : 00000000`00000000 00000000`00000000 00000000`00000000 00000000`00000000 : ucrtbase!_execute_onexit_table+0x3d\n";
    let stack_exit = stack_exit.replace("\nFAILURE_BUCKET_ID", "FAILURE_BUCKET_ID");
    let reports = analyze_text("analyze-exit.txt", &format!("{head}{stack_exit}"));
    assert_eq!(answer(&reports[0]), "abort-during-exit");
    // The header alone (no STACK_TEXT): the record is read, nothing more
    // is claimed.
    let reports = analyze_text("analyze-head.txt", head);
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["source"]["format"], "messages");
    assert_eq!(answer(&reports[0]), "none");
}

/// A person's abridged stacks: gdb frames with only a name (`#11
/// __run_exit_handlers`), notes after them (`<-- re-locks`), several frames
/// joined on one line (`a -> b -> c`, `a / b`); WinDbg's `kc` and a bare
/// list of call sites.
#[test]
fn abridged_stacks() {
    let gdb = "\
#0  futex_wait (futex_word=... Registry::lock()::mutex)
#2  ___pthread_mutex_lock
#3  Registry::notify()   <-- takes the lock again
#5  Registry::finalize()   <-- already holds it
#7  __pthread_once_slow (Registry::finalize()::once)
#9  __run_exit_handlers
#10 __GI_exit
";
    let reports = analyze_text("abridged.txt", gdb);
    assert_eq!(answer(&reports[0]), "hang-during-exit");
    assert_eq!(functions(&reports[0])[2], "Registry::notify()");
    let joined = "\
#0  _PyObject_GC_UNTRACK (op = TileCache)
#1  type_dealloc (type = TileCache)
#3  insertdict / PyDict_SetItem / _PyModule_ClearDict
#5  _PyModule_Clear -> finalize_modules -> Py_FinalizeEx
";
    let reports = analyze_text("joined.txt", joined);
    assert_eq!(
        functions(&reports[0]),
        [
            "_PyObject_GC_UNTRACK",
            "type_dealloc",
            "insertdict",
            "PyDict_SetItem",
            "_PyModule_ClearDict",
            "_PyModule_Clear",
            "finalize_modules",
            "Py_FinalizeEx"
        ]
    );
    // No signal is named: the top frame is no wait, so a crash is
    // inferred, and said.
    assert_eq!(answer(&reports[0]), "crash-in-python-finalizer");
    let warnings = reports[0]["warnings"].to_string();
    assert!(warnings.contains("most likely a crash"), "{warnings}");
    let cdb = "\
ntdll!NtDelayExecution / RtlDelayExecution
KERNELBASE!SwitchToThread              <- yields while it spins
gpurt!Queue::drain                     <- polls the fence
gpurt!__gpurtUnregisterModule
<a plugin's atexit handler> -> ucrtbase!_execute_onexit_table
ntdll!LdrShutdownProcess -> RtlExitUserProcess
";
    let reports = analyze_text("cdb.txt", cdb);
    assert_eq!(reports[0]["source"]["format"], "windbg");
    assert_eq!(answer(&reports[0]), "hang-during-exit");
    let kc = "\
 # Call Site
00 ntdll!NtWaitForSingleObject
01 KERNELBASE!WaitForSingleObjectEx
02 mediakit!Worker::join
03 mediakit!Engine::~Engine
04 ucrtbase!_execute_onexit_table
05 ucrtbase!exit
";
    assert_eq!(
        formats_and_answers("kc.txt", kc),
        [("windbg".to_string(), "hang-during-exit".to_string())]
    );
    // Look-alikes: a changelog's issue numbers, prose naming a symbol, a
    // single bare line.
    for text in [
        "#1234 Refactor\n#1235 Cleanup\n#1236 Docs\n",
        "see mediakit!Worker::join for details\nand then mediakit!Engine::stop is called\n",
        "#3  free\n",
        "ntdll!NtWaitForSingleObject\n",
    ] {
        let reports = analyze_text("notes.txt", text);
        assert!(is_error(&reports[0]), "{text}: {reports:#?}");
    }
}

/// Visual Studio's Call Stack in another UI language, and copied with
/// spaces for tabs and the `Symbols loaded.` column.
#[test]
fn visual_studio_columns_in_any_language() {
    let german = " \tucrtbase.dll!00007ffd0b19f6fe()\tUnbekannt\n \tatlas.dll!00007ffcb447c2d6()\tUnbekannt\n \tucrtbase.dll!00007ffd0b173a93()\tUnbekannt\n \tkernel32.dll!00007ffd0c507fab()\tUnbekannt\n \tucrtbased.dll!00007ffc34661eda()\tUnbekannt\n>\tviewer.exe!__scrt_common_main_seh() Zeile 297\tC++\n \tviewer.exe!wWinMainCRTStartup(void * __formal) Zeile 17\tC++\n";
    let reports = analyze_text("de.txt", german);
    assert_eq!(reports[0]["source"]["format"], "visual-studio");
    assert_eq!(answer(&reports[0]), "crash-during-exit");
    let spaced = "   ntdll.dll!ZwWaitForSingleObject\u{2011}()     Unknown          Symbols loaded.\n           KERNELBASE.dll!WaitForSingleObjectEx\u{2011}()    Unknown          Symbols loaded.\n           atlas.dll!Pool::~Pool() Line 149         C++      Symbols loaded.\n           ucrtbase.dll!_execute_onexit_table() Line 12         C++      Symbols loaded.\n";
    let reports = analyze_text("spaced.txt", spaced);
    assert_eq!(functions(&reports[0])[0], "ZwWaitForSingleObject()");
    assert_eq!(answer(&reports[0]), "hang-during-exit");
}

/// Numbered frames with an address and no `in`: LLVM's stack dump, and a
/// crash reporter's `#N 0xADDR name (file:line)` with an unnamed frame.
#[test]
fn address_frames() {
    let llvm = "\
free(): invalid pointer
PLEASE submit a bug report to https://example.invalid/ and include the crash backtrace.
 #0 0x00007f0c517c4d90 llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) /src/llvm/lib/Support/Unix/Signals.inc:723:22
 #1 0x00007f0c50a4c1d0 (/usr/lib/libc.so.6+0x3d1d0)
 #2 0x00007f0c50aa53f4 __pthread_kill_implementation /src/glibc/nptl/pthread_kill.c:44:76
 #3 0x00007f0c50a334c3 abort /src/glibc/stdlib/abort.c:81:7
 #4 0x00007f0c50ab45ce cfree /src/glibc/malloc/malloc.c:3401:3
 #5 0x00007f0c5c0a0e11 Session::~Session() /src/tool/session.cpp:88:1
 #6 0x00007f0c50a4e495 __run_exit_handlers /src/glibc/stdlib/exit.c:113:8
 #7 0x00007f0c50a4e610 exit /src/glibc/stdlib/exit.c:143:3
";
    let reports = analyze_text("llvm.txt", llvm);
    assert_eq!(reports[0]["source"]["format"], "address-frames");
    assert_eq!(answer(&reports[0]), "abort-during-exit");
    let tracker = "\
Error UnixSignal: Process terminated with SI_TKILL (SIGABRT)
#0   0x0000f4f000842038 __pthread_kill_implementation (nptl/pthread_kill.c:44)
#1   0x0000f4f0007fa83c __GI_raise (sysdeps/posix/raise.c:27)
#2   0x0000f4f0007e7134 __GI_abort (stdlib/abort.c:81)
#3   0x0000f4f00084909c  
#4   0x0000f4f000841344 __pthread_exit (nptl/pthread_exit.c:30)
#5   0x0000ba9000a708a4 PyThread_exit_thread (Python/thread_pthread.h:727)
#6   0x0000ba9000b036b0 take_gil (Python/ceval_gil.c:452)
#7   0x0000ba9000b03adc PyEval_RestoreThread (Python/ceval_gil.c:710)
#8   0x0000f4f00060b768 _uploader::Uploader::__pymethod_flush__ 
";
    let reports = analyze_text("tracker.txt", tracker);
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert_eq!(functions(&reports[0]).len(), 9);
    assert_eq!(answer(&reports[0]), "python-thread-after-finalization");
}

/// An IDE's frame list (`name 0xADDR`, `name file:line`), and program output
/// of the same shape that is no stack.
#[test]
fn ide_frame_lists() {
    let list = "\
pure virtual method called
terminate called without an active exception

__pthread_kill_implementation 0x00007ffff4a9999b
__GI_abort 0x00007ffff4a268b7
<unknown> 0x00007ffff4ea4f06
std::terminate() 0x00007ffff4eb6ed7
__cxa_pure_virtual 0x00007ffff4eb7c05
Scene::~Scene scene.cpp:1575
Viewer::~Viewer viewer.cpp:228
Viewer::Shutdown viewer.cpp:804
App::MainLoop app.cpp:1602
main main.cpp:1304
__libc_start_call_main 0x00007ffff4a280d0
";
    let reports = analyze_text("clion.txt", list);
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert_eq!(reports[0]["source"]["format"], "frame-list");
    assert_eq!(functions(&reports[0]).len(), 11);
    // An explicit shutdown from main's loop is no process exit.
    assert_eq!(answer(&reports[0]), "none");
    let output = "token 0x7ffff7fc6060\ntoken 0x7ffff7fc6060\n~token 0x7ffff7fc6060\n";
    assert!(is_error(&analyze_text("out.txt", output)[0]));
}

/// macOS's spindump and `sample` call trees (outermost first, indented),
/// read as their busiest path.
#[test]
fn sampled_call_trees() {
    let spindump = "\
  Thread 0x2a1f3c     DispatchQueue 1     500 samples (1-500)     priority 31 (base 31)
    500  start + 1 (libdyld.dylib + 5000) [0x7fff6a0f3cc9]
      500  main + 56 (Reader + 3364) [0x100b9ef18]
        500  Py_Exit + 13 (libpython3.9.dylib + 1010253) [0x109cc8a4d]
          500  Py_FinalizeEx + 95 (libpython3.9.dylib + 1008495) [0x109cc836f]
            500  wait_for_thread_shutdown + 120 (libpython3.9.dylib + 1008100) [0x109cc8100]
              500  PyThread_acquire_lock_timed + 200 (libpython3.9.dylib + 900100) [0x109cb0100]
                500  pthread_cond_wait + 10 (libsystem_pthread.dylib + 16000) [0x7fff6a1f0f2a]
          12  other_branch + 4 (Reader + 9000) [0x100ba1000]
";
    let reports = analyze_text("spindump.txt", spindump);
    assert_eq!(reports[0]["source"]["format"], "spindump");
    assert_eq!(functions(&reports[0])[0], "pthread_cond_wait");
    assert_eq!(functions(&reports[0]).len(), 7, "the busiest branch only");
    assert_eq!(answer(&reports[0]), "python-exit-waits-for-thread");
}

/// gdb's `thread apply all py-bt`: each thread's Python frames, innermost
/// first, under gdb's thread header.
#[test]
fn gdb_py_bt() {
    let text = "\
(gdb) thread apply all py-bt

Thread 2 (Thread 0x7fd66d7fa700 (LWP 4102)):
Traceback (most recent call first):
  File \"/usr/lib64/python3.9/threading.py\", line 312, in wait
    waiter.acquire()
  File \"/srv/app/feeder.py\", line 40, in loop
    self.ready.wait()

Thread 1 (Thread 0x7fd6c51ae740 (LWP 4101)):
Traceback (most recent call first):
  File \"/usr/lib64/python3.9/threading.py\", line 1080, in _wait_for_tstate_lock
    elif lock.acquire(block, timeout):
  File \"/usr/lib64/python3.9/threading.py\", line 1060, in join
    self._wait_for_tstate_lock()
  File \"/usr/lib64/python3.9/threading.py\", line 1448, in _shutdown
    atexit_call()
";
    let reports = analyze_text("py-bt.txt", text);
    assert_eq!(reports.len(), 1, "{reports:#?}");
    let main = reports[0]["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == 4101)
        .unwrap();
    assert_eq!(main["frames"][0]["function"], "_wait_for_tstate_lock");
    assert_eq!(answer(&reports[0]), "python-exit-waits-for-thread");
}

/// A sampled thread that spent every sample in one frame never left it:
/// stuck there (a hang to a sampling profiler), wait function or not. At
/// exit that is a hang at exit; one whose samples spread over branches
/// was making progress, and one stuck during its work is no exit-time
/// failure.
#[test]
fn a_sampled_thread_stuck_in_one_frame() {
    let stuck_at_exit = "\
  Thread 0x51c2       DispatchQueue 1     800 samples (1-800)     priority 31 (base 31)
    800  start + 1 (libdyld.dylib + 4100) [0x7fff6a0f3001]
      800  main + 90 (Viewer + 2200) [0x100b90898]
        800  Py_Exit + 13 (libpython3.8.dylib + 900100) [0x109c00104]
          800  Py_FinalizeEx + 77 (libpython3.8.dylib + 899000) [0x109c00000]
            800  _PyGC_CollectNoFail + 30 (libpython3.8.dylib + 1100100) [0x109d00100]
              800  slot_tp_finalize + 99 (libpython3.8.dylib + 430000) [0x109b00000]
                800  ??? (zmqlike.so + 5120) [0x10a001400]
";
    let reports = analyze_text("stuck.txt", stuck_at_exit);
    assert_eq!(reports[0]["source"]["format"], "spindump");
    assert_eq!(answer(&reports[0]), "hang-during-exit");
    let evidence = reports[0]["diagnoses"][0]["evidence"].to_string();
    assert!(evidence.contains("all 800 samples there"), "{evidence}");
    // The same in `sample`'s words.
    let sampled = "\
    800 Thread_4401   DispatchQueue_1: com.apple.main-thread  (serial)
    + 800 start  (in libdyld.dylib) + 1  [0x7fff6a0f3001]
    +   800 main  (in Viewer) + 90  [0x100b90898]
    +     800 Py_FinalizeEx  (in libpython3.8.dylib) + 77  [0x109c00000]
    +       800 slot_tp_finalize  (in libpython3.8.dylib) + 99  [0x109b00000]
    +         800 ???  (in zmqlike.so)  load address 0x10a000000 + 0x1400  [0x10a001400]
";
    assert_eq!(
        formats_and_answers("sample.txt", sampled),
        [("spindump".to_string(), "hang-during-exit".to_string())]
    );
    // Must not: finalization making progress (its samples spread over two
    // leaves), and a thread stuck in one frame during its work.
    let moving = stuck_at_exit
        .replace(
            "                800  ??? (zmqlike.so + 5120) [0x10a001400]\n",
            "                500  ??? (zmqlike.so + 5120) [0x10a001400]\n",
        )
        .replace(
            "              800  slot_tp_finalize",
            "              500  slot_tp_finalize",
        )
        + "            300  module_dealloc + 20 (libpython3.8.dylib + 431000) [0x109b003e8]\n";
    assert_eq!(answer(&analyze_text("moving.txt", &moving)[0]), "none");
    let working = stuck_at_exit
        .replace("Py_Exit", "PyRun_SimpleStringFlags")
        .replace("Py_FinalizeEx", "PyEval_EvalCode")
        .replace("_PyGC_CollectNoFail", "PyObject_Call");
    let answer_working = answer(&analyze_text("working.txt", &working)[0]);
    assert!(
        answer_working == "none" || answer_working == "hang-during-work",
        "{answer_working}"
    );
}

/// A DLL entry point's own arguments say why it runs: reason 0
/// (DLL_PROCESS_DETACH) only at unload or exit, read from 32-bit WinDbg
/// `kb`/`kv` columns (here with every hex word a link, as an issue tracker
/// migrated from another one writes them) and from Visual Studio's
/// parameter values. Attach (1) and thread detach (3) are not exit.
#[test]
fn a_dll_entry_point_s_detach_argument() {
    let link =
        |word: &str| format!("[{word} (bb)](https://tracker.example.org/widget/commits/{word})");
    let kb = |reason: &str| {
        let rows = [
            ("0019f6a8", "6b2c1f3e", ["6b2a0000", reason, "00000001"], "widget!Registry::Flush+0x2e (FPO: [Non-Fpo]) (CONV: thiscall) [c:\\src\\widget\\registry.cpp @ 88]"),
            ("0019f6c0", "6b2c2101", ["6b2a0000", reason, "00000001"], "widget!dllmain_dispatch+0x8c (FPO: [Non-Fpo]) (CONV: cdecl) [c:\\crt\\dll_dllmain.cpp @ 195]"),
            ("0019f6d4", "77c1a2b6", ["6b2a0000", reason, "00000001"], "widget!_DllMainCRTStartup+0x1c (FPO: [Non-Fpo]) (CONV: stdcall)"),
            ("0019f6f4", "77c0f1d0", ["6b2c20f0", "6b2a0000", reason], "ntdll!LdrxCallInitRoutine+0x16"),
        ];
        let mut text = String::from("```\n");
        for (child, ret, args, site) in rows {
            let args: Vec<String> = args.iter().map(|a| link(a)).collect();
            text += &format!("{child} {} {} {site}\n", link(ret), args.join(" "));
        }
        text + "```\n"
    };
    let reports = analyze_text("kb.txt", &kb("00000000"));
    assert_eq!(reports[0]["source"]["format"], "windbg");
    assert_eq!(
        functions(&reports[0])[..2],
        ["Registry::Flush", "dllmain_dispatch"]
    );
    assert_eq!(answer(&reports[0]), "crash-during-exit");
    assert!(reports[0]["source"]["exit_evidence"]
        .as_str()
        .unwrap()
        .contains("DLL_PROCESS_DETACH"));
    for reason in ["00000001", "00000003"] {
        let reports = analyze_text("kb-attach.txt", &kb(reason));
        assert_eq!(functions(&reports[0])[0], "Registry::Flush");
        assert_eq!(answer(&reports[0]), "none", "reason {reason}");
    }
    // Visual Studio, with parameter values shown.
    let vs = |reason: &str| {
        format!(
            ">\twidget.dll!Registry::Flush() Line 88\tC++\n \twidget.dll!DllMain(HINSTANCE__ * module=0x6b2a0000, unsigned long reason_for_call={reason}, void * reserved=0x00000001) Line 40\tC++\n \t[External Code]\t\n"
        )
    };
    assert_eq!(
        formats_and_answers("vs.txt", &vs("0")),
        [("visual-studio".to_string(), "crash-during-exit".to_string())]
    );
    assert_eq!(
        formats_and_answers("vs-attach.txt", &vs("1")),
        [("visual-studio".to_string(), "none".to_string())]
    );
}

/// A module's own TLS callback in a Visual Studio stack, known by the
/// parameters the loader passes it (handle, reason, reserved): a crash in
/// the per-thread cleanup it runs is thread-local teardown, a possible
/// finding while nothing below shows exit. Must not: the same callback
/// shown with an attach reason, and a function that only has the same
/// parameter types.
#[test]
fn a_tls_callback_known_by_its_parameters() {
    let stack = |callback: &str| {
        format!(
            " \tucrtbase.dll!00007ffb1a2b3c4d()\tUnknown\n \tucrtbase.dll!00007ffb1a2a0010()\tUnknown\n>\tapp.exe!journal::drop_thread_buffers() Line 210\tC++\n \tapp.exe!{callback} Line 260\tC++\n \t[External Code]\t\n"
        )
    };
    let reports = analyze_text(
        "tls.txt",
        &stack("journal::on_tls(void * module, unsigned long reason, void * reserved)"),
    );
    assert_eq!(reports[0]["source"]["format"], "visual-studio");
    assert_eq!(
        answer(&reports[0]),
        "possibly: tls-destructor-crash-at-exit"
    );
    for not in [
        "journal::on_tls(void * module=0x00007ff600000000, unsigned long reason=2, void * reserved=0x0000000000000000)",
        "journal::copy_block(void * dst, unsigned long size, void * src)",
    ] {
        assert_eq!(answer(&analyze_text("not-tls.txt", &stack(not))[0]), "none", "{not}");
    }
}

/// A call chain written out by hand as an indented tree, outermost caller
/// first, one level deeper a line, with modules, arguments and comments:
/// the deepest line is the innermost frame, and the stop is inferred from
/// it (a join: a hang). Shapes of the same indentation that are no stack
/// (a Markdown list, YAML, a Python traceback, code, an outline of words, a
/// tree that branches) are not read as one.
#[test]
fn call_trees_written_by_hand() {
    let hang = "\
The plugin loader never returns; what I see in the debugger:

    main
      std::exit (code=0)
        __run_exit_handlers                     # atexit handlers run here
          metrics::Registry::~Registry()        (libmetrics.so)
            metrics::Flusher::stop() -> std::thread::join()   // <-- stuck
";
    let reports = analyze_text("tree.txt", hang);
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert_eq!(reports[0]["source"]["format"], "call-tree");
    assert_eq!(
        functions(&reports[0]),
        [
            "std::thread::join()",
            "metrics::Flusher::stop()",
            "metrics::Registry::~Registry()",
            "__run_exit_handlers",
            "std::exit",
            "main"
        ]
    );
    assert_eq!(
        reports[0]["threads"][0]["frames"][2]["module"],
        "libmetrics.so"
    );
    assert_eq!(answer(&reports[0]), "hang-during-exit");

    // A crash: the deepest frame is no wait.
    let crash = "\
main
  exit
    __cxa_finalize
      cache::Store::~Store()
        cache::Entry::release()
          free                          <-- SIGSEGV here
";
    let reports = analyze_text("crash.txt", crash);
    assert_eq!(reports[0]["source"]["format"], "call-tree");
    assert_eq!(answer(&reports[0]), "crash-in-static-destructor");

    // The same join during the program's work: no exit-time answer.
    let work = "\
main
  app::Server::run()
    app::Server::reload_config()
      app::Worker::restart()
        std::thread::join()
";
    let reports = analyze_text("work.txt", work);
    assert_eq!(reports[0]["source"]["format"], "call-tree");
    assert_eq!(answer(&reports[0]), "none");

    for (name, text) in [
        (
            "list.md",
            "- exit_handlers\n  - run_atexit\n    - cache_destroy\n      - free_all\n        - std_join\n",
        ),
        (
            "config.yaml",
            "server_cfg:\n  worker_pool:\n    max_threads:\n      join_timeout: 5\n        retry_on_exit: true\n",
        ),
        (
            "outline.txt",
            "plan\n  read\n    write\n      think\n        sleep\n",
        ),
        (
            "code.rs",
            "fn shutdown_all() {\n    for worker in pool {\n        worker.join();\n            exit_now(1);\n",
        ),
        (
            "branches.txt",
            "main\n  run_exit_handlers\n    cache_free\n      pool_join\n    log_flush\n",
        ),
    ] {
        let reports = analyze_text(name, text);
        assert!(is_error(&reports[0]), "{name}: {reports:#?}");
    }
    let traceback = "\
Traceback (most recent call last):
  File \"tool.py\", line 9, in <module>
    run_exit_handlers()
  File \"tool.py\", line 5, in run_exit_handlers
    thread_join()
RuntimeError: cannot join current thread
";
    let reports = analyze_text("tb.txt", traceback);
    assert_eq!(reports[0]["source"]["format"], "python-traceback");
}

/// Valgrind's memcheck reports, with and without the `==PID==` prefix: the
/// error's own stack is the thread's, the stacks of where the block was
/// freed or allocated are not, and leak records are no failure.
#[test]
fn valgrind_reports() {
    let at_exit = "\
==4711== Memcheck, a memory error detector
==4711== Invalid read of size 8
==4711==    at 0x5A1B2C3: telemetry::Sink::flush() (sink.cc:88)
==4711==    by 0x5A1B4D0: telemetry::Sink::~Sink() (sink.cc:41)
==4711==    by 0x4E7A1F2: __cxa_finalize (cxa_finalize.c:83)
==4711==    by 0x5A10233: ??? (in /opt/tel/lib/libtelemetry.so)
==4711==    by 0x4011F6A: _dl_fini (dl-fini.c:138)
==4711==    by 0x4E79D8C: __run_exit_handlers (exit.c:108)
==4711==    by 0x4E79F0F: exit (exit.c:139)
==4711==    by 0x4E5E08F: (below main) (libc-start.c:342)
==4711==  Address 0x6c3f0a0 is 16 bytes inside a block of size 64 free'd
==4711==    at 0x483CA3F: free (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==4711==    by 0x5A1C001: telemetry::Buffer::release() (buffer.cc:19)
==4711==    by 0x400A11: main (main.cc:30)
==4711==  Block was alloc'd at
==4711==    at 0x483877F: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==4711==    by 0x400A00: main (main.cc:12)
";
    let reports = analyze_text("vg.txt", at_exit);
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert_eq!(reports[0]["source"]["format"], "valgrind");
    let frames = functions(&reports[0]);
    assert_eq!(frames[0], "telemetry::Sink::flush()");
    assert_eq!(
        frames.len(),
        8,
        "the freed and allocated stacks are no frames: {frames:?}"
    );
    assert_eq!(
        reports[0]["threads"][0]["frames"][3]["module"],
        "libtelemetry.so"
    );
    let exit_answer = answer(&reports[0]);
    assert!(
        ["crash-in-static-destructor", "crash-during-exit"].contains(&exit_answer.as_str()),
        "{exit_answer}"
    );

    // Pasted without the prefix, during work, the block freed at exit by
    // another thread: the freeing stack is history, no exit evidence.
    let work = "\
Invalid write of size 4
   at 0x10A2B3: Queue::push(int) (queue.cc:51)
   by 0x10A9F0: Producer::run() (producer.cc:22)
   by 0x4E3B608: start_thread (pthread_create.c:477)
   by 0x4F77292: clone (clone.S:95)
 Address 0x5b8e048 is 8 bytes inside a block of size 32 free'd
   at 0x483CA3F: free (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
   by 0x10A400: Queue::~Queue() (queue.cc:12)
   by 0x4E79D8C: __run_exit_handlers (exit.c:108)
   by 0x4E79F0F: exit (exit.c:139)
";
    let reports = analyze_text("vg-work.txt", work);
    assert_eq!(reports[0]["source"]["format"], "valgrind");
    assert_eq!(functions(&reports[0]).len(), 4);
    assert_eq!(answer(&reports[0]), "none");

    // A leak record's stack (printed at exit, by design) is no failure.
    let leak = "\
==77== 64 bytes in 1 blocks are definitely lost in loss record 3 of 9
==77==    at 0x483877F: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==77==    by 0x10A400: Cache::Cache() (cache.cc:12)
==77==    by 0x4E79D8C: __run_exit_handlers (exit.c:108)
==77==    by 0x4E79F0F: exit (exit.c:139)
";
    let reports = analyze_text("vg-leak.txt", leak);
    assert!(is_error(&reports[0]), "{reports:#?}");
    let error = reports[0]["error"].as_str().unwrap_or_default();
    assert!(error.contains("Valgrind report"), "{error}");
}
