//! What the text's own words say of exit, apart from any runtime's message
//! and any frame: the reporter's sentence ("segfaults on exit", "hangs
//! when the interpreter shuts down"), a heading over the stack ("Exiting
//! main thread:", "Backtrace at shutdown:"), or the program's own
//! announcement just before the failure ("Shutting down...", "Exiting").
//! A person reading the log would take these as a strong hint, not as a
//! proof: they suggest exit, and a rule answers from them only as a
//! possible finding, when the stacks neither show exit nor rule it out.

use std::sync::LazyLock;

use regex_lite::Regex;

/// Words of a failure, as people write them.
const FAILURE: &str = r"crash\w*|segfault\w*|seg(?:mentation)?[ -]?fault\w*|sigsegv|sigabrt|sigbus|access violation|hang(?:s|ing)?|hung|deadlock\w*|freez\w*|froze\w*|abort\w*|assert\w*|stuck|exception|errors?|panic\w*|faults?|dies|died|fails?|failure|core dump\w*";

/// What is ending, before the exit word: "program exit", "python's
/// shutdown", "the interpreter's finalization".
const WHOSE: &str = r"(?:(?:the|its|my|our|program|process|application|app|interpreter|python|script|julia|node|jvm|runtime|main|module|library|plugin|dll|extension)(?:'s)?\s+){0,3}";

/// The exit words a sentence ties the failure to.
const ENDING: &str = r"exit(?:ing)?|shut\s?down|shutting down|termination|terminating|tear\s?down|teardown|quit(?:ting)?|finali[sz](?:ation|ing|e)|unload(?:ing)?|atexit|(?:static|global) (?:object )?(?:destructors?|destruction|dtors?)";

/// What may follow "exit" without it being the process's: "exit code",
/// "exit from fullscreen", "exit of the loop".
const NOT_THE_PROCESS: [&str; 17] = [
    "code",
    "status",
    "value",
    "from",
    "of",
    "out",
    "button",
    "menu",
    "key",
    "full",
    "fullscreen",
    "mode",
    "the loop",
    "the function",
    "the scope",
    "the block",
    "handler is not",
];

/// Words that turn the sentence around: "not on exit", "before shutdown",
/// "doesn't crash at exit".
const NEGATIONS: [&str; 11] = [
    "not ",
    "n't ",
    "never ",
    "no ",
    "without ",
    "before ",
    "instead of ",
    "rather than ",
    "other than ",
    "except ",
    "prior to ",
];

/// How many lines before the failure a program's announcement may be.
const ANNOUNCEMENT_REACH: usize = 15;

/// The first line of `lines[from..to]` (0-based, end exclusive) whose words
/// say the failure came at exit, with why, in words for the report. The
/// trace's own lines (`trace`, 1-based and inclusive) are frames, not
/// words, and are passed over. `failures` are the 1-based lines that tell
/// of the failure (the trace's crash line, a shell's status before a
/// debugger's session on the core): a program's announcement counts only
/// shortly before one of them.
pub(super) fn exit_suggested(
    lines: &[Option<String>],
    (from, to): (usize, usize),
    trace: Option<(usize, usize)>,
    failures: &[usize],
) -> Option<String> {
    let end = to.min(lines.len());
    let in_trace = |n: usize| trace.is_some_and(|(first, last)| (first..=last).contains(&n));
    (from.min(end)..end).find_map(|i| {
        if in_trace(i + 1) {
            return None;
        }
        let line = lines[i].as_deref()?;
        let lower = line.to_ascii_lowercase();
        if !mentions_ending(&lower) {
            return None;
        }
        let quoted = || line.trim().chars().take(160).collect::<String>();
        if sentence(&lower) || heading(&lower) || last_step_quits(lines, i) {
            return Some(format!(
                "the text's own words tie the failure to exit (line {}: `{}`)",
                i + 1,
                quoted()
            ));
        }
        let before = failures
            .iter()
            .any(|&failure| (i + 1 < failure) && failure - (i + 1) <= ANNOUNCEMENT_REACH);
        (before && (announcement(&lower) || ctrl_c(lines, i))).then(|| {
            format!(
                "the log shows the program on its way out just before the failure (line {}: `{}`)",
                i + 1,
                quoted()
            )
        })
    })
}

