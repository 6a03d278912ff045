//! The cairn MCP server: the tools agents call to save and restore what they touch.
//!
//! `cairn mcp` serves one *profile*: cairn's own tool set by default, or the exact tools of an
//! existing system (`--profile codecalc`) so agents prompted for it work unchanged. Every tool
//! is a thin wrapper over one `cairn_lib::Store` operation; permissions decide which
//! destructive ones an agent may call. Nothing here writes to stdout: on stdio it carries the
//! protocol, and a stray line would corrupt it.

#![warn(missing_docs)]

mod edges;
mod error;
pub mod profiles;
pub mod registry;
mod resources;
mod serve;
mod server;
mod state;
pub mod words;

pub use error::{ServeError, ToolError};
pub use profiles::{PROFILES, Profile};
pub use resources::SNAPSHOTS_URI;
pub use serve::{ServeOptions, Transport, serve};
pub use server::CairnServer;
pub use state::{ServerState, WatchStarter};
