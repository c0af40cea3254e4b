//! The text's own words about exit (issue #37): a reporter's sentence, a
//! heading over the stack, the program's announcement before the failure.
//! They suggest exit when the frames neither show it nor rule it out, and
//! the answer is a possible finding that says which words. Every report
//! here is written for these tests, each with a look-alike whose words
//! speak of exit in another sense, deny it, or whose stack rules it out.
//! Also the report headers the same reports come in: a macOS crash
//! report's crashed thread and exception, systemd-coredump's stack of a
//! process that dumped core.

use crate::common::text::{analyze_text, answer};

use serde_json::Value;

/// The one report of `text`.
fn one(name: &str, text: &str) -> Value {
    let reports = analyze_text(name, text);
    assert_eq!(reports.len(), 1, "{name}: {reports:#?}");
    reports[0].clone()
}

/// A gdb `bt` cut before any exit frame, below the reporter's words.
fn gdb_report(words: &str) -> String {
    format!(
        "{words}\n\nProgram received signal SIGSEGV, Segmentation fault.\n\
         #0  0x00007ffff7a5c2d0 in Registry::remove (this=0x5555557a0eb0, key=7) at registry.cpp:88\n\
         #1  0x00007ffff7a5d113 in Handle::~Handle (this=0x5555557a1f20) at handle.cpp:31\n\
         #2  0x00007ffff7a5d1a9 in std::default_delete<Handle>::operator() (this=<optimized out>) at unique_ptr.h:85\n"
    )
}

#[test]
fn a_reporters_words_make_a_possible_exit_answer_that_names_them() {
    for words in [
        "The viewer segfaults on exit since 2.3, backtrace below:",
        "Seems to crash only when I quit the app from the tray. Here is bt:",
        "We get a crash during interpreter shutdown:",
    ] {
        let report = one("report.txt", &gdb_report(words));
        assert_eq!(
            answer(&report),
            "possibly: crash-during-exit",
            "{words}: {report:#}"
        );
        let diagnosis = &report["diagnoses"][0];
        let possible = diagnosis["possible"].as_str().unwrap_or_default();
        assert!(
            possible.contains("words") && possible.contains(words.trim_end_matches(':')),
            "{words}: the possible finding names the words: {diagnosis:#}"
        );
        let suggested = report["source"]["exit_suggested"].as_str().unwrap();
        assert!(suggested.contains("line 1"), "{suggested}");
    }
}

#[test]
fn words_of_exit_in_another_sense_or_denied_suggest_nothing() {
    for words in [
        "The viewer crashes with exit code 139 while loading a tile:",
        "It crashes on exit from fullscreen mode:",
        "Not a crash on exit: it happens in the middle of the render.",
        "I close the file dialog and then it crashes:",
        "It doesn't crash at shutdown, only while streaming:",
    ] {
        let report = one("report.txt", &gdb_report(words));
        assert_eq!(answer(&report), "none", "{words}: {report:#}");
        assert!(report["source"]["exit_suggested"].is_null(), "{words}");
    }
}

/// The words suggest; a stack that shows the program's main loop still
/// running rules exit out, and the words do not override it.
#[test]
fn a_stack_that_rules_exit_out_outweighs_the_words() {
    let text = "It crashes on exit, see:\n\nProgram received signal SIGSEGV, Segmentation fault.\n\
        #0  0x00007ffff7a5c2d0 in Registry::remove (this=0x5555557a0eb0, key=7) at registry.cpp:88\n\
        #1  0x00007ffff7a5d113 in Viewer::onTimer (this=0x5555557a1f20) at viewer.cpp:310\n\
        #2  0x00007ffff7a5d1a9 in Viewer::run (this=0x5555557a1f20) at viewer.cpp:120\n\
        #3  0x0000555555555189 in main (argc=1, argv=0x7fffffffe0f8) at main.cpp:12\n";
    let report = one("report.txt", text);
    assert_eq!(answer(&report), "none", "{report:#}");
}

