//! The traces of a cleaned log: runs of frames and thread headers, read
//! piece by piece (split.rs), each trace its own report.

use super::formats::{classify, crashed, Format, Line, TextFrame};
use super::trace::{TextThread, Trace};
use crate::model::signature_name;

/// Unrecognised lines inside a trace before it is taken to have ended.
const GAP: usize = 12;
/// Most lines of locals (gdb's `bt full`) under one frame before the
/// trace is taken to have ended.
const MAX_LOCALS: usize = 400;
/// Most frames kept per thread.
const MAX_FRAMES: usize = 512;
/// Fewest frames of a format whose lines have a plain shape (a frame list's
/// `name 0xADDR`) that make a trace: fewer are a program's own output.
const PLAIN_SHAPE_FRAMES: usize = 3;

/// gdb wraps a frame whose argument list is long onto the next lines
/// (`#3 0x... in f (this=0x1,` / `    x=2) at f.cc:9`), and the stop line it
/// prints where it stopped (`0x... in f (this=0x1,`): those are joined
/// back, so each frame is one line. At most 4 lines are joined.
pub(super) fn join_wrapped(lines: &mut [Option<String>]) {
    let open = |s: &str| s.matches('(').count() as isize - s.matches(')').count() as isize;
    for i in 0..lines.len() {
        let Some(line) = lines[i].as_deref() else {
            continue;
        };
        let gdb = (line.starts_with('#') && line[1..].starts_with(|c: char| c.is_ascii_digit()))
            || (line.starts_with("0x") && line.contains(" in "));
        // gdb also puts a long `from LIBRARY` or `at FILE:LINE` on a line
        // of its own.
        let tail = |next: Option<&Option<String>>| {
            next.and_then(|l| l.as_deref()).is_some_and(|l| {
                let t = l.trim_start();
                l.starts_with(' ') && (t.starts_with("from /") || t.starts_with("at "))
            })
        };
        if !gdb || (open(line) <= 0 && !tail(lines.get(i + 1))) {
            continue;
        }
        let mut joined = line.to_string();
        for next in i + 1..(i + 5).min(lines.len()) {
            let Some(more) = lines[next].as_deref() else {
                break;
            };
            if more.starts_with('#') || !more.starts_with(' ') {
                break;
            }
            joined.push(' ');
            joined.push_str(more.trim());
            lines[next] = None;
            if open(&joined) <= 0 && !tail(lines.get(next + 1)) {
                break;
            }
        }
        lines[i] = Some(joined);
    }
}

/// Every trace of the log. `starts` marks the lines where a piece begins.
pub(super) fn find_traces(lines: &[Option<String>], starts: &[bool]) -> Vec<Trace> {
    let mut reader = Reader::default();
    for (i, line) in lines.iter().enumerate() {
        if starts.get(i).copied().unwrap_or(false) {
            reader.new_piece = true;
        }
        if let Some(line) = line {
            reader.read(i + 1, line);
        }
    }
    reader.finish();
    reader.traces
}

/// Where the reading of a log's lines stands: the traces found, the one
/// being read, and what was seen before it that may belong to it.
#[derive(Default)]
struct Reader {
    traces: Vec<Trace>,
    current: Trace,
    /// Unrecognised lines since the last trace line.
    since: usize,
    /// A crash line seen before any frame: it belongs to the next trace.
    pending_crash: Option<(String, Option<u64>, usize)>,
    pending_start: Option<usize>,
    /// A debugger or the user stopped the process (no crash): the line.
    pending_interrupt: Option<usize>,
    /// Where the next native frames of faulthandler's C stack go: that
    /// many frames into the current thread (they are its innermost).
    native_at: Option<usize>,
    /// A line that is no part of any trace (a reporter's words) since the
    /// last frame.
    prose: bool,
    /// A new piece began and no trace line was read in it yet.
    new_piece: bool,
    /// Lines of gdb's `bt full` locals since the last trace line.
    locals: usize,
    /// Frames of this format are history, no thread's, for now.
    aside: Option<Format>,
}

