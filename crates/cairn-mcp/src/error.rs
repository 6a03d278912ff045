//! Errors of the MCP server.
//!
//! Two kinds, kept apart on purpose:
//! - [`ServeError`] stops the server (bad flags, a store that cannot be opened, a port in use);
//!   the CLI prints it and exits.
//! - [`ToolError`] fails one call: it is the engine's error, so its kind decides `isError` and
//!   its hint is rendered in the profile's words. Protocol errors are kept for requests that
//!   cannot be routed at all (an unknown tool or resource).

use std::net::SocketAddr;

use cairn_lib::ErrorKind;

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The store could not be opened.
    #[error("{0}")]
    Store(#[from] cairn_lib::Error),
    /// `--profile` names no profile.
    #[error("unknown profile {name:?}; the profiles are: {known}")]
    UnknownProfile {
        /// What was asked for.
        name: String,
        /// The profiles that exist, comma-separated.
        known: String,
    },
    /// A flag the chosen profile needs is missing or invalid.
    #[error("{0}")]
    Usage(String),
    /// A tool's schema is not an object (a bug caught by the tests).
    #[error("tool {tool}'s input schema is invalid ({reason}); report this as a cairn bug")]
    Schema {
        /// The tool.
        tool: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The HTTP address could not be bound.
    #[error("could not listen on {addr}: {source}; pick a free port or stop what holds it")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The transport failed.
    #[error("the MCP connection failed: {0}")]
    Transport(String),
}

/// Why one tool call failed: the engine's error as it is. It reaches the agent as
/// `isError: true`, rendered in the words of the server's profile (see [`crate::words`]).
pub type ToolError = cairn_lib::Error;

/// Something went wrong on the server's side (a task that stopped, a result that would not
/// encode): an error of kind [`ErrorKind::Io`].
pub fn internal(message: impl Into<String>) -> ToolError {
    ToolError::new(ErrorKind::Io, message)
}
