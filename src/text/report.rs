//! The report made of a trace as read (trace.rs): threads and frames as the
//! text gave them, what stopped the process (stop.rs), the messages around
//! it (messages.rs), the exit the log states (evidence.rs), and what the
//! text left out. A log with messages but no stack gives a report of its
//! messages alone, which says so.

use crate::model::{
    Blocked, Exception, Frame, FrameKind, Message, Module, ModuleSymbols, Process, Report, Source,
    SourceKind, SymbolSource, System, Thread,
};

use super::evidence::{exit_evidence, exit_ruled_out};
use super::formats::{Format, TextFrame};
use super::stop::{self, Stop};
use super::trace::{TextThread, Trace};
use super::words::exit_suggested;

/// The report of one trace, with the log's messages around it.
pub(super) fn to_report(trace: &Trace, lines: &[Option<String>], messages: &[Message]) -> Report {
    let format = trace.format.unwrap_or(Format::Gdb);
    let window = trace.context(lines.len());
    let hang_dump = stop::hang_dump(trace, lines);
    let stop = match &hang_dump {
        // A dump the text says a hang or a timeout made: no crash, unless
        // the trace itself names one.
        Some(_) => trace.crash.clone().map(|(what, thread)| Stop {
            what,
            thread,
            inferred: None,
            parameters: Vec::new(),
        }),
        None => find_stop(trace, lines, messages, window),
    };
    let failure = match trace.crash_line {
        0 => trace.first_line,
        line => line,
    };
    let mut modules: Vec<String> = Vec::new();
    let mut threads = Vec::new();
    let crashing = stop.as_ref().map(|stop| crashing_thread(trace, stop));
    for (i, text_thread) in trace.threads.iter().enumerate() {
        // A thread without frames is kept when it is the one that crashed
        // (faulthandler's "<no Python frame>").
        if text_thread.frames.is_empty() && Some(i) != crashing {
            continue;
        }
        let crashed = Some(i) == crashing;
        threads.push(to_thread(i, text_thread, format, crashed, &mut modules));
    }
    threads.sort_by_key(|t| !t.crashing);
    let warnings = warnings(trace, stop.as_ref(), hang_dump.as_deref(), format);
    let windows = stop::is_windows(trace, &modules, stop.as_ref().map(|s| s.what.as_str()));
    let source = Source {
        kind: SourceKind::Text,
        format: Some(format.name().to_string()),
        line: Some(trace.first_line),
        exit_evidence: exit_evidence(messages, lines, window, failure),
        exit_suggested: exit_suggested(
            lines,
            window,
            Some((trace.first_line, trace.last_line)),
            &failure_lines(messages, failure),
        ),
        exit_ruled_out: exit_ruled_out(messages, failure),
        messages: messages.to_vec(),
        messages_only: false,
    };
    assemble(threads, modules, stop, windows, warnings, source)
}

/// The lines that tell of the failure at `failure`: that line, and the
/// messages of how the process ended before it (a shell's `Segmentation
/// fault (core dumped)` above a debugger's session on the core).
fn failure_lines(messages: &[Message], failure: usize) -> Vec<usize> {
    std::iter::once(failure)
        .chain(
            messages
                .iter()
                .filter(|m| m.line < failure && !m.kind.is_test())
                .map(|m| m.line),
        )
        .collect()
}

/// What stopped the process: the crash the trace names, else one named
/// near it, in its frames or in the messages, else what its stacks show.
fn find_stop(
    trace: &Trace,
    lines: &[Option<String>],
    messages: &[Message],
    window: (usize, usize),
) -> Option<Stop> {
    trace
        .crash
        .clone()
        .map(|(what, thread)| Stop {
            what,
            thread,
            inferred: None,
            parameters: Vec::new(),
        })
        .or_else(|| stop::crash_near(lines, window))
        .or_else(|| stop::crash_in_frames(trace, lines))
        .or_else(|| stop::from_messages(messages))
        .or_else(|| stop::inferred(trace))
}