/// A terminal's echo of the user's Ctrl-C (`^C`, what the program printed
/// on it after): the user stopped the program, which was on its way out.
/// Not a debugger's break-in (`^C` then `Program received signal
/// SIGINT`): the program stood still to be looked at.
fn ctrl_c(lines: &[Option<String>], i: usize) -> bool {
    let Some(line) = lines[i].as_deref() else {
        return false;
    };
    if !line.trim_start().starts_with("^C") {
        return false;
    }
    !lines
        .iter()
        .skip(i + 1)
        .take(3)
        .flatten()
        .any(|l| l.contains("received signal SIGINT"))
}

/// A cheap first look: the line has some word of ending at all.
fn mentions_ending(lower: &str) -> bool {
    [
        "exit",
        "shut",
        "termina",
        "tear",
        "quit",
        "finali",
        "unload",
        "destruct",
        "dtor",
        "bye",
        "clean",
        "end of",
        "finish",
        "return",
        "clos",
        "stopping",
        "unloaded",
        "Выгружено",
        "initiali",
        "sigterm",
        "sigint",
        "signum=",
        "ctrl",
        "^c",
        "keyboardinterrupt",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// A sentence that ties a failure to exit: "crashes on exit", "a segfault
/// during interpreter shutdown", "hangs in the atexit handler",
/// "aborts when the program exits", "crash when closing the app".
fn sentence(lower: &str) -> bool {
    static AT_ENDING: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(
            r"\b(?:{FAILURE})\b[^.;!?]{{0,60}}?\b(?:on|at|during|upon|while|when|in|from)\s+(?:the\s+)?{WHOSE}(?:{ENDING})\b"
        ))
        .expect("failure at exit pattern")
    });
    static WHEN_ENDS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"\b(?:when|after|once|as|while)\s+(?:(?:the\s+|my\s+|our\s+)?(?:program|process|application|app|interpreter|python|script|executable|binary)\s+(?:exits|exited|is exiting|terminates|terminated|is terminating|shuts down|is shutting down|shut down|quits|finishes|finished|ends|ended|is closed|closes|is closing|unloads|is unloaded)|it\s+(?:exits|exited|is exiting|terminates|is terminating|shuts down|is shutting down|quits)|main\(?\)?\s+(?:returns|returned|exits|exited))\b",
        )
        .expect("failure when it ends pattern")
    });
    static CLOSING: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"\b(?:on|at|when|while|upon|after)\s+(?:closing|close of|quitting|exiting)\s+(?:the\s+|my\s+)?(?:app|application|program|game|editor|main window|ide)\b",
        )
        .expect("failure on closing pattern")
    });
    static FAILS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(&format!(r"\b(?:{FAILURE})\b")).expect("failure words"));
    static END_OF: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"\bat the (?:very )?end of (?:the |my |our )?(?:program|script|process|execution|main|run)\b",
        )
        .expect("end of the program pattern")
    });
    // "an exit-time destructor bug", "a shutdown-time crash".
    static EXIT_TIME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(
            r"\b(?:exit|shutdown|teardown|unload)[- ]time\s+(?:[\w-]+\s+){{0,2}}?(?:{FAILURE}|bugs?|destructors?|races?|problems?|issues?)\b"
        ))
        .expect("exit-time failure pattern")
    });
    // The person ended the program: "then I close it. It crashes.",
    // "only when I exit LLDB".
    static USER_ENDS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"\b(?:i|we|you|the user|users?)\s+(?:then\s+|was\s+|were\s+|am\s+|are\s+)?(?:(?:close|closed|closes|closing)\s+(?:it|the\s+(?:app|application|program|game|editor|client|main window))|(?:exit|exits|exited|exiting|quit|quits|quitting)\s+)",
        )
        .expect("the user ends the program pattern")
    });
    if let Some(m) = AT_ENDING.find(lower) {
        return about_the_process(lower, m.start(), m.end());
    }
    // "Every exit from the application leads to a crash".
    static EXIT_LEADS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(
            r"\b(?:exit|exiting|quitting|closing|shutdown)\s+(?:from\s+(?:the\s+|an?\s+|my\s+)?(?:app|application|program|game|editor|ide)\s+)?(?:always\s+)?(?:leads to|causes|results in|gives|triggers|ends in|ends with)\s+(?:an?\s+|the\s+)?(?:{FAILURE})\b"
        ))
        .expect("exit leads to a failure pattern")
    });
    // A line that ends in a colon introduces the failure pasted below it:
    // the failure need not be named on it ("I got this when I was closing
    // the game:").
    let failure_said = FAILS.is_match(lower) || lower.trim_end().ends_with(':');
    if let Some(m) = USER_ENDS.find(lower) {
        let quitting = lower[m.start()..m.end()].ends_with(char::is_whitespace);
        if (!quitting || of_the_process(&lower[m.end()..]))
            && failure_said
            && !negated(&lower[..m.start()])
        {
            return true;
        }
    }
    if let Some(m) = EXIT_LEADS.find(lower) {
        if !negated(&lower[..m.end()]) {
            return true;
        }
    }
    let tied = |re: &Regex| {
        re.find(lower)
            .is_some_and(|m| failure_said && !negated(&lower[..m.start()]))
    };
    EXIT_TIME
        .find(lower)
        .is_some_and(|m| !negated(&lower[..m.end()]))
        || tied(&WHEN_ENDS)
        || tied(&CLOSING)
        || tied(&END_OF)
}

