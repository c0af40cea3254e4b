//! `frames`: ordered frame patterns on the chosen thread, innermost first.

use serde::Deserialize;

use super::condition::{Compiler, Condition, OnThread, Scene};
use super::evidence::{describe, describe_hit, with_stack_hits};
use super::found::{Found, CFI_SCANNED_FRAME, MODULE_ONLY_FRAME, SCANNED_FRAME, STACK_SEARCH};
use super::functions::name_matches;
use crate::model::{Frame, FrameKind, Thread, Trust};
use crate::pattern::{Case, Pattern};
use crate::signatures::names::anchored;

pub(super) struct Frames;

/// A frame pattern as written.
#[derive(Debug, Deserialize, Default)]
pub(super) struct FrameSpec {
    function: Option<String>,
    /// The function pattern may match a name that is only the nearest
    /// export before the address (a guess).
    #[serde(default)]
    guessed: bool,
    module: Option<String>,
    unloaded: Option<String>,
    /// The frame's source file (a Python frame's `.py` file), as a pattern
    /// on the path as the trace printed it.
    file: Option<String>,
    /// A Python frame (from a text trace), not a native one.
    #[serde(default)]
    python: bool,
    within: Option<usize>,
}

/// A frame pattern, compiled.
#[derive(Debug)]
pub(in crate::signatures) struct FramePattern {
    pub(in crate::signatures) function: Option<Pattern>,
    /// `function` may match a guessed name.
    guessed: bool,
    module: Option<Pattern>,
    unloaded: Option<Pattern>,
    /// The frame's source file.
    file: Option<Pattern>,
    /// Matches Python frames only (and the other patterns native ones only).
    python: bool,
    within: Option<usize>,
}

impl Condition for Frames {
    type Spec = Vec<FrameSpec>;
    type Compiled = Vec<FramePattern>;
    const DOC: &'static str = "ordered frame patterns on the chosen thread, innermost first. \
A frame pattern has `function`, `module` and/or `unloaded` (a module pattern \
on the unloaded module an address falls in), `file` (a pattern on a frame's \
source file, as the trace printed its path), `python` (`true`: the pattern \
matches Python frames of a text trace only; by default it matches native \
frames only), `guessed` (`true`: `function` may match a name that is only the \
nearest export or symbol before the address, which the frame marks as a \
guess; by default such names match nothing, and the exit phase ignores them \
too), and `within`: how many frames may lie between this match and the \
previous one (for the first pattern, between it and the top of the stack); \
unlimited when absent. A pattern without `function` matches unsymbolized \
frames too, by their module. Inlined functions count as frames of their \
address, and a function's parameter list is ignored (`exit` matches \
`exit(int)`)";
    const LABEL_RANK: u8 = 0;

    fn compile(spec: &Vec<FrameSpec>, cx: &mut Compiler<'_>) -> Option<Vec<FramePattern>> {
        let mut frames = Vec::new();
        for (i, frame) in spec.iter().enumerate() {
            let key = |k: &str| format!("[{i}].{k}");
            if frame.function.is_none()
                && frame.module.is_none()
                && frame.unloaded.is_none()
                && frame.file.is_none()
            {
                cx.error(
                    &format!("[{i}]"),
                    "a frame pattern needs function, module, unloaded or file".to_string(),
                );
            }
            if let Some(source) = frame.function.as_deref().filter(|_| cx.full()) {
                if let Err(e) = anchored(source) {
                    cx.error(&key("function"), e);
                }
            }
            let mut pattern = |k: &str, source: &Option<String>, case: Case| {
                source.as_deref().and_then(|s| cx.pattern(&key(k), s, case))
            };
            frames.push(FramePattern {
                guessed: frame.guessed,
                function: pattern("function", &frame.function, Case::Sensitive),
                module: pattern("module", &frame.module, Case::Insensitive),
                unloaded: pattern("unloaded", &frame.unloaded, Case::Insensitive),
                file: pattern("file", &frame.file, Case::Insensitive),
                python: frame.python,
                within: frame.within,
            });
        }
        (!frames.is_empty()).then_some(frames)
    }

    /// Named functions count most.
    fn weight(frames: &Vec<FramePattern>) -> u32 {
        frames
            .iter()
            .map(|f| if f.function.is_some() { 3 } else { 1 })
            .sum()
    }

    /// Its first patterns.
    fn label(spec: &Vec<FrameSpec>) -> Option<String> {
        let frames: Vec<&str> = spec
            .iter()
            .filter_map(|f| {
                f.function
                    .as_deref()
                    .or(f.module.as_deref())
                    .or(f.unloaded.as_deref())
            })
            .take(3)
            // Long alternations are cut: the label names, the file says all.
            .map(|p| match p.char_indices().nth(40) {
                Some((at, _)) => &p[..at],
                None => p,
            })
            .collect();
        if frames.is_empty() {
            return None;
        }
        let more = if spec.len() > frames.len() {
            " ..."
        } else {
            ""
        };
        Some(format!("frames {}{more}", frames.join(" < ")))
    }
}

