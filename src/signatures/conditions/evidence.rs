//! How matched frames and stack-search hits are stated as evidence, and
//! stack-search hits taken as frames.

use crate::model::{hex, offset, Frame, FrameKind, StackHit, Thread, Trust};

/// Describes a stack-search hit the way evidence states it.
pub(super) fn describe_hit(thread: &Thread, hit: &StackHit) -> String {
    let place = if hit.below_walk {
        "below the walked frames"
    } else {
        "among the addresses the walk skipped"
    };
    format!(
        "thread {}: a return address into {}!{}+{:#x} at sp+{:#x}, {place} (stack search)",
        thread.id, hit.module, hit.function, hit.function_offset, hit.stack_offset
    )
}

/// The thread's walked frames followed by its stack-search hits as frames.
pub(super) fn with_stack_hits(thread: &Thread) -> Vec<Frame> {
    let mut frames = thread.frames.clone();
    for (i, hit) in thread.stack_search.iter().enumerate() {
        frames.push(Frame {
            index: thread.frames.len() + i,
            instruction: hit.address.wrapping_sub(1),
            module: Some(hit.module.clone()),
            function: Some(hit.function.clone()),
            function_guessed: false,
            module_offset: None,
            function_offset: Some(hit.function_offset),
            file: None,
            line: None,
            trust: Trust::Scan,
            symbol_source: hit.symbol_source,
            unloaded_module: None,
            unloaded_module_offset: None,
            inlines: Vec::new(),
            kind: Default::default(),
        });
    }
    frames
}

pub(super) fn describe(frame: &Frame) -> String {
    if frame.kind == FrameKind::Python {
        return format!(
            "Python {} in {}{}",
            frame.function.as_deref().unwrap_or("?"),
            frame.file.as_deref().unwrap_or("?"),
            frame.line.map(|l| format!(":{l}")).unwrap_or_default()
        );
    }
    match (&frame.module, &frame.function, &frame.unloaded_module) {
        (Some(m), Some(f), _) if frame.function_guessed => format!(
            "{m}!{f} + {} (nearest export or public name, a guess: the function may end before this address)",
            offset(frame.function_offset)
        ),
        (Some(m), Some(f), _) => format!("{m}!{f}"),
        (Some(m), None, _) => format!("{m} + {}", offset(frame.module_offset)),
        (None, Some(f), _) => f.clone(),
        (None, None, Some(u)) => format!("{:#x} in unloaded {u}", frame.instruction),
        (None, None, None) => hex(frame.instruction),
    }
}