/// Whether the exit a match ends on is the process's (not "exit code",
/// "exit from fullscreen") and the sentence is not turned around.
fn about_the_process(lower: &str, start: usize, end: usize) -> bool {
    let after = lower[end..].trim_start();
    if !of_the_process(after) {
        return false;
    }
    let mut from = start.saturating_sub(16);
    while !lower.is_char_boundary(from) {
        from -= 1;
    }
    !negated(&lower[from..end])
}

/// Whether the words after an exit word leave it the process's: "exit of
/// the program" is, "exit code" and "shutdown of the server" are not.
fn of_the_process(after: &str) -> bool {
    static OF_PROCESS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:of|from)\s+(?:the\s+|an?\s+|my\s+)?(?:program|process|application|app|interpreter|python|game|editor|ide)\b")
            .expect("exit of the program pattern")
    });
    after.starts_with("()")
        || OF_PROCESS.is_match(after)
        || !NOT_THE_PROCESS.iter().any(|w| starts_with_word(after, w))
}

fn starts_with_word(text: &str, word: &str) -> bool {
    text.strip_prefix(word)
        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_alphanumeric()))
}

fn negated(text: &str) -> bool {
    // The clause the words are in: from its last comma or dash on.
    let cut = text.rfind([',', '(', ';']).map(|at| at + 1);
    let dash = text.rfind(" - ").map(|at| at + 3);
    let clause = cut.max(dash).map_or(text, |at| &text[at..]);
    let padded = format!(" {clause}");
    NEGATIONS.iter().any(|n| padded.contains(&format!(" {n}")))
        || padded.contains("n't ")
        || padded.contains("didn't")
}

/// The last of a report's steps to reproduce is quitting the program
/// ("1. Start it 2. Just exit the program"): the failure below came at
/// exit. Only the last step with text: a step after it (reopen, load)
/// would be where the failure is.
fn last_step_quits(lines: &[Option<String>], i: usize) -> bool {
    static STEP: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*(?:\d+[.)]|[-*])\s*(.*?)\s*$").expect("step pattern"));
    static QUITS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(?:just\s+|simply\s+|then\s+)?(?:exit|quit|close)\s+(?:the\s+|my\s+)?(?:program|app|application|game|editor|ide|main window)\.?$",
        )
        .expect("quit step pattern")
    });
    let Some(step) = lines[i].as_deref().and_then(|l| STEP.captures(l)) else {
        return false;
    };
    if !QUITS.is_match(&step[1].to_ascii_lowercase()) {
        return false;
    }
    // The steps after it are empty (a template's `2.`, `3.`) or there are
    // none.
    lines[i + 1..]
        .iter()
        .map(|l| l.as_deref().unwrap_or(""))
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| STEP.captures(l))
        .all(|c| c[1].is_empty())
}

/// A heading over the stack that names it as the exit's: "Exiting main
/// thread:", "Backtrace at exit:", "stack during shutdown:".
fn heading(lower: &str) -> bool {
    static AT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"\b(?:at|on|during|upon|while)\s+(?:the\s+)?(?:program\s+|process\s+|interpreter\s+|python\s+)?(?:exit|exiting|shutdown|shutting down|termination|unload)\b",
        )
        .expect("exit heading pattern")
    });
    let text = lower.trim().trim_start_matches(['#', '*', '>', ' ']);
    if text.len() > 80 || !text.trim_end_matches(['*', ' ']).ends_with(':') {
        return false;
    }
    let exiting = text.strip_prefix("exiting ").is_some_and(of_the_process);
    let at_exit = AT.find(text).is_some_and(|m| {
        of_the_process(text[m.end()..].trim_start()) && !negated(&text[..m.end()])
    });
    (exiting && !negated(text)) || at_exit
}