impl Reader {
    /// Ends the trace being read: kept (split where it repeats) unless it
    /// is a program's own output of a stack's shape or no trace at all.
    fn finish(&mut self) {
        let done = std::mem::take(&mut self.current);
        for mut done in split_repeated(done) {
            drop_reprinted(&mut done);
            let frames = || done.threads.iter().flat_map(|t| &t.frames);
            let few = frames().count() < PLAIN_SHAPE_FRAMES;
            let plain = done.has_frames()
                && match done.format {
                    Some(Format::FrameList) => few || !stack_like(&done),
                    _ => few && frames().all(|f| f.bare),
                };
            // A crash with its thread header but no frame (faulthandler's
            // "<no Python frame>") is a trace too: the crash is what it says.
            if !plain
                && !debugger_own_python(&done)
                && (done.has_frames() || (done.crash.is_some() && !done.threads.is_empty()))
            {
                self.traces.push(done);
            }
        }
    }

    /// One line of the log, numbered from 1.
    fn read(&mut self, number: usize, line: &str) {
        let Some(kind) = classify(line, self.current.format) else {
            self.unrecognised(line);
            return;
        };
        self.since = 0;
        self.locals = 0;
        match &kind {
            Line::Frame(format, _) if self.aside == Some(*format) => return,
            Line::Frame(..) | Line::Elided | Line::Module(_) | Line::Location { .. } => {}
            _ => self.aside = None,
        }
        // A new piece's first stack line ends the trace before it, unless
        // its frames go on counting from where that trace's stopped.
        let stack_line = matches!(kind, Line::Thread { .. } | Line::Frame(..) | Line::Start(_));
        if stack_line
            && std::mem::take(&mut self.new_piece)
            && self.current.has_frames()
            && !continues(&self.current, &kind)
        {
            self.finish();
        }
        self.trace_line(number, line, kind);
    }

    /// A line no format recognises: gdb's locals, a gap inside a trace, or
    /// the end of it.
    fn unrecognised(&mut self, line: &str) {
        // gdb's `bt full` prints each frame's locals under it: part of
        // the trace (up to MAX_LOCALS lines under one frame).
        if self.current.format == Some(Format::Gdb) && gdb_locals(line) && self.locals < MAX_LOCALS
        {
            self.locals += 1;
            return;
        }
        self.since += 1;
        if self.since > GAP {
            self.aside = None;
        }
        self.prose |= !line.trim().is_empty();
        if self.current.has_frames() && self.since > GAP {
            self.finish();
        }
    }

    /// A line of a trace, by what it is.
    fn trace_line(&mut self, number: usize, line: &str, kind: Line) {
        let current = &mut self.current;
        match kind {
            Line::Interrupted => {
                if current.has_frames() {
                    current.interrupted = true;
                } else {
                    self.pending_interrupt = Some(number);
                }
            }
            Line::Start(format) => {
                if current.has_frames() {
                    self.finish();
                }
                self.current.format = Some(format);
                self.pending_start = Some(number);
            }
            Line::Crash { what, thread } => self.crash(number, what, thread),
            Line::Thread {
                format,
                number: thread_number,
                id,
                name,
                current: marked,
                event,
            } => {
                let header = TextThread {
                    number: thread_number,
                    id,
                    name,
                    current: marked,
                    event,
                    frames: Vec::new(),
                    format: Some(format),
                    line: number,
                };
                self.thread(number, line, format, header);
            }
            Line::Frame(format, frame) => self.frame(number, format, frame),
            // The thread the debugger stopped in is the crash's, when
            // the crash line did not say.
            Line::Stopped { number, id } => {
                let thread = number.or(id);
                match (&mut self.pending_crash, &mut current.crash) {
                    (Some((_, named @ None, _)), _) | (None, Some((_, named @ None))) => {
                        *named = thread;
                    }
                    _ => {}
                }
            }
            Line::Module(module) => {
                if let Some(frame) = current.threads.last_mut().and_then(|t| t.frames.last_mut()) {
                    frame.module.get_or_insert(module);
                }
            }
            Line::Location { file, line } => {
                if let Some(frame) = current.threads.last_mut().and_then(|t| t.frames.last_mut()) {
                    if frame.file.is_none() {
                        frame.file = Some(file);
                        frame.line = line;
                    }
                }
            }
            Line::Aside(format) => self.aside = Some(format),
            Line::Elided => {
                if current.has_frames() {
                    current.elided = true;
                }
            }
            Line::NativeStack => {
                if current.has_frames() {
                    self.native_at = Some(0);
                }
            }
        }
    }

