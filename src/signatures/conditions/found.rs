//! What a rule's match gathers while its conditions are checked, and the
//! factors its confidence is made of.

use crate::model::Evidence;

/// Evidence and confidence gathered while checking one thread.
pub(in crate::signatures) struct Found {
    pub(in crate::signatures) evidence: Vec<Evidence>,
    pub(in crate::signatures) confidence: f64,
    /// Why exit, which the rule asks for, is not established: the match is
    /// a possible finding only.
    pub(in crate::signatures) possible: Option<String>,
    /// The exit the rule asks for is a thread's own, not the process's.
    pub(in crate::signatures) thread_exit: bool,
}

impl Found {
    pub(in crate::signatures) fn fact(
        &mut self,
        thread: Option<u32>,
        frame: Option<usize>,
        fact: String,
    ) {
        self.evidence.push(Evidence {
            thread_id: thread,
            frame_index: frame,
            fact,
        });
    }
}

/// Confidence factors, documented in docs/signatures.md ("Confidence").
pub(in crate::signatures) const SPECIFIC_BASE: f64 = 1.0;
pub(in crate::signatures) const GENERIC_BASE: f64 = 0.6;
pub(in crate::signatures) const SCANNED_FRAME: f64 = 0.8;
pub(in crate::signatures) const CFI_SCANNED_FRAME: f64 = 0.9;
pub(in crate::signatures) const MODULE_ONLY_FRAME: f64 = 0.85;
pub(in crate::signatures) const INFERRED_WAIT: f64 = 0.9;
pub(in crate::signatures) const INFERRED_EXIT: f64 = 0.95;
/// A specific rule whose exit condition could not be established (nothing
/// proves exit, nothing rules it out): a possible finding only.
pub(in crate::signatures) const EXIT_NOT_PROVEN: f64 = 0.6;
/// Evidence from a return address found by searching stack memory rather
/// than by walking the stack.
pub(in crate::signatures) const STACK_SEARCH: f64 = 0.7;
