//! `cairn ui`: a local web app over one store. The page (embedded in the binary, no network)
//! shows a session's timeline of moments and snapshots, the cross-layer diff of any two
//! points, a snapshot's `not_covered`, restore plans and store figures, and acts on them:
//! restore, rewind, fork, name, remove.
//!
//! The server is a thin JSON front over `cairn_lib::Store` operations (`api.rs` reads,
//! `act.rs` acts); the only state it keeps is a small cache of computed diffs so a large one
//! is paged, not computed again per page (`diffs.rs`). Access rules are those of `cairn mcp
//! --http` (`cairn_http`), plus a same-origin rule for requests that change anything
//! (`guard.rs`). Nothing here writes to stdout; the front prints the URL it is given.

#![warn(missing_docs)]

mod act;
mod api;
mod assets;
mod diffs;
mod error;
mod guard;
mod serve;

/// Parses a `--listen` value: an address, or a host name resolved (loopback preferred).
pub use cairn_http::resolve_listen;
pub use error::UiError;
pub use serve::{UiOptions, serve};
