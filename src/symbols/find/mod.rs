//! Where each kind of native file is looked for. Every candidate is checked
//! against the module's identity before use.

pub(crate) mod elf;
pub(crate) mod pdb;
pub(crate) mod pe;