impl OnThread for Frames {
    fn holds(
        patterns: &Vec<FramePattern>,
        scene: &Scene<'_>,
        thread: &Thread,
        found: &mut Found,
    ) -> bool {
        let id = Some(thread.id);
        let walked = thread.frames.len();
        let searched;
        let (frames, indices) = match match_frames(patterns, &thread.frames, walked, 0, None) {
            Some(indices) => (&thread.frames[..], indices),
            // The walk does not show them: with stack-search evidence
            // allowed, the return addresses found in stack memory follow
            // the walked frames (deeper in the stack, in order).
            None if scene.stack_search && !thread.stack_search.is_empty() => {
                searched = with_stack_hits(thread);
                match match_frames(patterns, &searched, walked, 0, None) {
                    Some(indices) => (&searched[..], indices),
                    None => return false,
                }
            }
            None => return false,
        };
        for (pattern, index) in patterns.iter().zip(indices) {
            let frame = &frames[index];
            if let Some(hit) = index
                .checked_sub(walked)
                .and_then(|i| thread.stack_search.get(i))
            {
                found.fact(id, None, describe_hit(thread, hit));
                found.confidence *= STACK_SEARCH;
                if pattern.function.is_none() {
                    found.confidence *= MODULE_ONLY_FRAME;
                }
                continue;
            }
            found.fact(
                id,
                Some(index),
                format!("frame {index}: {}", describe(frame)),
            );
            found.confidence *= match frame.trust {
                Trust::Scan => SCANNED_FRAME,
                Trust::CfiScan => CFI_SCANNED_FRAME,
                _ => 1.0,
            };
            if pattern.function.is_none() {
                found.confidence *= MODULE_ONLY_FRAME;
            }
        }
        true
    }
}

/// Finds frames matching `patterns` in order, each within its allowed
/// distance of the previous match (or of the top). Frames from index
/// `walked` on are stack-search hits, whose distance from the walked frames
/// is unknown: `within` does not limit them. Backtracks, so an early greedy
/// choice cannot hide a valid match.
fn match_frames(
    patterns: &[FramePattern],
    frames: &[Frame],
    walked: usize,
    from: usize,
    previous: Option<usize>,
) -> Option<Vec<usize>> {
    let Some((pattern, rest)) = patterns.split_first() else {
        return Some(Vec::new());
    };
    let start = previous.map_or(0, |p| p + 1);
    let limit = match pattern.within {
        Some(gap) => start + gap + 1,
        None => frames.len(),
    };
    (from.max(start)..frames.len()).find_map(|i| {
        if (i >= limit && i < walked) || !frame_matches(pattern, &frames[i]) {
            return None;
        }
        let mut tail = match_frames(rest, frames, walked, i + 1, Some(i))?;
        tail.insert(0, i);
        Some(tail)
    })
}

/// Whether one frame matches one pattern.
pub(in crate::signatures) fn frame_matches(pattern: &FramePattern, frame: &Frame) -> bool {
    // Python frames answer to Python patterns only, native to native.
    if pattern.python != (frame.kind == FrameKind::Python) {
        return false;
    }
    if let Some(p) = &pattern.file {
        if !frame.file.as_deref().is_some_and(|f| p.matches(f)) {
            return false;
        }
    }
    if let Some(p) = &pattern.module {
        if !frame.module.as_deref().is_some_and(|m| p.matches(m)) {
            return false;
        }
    }
    if let Some(p) = &pattern.unloaded {
        if !frame
            .unloaded_module
            .as_deref()
            .is_some_and(|m| p.matches(m))
        {
            return false;
        }
    }
    if let Some(p) = &pattern.function {
        let hit = |n: &str| name_matches(p, n);
        let matched = if pattern.guessed {
            frame.names_with_guesses().any(hit)
        } else {
            frame.names().any(hit)
        };
        if !matched {
            return false;
        }
    }
    true
}
