//! Exception conditions of rules: raw codes, and the names a rule may use
//! for them (`EXCEPTION_ACCESS_VIOLATION`, `SIGSEGV`).

/// An exception condition: a raw code, or a name (`SIGSEGV`,
/// `EXCEPTION_ACCESS_VIOLATION`) known to stand for one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExceptionCode {
    pub code: u32,
    /// Signals are numbers that mean something only off Windows.
    pub signal: bool,
    pub written: String,
}

/// Exception and signal names a rule may use, with their codes.
pub(crate) const EXCEPTION_NAMES: &[(&str, u32, bool)] = &[
    ("EXCEPTION_ACCESS_VIOLATION", 0xc000_0005, false),
    ("STATUS_ACCESS_VIOLATION", 0xc000_0005, false),
    ("EXCEPTION_IN_PAGE_ERROR", 0xc000_0006, false),
    ("STATUS_INVALID_HANDLE", 0xc000_0008, false),
    ("STATUS_ILLEGAL_INSTRUCTION", 0xc000_001d, false),
    ("STATUS_INTEGER_DIVIDE_BY_ZERO", 0xc000_0094, false),
    ("STATUS_STACK_OVERFLOW", 0xc000_00fd, false),
    ("STATUS_HEAP_CORRUPTION", 0xc000_0374, false),
    ("STATUS_STACK_BUFFER_OVERRUN", 0xc000_0409, false),
    ("STATUS_FAIL_FAST_EXCEPTION", 0xc000_0602, false),
    ("STATUS_FATAL_APP_EXIT", 0x4000_0015, false),
    ("STATUS_BREAKPOINT", 0x8000_0003, false),
    ("EXCEPTION_CPP", 0xe06d_7363, false),
    ("CPP_EXCEPTION", 0xe06d_7363, false),
    ("SIGILL", 4, true),
    ("SIGTRAP", 5, true),
    ("SIGABRT", 6, true),
    ("SIGBUS", 7, true),
    ("SIGFPE", 8, true),
    ("SIGSEGV", 11, true),
];

impl ExceptionCode {
    pub(crate) fn parse(text: &str) -> Result<ExceptionCode, String> {
        let trimmed = text.trim();
        if let Some(&(name, code, signal)) = EXCEPTION_NAMES
            .iter()
            .find(|(name, _, _)| name.eq_ignore_ascii_case(trimmed))
        {
            return Ok(ExceptionCode {
                code,
                signal,
                written: name.to_string(),
            });
        }
        let number = match trimmed
            .strip_prefix("0x")
            .or_else(|| trimmed.strip_prefix("0X"))
        {
            Some(hex) => u32::from_str_radix(hex, 16),
            None => trimmed.parse::<u32>(),
        };
        number
            .map(|code| ExceptionCode {
                code,
                signal: false,
                written: trimmed.to_string(),
            })
            .map_err(|_| {
                format!(
                    "unknown exception {text:?}: write a code (0xC0000005) or one of {}",
                    EXCEPTION_NAMES
                        .iter()
                        .map(|e| e.0)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }
}