/// The program's own words that it is on its way out, alone on their line
/// (after any log prefix): "Shutting down...", "Exiting.", "Cleaning up",
/// "Goodbye!", "Main loop has exited"; or the service manager stopping it
/// (systemd's "Stopping UNIT..."), a debugger stopping on the request to
/// end it (SIGTERM), the user's Ctrl-C; or the debugger unloading its
/// modules.
fn announcement(lower: &str) -> bool {
    static SAYS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(?:\[[^\]]{0,40}\]\s*|[\w.:/-]{1,40}:\s+|\d[\d:.,/ -]{6,30}\s+|[iwef]\d{4} [\d:.]+\s+\d+ [\w.-]+:\d+\]\s+)*(?:(?:exit now|exiting|quitting|shutting down|shutdown complete|cleaning up|tearing down|good-?bye|bye|(?:main|event) loop (?:has )?(?:exited|ended|finished|quit|stopped))\b[^:]{0,40}|(?:[a-z][\w-]*\s+){1,3}(?:shutdown|shutting down|shut down|(?:de|un)initiali[sz]ed)(?:\.{3}|\u{2026}|[.!])?)$",
        )
        .expect("announcement pattern")
    });
    static SERVICE_STOPS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\bsystemd(?:\[\d+\])?: stopping \S").expect("service stop pattern")
    });
    // Visual Studio's Output window unloading the process's modules:
    // `'app.exe' (Win32): Unloaded 'C:\Windows\System32\secur32.dll'`,
    // its Russian build's `"app.exe" (Win32). Выгружено "...`.
    static MODULE_UNLOADED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"^['"][^'"]+['"] \([^)]*\)(?::|\.) (?:unloaded|Выгружено) ['"]"#)
            .expect("module unloaded pattern")
    });
    // A debugger's stop on the request to end (`Program received signal
    // SIGTERM`), before gdb let the program go on to its own shutdown.
    // A launcher or the program itself telling of the request to end it
    // (ROS's `user interrupted with ctrl-c (SIGINT)`, `sending signal
    // 'SIGINT' to process[...]`, `signal_handler(signum=2)`), or Python's
    // `KeyboardInterrupt` ending its traceback.
    static ASKED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"received signal sigterm|user interrupted with ctrl-c|sending signal '?sig(?:int|term)'? to process|signal_handler\(signum=(?:2|15)\)|(?:received|caught|got) (?:sigint|sigterm)\b|ctrl[-+]c (?:pressed|received|detected|caught)")
            .expect("request to end pattern")
    });
    let asked_to_end = ASKED.is_match(lower) || lower.trim() == "keyboardinterrupt";
    asked_to_end
        || SAYS.is_match(lower.trim())
        || SERVICE_STOPS.is_match(lower)
        || MODULE_UNLOADED.is_match(lower.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(text: &str) -> bool {
        let lines: Vec<Option<String>> = text.lines().map(|l| Some(l.to_string())).collect();
        exit_suggested(&lines, (0, lines.len()), None, &[lines.len() + 1]).is_some()
    }

    #[test]
    fn a_reporters_sentence_ties_the_failure_to_exit() {
        for text in [
            "The program segfaults on exit, backtrace below.",
            "We see a crash during interpreter shutdown with torch 2.1.",
            "It hangs in the atexit handler of the HIP runtime",
            "Python aborts when the script finishes.",
            "I get an access violation at process exit.",
            "The app crashes when closing the application window",
            "Segmentation fault at the end of the program",
            "deadlock during static destructors",
            "crash on exit()",
            "I start it, it joins a channel, then I close it. It crashes.",
            "A crash I have seen. Seems to only occur when I exit LLDB.",
            "The exit-time destructor bug is not specific to one GPU.",
            "any attempt to restart will cause a segfault during module unload",
            "Every exit from an application leads to crash:",
            "I got this on a VM, when I was closing the game using escape key:",
        ] {
            assert!(said(text), "{text}");
        }
    }

    #[test]
    fn exit_in_another_sense_or_denied_is_no_hint() {
        for text in [
            "The process crashed with exit code 139",
            "It crashes on exit from fullscreen mode",
            "The crash is not on exit but at startup",
            "It doesn't crash at exit, only while training",
            "crash before shutdown of the server",
            "hangs instead of exiting",
            "the worker never exits",
            "error: process exited with status 1",
            "Crash when closing a file in the editor",
            "segfault on shutdown of the grpc channel",
            "It crashes when I exit fullscreen",
            "I close the file and then it crashes",
            "no exit-time crash here, it dies while training",
            "when I was closing the file it crashed",
            "It crashes, and quitting the dialog leads to no crash.",
        ] {
            assert!(!said(text), "{text}");
        }
    }

    #[test]
    fn the_last_step_to_reproduce_quits_the_program() {
        let steps = |text: &str| -> Vec<Option<String>> {
            text.lines().map(|l| Some(l.to_string())).collect()
        };
        let last = steps("Steps:\n1. Just exit the program\n2.\n3.\nProblem signature:");
        assert!(last_step_quits(&last, 1));
        let not_last = steps("1. Open a file\n2. Close the app\n3. Open it again");
        assert!(!last_step_quits(&not_last, 1));
        let other = steps("1. Exit the dialog\n2.");
        assert!(!last_step_quits(&other, 0));
    }

    #[test]
    fn a_heading_over_the_stack_names_it_the_exits() {
        assert!(said("Exiting main thread:"));
        assert!(said("**Backtrace at exit:**"));
        assert!(!said("Backtrace at startup:"));
        assert!(!said(
            "Exiting the loop early because the queue is empty, then:"
        ));
    }

    #[test]
    fn the_programs_announcement_counts_only_just_before_the_failure() {
        let lines: Vec<Option<String>> = ["[INFO] Shutting down...", "", "Segmentation fault"]
            .iter()
            .map(|l| Some((*l).to_string()))
            .collect();
        assert!(exit_suggested(&lines, (0, 3), None, &[3]).is_some());
        // After the failure, or far before it, it says nothing of it.
        assert!(exit_suggested(&lines, (0, 3), None, &[1]).is_none());
        let mut far = lines.clone();
        far.splice(1..1, (0..20).map(|_| Some("step".to_string())));
        assert!(exit_suggested(&far, (0, far.len()), None, &[far.len()]).is_none());
        let stops = [
            "Nov 3 systemd[1]: Stopping Game streaming host...",
            "segfault at 68",
        ];
        let l: Vec<Option<String>> = stops.iter().map(|l| Some((*l).to_string())).collect();
        assert!(exit_suggested(&l, (0, 2), None, &[2]).is_some());
        for said in [
            "Quitting...",
            "INFO: audio deinitialized.",
            "renderer shut down",
            "^Csending quit()",
            "KeyboardInterrupt",
            "[WARNING] [launch]: user interrupted with ctrl-c (SIGINT)",
            "[INFO] [planner-1]: sending signal 'SIGINT' to process[planner-1]",
            "[planner-1] [INFO] [1691655948.580138690] [rclcpp]: signal_handler(signum=2)",
            "Program received signal SIGTERM, Terminated.",
            "I1204 10:11:12.345678 4242 run_main.cc:674] EXIT NOW!",
        ] {
            let l = vec![
                Some(said.to_string()),
                Some("Segmentation fault".to_string()),
            ];
            assert!(exit_suggested(&l, (0, 2), None, &[2]).is_some(), "{said}");
        }
        // gdb's break-in on the user's Ctrl-C stops the program to look at.
        let l: Vec<Option<String>> = [
            "^C",
            "Program received signal SIGINT, Interrupt.",
            "Segmentation fault",
        ]
        .iter()
        .map(|l| Some((*l).to_string()))
        .collect();
        assert!(exit_suggested(&l, (0, 3), None, &[3]).is_none());
        // A message that merely starts with the word is no announcement.
        let line = "Shutting down worker 3 due to error: it failed on batch 7: oops";
        let l = vec![Some(line.to_string()), Some("Segfault".to_string())];
        assert!(exit_suggested(&l, (0, 2), None, &[2]).is_none(), "{line}");
    }
}
