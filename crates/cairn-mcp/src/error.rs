//! Errors of the MCP server.
//!
//! Two kinds, kept apart on purpose:
//! - [`ServeError`] stops the server (bad flags, a store that cannot be opened, a port in use);
//!   the CLI prints it and exits.
//! - [`ToolError`] fails one call. It reaches the agent as `isError: true` with its message as
//!   the text: one sentence that says what is wrong and what to do. Protocol errors are kept
//!   for requests that cannot be routed at all (an unknown tool or resource).

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

/// Why one tool call failed.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    kind: ErrorKind,
    message: String,
    code: Option<&'static str>,
}

impl ToolError {
    /// The caller passed something invalid.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::InvalidInput, message: message.into(), code: None }
    }

    /// Something went wrong on the server's side.
    pub fn internal(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Io, message: message.into(), code: None }
    }

    /// The failure's class.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The engine's machine-readable code, if it attached one.
    pub fn code(&self) -> Option<&'static str> {
        self.code
    }

    /// The one-sentence message the agent reads.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl From<cairn_lib::Error> for ToolError {
    fn from(err: cairn_lib::Error) -> Self {
        Self { kind: err.kind(), message: err.message().to_owned(), code: err.code() }
    }
}
