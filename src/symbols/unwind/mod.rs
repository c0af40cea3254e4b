//! Unwinding x86-64 frames from what the binaries carry, for modules that
//! have no Breakpad .sym file: PE images' `.pdata`/`.xdata` (`pe.rs`) and
//! ELF files' `.eh_frame`/`.debug_frame` (`elf.rs`).
//!
//! The stack walker asks [`DumpSymbols::walk_frame`] for a frame's caller;
//! an [`Unwinder`] answers from the callee's registers and stack memory,
//! the way the system's own unwinder would (RtlVirtualUnwind on Windows, the
//! DWARF call frame information on Linux). The same tables also tell the
//! stack scanner whether a candidate return address can be one
//! ([`Unwinder::return_address`]).
//!
//! [`DumpSymbols::walk_frame`]: super::provider::DumpSymbols

pub(crate) mod elf;
pub(crate) mod pe;
#[cfg(test)]
mod pe_differential;

/// Registers by their DWARF x86-64 numbers, as both unwinders name them.
pub(crate) const RBX: usize = 3;
pub(crate) const RSI: usize = 4;
pub(crate) const RDI: usize = 5;
pub(crate) const RBP: usize = 6;
pub(crate) const RSP: usize = 7;
/// The return address column of DWARF; the instruction pointer here.
pub(crate) const RIP: usize = 16;

/// The register names of minidump's amd64 context, by DWARF number.
pub(crate) const NAMES: [&str; 17] = [
    "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13",
    "r14", "r15", "rip",
];

/// The general registers of one frame, each known or not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Registers {
    values: [Option<u64>; 17],
}

impl Registers {
    pub fn get(&self, register: usize) -> Option<u64> {
        self.values.get(register).copied().flatten()
    }

    pub fn set(&mut self, register: usize, value: u64) {
        if let Some(slot) = self.values.get_mut(register) {
            *slot = Some(value);
        }
    }

    pub fn clear(&mut self, register: usize) {
        if let Some(slot) = self.values.get_mut(register) {
            *slot = None;
        }
    }
}

/// What the unwinder may read: 8 bytes of stack memory at an address.
pub(crate) type Stack<'s> = dyn Fn(u64) -> Option<u64> + 's;

/// The frame being unwound.
#[derive(Debug, Clone, Copy)]
pub struct Callee {
    /// Its instruction as an offset from the module's base: the context's
    /// instruction pointer for the first frame, the return address minus one
    /// (inside the call) for the others.
    pub rva: u64,
    /// Whether this is the thread's context frame, which may have stopped
    /// anywhere (in a prologue or an epilogue); every other frame stopped at
    /// a call.
    pub first: bool,
}

/// What the unwind tables say of a stack-scan candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReturnAddress {
    /// It can be a return address.
    Plausible,
    /// It cannot: outside every function or executable section, or not
    /// after a call instruction.
    Impossible,
}

impl ReturnAddress {
    /// From the code bytes just before the candidate: plausible only after
    /// a call instruction.
    pub fn after(code: &[u8]) -> ReturnAddress {
        if ends_with_call(code) {
            ReturnAddress::Plausible
        } else {
            ReturnAddress::Impossible
        }
    }
}