    /// The crash, as the line names it: this trace's once it has frames,
    /// else the next trace's.
    fn crash(&mut self, number: usize, what: String, thread: Option<u64>) {
        if self.current.has_frames() && self.current.crash.is_some() {
            // A second crash: another process's trace.
            self.finish();
        }
        if self.current.has_frames() && self.current.interrupted {
            // A debugger's session that went on after a stop of no crash
            // (Ctrl-C, SIGTERM, then `continue`): the stack printed at
            // that stop is stale, the crash's own follows.
            self.current = Trace::default();
        }
        if self.current.has_frames() {
            self.current.crash = Some((what, thread));
            self.current.crash_line = number;
        } else {
            self.pending_crash = Some((what, thread, number));
        }
    }

    /// The trace's first stack line, unless a start line came before it,
    /// and a stop without a crash just before it.
    fn begin(&mut self, number: usize) {
        if self.current.first_line == 0 {
            self.current.first_line = self.pending_start.take().unwrap_or(number);
        }
        if self
            .pending_interrupt
            .take()
            .is_some_and(|at| number - at <= 40)
        {
            self.current.interrupted = true;
        }
    }

    /// A thread header: a new thread of the trace (or of a new trace when
    /// its format does not go with the trace's).
    fn thread(&mut self, number: usize, line: &str, format: Format, header: TextThread) {
        self.native_at = None;
        self.prose = false;
        if self.current.format.is_some_and(|f| !f.goes_with(format)) && self.current.has_frames() {
            self.finish();
        }
        if let Some((what, thread, at)) = self.pending_crash.take() {
            // systemd-coredump lists every module between its
            // `Signal:` line and the first stack.
            let reach = match format {
                Format::SystemdCoredump => 1000,
                _ => 40,
            };
            let current = &mut self.current;
            if number - at <= reach {
                current.crash.get_or_insert((what, thread));
                current.crash_line = at;
                current.first_line = match current.first_line {
                    0 => at,
                    first => first.min(at),
                };
            }
        }
        self.begin(number);
        let current = &mut self.current;
        current.format.get_or_insert(format);
        // lldb says why a thread stopped on its header line: a
        // crash, or a stop of its own (an attach's SIGSTOP, a
        // breakpoint).
        if let Some(reason) = line.split("stop reason = ").nth(1) {
            if !crashed(reason) {
                current.interrupted = true;
            } else if current.crash.is_none() {
                current.crash = Some((reason.trim().to_string(), header.id));
                current.crash_line = number;
            }
        }
        current.threads.push(header);
        current.last_line = number;
    }

