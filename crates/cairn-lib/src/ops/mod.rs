//! Operations: one module per command family. Each takes the open [`Store`](crate::Store) and an
//! options struct, and returns a serialisable result; the CLI and the MCP server only format it.

pub mod archive;
pub mod check;
pub mod compose;
pub mod copy;
pub mod debug;
pub mod diff;
pub mod document;
pub mod file_diff;
pub mod gc;
pub mod init;
pub mod interrupted;
pub mod key;
pub mod list;
mod live;
pub mod moment;
pub mod name;
mod options;
pub mod permissions;
mod pi_settings;
mod pipeline;
pub mod remove;
pub mod repair;
pub mod resolve;
pub mod restore;
pub mod resume;
pub mod retention;
pub mod save;
pub mod session;
pub mod store_stats;
pub mod timeline;
pub mod transcript;
pub mod watch;
pub mod workspace;