/// A hang the words put at exit: the blocked thread is blamed, main (the
/// lowest thread id) first,
/// and the answer is a possible hang at exit.
#[test]
fn a_hang_on_exit_in_words_blames_the_blocked_main_thread() {
    let text = "The game hangs on exit. I attached gdb and got:\n\n\
        Thread 2 (Thread 0x7f15d1bff6c0 (LWP 4412) \"audio\"):\n\
        #0  0x00007f15d6a91d61 in __futex_abstimed_wait_common64 (private=0, cancel=true) at ./nptl/futex-internal.c:57\n\
        #1  0x00007f15d6a9a8c3 in __pthread_cond_wait_common (cond=0x55d4c39a1e40) at ./nptl/pthread_cond_wait.c:503\n\
        #2  0x000055d4c2f1a0b4 in Mixer::pump (this=0x55d4c39a1e00) at mixer.cpp:77\n\n\
        Thread 1 (Thread 0x7f15d6e2c740 (LWP 4401) \"game\"):\n\
        #0  0x00007f15d6a91d61 in __futex_abstimed_wait_common64 (private=128, cancel=true) at ./nptl/futex-internal.c:57\n\
        #1  0x00007f15d6a96e33 in __pthread_clockjoin_ex (threadid=139731470468800) at ./nptl/pthread_join_common.c:102\n\
        #2  0x000055d4c2f1b2e0 in Audio::stop (this=0x55d4c39a1d00) at audio.cpp:149\n\
        #3  0x000055d4c2f0c911 in Engine::deinit () at engine.cpp:220\n";
    let report = one("hang.txt", text);
    assert_eq!(answer(&report), "possibly: hang-during-exit", "{report:#}");
    assert!(report["diagnoses"][0]["possible"].is_string(), "{report:#}");
    assert_eq!(report["exit_phase"]["blamed_thread"], 4401, "{report:#}");
    // The same stacks without the words: a hang, and Engine::deinit's
    // name alone suggests exit; with neither, nothing does.
    let bare = text.split_once('\n').unwrap().1;
    assert_eq!(answer(&one("hang.txt", bare)), "possibly: hang-during-exit");
    let neither = bare.replace("Engine::deinit", "Engine::step");
    assert_eq!(answer(&one("hang.txt", &neither)), "none");
}

/// The program's announcement shortly before the failure, or the service
/// manager stopping it, suggests exit; the same line long before the
/// failure does not.
#[test]
fn the_programs_announcement_just_before_the_failure() {
    let stack = gdb_report("").trim_start().to_string();
    for said in [
        "2026-03-01 10:00:02 [info] Shutting down...",
        "Mar  1 10:00:02 host systemd[1]: Stopping Stream host service...",
        "streamd: Info: Main loop has exited",
    ] {
        let report = one("log.txt", &format!("serving\n{said}\n{stack}"));
        assert_eq!(
            answer(&report),
            "possibly: crash-during-exit",
            "{said}: {report:#}"
        );
    }
    let far: String = (0..30).map(|i| format!("frame {i} rendered\n")).collect();
    let text = format!("[info] Shutting down...\n{far}{stack}");
    assert_eq!(answer(&one("log.txt", &text)), "none");
}

/// A macOS crash report: the exception line names the stop, `Thread N
/// Crashed::` the thread, and the threads are split at their headers.
#[test]
fn a_macos_crash_reports_exception_and_crashed_thread() {
    let text = "Exception Type:        EXC_BAD_ACCESS (SIGSEGV)\n\
        Exception Codes:       KERN_INVALID_ADDRESS at 0x0000000000000010\n\
        Termination Reason:    Namespace SIGNAL, Code 11 Segmentation fault: 11\n\n\
        Thread 0:: Dispatch queue: com.apple.main-thread\n\
        0   libsystem_kernel.dylib        \t0x00007ff8123a1a2e mach_msg_trap + 10\n\
        1   CoreFoundation                \t0x00007ff8124c2f3a __CFRunLoopRun + 1322\n\n\
        Thread 3 Crashed:\n\
        0   libtile.dylib                 \t0x000000010f2a14c0 TileCache::evict(unsigned long) + 64\n\
        1   libtile.dylib                 \t0x000000010f2a1a12 TileCache::worker() + 210\n\
        2   libsystem_pthread.dylib       \t0x00007ff8123d94e1 _pthread_start + 125\n";
    let report = one("Viewer.crash", text);
    assert_eq!(report["exception"]["name"], "SIGSEGV", "{report:#}");
    let crashing: Vec<&Value> = report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["crashing"] == true)
        .collect();
    assert_eq!(crashing.len(), 1, "{report:#}");
    let top = crashing[0]["frames"][0]["function"]
        .as_str()
        .unwrap_or_default();
    assert!(top.starts_with("TileCache::evict"), "{report:#}");
    assert_eq!(report["threads"].as_array().unwrap().len(), 2);
    // Only the termination reason: still the signal.
    let bare = text.replacen("Exception Type:        EXC_BAD_ACCESS (SIGSEGV)\n", "", 1);
    assert_eq!(one("Viewer.crash", &bare)["exception"]["name"], "SIGSEGV");
}

