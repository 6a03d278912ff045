//! Errors of the Debug Adapter Protocol client.
//!
//! Rules for every variant:
//! - the message is one sentence that says what is wrong and what to do about it;
//! - an I/O error names what it was reading or writing (a path, a program, a peer address);
//! - a request the caller may retry later (the program is running, say) is a [`Error::Refused`]
//!   with a stable [`RefusalCode`] that front ends pass on to agents unchanged.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Stable machine-readable reasons for refusing a call; front ends show them as error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RefusalCode {
    /// The call needs a paused program, and the program is running.
    NotPaused,
    /// The call needs a live program, and the debuggee has exited or the adapter is gone.
    SessionEnded,
    /// The requested thread or stack frame does not exist at this stop.
    FrameNotFound,
}

impl RefusalCode {
    /// The code as the front ends print it, e.g. `NOT_PAUSED`.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalCode::NotPaused => "NOT_PAUSED",
            RefusalCode::SessionEnded => "SESSION_ENDED",
            RefusalCode::FrameNotFound => "FRAME_NOT_FOUND",
        }
    }
}

impl std::fmt::Display for RefusalCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything that can go wrong while talking to a debug adapter.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The call cannot be served in the session's current state; `code` says why.
    #[error("{message}")]
    Refused {
        /// Stable reason, e.g. `NOT_PAUSED`.
        code: RefusalCode,
        /// One sentence for people and agents.
        message: String,
    },

    /// A debug adapter is not installed where it was looked for.
    #[error("the {adapter} debug adapter was not found; {hint}")]
    AdapterMissing {
        /// Which adapter (`debugpy`, `lldb-dap`).
        adapter: &'static str,
        /// How to install it.
        hint: String,
    },

    /// The adapter program could not be started.
    #[error(
        "could not start the debug adapter `{program}`: {source}; check that it is installed and executable"
    )]
    Spawn {
        /// The program that failed to start.
        program: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },

    /// A TCP connection to a listening adapter failed.
    #[error(
        "could not connect to the debug adapter at {address}: {source}; check that the program is listening there"
    )]
    Connect {
        /// The address dialled.
        address: String,
        /// The operating system's reason.
        source: std::io::Error,
    },

    /// Reading from or writing to the adapter's channel failed.
    #[error("lost the connection to the debug adapter ({channel}): {source}; start a new debug session")]
    Io {
        /// Which channel: the adapter's stdio or a peer address.
        channel: String,
        /// The operating system's reason.
        source: std::io::Error,
    },

    /// The adapter sent something that is not a valid DAP message.
    #[error("the debug adapter sent an invalid message ({detail}); check the adapter's version")]
    Protocol {
        /// What was wrong with it.
        detail: String,
    },

    /// The adapter answered a request with `success: false`.
    #[error("the debug adapter refused `{command}`: {message}")]
    RequestFailed {
        /// The DAP command that failed.
        command: String,
        /// The adapter's explanation.
        message: String,
    },

    /// The adapter closed its connection while a request was waiting for an answer.
    #[error(
        "the debug adapter closed its connection before answering `{command}`; start a new debug session"
    )]
    AdapterGone {
        /// The DAP command that was waiting.
        command: String,
    },

    /// Something did not happen within its time limit.
    #[error("timed out after {after:?} waiting for {what}; retry with a longer timeout or check the program")]
    Timeout {
        /// What was awaited.
        what: String,
        /// The limit that ran out.
        after: Duration,
    },
}

impl Error {
    /// Builds a refusal with its code and sentence.
    pub(crate) fn refused(code: RefusalCode, message: impl Into<String>) -> Self {
        Error::Refused { code, message: message.into() }
    }

    /// The refusal code if this error is a refusal, for front ends that map codes to their own.
    pub fn refusal_code(&self) -> Option<RefusalCode> {
        match self {
            Error::Refused { code, .. } => Some(*code),
            _ => None,
        }
    }

    pub(crate) fn protocol(detail: impl Into<String>) -> Self {
        Error::Protocol { detail: detail.into() }
    }
}
