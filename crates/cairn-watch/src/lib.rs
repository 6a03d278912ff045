//! The change journal. `cairn watch` runs a [`server`] that keeps, for each watched tree, a
//! [`journal`] of the directories that changed (from inotify events, `watcher.rs`); a save asks
//! it over a Unix socket in the store ([`client`]) and looks only at those directories. Whenever
//! the journal cannot vouch for a tree, the answer says "walk it all" and why.

pub mod client;
mod error;
pub mod journal;
pub mod protocol;
pub mod server;
mod watcher;

pub use error::{Error, Result};
pub use protocol::{Answer, Changes, DirtyDir, RootStatus, Status, Token};
