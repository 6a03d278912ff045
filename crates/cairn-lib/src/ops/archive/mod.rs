//! `cairn export` and `cairn import`: directory snapshots as tar archives, out and in.
//!
//! Export writes what GNU tar and bsdtar read; import reads what they write, as untrusted input
//! (`entries.rs` holds every check an entry passes).

mod entries;
mod export;
mod import;
mod sparse;

pub use export::{ExportOptions, ExportResult};
#[cfg(feature = "fuzz")]
pub(crate) use import::read_into;
pub use import::{ImportOptions, ImportResult};

/// The checks of one import with these limits (for the fuzz target).
#[cfg(feature = "fuzz")]
pub(crate) fn checker(max_bytes: u64, max_entries: u64) -> entries::Checker {
    entries::Checker::new(max_bytes, max_entries)
}
