//! A thread and its frames, as the text report prints them.

use std::fmt::Write as _;

use super::paint::Paint;
use crate::model::{
    hex, offset, Frame, FrameKind, SymbolSource, Thread, Trust, Wait, WaitKind, Walk,
};
use crate::printable::clean;

pub(super) fn render_thread(s: &mut String, thread: &Thread, all: &[Thread], p: Paint) {
    let header = thread_header(thread);
    if thread.crashing {
        let _ = writeln!(s, "{}", p.red(&header));
    } else {
        let _ = writeln!(s, "{}", p.bold(&header));
    }
    if let Some(wait) = &thread.wait {
        render_wait(s, wait, all, p);
    }
    if thread.walk != Walk::Ok {
        let _ = writeln!(
            s,
            "    {}",
            p.dim(&format!("stack walk: {}", thread.walk.describe()))
        );
    }
    for frame in &thread.frames {
        render_frame(s, frame, p);
    }
    render_stack_search(s, thread, p);
}

/// `Thread 7 "name" (crashing) [exiting: ...] [blocked in ...]`: what the
/// thread is, in one line.
fn thread_header(thread: &Thread) -> String {
    let mut header = format!("Thread {}", thread.id);
    if let Some(name) = &thread.name {
        let _ = write!(header, " \"{}\"", clean(name));
    }
    if thread.crashing {
        let _ = write!(header, " (crashing)");
    }
    if let Some(marker) = &thread.exiting {
        let _ = write!(
            header,
            " [exiting: {} at frame {}]",
            marker.stage, marker.frame_index
        );
    }
    if let Some(marker) = &thread.starting {
        let _ = write!(
            header,
            " [start-up: {} at frame {}]",
            marker.stage, marker.frame_index
        );
    }
    if let Some(blocked) = &thread.blocked {
        let _ = write!(header, " [blocked in {}]", clean(&blocked.describe()));
    }
    if thread.holds_gil {
        header.push_str(" [holds the GIL]");
    }
    header
}

/// `waits for a mutex at 0x... held by thread 12`: the thread's wait, and
/// who it waits on when that is known.
fn render_wait(s: &mut String, wait: &Wait, all: &[Thread], p: Paint) {
    let at = wait
        .address
        .map(|a| match &wait.in_module {
            Some(place) => format!(" {} ({})", hex(a), clean(place)),
            None => format!(" {}", hex(a)),
        })
        .unwrap_or_default();
    let holder = match (wait.kind, wait.holder) {
        (WaitKind::Join, Some(id)) => format!(": it joins {}", describe_thread(id, all)),
        (_, Some(id)) => format!(" held by {}", describe_thread(id, all)),
        (_, None) => String::new(),
    };
    let found = wait
        .found
        .as_deref()
        .map(|f| format!(" [{}]", clean(f)))
        .unwrap_or_default();
    let note = wait
        .note
        .as_deref()
        .map(|n| format!(" ({})", clean(n)))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "    waits for {}{at}{holder}{note}{}",
        wait.kind.as_str(),
        p.dim(&found)
    );
}

/// One frame: its inlined calls first, then the frame itself with how far
/// its address and its name can be trusted.
fn render_frame(s: &mut String, frame: &Frame, p: Paint) {
    for inline in &frame.inlines {
        let location = source_location(inline.file.as_deref(), inline.line);
        let _ = writeln!(
            s,
            "    {:>3}  {} {}{location}",
            "",
            p.dim("[inlined]"),
            clean(&inline.function)
        );
    }
    let _ = writeln!(
        s,
        "    {:>3}  {}  {}",
        frame.index,
        frame_text(frame, p),
        p.dim(&format!("({})", provenance(frame)))
    );
}

/// How the frame was found and where its name came from. Names from
/// anything but a .sym file say where they came from; export-derived ones
/// are the least precise.
fn provenance(frame: &Frame) -> String {
    match frame.symbol_source {
        SymbolSource::Sym if frame.function_guessed => format!(
            "{}, nearest PUBLIC name of the .sym file: a guess",
            frame.trust.describe()
        ),
        SymbolSource::Sym | SymbolSource::None => frame.trust.describe().to_string(),
        _ if frame.function_guessed => format!(
            "{}, nearest name from {}: a guess",
            frame.trust.describe(),
            frame.symbol_source.describe()
        ),
        source => format!(
            "{}, name from {}",
            frame.trust.describe(),
            source.describe()
        ),
    }
}

/// Stack-search hits shown per thread in text; JSON has them all.
const SHOWN_STACK_HITS: usize = 16;

