//! How a process ended, as the log says it: exit statuses in their shell,
//! CI, signal and Windows forms, Windows Error Reporting records, and a
//! debugger's analysis of the exception.

use std::sync::LazyLock;

use regex_lite::Regex;

/// Signals that end a process by crashing, by number (Linux numbering:
/// signal(7)); SIGKILL (9) is not among them, it is a kill.
const CRASH_SIGNALS: [(i64, &str); 6] = [
    (4, "SIGILL"),
    (5, "SIGTRAP"),
    (6, "SIGABRT"),
    (7, "SIGBUS"),
    (8, "SIGFPE"),
    (11, "SIGSEGV"),
];

/// How a shell, a CI runner or a test driver says the process ended, when
/// it ended by a crash: the signal or Windows status it stands for. The
/// shells' words count where the shells put them (bash: `./run.sh: line 1:
/// 4242 Segmentation fault (core dumped) ./app`, or alone on a line; zsh:
/// `[1] 4242 segmentation fault ./app`, `zsh: abort ./app`), not in a
/// sentence.
pub(super) fn exit_status(line: &str) -> Option<String> {
    // bash: after a script's `line N: PID` (then the command), alone on a
    // line, or a job's `[1]+  PID` (the command after two blanks or more).
    static BASH: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(?:.*: line \d+:\s+\d+\s+(Segmentation fault|Aborted|Abort trap|Bus error|Illegal instruction|Floating point exception)\b.*|(?:\[\d+\][+-]?\s+(?:\d+\s+)?|\d+\s+)?(Segmentation fault|Aborted|Abort trap|Bus error|Illegal instruction|Floating point exception)(?:\s*\(core dumped\)|: \d+)?(?:\s{2,}\S.*)?)$",
        )
        .expect("bash status pattern")
    });
    static ZSH: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(?:zsh: |\[\d+\]\s+(?:\d+\s+)?)(segmentation fault|abort|bus error|illegal hardware instruction|floating point exception)\b",
        )
        .expect("zsh status pattern")
    });
    static CODE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)(?:exit(?:ed)?(?: with)?(?: code| status| value)|exited with|exit_code|exitcode|return(?:ed)?(?: with)? code|returncode|return code)\s*(?:[:=]\s*|of\s+)?['\x22]?(-?0x[0-9a-f]+|-?\d+)\b",
        )
        .expect("exit code pattern")
    });
    const WORDS: [&str; 11] = [
        "Segmentation fault",
        "segmentation fault",
        "Aborted",
        "Abort trap",
        "abort",
        "Bus error",
        "bus error",
        "Illegal instruction",
        "illegal hardware instruction",
        "Floating point exception",
        "floating point exception",
    ];
    let trimmed = line.trim();
    if let Some(signal) = signal_named(trimmed) {
        return Some(signal);
    }
    if trimmed.contains("Fatal Python error") || trimmed.contains(" signal ") {
        return None;
    }
    let has_words = WORDS.iter().any(|w| trimmed.contains(w));
    let words = has_words
        .then(|| BASH.captures(trimmed))
        .flatten()
        .and_then(|c| {
            c.get(1)
                .or_else(|| c.get(2))
                .map(|m| m.as_str().to_ascii_lowercase())
        })
        .or_else(|| {
            (has_words && (trimmed.starts_with("zsh:") || trimmed.starts_with('[')))
                .then(|| ZSH.captures(trimmed))
                .flatten()
                .map(|c| c[1].to_ascii_lowercase())
        });
    if let Some(signal) = words.as_deref().and_then(signal_in_words) {
        return Some(signal.to_string());
    }
    let lower_words = ["xit", "XIT", "eturn", "ETURN"];
    if !lower_words.iter().any(|w| trimmed.contains(w))
        || !trimmed.bytes().any(|b| b.is_ascii_digit())
    {
        return None;
    }
    let code = CODE.captures(trimmed)?;
    crash_code(&code[1])
}

