//! The program's own way out, told by its function names: `mch_exit`,
//! `snd_deinit`, `Aulib::quit`, `App::Shutdown`, `event_teardown`, the
//! application object's destructor (`QApplication::~QApplication`) on the
//! failing thread. Programs run their own quit path (close the event loop,
//! stop the audio thread, free the caches) before they call `exit` or
//! return from main, and a failure there is a failure at exit in all but
//! the C runtime's sense. A name is a hint, not a proof (a server's
//! `Session::shutdown` may run in the middle of the work): it suggests
//! exit, and rules answer from it only as a possible finding.

use crate::model::{bare_name, FrameKind, Thread};

/// Words of a function's own name (the last part of a qualified name, split
/// at underscores and case changes) that say the program is quitting.
/// ("finalize" is not one: it finishes loads, builds and commits as often
/// as programs; the interpreters' finalization is in the exit tables.)
const QUITTING: [&str; 9] = [
    "exit",
    "quit",
    "shutdown",
    "deinit",
    "deinitialize",
    "uninit",
    "uninitialize",
    "teardown",
    "atexit",
];

/// Words, in the name or its class's, that make it the end of something
/// smaller than the program: a thread's exit, a loop's, a scope's, a
/// mode's, a dialog's, a connection's or a file descriptor's (a socket's
/// shutdown), a server's, a request's (`php_request_shutdown`), an
/// object's (`object_deinit`), a job's.
const SMALLER: [&str; 38] = [
    "thread",
    "loop",
    "scope",
    "fullscreen",
    "mode",
    "dialog",
    "menu",
    "room",
    "level",
    "frame",
    "block",
    "session",
    "socket",
    "connection",
    "stream",
    "output",
    "input",
    "read",
    "write",
    "file",
    "fd",
    "desc",
    "descriptor",
    "pipe",
    "ssl",
    "tls",
    "tcp",
    "udp",
    "conn",
    "server",
    "client",
    "rpc",
    "request",
    "object",
    "obj",
    "transaction",
    "job",
    "task",
];

/// The first frame (innermost first) of `thread` in native code whose name
/// says the program is quitting, with its index and name. A bare
/// `shutdown` or `exit` is the C library's (a socket's shutdown, exit
/// itself, which the exit tables know), not the program's. A loop below it
/// (the program's own `MainLoop`, an interpreter running a script) called
/// it in the middle of the run: no hint. (A reference's release below it
/// may be the last one, dropped at exit: `grpc_shutdown` from a channel's
/// destructor.)
pub(super) fn quit_frame(
    thread: &Thread,
    main_loop: impl Fn(&str) -> bool,
) -> Option<(usize, &str)> {
    let (index, name) = thread.frames.iter().enumerate().find_map(|(i, frame)| {
        if frame.kind != FrameKind::Native {
            return None;
        }
        let name = frame.function.as_deref()?;
        let near_main = || {
            thread.frames[i + 1..]
                .iter()
                .take(MAIN_REACH)
                .any(|f| f.function.as_deref().is_some_and(is_main))
        };
        (says_quitting(name) || (says_cleaning_up(name) && near_main())).then_some((i, name))
    })?;
    let in_a_loop = thread.frames[index + 1..].iter().any(|frame| {
        frame
            .names()
            .any(|n| main_loop(n) || own_words(n).iter().any(|w| w == "loop"))
    });
    (!in_a_loop).then_some((index, name))
}

/// How many frames below a cleanup the program's `main` may be for the
/// cleanup to be the program's last (`wxAppConsoleBase::CleanUp` <-
/// `wxEntryCleanup` <- `wxEntry` <- `main`).
const MAIN_REACH: usize = 3;

/// The program's entry point, by its bare name.
fn is_main(name: &str) -> bool {
    matches!(bare_name(name), "main" | "wmain" | "WinMain" | "wWinMain")
}

/// A name that says it cleans up (`wxEntryCleanup`, `App::CleanUp`):
/// something ends, which in the middle of the work is as likely a cache's
/// or a request's as the program's; the program's only right above main.
fn says_cleaning_up(name: &str) -> bool {
    let (own, class, _) = name_parts(name);
    let words = words(own);
    let cleanup = words.iter().any(|w| w == "cleanup")
        || words
            .windows(2)
            .any(|pair| pair[0] == "clean" && pair[1] == "up");
    cleanup && !smaller(&words, &self::words(class))
}