/// Return addresses found in the thread's stack memory that the walk does
/// not show: weaker evidence, labelled as such.
fn render_stack_search(s: &mut String, thread: &Thread, p: Paint) {
    if thread.stack_search.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "    {}",
        p.dim("stack search (return addresses in stack memory that the walk does not show):")
    );
    for hit in thread.stack_search.iter().take(SHOWN_STACK_HITS) {
        let below = if hit.below_walk {
            ", below the walked frames"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "         sp+{:<7} {}!{} + {:#x}  {}",
            format!("{:#x}", hit.stack_offset),
            clean(&hit.module),
            p.bold(&clean(&hit.function)),
            hit.function_offset,
            p.dim(&format!(
                "(name from {}{below})",
                hit.symbol_source.describe()
            ))
        );
    }
    if thread.stack_search.len() > SHOWN_STACK_HITS {
        let _ = writeln!(
            s,
            "         {}",
            p.dim(&format!(
                "... and {} more (JSON lists them all)",
                thread.stack_search.len() - SHOWN_STACK_HITS
            ))
        );
    }
}

/// `module!function + offset [file : line]`, or `module + offset` without
/// symbols, or the bare address (and the unloaded module it falls in).
pub(crate) fn frame_text(frame: &Frame, p: Paint) -> String {
    if frame.kind == FrameKind::Python {
        return format!(
            "[python] {}{}",
            p.bold(&clean(frame.function.as_deref().unwrap_or("?"))),
            source_location(frame.file.as_deref(), frame.line)
        );
    }
    match (&frame.module, &frame.function) {
        (Some(module), Some(function)) => {
            let offset = frame
                .function_offset
                .map(|o| format!(" + {o:#x}"))
                .unwrap_or_default();
            format!(
                "{}!{}{offset}{}",
                clean(module),
                p.bold(&clean(function)),
                source_location(frame.file.as_deref(), frame.line)
            )
        }
        (Some(module), None) if frame.module_offset.is_none() && frame.trust == Trust::Text => {
            // A text trace that named the module only: the address, if any.
            match frame.instruction {
                0 => format!("{} (no name in the trace)", clean(module)),
                address => format!("{} at {}", clean(module), hex(address)),
            }
        }
        (Some(module), None) => format!("{} + {}", clean(module), offset(frame.module_offset)),
        (None, function) => match (&frame.unloaded_module, &frame.unloaded_module_offset) {
            (Some(name), unloaded_offset) if function.is_some() => format!(
                "{} {}{} ({} + {})",
                hex(frame.instruction),
                p.red(&format!(
                    "in unloaded {}!{}",
                    clean(name),
                    clean(function.as_deref().unwrap_or_default())
                )),
                frame
                    .function_offset
                    .map(|o| format!(" + {o:#x}"))
                    .unwrap_or_default(),
                clean(name),
                offset(*unloaded_offset)
            ),
            (Some(name), unloaded_offset) => format!(
                "{} {}",
                hex(frame.instruction),
                p.red(&format!(
                    "in unloaded {} + {}",
                    clean(name),
                    offset(*unloaded_offset)
                ))
            ),
            (None, _) if function.is_some() => format!(
                "{}{}",
                p.bold(&clean(function.as_deref().unwrap_or_default())),
                source_location(frame.file.as_deref(), frame.line)
            ),
            (None, _) => hex(frame.instruction),
        },
    }
}

/// `thread 308 "encoder-worker" (blocked in RtlEnterCriticalSection)`: the
/// thread a wait leads to, with its name and what it does itself.
fn describe_thread(id: u32, all: &[Thread]) -> String {
    let Some(thread) = all.iter().find(|t| t.id == id) else {
        return format!("thread {id}");
    };
    let name = thread
        .name
        .as_deref()
        .map(|n| format!(" \"{}\"", clean(n)))
        .unwrap_or_default();
    let doing = match (&thread.blocked, thread.frames.first()) {
        (Some(blocked), _) => format!(" (blocked in {})", clean(&blocked.describe())),
        (None, Some(top)) => match top.names().next() {
            Some(function) => format!(" (at {})", clean(function)),
            None => String::new(),
        },
        (None, None) => String::new(),
    };
    format!("thread {id}{name}{doing}")
}

fn source_location(file: Option<&str>, line: Option<u32>) -> String {
    match (file, line) {
        // `path:line`, as compilers print it: terminals and editors open it.
        (Some(file), Some(line)) => format!(" at {}:{line}", clean(file)),
        (Some(file), None) => format!(" at {}", clean(file)),
        _ => String::new(),
    }
}
