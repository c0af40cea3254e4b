//! What the machine kept, in one artifact that can be read anywhere
//! (issue #41): a core made small ([`convert`]).

pub mod convert;
