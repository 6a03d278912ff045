//! `cairn export` and `cairn import`: directory snapshots as tar archives, out and in.
//!
//! Export writes what GNU tar and bsdtar read; import reads what they write, as untrusted input
//! (`entries.rs` holds every check an entry passes).

mod entries;
mod export;
mod import;

pub use export::{ExportOptions, ExportResult};
pub use import::{ImportOptions, ImportResult};
