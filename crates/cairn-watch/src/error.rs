//! The watcher's errors: each one sentence, naming the path or the limit involved.

use std::path::PathBuf;

/// A watcher error.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The kernel refused to set up the watcher.
    #[error("cannot start watching: {0}")]
    Inotify(std::io::Error),
    /// A tree cannot be watched.
    #[error("cannot watch {path}: {message}")]
    Root {
        /// The tree.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The socket failed.
    #[error("the watcher's socket failed: {0}")]
    Socket(std::io::Error),
    /// A message could not be read or written.
    #[error("the watcher sent or got a malformed message: {0}")]
    Protocol(String),
    /// Another watcher already serves this store.
    #[error("a watcher (pid {pid}) already serves this store")]
    Running {
        /// Its process id.
        pid: u32,
    },
    /// The watcher refused a request.
    #[error("{0}")]
    Refused(String),
}

/// Results of the watcher.
pub type Result<T, E = Error> = std::result::Result<T, E>;