/// Whether a name's words or its class's (`words`, `class`) make it the end
/// of something smaller than the program (SMALLER).
fn smaller(words: &[String], class: &[String]) -> bool {
    words
        .iter()
        .chain(class)
        .any(|w| SMALLER.contains(&w.as_str()))
}

/// A function's own name and its class's (no parameters, template or
/// namespace), and whether it was qualified at all: `App::Shutdown(bool)`
/// -> (`Shutdown`, `App`, true).
fn name_parts(name: &str) -> (&str, &str, bool) {
    let bare = bare_name(name);
    let bare = bare.split('<').next().unwrap_or(bare);
    let mut parts = bare.rsplit([':', '.']).filter(|p| !p.is_empty());
    let own = parts.next().unwrap_or(bare);
    let class = parts.next().unwrap_or("");
    (own, class, bare.contains("::") || bare.contains('.'))
}

/// The words of a function's own name.
fn own_words(name: &str) -> Vec<String> {
    words(name_parts(name).0)
}

/// The last words of a class whose object is the application itself
/// (`QApplication`, `wxApp`, `MainApp`): its destructor runs as main ends.
const APPLICATION: [&str; 2] = ["application", "app"];

fn says_quitting(name: &str) -> bool {
    let (own, class, qualified) = name_parts(name);
    let class = words(class);
    let words = words(own);
    // The application object's destructor, or that of an object kept to
    // run the program's exit callbacks (`AtExitManager`, an `AtExit`
    // guard).
    if own.starts_with('~') {
        return words
            .last()
            .is_some_and(|w| APPLICATION.contains(&w.as_str()))
            || (words.iter().any(|w| QUITTING.contains(&w.as_str())) && !smaller(&words, &[]));
    }
    if words.len() < 2 && !qualified {
        return false;
    }
    let joined: Vec<String> = words
        .windows(2)
        .map(|pair| format!("{}{}", pair[0], pair[1]))
        .collect();
    let quitting = words
        .iter()
        .chain(&joined)
        .any(|w| QUITTING.contains(&w.as_str()));
    quitting && !smaller(&words, &class)
}

/// `snd_deinit` -> [snd, deinit]; `DiabloDeinit` -> [diablo, deinit];
/// `ShutDownOnce` -> [shut, down, once]; `QThread` -> [q, thread].
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        let previous = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1);
        // A new word at a capital after a small letter (`snd|Deinit`), or
        // at the last capital of a run before a small one (`Q|Thread`).
        let starts = c.is_ascii_uppercase()
            && previous.is_some_and(|p| {
                p.is_ascii_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_ascii_uppercase() && next.is_some_and(char::is_ascii_lowercase))
            });
        if starts && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        word.push(c.to_ascii_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_programs_own_quit_path_is_named_so() {
        for name in [
            "mch_exit",
            "devilution::snd_deinit",
            "DiabloDeinit",
            "Aulib::quit",
            "event_teardown",
            "CProfilerCallback::ShutdownOnce",
            "App::ShutDown(bool)",
            "grpc_shutdown",
            "Engine::uninit()",
            "QApplication::~QApplication()",
            "MainApp::~MainApp",
            "AtExit::~AtExit()",
            "base::AtExitManager::~AtExitManager",
        ] {
            assert!(says_quitting(name), "{name}");
        }
        assert_eq!(words("QThreadPool2Exit"), ["q", "thread", "pool2", "exit"]);
    }

    #[test]
    fn the_end_of_something_smaller_or_a_bare_c_call_is_not() {
        for name in [
            "shutdown",
            "exit",
            "QThread::exit",
            "ExitThread",
            "QEventLoop::exit",
            "Player::exitFullscreen",
            "exit_scope",
            "Game::onExitRoom",
            "Socket::shutdown_output",
            "exitcode_to_status",
            "Session::shutdown",
            "run_worker",
            "file_desc::shutdown",
            "SSL_shutdown",
            "privload_load_finalize",
            "GrpcServer::Shutdown",
            "AppSettings::~AppSettings",
            "Engine::~Engine",
            "php_request_shutdown",
            "object_deinit",
            "ThreadExitGuard::~ThreadExitGuard",
            "JobShutdown::~JobShutdown",
        ] {
            assert!(!says_quitting(name), "{name}");
        }
    }
}
