//! What a rule's match gathers while its conditions are checked, and the
//! factors its confidence is made of.

use crate::model::Evidence;

/// Evidence and confidence gathered while checking one thread.
pub(super) struct Found {
    pub(super) evidence: Vec<Evidence>,
    pub(super) confidence: f64,
    /// Why exit, which the rule asks for, is not established: the match is
    /// a possible finding only.
    pub(super) possible: Option<String>,
    /// The exit the rule asks for is a thread's own, not the process's.
    pub(super) thread_exit: bool,
}

impl Found {
    pub(super) fn fact(&mut self, thread: Option<u32>, frame: Option<usize>, fact: String) {
        self.evidence.push(Evidence {
            thread_id: thread,
            frame_index: frame,
            fact,
        });
    }
}

/// Confidence factors, documented in docs/signatures.md ("Confidence").
pub(super) const SPECIFIC_BASE: f64 = 1.0;
pub(super) const GENERIC_BASE: f64 = 0.6;
pub(super) const SCANNED_FRAME: f64 = 0.8;
pub(super) const CFI_SCANNED_FRAME: f64 = 0.9;
pub(super) const MODULE_ONLY_FRAME: f64 = 0.85;
pub(super) const INFERRED_WAIT: f64 = 0.9;
pub(super) const INFERRED_EXIT: f64 = 0.95;
/// A specific rule whose exit condition could not be established (nothing
/// proves exit, nothing rules it out): a possible finding only.
pub(super) const EXIT_NOT_PROVEN: f64 = 0.6;
/// Evidence from a return address found by searching stack memory rather
/// than by walking the stack.
pub(super) const STACK_SEARCH: f64 = 0.7;