/// systemd-coredump writes stacks only for a process that dumped core,
/// the signalled thread first: without its `Signal:` line the crash is
/// inferred on that thread; a first thread in a wait infers nothing.
#[test]
fn a_coredump_without_its_signal_line_infers_the_crash_on_the_first_thread() {
    let text = "Process 47117 (viewer) of user 1000 dumped core.\n\n\
        Stack trace of thread 47143:\n\
        #0  0x00007f8e6e487984 _ZNK9TileCache5countEv (libtile.so.1 + 0x487984)\n\
        #1  0x000055dd7b76560c n/a (/usr/bin/viewer + 0xa360c)\n\n\
        Stack trace of thread 47117:\n\
        #0  0x00007f8e6c6b58f3 __futex_abstimed_wait_common (libc.so.6 + 0xb58f3)\n\
        #1  0x00007f8e6c6b5b29 pthread_cond_wait (libc.so.6 + 0xb5b29)\n";
    let report = one("coredump.txt", text);
    assert!(
        report["exception"]["name"]
            .as_str()
            .unwrap()
            .contains("inferred"),
        "{report:#}"
    );
    let crashing = report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["crashing"] == true)
        .map(|t| t["id"].clone());
    assert_eq!(crashing, Some(Value::from(47143)), "{report:#}");
    let waiting = text.replace(
        "_ZNK9TileCache5countEv (libtile.so.1 + 0x487984)",
        "__futex_abstimed_wait_common (libc.so.6 + 0xb58f3)",
    );
    assert!(one("coredump.txt", &waiting)["exception"]["crash"] != true);
}

/// A quit path named in the frames (`Engine::deinit`, `mch_exit`) suggests
/// exit even with main still running below it: programs tear down their
/// own parts before they call exit. The end of something smaller (a
/// socket's shutdown, a thread's exit) suggests nothing.
#[test]
fn a_quit_path_in_the_frames_suggests_exit_under_a_running_main() {
    let stack = |function: &str| {
        format!(
            "Program received signal SIGSEGV, Segmentation fault.\n\
             #0  0x00007ffff7a5c2d0 in Registry::remove (this=0x5555557a0eb0, key=7) at registry.cpp:88\n\
             #1  0x00007ffff7a5d113 in {function} (this=0x5555557a1f20) at engine.cpp:31\n\
             #2  0x0000555555555189 in main (argc=1, argv=0x7fffffffe0f8) at main.cpp:12\n"
        )
    };
    for function in ["Engine::deinit", "audio_shutdown", "App::onQuit"] {
        let report = one("bt.txt", &stack(function));
        assert_eq!(
            answer(&report),
            "possibly: crash-during-exit",
            "{function}: {report:#}"
        );
        let suggested = report["source"]["exit_suggested"].as_str().unwrap();
        assert!(suggested.contains(function), "{suggested}");
    }
    for function in [
        "Connection::shutdown",
        "file_desc::shutdown",
        "WorkerThread::exit",
        "Player::exitFullscreen",
        "Engine::step",
    ] {
        let report = one("bt.txt", &stack(function));
        assert_eq!(answer(&report), "none", "{function}: {report:#}");
    }
    // A worker in its pool's shutdown while main still runs the program's
    // work on another thread: the program is at work, no hint.
    let worker = "Thread 2 (Thread 0x7f15d1bff6c0 (LWP 4412)):\n\
        #0  0x00007ffff7a5c2d0 in Registry::remove (this=0x5555557a0eb0, key=7) at registry.cpp:88\n\
        #1  0x00007ffff7a5d113 in Pool::shutdown (this=0x5555557a1f20) at pool.cpp:31\n\
        #2  0x00007ffff7a5d200 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442\n\
        \n\
        Thread 1 (Thread 0x7f15d6e2c740 (LWP 4401)):\n\
        #0  0x00007ffff7a5e000 in Scene::render (this=0x5555557a3000) at scene.cpp:12\n\
        #1  0x00007ffff7a5e100 in App::frame (this=0x5555557a3100) at app.cpp:40\n\
        #2  0x0000555555555189 in main (argc=1, argv=0x7fffffffe0f8) at main.cpp:12\n";
    let text = format!(
        "Thread 2 \"pool\" received signal SIGSEGV, Segmentation fault.\n(gdb) thread apply all bt\n\n{worker}"
    );
    let report = one("bt.txt", &text);
    assert_eq!(answer(&report), "none", "{report:#}");
}

