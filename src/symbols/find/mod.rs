//! Where each kind of native file is looked for. Every candidate is checked
//! against the module's identity before use.

pub mod elf;
pub mod pdb;
pub mod pe;
