//! Is the process exiting, is a thread blocked, which thread is to blame.
//!
//! Decided from the stacks alone, so it works on a hand-written stack as well
//! as on a dump. Windows system DLLs are often unsymbolized (always, in dumps
//! written under Wine), so besides named exit functions a thread also counts
//! as exiting when its CRT startup frame is on the stack with no `main` above
//! it: main has returned and the CRT is running `exit`.

use std::sync::LazyLock;

use crate::model::{
    bare_name, offset, Blocked, ExitMarker, ExitStage, Frame, Report, Thread, Trust,
};
use crate::pattern::{Case, Pattern};

/// How many frames from the top a wait function may sit and still count as
/// the thread's current wait (wrappers such as WaitForSingleObjectEx ->
/// NtWaitForSingleObject, or pthread_cond_wait -> futex helpers).
const WAIT_DEPTH: usize = 8;

/// Exception codes that mark how a dump was taken rather than a crash.
const DUMP_REQUESTED_CODES: [(u32, &str); 2] = [
    (
        0xffff_ffff,
        "dump requested (no crash): written on demand from a live process",
    ),
    (
        0x0517_a7ed,
        "dump requested (no crash): Crashpad simulated exception",
    ),
];
const BREAKPOINT: u32 = 0x8000_0003;

use ExitStage::*;

/// (stage, module pattern or "", function pattern): exit-time functions.
const EXIT_FUNCTIONS: &[(ExitStage, &str, &str)] = &[
    (ProcessExit, "", "ExitProcess"),
    (ProcessExit, "", "RtlExitUserProcess"),
    (LoaderShutdown, "", "LdrShutdownProcess"),
    (LoaderShutdown, "", "LdrpCallInitRoutine*"),
    (CrtExit, "", "exit"),
    (CrtExit, "", "common_exit"),
    (CrtExit, "", "doexit"),
    (CrtExit, "", "_cexit"),
    (CrtExit, "", "__crt_atexit*"),
    (AtexitTable, "", "_execute_onexit_table"),
    (AtexitTable, "", "execute_onexit_table*"),
    (AtexitTable, "", "_initterm"),
    (StaticDestructor, "", "`dynamic atexit destructor for *"),
    (StaticDestructor, "", "__do_global_dtors*"),
    (CExitHandlers, "", "__run_exit_handlers"),
    (CExitHandlers, "", "__GI_exit"),
    (DynamicLoaderShutdown, "", "_dl_fini"),
    (StaticDestructor, "", "__cxa_finalize"),
    (StaticDestructor, "", "__libc_csu_fini"),
    (PythonFinalization, "", "Py_FinalizeEx"),
    (PythonFinalization, "", "Py_Finalize"),
    (PythonFinalization, "", "_Py_Finalize*"),
    (PythonFinalization, "", "Py_Exit"),
    (PythonFinalization, "", "finalize_modules"),
    (PythonFinalization, "", "finalize_interp_*"),
    (PythonFinalization, "", "_PyImport_Cleanup"),
    (PythonFinalization, "", "wait_for_thread_shutdown"),
    (PythonFinalization, "", "call_py_exitfuncs"),
    (PythonFinalization, "", "atexit_callfuncs"),
    (NodeCleanup, "", "node::Environment::RunCleanup*"),
    (NodeCleanup, "", "node::Environment::~Environment*"),
    (NodeCleanup, "", "node::FreeEnvironment*"),
    (NodeCleanup, "", "node::Stop*"),
    (NodeCleanup, "", "node::TearDownOncePerProcess*"),
    (NodeCleanup, "", "node::RunAtExit*"),
];

/// DLL entry points: on an exiting thread, the DLL is being detached.
const DLL_ENTRY_POINTS: &[&str] = &[
    "DllMain",
    "DllEntryPoint",
    "_DllMainCRTStartup",
    "dllmain_dispatch",
    "dllmain_crt_dispatch",
    "_CRT_INIT",
];

/// CRT start-up functions that call `main` and then `exit`.
const CRT_STARTUP: &[&str] = &[
    "mainCRTStartup",
    "wmainCRTStartup",
    "WinMainCRTStartup",
    "wWinMainCRTStartup",
    "__tmainCRTStartup",
    "__scrt_common_main_seh",
    "__scrt_common_main",
    "__libc_start_call_main",
    "__libc_start_main*",
];

/// Program entry functions: while one is on the stack, main has not returned.
const MAIN_FUNCTIONS: &[&str] = &["main", "wmain", "WinMain", "wWinMain", "invoke_main"];