    /// A frame: the current thread's next (or, for faulthandler's C stack,
    /// one of its innermost), or the first of a new thread.
    fn frame(&mut self, number: usize, format: Format, frame: TextFrame) {
        let after_prose = std::mem::take(&mut self.prose);
        if self.current.format.is_some_and(|f| !f.goes_with(format)) && self.current.has_frames() {
            self.finish();
        }
        self.begin(number);
        let current = &mut self.current;
        if current.format.is_none() || current.threads.is_empty() {
            current.format = Some(format);
        }
        // A crash named just before the frames is this trace's, and
        // the trace starts there.
        if let Some((what, thread, at)) = self.pending_crash.take() {
            if number - at <= 40 {
                current.crash.get_or_insert((what, thread));
                current.crash_line = at;
                current.first_line = current.first_line.min(at);
            }
        }
        if let (Some(at), false) = (self.native_at, frame.python) {
            let thread = current.thread(number);
            if thread.frames.len() < MAX_FRAMES {
                // The thread the C stack was for may have ended with its
                // trace: the frames go on from where the thread now stands.
                let at = at.min(thread.frames.len());
                thread.frames.insert(at, frame);
                self.native_at = Some(at + 1);
            }
            current.last_line = number;
            return;
        }
        self.native_at = None;
        // A frame numbered 0 again, with no header between: the
        // next thread (gdb's `bt` run twice, `k` per thread).
        // Visual Studio numbers no frame: a stack copied from its
        // Call Stack window is one run of lines, so frames after a
        // reporter's words are another stack.
        let again = frame.index == Some(0) || (format == Format::VisualStudio && after_prose);
        let thread = current.thread(number);
        if again && !thread.frames.is_empty() {
            current.threads.push(TextThread {
                line: number,
                ..TextThread::default()
            });
        }
        let thread = current.thread(number);
        thread.format.get_or_insert(format);
        for frame in with_joined(frame) {
            if thread.frames.len() < MAX_FRAMES {
                thread.frames.push(frame);
            }
        }
        current.last_line = number;
    }
}

/// Whether frames of a plain shape look like a stack, not a program's
/// output of the same shape (`token 0x7ffff7fc6060`): some frame names its
/// source location, or is one of the frames stacks are made of (a thread's
/// or the program's start, the abort and unwind machinery).
fn stack_like(trace: &Trace) -> bool {
    const STACK_FRAMES: [&str; 16] = [
        "main",
        "_start",
        "start_thread",
        "clone",
        "clone3",
        "__libc_start_main",
        "__libc_start_call_main",
        "BaseThreadInitThunk",
        "RtlUserThreadStart",
        "abort",
        "raise",
        "__GI_abort",
        "__GI_raise",
        "__pthread_kill_implementation",
        "__cxa_throw",
        "std::terminate()",
    ];
    trace.threads.iter().flat_map(|t| &t.frames).any(|f| {
        f.file.is_some()
            || f.function
                .as_deref()
                .is_some_and(|name| STACK_FRAMES.contains(&name) || name.starts_with("_Unwind_"))
    })
}

/// A Python traceback of a debugger's own scripting (lldb failing to load
/// its Python, a gdb pretty printer's error): its frames are all in the
/// debugger's packages or in code given on a command line, none of the
/// program's. Not a trace of the process.
fn debugger_own_python(trace: &Trace) -> bool {
    let mut frames = trace.threads.iter().flat_map(|t| &t.frames).peekable();
    trace.format == Some(Format::PythonTraceback)
        && frames.peek().is_some()
        && frames.all(|f| {
            f.file.as_deref().is_some_and(|file| {
                let file = file.replace('\\', "/");
                file == "<string>"
                    || file == "<stdin>"
                    || ["/lldb/", "/gdb/", "lldb/__init__.py"]
                        .iter()
                        .any(|d| file.contains(d))
                    || file.starts_with("lldb/")
                    || file.starts_with("gdb/")
            })
        })
}

/// A frame and the frames written after it on the same line (each the
/// caller of the one before), as frames of their own.
fn with_joined(mut frame: TextFrame) -> Vec<TextFrame> {
    let joined = std::mem::take(&mut frame.joined);
    let mut out = vec![frame];
    for name in joined {
        let (module, function) = match name.split_once('!') {
            Some((m, f)) if !m.is_empty() => (Some(format!("{m}.dll")), f.to_string()),
            _ => (None, name),
        };
        out.push(super::formats::TextFrame {
            module,
            function: Some(function),
            bare: true,
            ..Default::default()
        });
    }
    out
}

/// Whether `kind`, the first stack line of a new piece, goes on with the
/// trace being read: a frame numbered one past its last frame (a stack a
/// reporter cut into two blocks).
fn continues(trace: &Trace, kind: &Line) -> bool {
    let Line::Frame(_, frame) = kind else {
        return false;
    };
    let last = trace
        .threads
        .last()
        .and_then(|t| t.frames.last())
        .and_then(|f| f.index);
    matches!((frame.index, last), (Some(next), Some(last)) if next == last + 1)
}

