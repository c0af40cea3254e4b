//! What the machine kept, in one artifact that can be read anywhere
//! (issue #41): a core made small ([`convert`]), the dumps with every file
//! their analysis used ([`pack`], read back by [`unpack`]), and whether
//! this machine would keep anything at all ([`doctor`]).

pub mod convert;
pub mod doctor;
mod manifest;
mod outcome;
pub mod pack;

pub use outcome::Outcome;
pub(crate) mod unpack;