/// Which thread crashed: the one the crash line names (by the debugger's
/// number for it, or its id), else the one the format marks as the last
/// event's (WinDbg's `#`), else as current, else the first.
fn crashing_thread(trace: &Trace, stop: &Stop) -> usize {
    let named = stop.thread;
    let all = || trace.threads.iter();
    all()
        .position(|t| named.is_some() && t.number == named)
        .or_else(|| all().position(|t| named.is_some() && t.id == named))
        .or_else(|| all().position(|t| t.event))
        .or_else(|| all().position(|t| t.current))
        .unwrap_or(0)
}

/// One thread of the trace, innermost frame first; the modules its frames
/// name are added to `modules`.
fn to_thread(
    i: usize,
    text_thread: &TextThread,
    format: Format,
    crashing: bool,
    modules: &mut Vec<String>,
) -> Thread {
    let thread_format = text_thread.format.unwrap_or(format);
    // A sampled call tree: its busiest path.
    let path;
    let mut stuck = None;
    let mut frames: Vec<&TextFrame> = if thread_format == Format::Spindump {
        path = super::formats::busiest_path(&text_thread.frames);
        stuck = super::formats::every_sample_in(&path);
        path.iter().collect()
    } else {
        text_thread.frames.iter().collect()
    };
    if thread_format.outermost_first() {
        frames.reverse();
    }
    let frames: Vec<Frame> = frames
        .into_iter()
        .enumerate()
        .map(|(index, f)| {
            if let Some(module) = &f.module {
                if !modules.iter().any(|m| m.eq_ignore_ascii_case(module)) {
                    modules.push(module.clone());
                }
            }
            to_frame(index, f)
        })
        .collect();
    // Text gives thread ids only sometimes: otherwise their order.
    let id = text_thread.id.map_or(i as u32 + 1, |id| id as u32);
    let mut thread = thread(id, text_thread.name.clone(), crashing, frames);
    // Every sample in one frame: stuck there, whether in a wait the
    // frames name or not (a wait they name is found from them).
    thread.blocked = stuck.and_then(|samples| {
        let top = thread.frames.first()?;
        let name = top.function.clone().or_else(|| top.module.clone())?;
        Some(Blocked {
            frame_index: 0,
            function: format!("{name} (all {samples} samples there)"),
            certain: true,
            kind: None,
        })
    });
    thread
}

/// What the reader should know the text did not say: frames left out, no
/// crash named, a stop inferred, WinDbg's module names.
fn warnings(
    trace: &Trace,
    stop: Option<&Stop>,
    hang_dump: Option<&str>,
    format: Format,
) -> Vec<String> {
    let mut warnings = Vec::new();
    if trace.elided {
        warnings.push("the trace leaves frames out ([External Code], `...` or a note): what is shown is not the whole stack".to_string());
    }
    match stop {
        None if hang_dump.is_some() => warnings.push(format!(
            "the text says the stacks were dumped for a hang or a timeout (`{}`): read as a hang; \
             a dumper's own frames on top (a signal handler, raise, abort) and the abort that ends it are no crash",
            hang_dump.unwrap_or_default()
        )),
        None if trace.interrupted => warnings.push(
            "a debugger or the user stopped the process (no crash): read as a hang or a live stack"
                .to_string(),
        ),
        None => {
            warnings.push("the text names no crash: read as a hang or a live stack".to_string())
        }
        Some(Stop {
            inferred: Some(why),
            ..
        }) => warnings.push(why.clone()),
        Some(_) => {}
    }
    if format == Format::WinDbg {
        warnings.push(
            "WinDbg names modules without their extension: each is taken as NAME.dll".to_string(),
        );
    }
    warnings
}

