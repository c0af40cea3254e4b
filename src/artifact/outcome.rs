//! What `convert`, `pack` and `doctor` tell the binary to print and how
//! they ended (the binary prints it and picks the exit status).

/// The end of a command of this module.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// For standard output (`doctor`'s findings).
    pub report: String,
    /// Lines for standard error, each printed after `dumptriage: `.
    pub said: Vec<String>,
    /// Exit status 1: what was asked for is not met (the minidump's report
    /// differs from the core's; a way of capture would capture nothing).
    pub failed: bool,
}