/// What programs print when they crash, read as the crash: a signal
/// handler's own report and its frame on top of the stack, the C
/// runtime's failed assert, a libunwind walk's lines; each with the
/// same text from normal work that is no crash.
#[test]
fn the_crash_reports_programs_print_themselves() {
    let stop = |text: &str| one("log.txt", text)["exception"]["name"].clone();
    // A console game's own handler, with its shutdown announced before.
    let quit =
        "> quit\nServer shutdown...\nGame module shutdown...\nSys_Signal: Received signal 11\n";
    let report = one("console.log", quit);
    assert_eq!(report["exception"]["name"], "SIGSEGV", "{report:#}");
    assert_eq!(answer(&report), "possibly: crash-during-exit", "{report:#}");
    // A signal of no crash, and a debugger's stop, are no handler's report.
    for text in [
        "Received signal 15, shutting down\n",
        "Caught signal SIGINT\n",
    ] {
        assert!(analyze_text("log.txt", text)
            .iter()
            .all(|r| r["exception"]["crash"] != true));
    }
    // The C runtime's assert: an abort.
    let assert = "Assertion failed: m_ready, file C:\\src\\gfx\\shaders.cpp, line 144\n";
    assert_eq!(stop(assert), "SIGABRT");
    // A handler's frame on top of backtrace_symbols: a crash.
    let handler = "htop(CRT_handleSIGSEGV+0x2f)[0x419bdf]\n/usr/lib/libc.so.6(+0x330b0)[0x7f558a1200b0]\nhtop(String_freeArray+0xd)[0x411ced]\nhtop(main+0x548)[0x4075f8]\n";
    assert_eq!(one("bt.txt", handler)["exception"]["crash"], true);
    let sigint = handler.replace("CRT_handleSIGSEGV", "CRT_handleSIGINT");
    assert_ne!(one("bt.txt", &sigint)["exception"]["crash"], true);
    // A libunwind walk (registers, no module) down through exit.
    let walk = " ======== exception handler (sig 6) =========\n\
        ip = 7f269ba0818b, sp = 7fff57aee4d0: (gsignal+0xcb) [0x7f269ba0818b]\n\
        ip = 7f269b9e7859, sp = 7fff57aee5f0: (abort+0x12b) [0x7f269b9e7859]\n\
        ip = 55b6bc56d21f, sp = 7fff57aee780: (_ZN3log7PcapLogD1Ev+0x2d1) [0x55b6bc56d21f]\n\
        ip = 7f269ba0bbe0, sp = 7fff57aee8c0: (exit+0x20) [0x7f269ba0bbe0]\n\
        ip = 7f269b9e90ba, sp = 7fff57aee8d0: (__libc_start_main+0xfa) [0x7f269b9e90ba]\n";
    assert_eq!(answer(&one("walk.txt", walk)), "abort-during-exit");
}

/// Visual Studio's own note inside a Call Stack does not cut the stack in
/// two, and a DLL's entry point (`_CRT_INIT`, whose parameters are a TLS
/// callback's) is no TLS callback: a static destructor run from the DLL's
/// detach is answered as one.
#[test]
fn a_dll_detachs_static_destructor_in_a_call_stack_with_the_debuggers_note() {
    let text = "        base.dll!icinga::ScriptFrame::PopFrame() Line 57    C++\n\
        base.dll!icinga::ScriptFrame::~ScriptFrame() Line 41    C++\n\
        cli.dll!`dynamic atexit destructor for 'l_ScriptFrame''()   C++\n\
        cli.dll!_CRT_INIT(void * hDllHandle, unsigned long dwReason, void * lpreserved) Line 416    C\n\
        cli.dll!__DllMainCRTStartup(void * hDllHandle, unsigned long dwReason, void * lpreserved) Line 522  C\n\
        ntdll.dll!77989b5e()    Unknown\n\
        [Frames below may be incorrect and/or missing, no symbols loaded for ntdll.dll]\n\
        ntdll.dll!77989ad8()    Unknown\n\
        KernelBase.dll!75611eda()   Unknown\n";
    let report = one("stack.txt", text);
    assert_eq!(report["threads"].as_array().unwrap().len(), 1, "{report:#}");
    assert_eq!(answer(&report), "crash-in-static-destructor", "{report:#}");
}

/// Visual Studio's Output window: the process's modules unloading, then
/// the access violation it stopped on (here as its Russian build prints
/// both): a possible crash at exit. The same access violation with no
/// unloading before it is a crash, and nothing more.
#[test]
fn a_debuggers_output_that_unloads_modules_before_an_access_violation() {
    let output = "===== App::OnExit =====\n\
        \"app.exe\" (Win32). Выгружено \"C:\\Windows\\System32\\secur32.dll\"\n\
        Поток 0x2544 завершился с кодом 0 (0x0).\n\
        Вызвано исключение: нарушение доступа для чтения.\n\
        **s_pSecFn** было nullptr.\n";
    let report = one("output.txt", output);
    assert_eq!(report["exception"]["code"], "0xc0000005", "{report:#}");
    assert_eq!(answer(&report), "possibly: crash-during-exit", "{report:#}");
    let english = "'app.exe' (Win32): Loaded 'C:\\Windows\\System32\\secur32.dll'\n\
        Exception thrown: read access violation.\n\
        **this** was nullptr.\n";
    let report = one("output.txt", english);
    assert_eq!(report["exception"]["code"], "0xc0000005", "{report:#}");
    assert_eq!(answer(&report), "none", "{report:#}");
}
