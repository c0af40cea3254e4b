//! Adapters between minidump-unwind's walker and symbolizer interfaces and
//! our own unwinders: a walker that notes what the CFI gave, and a
//! symbolizer that collects what a symbol file says.

use minidump_unwind::{FrameSymbolizer, FrameWalker};

/// Passes a walker through, noting the return address the CFI gave.
pub(super) struct RecordingWalker<'w> {
    pub(super) inner: &'w mut (dyn FrameWalker + Send),
    pub(super) return_address: Option<u64>,
}

impl FrameWalker for RecordingWalker<'_> {
    fn get_instruction(&self) -> u64 {
        self.inner.get_instruction()
    }
    fn has_grand_callee(&self) -> bool {
        self.inner.has_grand_callee()
    }
    fn get_grand_callee_parameter_size(&self) -> u32 {
        self.inner.get_grand_callee_parameter_size()
    }
    fn get_register_at_address(&self, address: u64) -> Option<u64> {
        self.inner.get_register_at_address(address)
    }
    fn get_callee_register(&self, name: &str) -> Option<u64> {
        self.inner.get_callee_register(name)
    }
    fn set_caller_register(&mut self, name: &str, val: u64) -> Option<()> {
        self.inner.set_caller_register(name, val)
    }
    fn clear_caller_register(&mut self, name: &str) {
        self.inner.clear_caller_register(name)
    }
    fn set_cfa(&mut self, val: u64) -> Option<()> {
        self.inner.set_cfa(val)
    }
    fn set_ra(&mut self, val: u64) -> Option<()> {
        self.return_address = Some(val);
        self.inner.set_ra(val)
    }
    fn set_cfi_rules_start_address(&mut self, addr: Option<u64>) {
        self.inner.set_cfi_rules_start_address(addr)
    }
}

/// Collects what a symbol file says about one address.
pub(super) struct Collect {
    pub(super) instruction: u64,
    pub(super) function: Option<(String, u64)>,
    pub(super) file: Option<String>,
    pub(super) line: Option<u32>,
}

impl Collect {
    pub(super) fn new(instruction: u64) -> Self {
        Collect {
            instruction,
            function: None,
            file: None,
            line: None,
        }
    }
}

impl FrameSymbolizer for Collect {
    fn get_instruction(&self) -> u64 {
        self.instruction
    }
    fn set_function(&mut self, name: &str, base: u64, _: u32) {
        self.function = Some((name.to_string(), base));
    }
    fn set_source_file(&mut self, file: &str, line: u32, _: u64) {
        self.file = Some(file.to_string());
        self.line = Some(line);
    }
}