/// A runner's words for a process a signal ended, where the signal is
/// named: Python's `CalledProcessError` (`died with <Signals.SIGSEGV:
/// 11>`), JetBrains IDEs (`Process finished with exit code 139
/// (interrupted by signal 11: SIGSEGV)`), cargo (`process didn't exit
/// successfully: ... (signal: 11, SIGSEGV: invalid memory reference)`), and
/// make's status of a recipe (`make: *** [test] Error 139`, the shell's 128
/// + N). Only the signals of a crash count.
fn signal_named(line: &str) -> Option<String> {
    static NAMED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"died with <Signals\.(SIG[A-Z]+): \d+>|interrupted by signal \d+: ?(SIG[A-Z]+)\)|didn't exit successfully: .*\(signal: \d+, (SIG[A-Z]+)\b",
        )
        .expect("named signal pattern")
    });
    static MAKE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^g?make(?:\[\d+\])?: \*\*\* .*\] Error (\d+)(?: \(core dumped\))?$")
            .expect("make status pattern")
    });
    if line.contains("SIG") {
        if let Some(c) = NAMED.captures(line) {
            let name = c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3))?.as_str();
            return killed_by(name);
        }
    }
    // systemd's result of a unit's main process: `Main process exited,
    // code=dumped, status=11/SEGV`.
    if line.contains("code=dumped, status=") || line.contains("code=killed, status=") {
        let (_, status) = line.split_once(", status=")?;
        let name = status.split_once('/')?.1;
        let name: String = name.chars().take_while(char::is_ascii_alphabetic).collect();
        return killed_by(&format!("SIG{name}"));
    }
    // Go's os/exec: a child the signal ended (`signal: segmentation fault
    // (core dumped)`), as `go test` and `go run` print it.
    if let Some(words) = line.strip_prefix("signal: ") {
        return signal_in_words(words.trim_end_matches(" (core dumped)")).map(str::to_string);
    }
    if let Some(signal) = handler_said(line) {
        return Some(signal);
    }
    if line.contains("make") && line.contains("*** [") {
        let c = MAKE.captures(line)?;
        return crash_code(&c[1]);
    }
    None
}

/// A crash signal by its name (`SIGSEGV`), as a process killed by it.
fn killed_by(name: &str) -> Option<String> {
    CRASH_SIGNALS
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(number, name)| format!("{name} (the process was killed by signal {number})"))
}

/// The signal a shell's or Go's words for a crash name, in lower case
/// (`segmentation fault`, `abort trap`, `illegal hardware instruction`).
fn signal_in_words(words: &str) -> Option<&'static str> {
    Some(match words {
        "segmentation fault" => "SIGSEGV",
        "aborted" | "abort" | "abort trap" => "SIGABRT",
        "bus error" => "SIGBUS",
        "floating point exception" => "SIGFPE",
        "illegal instruction" | "illegal hardware instruction" => "SIGILL",
        _ => return None,
    })
}

/// A program's own signal handler reporting the signal that ends it
/// (`Sys_Signal: Received signal 11`, `Caught signal 11 (SIGSEGV)`,
/// `Signal 11 caught`, `Signal Received: 6 (Aborted)`). Not a debugger's
/// stop (`Program received signal SIGSEGV`, `Thread 2 "x" received signal`:
/// its trace's crash line). Only the signals of a crash count.
fn handler_said(line: &str) -> Option<String> {
    static SAID: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)\b(?:(?:received|caught|got|catched)\s+signal\s*:?\s*(\d+|SIG[A-Z]+)|signal\s+(\d+|SIG[A-Z]+)\s+(?:caught|received)|signal received:\s*(\d+))\b|^Signal: [A-Za-z ]+ \((\d+)\)\s*$",
        )
        .expect("signal handler pattern")
    });
    let trimmed = line.trim_start();
    if trimmed.starts_with("Program ") || trimmed.starts_with("Thread ") {
        return None;
    }
    let c = SAID.captures(line)?;
    let said = c
        .get(1)
        .or_else(|| c.get(2))
        .or_else(|| c.get(3))
        .or_else(|| c.get(4))?
        .as_str();
    let (number, name) = CRASH_SIGNALS.iter().find(|(number, name)| {
        said.eq_ignore_ascii_case(name) || said.parse::<i64>().is_ok_and(|n| n == *number)
    })?;
    Some(format!(
        "{name} (the program's signal handler reported signal {number})"
    ))
}

