//! Errors of the UI server: [`UiError`] stops it (bad flags, a store that cannot be opened, a
//! port in use); a failed request is the engine's error, sent to the page as JSON
//! `{"error": SENTENCE, "kind": KIND}` with a status that matches its kind.

use std::net::SocketAddr;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use cairn_lib::{ErrorKind, Hint, Words};

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    /// The store could not be opened, or a pinned session does not exist.
    #[error("{0}")]
    Store(#[from] cairn_lib::Error),
    /// A flag is invalid (a non-loopback address without a token, an empty token, ...).
    #[error("{0}")]
    Usage(String),
    /// The address could not be bound.
    #[error("could not listen on {addr}: {source}; pick a free port or stop what holds it")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The server failed while running.
    #[error("the UI server failed: {0}")]
    Serve(String),
}

/// A failed request: the engine's error, rendered in the page's words.
#[derive(Debug)]
pub(crate) struct ApiError(pub cairn_lib::Error);

impl From<cairn_lib::Error> for ApiError {
    fn from(e: cairn_lib::Error) -> Self {
        ApiError(e)
    }
}

/// The page's words: options are the fields of its forms, named as the page labels them.
#[derive(Debug)]
struct PageWords;

impl Words for PageWords {
    fn option(&self, name: &str) -> String {
        format!("\"{}\"", name.replace('_', " "))
    }

    fn hint(&self, hint: &Hint) -> String {
        match hint {
            Hint::SetOption(o) => format!("tick {}", self.option(o)),
            Hint::GiveOption(o) => format!("fill in {}", self.option(o)),
            other => cairn_lib::NeutralWords.hint(other),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = match self.0.kind() {
            ErrorKind::InvalidInput => StatusCode::BAD_REQUEST,
            ErrorKind::NotFound => StatusCode::NOT_FOUND,
            ErrorKind::Conflict | ErrorKind::Locked => StatusCode::CONFLICT,
            ErrorKind::PermissionDenied => StatusCode::FORBIDDEN,
            ErrorKind::Corrupt | ErrorKind::Io | ErrorKind::External => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let body =
            serde_json::json!({ "error": self.0.render(&PageWords), "kind": format!("{:?}", self.0.kind()) });
        (status, Json(body)).into_response()
    }
}

/// An error made here, not by the engine (a task that stopped, a result that would not encode).
pub(crate) fn internal(message: impl Into<String>) -> ApiError {
    ApiError(cairn_lib::Error::new(ErrorKind::Io, message))
}

/// A request the page got wrong (a missing field).
pub(crate) fn bad_request(message: impl Into<String>) -> ApiError {
    ApiError(cairn_lib::Error::invalid(message))
}