/// Unwinds frames of one module.
pub trait Unwinder: Send + Sync {
    /// The caller of `callee`, from the callee's registers and the stack;
    /// `None` when the tables have nothing for the address or the rules
    /// cannot be evaluated (the walker then falls back to frame pointers
    /// and stack scanning).
    /// The result has rip and rsp, the callee's other registers with
    /// those the unwind info restores, and none it says are lost.
    fn unwind(&self, callee: Callee, registers: &Registers, stack: &Stack<'_>)
        -> Option<Registers>;

    /// Whether `rva` (a candidate return address, as an offset from the
    /// module's base) can be the return address of a call; `None` when the
    /// tables cannot tell.
    fn return_address(&self, rva: u64) -> Option<ReturnAddress>;

    /// Where the tables were read, for the report.
    fn describe(&self) -> String;

    /// The registers a callee preserves for its caller under the module's
    /// calling convention: only these are passed on to the caller.
    fn nonvolatile(&self) -> &'static [usize];
}

/// Windows x64: rbx, rbp, rsi, rdi, r12-r15.
pub(crate) const NONVOLATILE_WINDOWS: &[usize] = &[RBX, RBP, RSI, RDI, 12, 13, 14, 15];
/// System V x86-64: rbx, rbp, r12-r15.
pub(crate) const NONVOLATILE_SYSV: &[usize] = &[RBX, RBP, 12, 13, 14, 15];

/// Whether the bytes just before a return address end with a call
/// instruction: `call rel32` (E8), or `call r/m64` (FF /2) in each of its
/// addressing forms, with or without a REX prefix before the FF. `code` is
/// up to 8 bytes ending at the return address.
pub(crate) fn ends_with_call(code: &[u8]) -> bool {
    // The byte `back` bytes before the return address (1: the last one).
    let at = |back: usize| -> Option<u8> {
        (back > 0)
            .then(|| code.len().checked_sub(back))
            .flatten()
            .map(|i| code[i])
    };
    // call rel32
    if at(5) == Some(0xe8) {
        return true;
    }
    // call r/m64: FF, then a ModRM whose reg field is 2, then SIB and
    // displacement bytes; the instruction's length follows from the ModRM.
    for length in 2..=7 {
        if at(length) != Some(0xff) {
            continue;
        }
        let Some(modrm) = at(length - 1) else {
            continue;
        };
        if modrm >> 3 & 7 != 2 {
            continue;
        }
        let sib = at(length - 2);
        if call_length(modrm, sib) == Some(length) {
            return true;
        }
    }
    false
}

/// The length of `FF modrm [sib] [disp]` given its ModRM and SIB bytes.
fn call_length(modrm: u8, sib: Option<u8>) -> Option<usize> {
    let mode = modrm >> 6;
    let rm = modrm & 7;
    let with_sib = rm == 4 && mode != 3;
    let sib_len = usize::from(with_sib);
    let disp = match mode {
        0 if rm == 5 => 4,                   // [rip + disp32]
        0 if with_sib && sib? & 7 == 5 => 4, // SIB with no base: disp32
        0 => 0,
        1 => 1,
        2 => 4,
        _ => 0, // register
    };
    Some(2 + sib_len + disp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_instructions_before_a_return_address() {
        let ends = |bytes: &[u8]| {
            let mut code = vec![0x90; 8];
            code.extend_from_slice(bytes);
            ends_with_call(&code)
        };
        assert!(ends(&[0xe8, 1, 2, 3, 4])); // call rel32
        assert!(ends(&[0xff, 0x15, 1, 2, 3, 4])); // call [rip+disp32]
        assert!(ends(&[0x48, 0xff, 0x15, 1, 2, 3, 4])); // rex.w call [rip+disp32]
        assert!(ends(&[0xff, 0xd0])); // call rax
        assert!(ends(&[0x41, 0xff, 0xd3])); // call r11
        assert!(ends(&[0xff, 0x10])); // call [rax]
        assert!(ends(&[0xff, 0x50, 0x18])); // call [rax+0x18]
        assert!(ends(&[0xff, 0x54, 0x24, 0x08])); // call [rsp+8]
        assert!(ends(&[0xff, 0x90, 1, 2, 3, 4])); // call [rax+disp32]
        assert!(ends(&[0xff, 0x14, 0xc5, 1, 2, 3, 4])); // call [rax*8+disp32]
        assert!(ends(&[0xff, 0x14, 0x24])); // call [rsp]
                                            // Not calls: a mov, a jmp [rax] (FF /4), the middle of a function.
        assert!(!ends(&[0x48, 0x89, 0xc3]));
        assert!(!ends(&[0xff, 0x20]));
        assert!(!ends(&[0x48, 0x83, 0xc4, 0x28]));
        assert!(!ends(&[0x90, 0x90]));
    }
}