/// What an exit code says about a crash: a signal (128 + N from a shell,
/// -N from Python's subprocess and Node), or a Windows status (NTSTATUS in
/// hex, or as an unsigned or signed 32-bit decimal).
pub(in crate::text) fn crash_code(code: &str) -> Option<String> {
    let negative = code.starts_with('-');
    let digits = code.trim_start_matches('-');
    let value: i64 = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => i64::from_str_radix(hex, 16).ok()?,
        None => digits.parse().ok()?,
    };
    let value = if negative { -value } else { value };
    let signal = |n: i64| {
        CRASH_SIGNALS
            .iter()
            .find(|(s, _)| *s == n)
            .map(|(_, name)| name)
    };
    if (128..=159).contains(&value) {
        if let Some(name) = signal(value - 128) {
            return Some(format!(
                "{name} (exit status {value} = 128 + {})",
                value - 128
            ));
        }
    }
    if (-31..0).contains(&value) {
        if let Some(name) = signal(-value) {
            return Some(format!("{name} (killed by signal {})", -value));
        }
    }
    // The status as Windows reports it: its 32 bits, however printed.
    let bits = u32::try_from(value)
        .ok()
        .or_else(|| i32::try_from(value).ok().map(|v| v as u32))?;
    windows_status(bits).map(|name| format!("{name} ({bits:#010X})"))
}

/// Windows statuses (ntstatus.h) that end a process by a crash or a
/// fail-fast, by the name a developer looks up. Statuses of start-up
/// failures (a DLL not found) and of Ctrl-C are not crashes.
pub(in crate::text) fn windows_status(code: u32) -> Option<&'static str> {
    const STATUSES: [(u32, &str); 16] = [
        (0xC000_0005, "STATUS_ACCESS_VIOLATION"),
        (0xC000_0006, "STATUS_IN_PAGE_ERROR"),
        (0xC000_001D, "STATUS_ILLEGAL_INSTRUCTION"),
        (0xC000_008C, "STATUS_ARRAY_BOUNDS_EXCEEDED"),
        (0xC000_008E, "STATUS_FLOAT_DIVIDE_BY_ZERO"),
        (0xC000_0094, "STATUS_INTEGER_DIVIDE_BY_ZERO"),
        (0xC000_0096, "STATUS_PRIVILEGED_INSTRUCTION"),
        (0xC000_00FD, "STATUS_STACK_OVERFLOW"),
        (0xC000_027B, "STATUS_STOWED_EXCEPTION"),
        (0xC000_0374, "STATUS_HEAP_CORRUPTION"),
        (0xC000_0409, "STATUS_STACK_BUFFER_OVERRUN (fail-fast)"),
        (0xC000_0417, "STATUS_INVALID_CRUNTIME_PARAMETER"),
        (0xC000_0420, "STATUS_ASSERTION_FAILURE"),
        (0xC000_0602, "STATUS_FAIL_FAST_EXCEPTION"),
        (0x8000_0003, "STATUS_BREAKPOINT"),
        (0x4000_0015, "STATUS_FATAL_APP_EXIT"),
    ];
    STATUSES.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// A Windows Error Reporting record's exception code line (Event 1000's