/// Functions a blocked thread waits in.
const WAIT_FUNCTIONS: &[&str] = &[
    "NtWaitFor*",
    "ZwWaitFor*",
    "NtWaitForAlertByThreadId",
    "NtDelayExecution",
    "ZwDelayExecution",
    "NtRemoveIoCompletion*",
    "NtUserMsgWaitForMultipleObjectsEx",
    "WaitForSingleObject*",
    "WaitForMultipleObjects*",
    "MsgWaitForMultipleObjects*",
    "SleepConditionVariable*",
    "RtlSleepConditionVariable*",
    "RtlpWaitOnCriticalSection",
    "RtlpWaitOnAddress*",
    "RtlWaitOnAddress",
    "WaitOnAddress",
    "RtlAcquireSRWLock*",
    "RtlEnterCriticalSection",
    "EnterCriticalSection",
    "LdrpAcquireLoaderLock",
    "Sleep",
    "SleepEx",
    "futex_wait*",
    "__futex_abstimed_wait*",
    "futex_abstimed_wait*",
    "__GI___futex_abstimed_wait*",
    "pthread_cond_wait*",
    "pthread_cond_timedwait*",
    "pthread_cond_clockwait*",
    "__pthread_cond_wait*",
    "___pthread_cond_wait*",
    "__pthread_cond_timedwait*",
    "pthread_join",
    "__pthread_clockjoin_ex",
    "___pthread_join",
    "__pthread_join",
    "pthread_mutex_lock",
    "__pthread_mutex_lock*",
    "___pthread_mutex_lock",
    "__lll_lock_wait*",
    "sem_wait",
    "sem_timedwait",
    "__new_sem_wait*",
    "do_futex_wait*",
    "epoll_wait",
    "epoll_pwait*",
    "poll",
    "__poll",
    "ppoll",
    "select",
    "pselect*",
    "nanosleep",
    "__nanosleep",
    "clock_nanosleep*",
    "__clock_nanosleep*",
    "sleep",
    "usleep",
    "read",
    "__libc_read",
    "wait4",
    "waitpid",
    "__GI___wait4",
    "syscall",
];

/// System modules whose unsymbolized top frame means "inside a system call":
/// on a thread that was not running when the dump was taken, a wait.
const SYSCALL_MODULES: &[&str] = &[
    "ntdll.dll",
    "win32u.dll",
    "libc.so*",
    "libc-*.so",
    "libpthread*.so*",
];

struct Tables {
    exit: Vec<(ExitStage, Option<Pattern>, Pattern)>,
    dll_entry: Vec<Pattern>,
    crt_startup: Vec<Pattern>,
    main: Vec<Pattern>,
    wait: Vec<Pattern>,
    syscall_modules: Vec<Pattern>,
    unwind_system: Vec<Pattern>,
}

fn patterns(list: &[&str], case: Case) -> Vec<Pattern> {
    list.iter()
        .map(|p| Pattern::new(p, case).expect("built-in pattern"))
        .collect()
}

static TABLES: LazyLock<Tables> = LazyLock::new(|| Tables {
    exit: EXIT_FUNCTIONS
        .iter()
        .map(|(stage, module, function)| {
            let module = (!module.is_empty())
                .then(|| Pattern::new(module, Case::Insensitive).expect("built-in pattern"));
            (
                *stage,
                module,
                Pattern::new(function, Case::Sensitive).expect("built-in pattern"),
            )
        })
        .collect(),
    dll_entry: patterns(DLL_ENTRY_POINTS, Case::Sensitive),
    crt_startup: patterns(CRT_STARTUP, Case::Sensitive),
    main: patterns(MAIN_FUNCTIONS, Case::Sensitive),
    wait: patterns(WAIT_FUNCTIONS, Case::Sensitive),
    syscall_modules: patterns(SYSCALL_MODULES, Case::Insensitive),
    unwind_system: patterns(
        &["ntdll.dll", "kernel32.dll", "kernelbase.dll"],
        Case::Insensitive,
    ),
});

fn any_match(patterns: &[Pattern], name: &str) -> bool {
    patterns
        .iter()
        .any(|p| p.matches(name) || p.matches(bare_name(name)))
}

/// Fills `exiting`, `blocked`, the exception's `crash` flag, and the report's
/// exit phase; puts the blamed thread first.
pub fn classify(report: &mut Report) {
    let tables = &*TABLES;
    // First decide whether the exception is a crash at all: a thread that
    // only requested the dump or broke in is not "crashing", and may well be
    // the blocked one.
    if let Some(exception) = &mut report.exception {
        let code = exception.code;
        let thread = report.threads.iter().find(|t| t.id == exception.thread_id);
        let reason = DUMP_REQUESTED_CODES
            .iter()
            .find(|(c, _)| *c == code)
            .map(|(_, why)| why.to_string())
            .or_else(|| {
                (code == BREAKPOINT && thread.is_some_and(|t| is_break_in_thread(t, tables))).then(
                    || {
                        "debugger break-in (0x80000003 on the debugger's break-in thread)"
                            .to_string()
                    },
                )
            });
        if let Some(reason) = reason {
            exception.crash = false;
            exception.not_a_crash = Some(reason);
        }
    }
    let crash = report
        .exception
        .as_ref()
        .filter(|e| e.crash)
        .map(|e| e.thread_id);
    for thread in &mut report.threads {
        thread.crashing = crash == Some(thread.id);
        thread.exiting = exit_marker(thread, tables);
        thread.blocked = blocked_in(thread, tables);
    }
    report.exit_phase.process_exiting = report.threads.iter().any(|t| t.exiting.is_some());
    report.exit_phase.blamed_thread = crash.or_else(|| {
        let exiting = || report.threads.iter().filter(|t| t.exiting.is_some());
        exiting()
            .find(|t| t.blocked.as_ref().is_some_and(|b| b.certain))
            .or_else(|| exiting().find(|t| t.blocked.is_some()))
            .or_else(|| exiting().next())
            .map(|t| t.id)
    });
    let blamed = report.exit_phase.blamed_thread;
    // The blamed thread first, the others in dump order (a stable sort).
    report.threads.sort_by_key(|t| Some(t.id) != blamed);
}

