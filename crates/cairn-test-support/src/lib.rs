//! What cairn's tests share, kept out of the library's API: a real S3-compatible server on
//! loopback ([`Moto`]) and the fault proxy in front of it ([`FaultProxy`]), the tree fixtures several test crates write and compare
//! ([`fixtures`]), and the backend contract suite every backend passes ([`contract`]). Only
//! tests depend on this crate (as a dev-dependency); it is never published.

pub mod contract;
mod fault_proxy;
pub mod fixtures;
mod moto;

pub use fault_proxy::FaultProxy;
pub use moto::{Moto, MotoError};
