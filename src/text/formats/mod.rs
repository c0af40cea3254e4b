//! The trace formats: one file each, behind one small interface, and one
//! ordered list of them. A cleaned line of a log is offered to each format
//! in turn; the first that knows it says what it is (a frame, a thread
//! header, the crash, the start of a trace). The order of [`FORMATS`] is
//! the precedence where two formats could read the same line. Adding a
//! format is one new file and one entry in the list.
//!
//! Each format tests a line's first characters cheaply before any regular
//! expression, so a 50 MB log is mostly skipped at those tests.

mod address_frames;
mod apple;
mod backtrace_symbols;
mod backward;
mod call_tree;
mod common;
mod cuda_sanitizer;
mod dotnet;
mod eu_stack;
mod faulthandler;
mod frame_list;
mod gdb;
mod glog;
mod hs_err;
mod ips;
mod lldb;
mod node;
mod pyspy;
mod pystack;
mod python;
mod rust;
mod sanitizer;
mod spindump;
mod systemd_coredump;
mod valgrind;
mod visual_studio;
mod windbg;

pub(super) use call_tree::mark as mark_call_trees;
pub(super) use ips::read as read_ips;
pub(super) use lldb::crashed;
pub(super) use spindump::{busiest_path, every_sample_in};

pub(super) use common::*;

/// The formats, in order of precedence.
static FORMATS: [&dyn TraceFormat; 25] = [
    &systemd_coredump::SystemdCoredump,
    &backward::Backward,
    &gdb::Gdb,
    &eu_stack::EuStack,
    &sanitizer::Sanitizer,
    &valgrind::Valgrind,
    &address_frames::AddressFrames,
    &lldb::Lldb,
    &faulthandler::Faulthandler,
    &python::Python,
    &pystack::Pystack,
    &pyspy::PySpy,
    &windbg::WinDbg,
    &visual_studio::VisualStudio,
    &dotnet::Dotnet,
    &hs_err::HsErr,
    &node::Node,
    &backtrace_symbols::BacktraceSymbols,
    &cuda_sanitizer::CudaSanitizer,
    &glog::Glog,
    &apple::AppleCrashReport,
    &spindump::Spindump,
    &rust::Rust,
    &frame_list::FrameList,
    &call_tree::CallTree,
];

/// What `line` is, in the context of the format being read (`inside`).
pub(super) fn classify(line: &str, inside: Option<Format>) -> Option<Line> {
    let trimmed = line.trim_start();
    let first = trimmed.as_bytes().first().copied()?;
    let text = Text {
        line,
        trimmed,
        first,
    };
    // Frames a tool or a person left out: no one format's.
    let bare = trimmed.trim_end();
    if bare == "[External Code]"
        || trimmed.starts_with("note: Some details are omitted")
        || (bare.len() >= 3 && bare.bytes().all(|b| b == b'.'))
        || bare == "\u{2026}"
        || trimmed.starts_with("(More stack frames follow")
        // Visual Studio's own note inside a Call Stack.
        || trimmed.starts_with("[Frames below may be incorrect")
    {
        return Some(Line::Elided);
    }
    // The format of the trace being read reads its own lines first: a line
    // two formats could read (`#3 0x... name` is eu-stack's and a crash
    // reporter's) goes on with the trace it is in.
    let own = inside.and_then(|format| FORMATS.iter().find(|f| f.format() == format));
    own.and_then(|f| f.read(&text, inside))
        .or_else(|| FORMATS.iter().find_map(|f| f.read(&text, inside)))
}

#[cfg(test)]
mod tests;