/// A trace whose thread ids repeat is several processes' traces printed
/// one after the other (two `thread apply all bt` a few lines apart): it is
/// cut where a thread seen before appears again, unless that is the same
/// stack printed again (lldb's stop header, then `bt all`), which is kept
/// once, with its longer print.
fn split_repeated(mut trace: Trace) -> Vec<Trace> {
    let key = |t: &TextThread| t.number.or(t.id);
    let mut i = 1;
    while i < trace.threads.len() {
        let Some(k) = key(&trace.threads[i]) else {
            i += 1;
            continue;
        };
        let Some(earlier) = trace.threads[..i].iter().position(|t| key(t) == Some(k)) else {
            i += 1;
            continue;
        };
        let (a, b) = (&trace.threads[earlier].frames, &trace.threads[i].frames);
        if a.is_empty() || b.starts_with(a) {
            // Printed again, in full: the full print in the first's place.
            let again = trace.threads.remove(i);
            let first = &mut trace.threads[earlier];
            first.frames = again.frames;
            first.current |= again.current;
            first.event |= again.event;
            if first.name.is_none() {
                first.name = again.name;
            }
            continue;
        }
        if b.is_empty() || a.starts_with(b) {
            trace.threads.remove(i);
            continue;
        }
        // Another process: the rest is its own trace.
        let rest = trace.threads.split_off(i);
        let cut = rest[0].line;
        let mut next = Trace {
            around: trace.around,
            format: trace.format,
            first_line: cut,
            last_line: trace.last_line,
            threads: rest,
            crash: None,
            crash_line: 0,
            interrupted: trace.interrupted,
            elided: trace.elided,
        };
        trace.last_line = cut.saturating_sub(1).max(trace.first_line);
        if trace.crash.is_some() && trace.crash_line >= cut {
            next.crash = trace.crash.take();
            next.crash_line = trace.crash_line;
        }
        let mut out = vec![trace];
        out.extend(split_repeated(next));
        return out;
    }
    vec![trace]
}

/// A debugger prints the frame it stopped in, then the whole stack when
/// asked (`#0 ...`, `(gdb) bt` or `thread apply all bt`, `#0 ... #1 ...`):
/// a thread without a header whose frames all begin another thread's is
/// that same stack printed twice, not a thread of its own.
fn drop_reprinted(trace: &mut Trace) {
    let mut i = 0;
    while i < trace.threads.len() {
        let a = &trace.threads[i];
        let again = a.id.is_none()
            && a.number.is_none()
            && a.name.is_none()
            && !a.frames.is_empty()
            && trace.threads.iter().enumerate().any(|(j, b)| {
                j > i
                    && b.frames.len() >= a.frames.len()
                    && a.frames
                        .iter()
                        .zip(&b.frames)
                        .all(|(x, y)| same_frame(x, y))
            });
        if again {
            trace.threads.remove(i);
        } else {
            i += 1;
        }
    }
}

/// Whether two frames read from the same stack printed twice are the same
/// frame: gdb's stop line keeps a C++ function's parameter list
/// (`0x... in f(int) () from LIB`) that its numbered frame reads as
/// arguments, so names compare without parameters, and addresses where
/// both have one.
fn same_frame(a: &TextFrame, b: &TextFrame) -> bool {
    fn name(f: &TextFrame) -> Option<&str> {
        f.function.as_deref().map(signature_name)
    }
    match (a.address, b.address) {
        (Some(x), Some(y)) if x != y => false,
        _ => name(a) == name(b) && (a.function.is_some() || a.address.is_some()),
    }
}

/// A line of the locals gdb's `bt full` prints under a frame: indented by
/// eight spaces (a struct's value goes on over several such lines), or its
/// notes that there are none.
fn gdb_locals(line: &str) -> bool {
    let trimmed = line.trim();
    line.starts_with("        ")
        || trimmed == "No locals."
        || trimmed.starts_with("No symbol table info available")
}