fn exit_marker(thread: &Thread, tables: &Tables) -> Option<ExitMarker> {
    let exiting_below = |from: usize| {
        thread.frames[from..]
            .iter()
            .any(|f| exit_name(f, tables).is_some())
    };
    let main_returned = main_has_returned(thread, tables);
    for (index, frame) in thread.frames.iter().enumerate() {
        if let Some((stage, function)) = exit_name(frame, tables) {
            return Some(ExitMarker {
                frame_index: index,
                stage,
                function: function.to_string(),
            });
        }
        let entry = frame.names().find(|n| any_match(&tables.dll_entry, n));
        if let Some(function) = entry {
            if exiting_below(index) || main_returned.is_some() {
                return Some(ExitMarker {
                    frame_index: index,
                    stage: ExitStage::DllDetach,
                    function: function.to_string(),
                });
            }
        }
    }
    main_returned.map(|(index, function)| ExitMarker {
        frame_index: index,
        stage: ExitStage::MainReturned,
        function,
    })
}

fn exit_name<'f>(frame: &'f Frame, tables: &Tables) -> Option<(ExitStage, &'f str)> {
    frame.names().find_map(|name| {
        tables
            .exit
            .iter()
            .find(|(_, module, function)| {
                (function.matches(name) || function.matches(bare_name(name)))
                    && module
                        .as_ref()
                        .is_none_or(|m| frame.module.as_deref().is_some_and(|x| m.matches(x)))
            })
            .map(|(stage, _, _)| (*stage, name))
    })
}

/// The CRT startup frame, when main has visibly returned from it: no program
/// entry function above it, the walk above it is sound (every frame lies in
/// a module: a garbage address means a corrupt or smashed stack), and going
/// up from it, past the startup's own helpers (frames of its own module
/// without symbols, or found only by scanning), the first call leaves into
/// an unsymbolized function of another module: the C runtime's `exit` in a
/// system DLL without symbols. (A named `exit` is found by the exit table.)
fn main_has_returned(thread: &Thread, tables: &Tables) -> Option<(usize, String)> {
    let (index, startup) = thread.frames.iter().enumerate().find_map(|(i, f)| {
        f.names()
            .find(|n| any_match(&tables.crt_startup, n))
            .map(|n| (i, n.to_string()))
    })?;
    let above = &thread.frames[..index];
    let sound = above.iter().all(|f| f.module.is_some());
    let main_above = above
        .iter()
        .any(|f| f.names().any(|n| any_match(&tables.main, n)));
    if !sound || main_above {
        return None;
    }
    let own = thread.frames[index].module.as_deref();
    let helper =
        |f: &&Frame| f.module.as_deref() == own && (f.function.is_none() || f.trust == Trust::Scan);
    let callee = above.iter().rev().find(|f| !helper(f))?;
    (callee.module.as_deref() != own && callee.function.is_none()).then_some((index, startup))
}

fn blocked_in(thread: &Thread, tables: &Tables) -> Option<Blocked> {
    if thread.crashing {
        return None;
    }
    let top = thread.frames.iter().take(WAIT_DEPTH).enumerate();
    for (index, frame) in top {
        if let Some(name) = frame.names().find(|n| any_match(&tables.wait, n)) {
            return Some(Blocked {
                frame_index: index,
                function: name.to_string(),
                certain: true,
            });
        }
    }
    let first = thread.frames.first()?;
    let module = first.module.as_deref()?;
    (first.function.is_none() && tables.syscall_modules.iter().any(|p| p.matches(module))).then(
        || Blocked {
            frame_index: 0,
            function: format!("{module} + {}", offset(first.module_offset)),
            certain: false,
        },
    )
}

/// The thread a debugger injects to break in runs only in ntdll/kernel32
/// (DbgUiRemoteBreakin -> DbgBreakPoint).
fn is_break_in_thread(thread: &Thread, tables: &Tables) -> bool {
    let named = thread.frames.iter().any(|f| {
        f.names()
            .any(|n| n == "DbgUiRemoteBreakin" || n == "DbgBreakPoint")
    });
    let only_system = !thread.frames.is_empty()
        && thread.frames.iter().all(|f| {
            f.module
                .as_deref()
                .is_some_and(|m| tables.unwind_system.iter().any(|p| p.matches(m)))
        });
    named || only_system
}