/// `Exception code: 0xc0000005`, a problem signature's `Exception Code:
/// c0000005`), with the faulting module and offset from the lines around
/// it. Event Viewer writes the record in the system's language: the
/// German, French, Spanish, Russian, Chinese and Japanese words are read
/// too ([`WER_CODE_WORDS`]).
pub(super) fn windows_error_report(
    line: &str,
    i: usize,
    lines: &[Option<String>],
) -> Option<String> {
    static CODE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:Exception [Cc]ode|Ausnahmecode|Code d.exception|C[oó]digo de excepci[oó]n|C[oó]digo de exce[cç][aã]o|Codice eccezione|Kod wyj[aą]tku|Uitzonderingscode|예외 코드|Код исключения|异常代码|例外コード)\s*[:：]\s*(?:0x)?([0-9a-fA-F]{8})\s*$")
            .expect("WER code pattern")
    });
    let trimmed = line
        .trim()
        .trim_matches('`')
        .trim_start_matches('>')
        .trim_start();
    if !WER_CODE_WORDS.iter().any(|w| trimmed.starts_with(w)) {
        return None;
    }
    let c = CODE.captures(trimmed)?;
    let code = u32::from_str_radix(&c[1], 16).ok()?;
    let near = |keys: &[&str]| {
        lines
            .iter()
            .skip(i.saturating_sub(12))
            .take(24)
            .flatten()
            .find_map(|l| {
                let l = l
                    .trim()
                    .trim_matches('`')
                    .trim_start_matches('>')
                    .trim_start();
                keys.iter().find_map(|k| l.strip_prefix(k)).map(|v| {
                    v.trim()
                        .split([',', '，'])
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_string()
                })
            })
            .filter(|v| !v.is_empty())
    };
    let module = near(&[
        "Faulting module name:",
        "Fault Module Name:",
        "Name des fehlerhaften Moduls:",
        "Nom du module défaillant :",
        "Nom du module défaillant:",
        "Nombre del módulo con errores:",
        "Nome modulo con errori:",
        "Nome del modulo con errori:",
        "Nome do módulo com falha:",
        "Nazwa modułu powodującego błąd:",
        "Имя модуля с ошибкой:",
        "错误模块名称:",
        "错误模块名称：",
    ]);
    let offset = near(&[
        "Fault offset:",
        "Exception Offset:",
        "Fehleroffset:",
        "Offset eccezione:",
        "Offset di errore:",
        "Смещение исключения:",
        "错误偏移量:",
        "错误偏移量：",
    ]);
    let name = windows_status(code).unwrap_or("exception");
    let mut meaning = format!("{name} ({code:#010X})");
    if let Some(module) = module {
        meaning.push_str(&format!(" in {module}"));
        // Windows names a module the process had unloaded by the time of
        // the fault `NAME_unloaded`.
        if module.ends_with("_unloaded") {
            meaning.push_str(" (a module already unloaded)");
        }
        if let Some(offset) = offset {
            meaning.push_str(&format!(" at offset {offset}"));
        }
    }
    Some(meaning)
}

/// The words a WER record's exception code line starts with, in the
/// languages Event Viewer and the problem report are read in.
pub(super) const WER_CODE_WORDS: [&str; 14] = [
    "Exception ",
    "Ausnahmecode",
    "Code d",
    "Codigo de excepci",
    "Código de excepci",
    "Código de exce",
    "Codigo de exce",
    "Codice eccezione",
    "Kod wyj",
    "Uitzonderingscode",
    "예외 코드",
    "Код исключения",
    "异常代码",
    "例外コード",
];

