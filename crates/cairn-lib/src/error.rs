//! The engine's error type.
//!
//! Rules every error in cairn follows:
//! - The message is one sentence a person (or an agent) can act on: what is wrong, then what to do.
//! - Every I/O error names the path it happened on.
//! - No error carries a Rust debug dump; `Display` is the whole message.
//! - [`ErrorKind`] decides how a front end reports it: the CLI's exit code, the MCP `isError` text.

use std::path::Path;

/// The result type of every fallible engine call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What class of failure an [`Error`] is; front ends map it to exit codes and hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The caller passed something invalid (a bad name, a malformed duration, conflicting options).
    InvalidInput,
    /// A snapshot, session or target that was asked for does not exist.
    NotFound,
    /// The operation would overwrite or break something that exists (a taken name, a non-empty dir).
    Conflict,
    /// Another cairn process holds the lock this operation needs.
    Locked,
    /// The agent asked for an operation the user has not allowed.
    PermissionDenied,
    /// The store is damaged, of another format version, or an object failed its hash check.
    Corrupt,
    /// The operating system refused an operation (I/O, permissions, disk full).
    Io,
    /// An external component (Docker, a debug adapter) failed.
    External,
}

/// An engine error: a kind and a one-sentence message.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    kind: ErrorKind,
    message: String,
    /// A machine-readable code some compatibility profiles expose (e.g. `SNAPSHOT_NOT_FOUND`).
    code: Option<&'static str>,
}

impl Error {
    /// Builds an error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), code: None }
    }

    /// An [`ErrorKind::InvalidInput`] error.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }

    /// An [`ErrorKind::NotFound`] error.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    /// An [`ErrorKind::Conflict`] error.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Conflict, message)
    }

    /// An [`ErrorKind::Corrupt`] error.
    pub fn corrupt(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Corrupt, message)
    }

    /// An I/O error that names the path it happened on and what was being done.
    pub fn io(action: &str, path: &Path, err: std::io::Error) -> Self {
        let hint = match err.kind() {
            std::io::ErrorKind::PermissionDenied => ": check its permissions or run as its owner",
            std::io::ErrorKind::StorageFull => ": free some disk space and retry",
            _ => "",
        };
        Self::new(ErrorKind::Io, format!("could not {action} {}: {err}{hint}", path.display()))
    }

    /// Attaches a machine-readable code (used by compatibility profiles).
    pub fn with_code(mut self, code: &'static str) -> Self {
        self.code = Some(code);
        self
    }

    /// Prefixes the message with context, keeping the kind.
    pub fn context(mut self, context: impl std::fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }

    /// The class of this failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The machine-readable code, if one was attached.
    pub fn code(&self) -> Option<&'static str> {
        self.code
    }

    /// The one-sentence message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl From<rusqlite::Error> for Error {
    fn from(err: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
        match err.sqlite_error_code() {
            Some(DatabaseCorrupt | NotADatabase) => Self::new(
                ErrorKind::Corrupt,
                format!(
                    "the store's catalog is damaged ({err}); repair the store to rebuild it from the snapshot records and pack headers"
                ),
            )
            .with_code("catalog_damaged"),
            _ => Self::new(ErrorKind::Io, format!("the store's catalog failed: {err}; check the store")),
        }
    }
}

/// Extension for attaching a path to `std::io::Result`s.
pub(crate) trait IoContext<T> {
    /// Converts an I/O error into an [`Error`] naming `path` and the `action` that failed.
    fn at(self, action: &str, path: &Path) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, action: &str, path: &Path) -> Result<T> {
        self.map_err(|e| Error::io(action, path, e))
    }
}

impl<T> IoContext<T> for rustix::io::Result<T> {
    fn at(self, action: &str, path: &Path) -> Result<T> {
        self.map_err(|e| Error::io(action, path, e.into()))
    }
}
