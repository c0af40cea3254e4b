//! CUDA's compute-sanitizer and cuda-memcheck: the error each reports
//! before a host backtrace, and the host frames. cuda-memcheck puts the
//! module first (`Host Frame:/lib/libcuda.so.1 (cuLaunch + 0x1a)
//! [0x2f1a3]`), compute-sanitizer the function (`Host Frame:main in
//! main.cu:12 [0x8e75]`, older `FILE:LINE:FUNC [0x..]`, or nothing) and the
//! module on the next line (`=========     in /lib/libcuda.so.1`).

use super::common::*;

pub(super) struct CudaSanitizer;

re!(
    CUDA_HOST_FRAME,
    r"Host Frame:\s*(.*?)\s*\[(0x[0-9a-fA-F]+)\](?:\s+in (\S+))?\s*$"
);
re!(
    CUDA_MODULE_FIRST,
    r"^(\S+?) \((.+?)(?: \+ (0x[0-9a-fA-F]+))?\)$"
);
re!(CUDA_FILE_LINE_FUNC, r"^(\S+?):(\d+):([^\s:][^\s]*)$");
re!(CUDA_FUNC_IN_FILE, r"^(.+?) in (\S+?):(\d+)$");
re!(CUDA_MODULE_LINE, r"^=+\s+in (\S+)\s*$");
// What compute-sanitizer (and cuda-memcheck) reports before the host
// backtrace of each error: a CUDA API call that failed, or a memory error.
re!(
    CUDA_ERROR,
    r"^=+ (Program hit (\w+) \(error \d+\).*|Invalid __\w+__ \w+.*|Host API memory access error.*)$"
);

impl TraceFormat for CudaSanitizer {
    fn format(&self) -> Format {
        Format::CudaSanitizer
    }

    fn read(&self, t: &Text<'_>, inside: Option<Format>) -> Option<Line> {
        let trimmed = t.trimmed;
        if trimmed.contains("Host Frame:") {
            let c = CUDA_HOST_FRAME.captures(trimmed)?;
            let mut frame = host_frame(&c[1]);
            frame.address = hex(&c[2]);
            if let Some(module) = text(&c, 3) {
                frame.module = Some(base(&module));
            }
            return frame_line(Format::CudaSanitizer, frame);
        }
        if t.first != b'=' {
            return None;
        }
        if let Some(c) = CUDA_ERROR.captures(trimmed) {
            let what = match c.get(2) {
                Some(error) => format!("CUDA API error {}", error.as_str()),
                None => format!("compute-sanitizer: {}", &c[1]),
            };
            return Some(Line::Crash { what, thread: None });
        }
        if inside == Some(Format::CudaSanitizer) {
            let c = CUDA_MODULE_LINE.captures(trimmed)?;
            return Some(Line::Module(base(&c[1])));
        }
        None
    }
}

/// What a compute-sanitizer or cuda-memcheck host frame says before its
/// address: a module path (cuda-memcheck, with the function in
/// parentheses), `FUNC in FILE:LINE`, `FILE:LINE:FUNC`, a bare function, or
/// nothing.
fn host_frame(site: &str) -> TextFrame {
    if let Some(c) = CUDA_MODULE_FIRST.captures(site) {
        let function = demangle(&c[2]);
        return TextFrame {
            module: Some(base(&c[1])),
            function_offset: text(&c, 3).and_then(|o| hex(&o)),
            function: Some(function),
            ..TextFrame::default()
        };
    }
    if (site.starts_with('/') || site.starts_with("./") || is_library(site)) && !site.contains(':')
    {
        return TextFrame {
            module: Some(base(site)),
            ..TextFrame::default()
        };
    }
    if let Some(c) = CUDA_FILE_LINE_FUNC.captures(site) {
        return TextFrame {
            file: text(&c, 1),
            line: number(&c, 2),
            function: Some(demangle(&c[3])),
            ..TextFrame::default()
        };
    }
    if let Some(c) = CUDA_FUNC_IN_FILE.captures(site) {
        return TextFrame {
            function: named(Some(demangle(&c[1]))),
            file: text(&c, 2),
            line: number(&c, 3),
            ..TextFrame::default()
        };
    }
    TextFrame {
        function: named(Some(demangle(site))),
        ..TextFrame::default()
    }
}