/// Visual Studio's words for an access violation it stopped on (its
/// exception dialog, its Output window), in English and in the languages
/// of its localized builds: `Exception thrown: read access violation.`,
/// `Вызвано исключение: нарушение доступа для чтения.`, `Ausnahme
/// ausgelöst: Lesezugriffsverletzung`, `引发了异常: 读取访问权限冲突`,
/// `Exception levée : violation d'accès en lecture`. Whether it was a read,
/// a write or an execution.
fn access_violation_shown(line: &str) -> Option<&'static str> {
    const SHOWN: [(&str, &str, &str); 11] = [
        ("exception thrown: ", "read access violation", "read"),
        ("exception thrown: ", "write access violation", "write"),
        ("exception thrown: ", "execute access violation", "execute"),
        (
            "Вызвано исключение: ",
            "нарушение доступа для чтения",
            "read",
        ),
        (
            "Вызвано исключение: ",
            "нарушение доступа для записи",
            "write",
        ),
        ("ausnahme ausgelöst: ", "lesezugriffsverletzung", "read"),
        ("ausnahme ausgelöst: ", "schreibzugriffsverletzung", "write"),
        ("引发了异常: ", "读取访问权限冲突", "read"),
        ("引发了异常: ", "写入访问权限冲突", "write"),
        ("exception levée : ", "violation d'accès en lecture", "read"),
        (
            "exception levée : ",
            "violation d'accès en écriture",
            "write",
        ),
    ];
    // The words are written in lower case (only ASCII letters change), the
    // line lowered to meet them: `Unhandled exception thrown: ...` ends the
    // same way.
    let lower = line.to_ascii_lowercase();
    SHOWN.iter().find_map(|(opening, access, kind)| {
        let at = lower.find(opening)?;
        lower[at + opening.len()..]
            .starts_with(access)
            .then_some(*kind)
    })
}

/// WinDbg's exception record and `!analyze -v` summary lines: the code,
/// named, with a fail-fast's subcode (its first parameter, or the `Subcode:`
/// line `!analyze` prints).
pub(super) fn debugger_analysis(
    line: &str,
    i: usize,
    lines: &[Option<String>],
) -> Option<Option<String>> {
    static RECORD: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:ExceptionCode|EXCEPTION_CODE_STR):\s*(?:0x)?([0-9a-fA-F]{8})\b")
            .expect("exception record pattern")
    });
    static SUBCODE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:Parameter\[0\]:\s*([0-9a-fA-F]+)|Subcode:\s*0x([0-9a-fA-F]+))")
            .expect("subcode pattern")
    });
    // Visual Studio's dialog and Output window: `Exception thrown at
    // 0x00007FF7BD56B497 in app.exe: 0xC0000005: Access violation reading
    // location 0x...`, `Unhandled exception at 0x... (ucrtbase.dll) in
    // app.exe: 0xC0000409: ...`.
    static STOPPED_AT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:First-chance |Unhandled )?[Ee]xception (?:thrown )?at 0x[0-9a-fA-F]+(?: \([^)]*\))? in [^:]+: 0x([0-9a-fA-F]{8})\b")
            .expect("Visual Studio exception pattern")
    });
    let t = line.trim();
    if t.contains(" at 0x") {
        if let Some(c) = STOPPED_AT.captures(t) {
            let code = u32::from_str_radix(&c[1], 16).ok()?;
            let name = windows_status(code).unwrap_or("exception");
            return Some(Some(format!(
                "{name} ({code:#010X}), as Visual Studio shows it"
            )));
        }
    }
    if let Some(access) = access_violation_shown(t) {
        return Some(Some(format!(
            "STATUS_ACCESS_VIOLATION (0xC0000005): a {access} access violation, as Visual Studio shows it"
        )));
    }
    if let Some(bucket) = t.strip_prefix("FAILURE_BUCKET_ID:") {
        return (!bucket.trim().is_empty()).then_some(None);
    }
    if !(t.starts_with("ExceptionCode") || t.starts_with("EXCEPTION_CODE_STR")) {
        return None;
    }
    let c = RECORD.captures(t)?;
    let code = u32::from_str_radix(&c[1], 16).ok()?;
    let name = windows_status(code).unwrap_or("exception");
    let mut meaning = format!("{name} ({code:#010X})");
    if code == 0xC000_0409 {
        let sub = lines.iter().skip(i + 1).take(8).flatten().find_map(|l| {
            let c = SUBCODE.captures(l.trim())?;
            let hex = c.get(1).or_else(|| c.get(2))?.as_str();
            u64::from_str_radix(hex, 16).ok()
        });
        if let Some(sub) = sub {
            let named = crate::exit_phase::fast_fail_name(sub)
                .map(|n| format!(" {n}"))
                .unwrap_or_default();
            meaning.push_str(&format!(", fast-fail code {sub}{named}"));
        }
    }
    Some(Some(meaning))
}