/// A report of messages alone (a log that says what happened and shows no
/// stack): one thread without frames stands for the process, and the
/// report says it has nothing else. `window` is where the messages were
/// read (0-based, end exclusive), `failure` the line of the failure.
pub(super) fn from_messages(
    messages: &[Message],
    lines: &[Option<String>],
    window: (usize, usize),
    failure: usize,
) -> Report {
    let stop = stop::from_messages(messages);
    let windows = stop
        .as_ref()
        .is_some_and(|s| stop::is_windows(&Trace::default(), &[], Some(&s.what)))
        || messages
            .iter()
            .any(|m| m.kind == crate::model::MessageKind::WindowsErrorReport);
    let threads = vec![thread(1, None, stop.is_some(), Vec::new())];
    let first = messages.first().map_or(failure, |m| m.line);
    let last = messages.last().map_or(failure, |m| m.line);
    let warnings = vec![format!(
        "no stack trace in the text: this report is built from the log's messages alone (lines {first}-{last})"
    )];
    let source = Source {
        kind: SourceKind::Text,
        format: Some("messages".to_string()),
        line: Some(first),
        exit_evidence: exit_evidence(messages, lines, window, failure),
        exit_suggested: exit_suggested(lines, window, None, &failure_lines(messages, failure)),
        exit_ruled_out: exit_ruled_out(messages, failure),
        messages: messages.to_vec(),
        messages_only: true,
    };
    assemble(threads, Vec::new(), stop, windows, warnings, source)
}

fn thread(id: u32, name: Option<String>, crashing: bool, frames: Vec<Frame>) -> Thread {
    Thread {
        name,
        crashing,
        frames,
        ..Thread::new(id)
    }
}

/// The report's common parts: the exception of the stop, the system, the
/// modules the frames named.
fn assemble(
    threads: Vec<Thread>,
    modules: Vec<String>,
    stop: Option<Stop>,
    windows: bool,
    warnings: Vec<String>,
    source: Source,
) -> Report {
    let exception = stop.as_ref().and_then(|stop| {
        let thread = threads.iter().find(|t| t.crashing)?;
        let (code, name) = stop::code(&stop.what, windows);
        let mut parameters = stop.parameters.clone();
        if code == 0xC000_0409 && parameters.is_empty() {
            parameters.extend(stop::fast_fail_code(&source.messages));
        }
        Some(Exception {
            code,
            name,
            address: 0,
            access_address: None,
            parameters,
            abort: None,
            cpp_type: None,
            cpp_in_flight: None,
            thread_id: thread.id,
            crash: true,
            not_a_crash: None,
            ip_in_no_module: false,
        })
    });
    Report {
        process: Some(Process::default()),
        system: Some(System {
            os: if windows {
                "Windows NT"
            } else if modules.iter().any(|m| m.ends_with(".dylib")) {
                "Mac OS X"
            } else {
                "Linux"
            }
            .to_string(),
            os_version: None,
            cpu: "unknown".to_string(),
            cpu_info: None,
            cpu_count: 0,
        }),
        exception,
        threads,
        modules: modules
            .into_iter()
            .map(|name| Module {
                path: name.clone(),
                name,
                base: 0,
                size: 0,
                version: None,
                debug_file: None,
                debug_id: None,
                code_id: None,
                symbols: ModuleSymbols::NotNeeded,
                symbol_source: SymbolSource::None,
                symbol_file: None,
                symbols_tried: Vec::new(),
                unwind_info: None,
            })
            .collect(),
        warnings,
        ..Report::new(String::new(), source)
    }
}

fn to_frame(index: usize, f: &TextFrame) -> Frame {
    let mut frame = Frame::from_text(index);
    frame.instruction = f.address.unwrap_or(0);
    frame.module = f.module.clone();
    frame.function = f.function.clone();
    frame.function_offset = f.function_offset;
    frame.module_offset = f.module_offset;
    frame.file = f.file.clone();
    frame.line = f.line;
    if f.python {
        frame.kind = FrameKind::Python;
    }
    frame
}
