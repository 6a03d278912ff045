//! What a save and the watcher say to each other over the store's socket: one length-prefixed
//! postcard message each way per request. Paths are raw bytes relative to the watched root.

use std::io::{Read, Write};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Messages larger than this are refused on both ends: a status or an answer for a tree of a
/// million directories stays well below it.
const MAX_MESSAGE: u32 = 256 << 20;

/// A point in a watcher's journal. A save keeps the token of the answer it was given and asks
/// "what changed since" it the next time; a token from another watcher process (another
/// `epoch`) means nothing to this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Token {
    /// Which run of the watcher handed the token out.
    pub epoch: uuid::Uuid,
    /// The journal's sequence number when the answer was given.
    pub seq: u64,
}

/// A request to the watcher. Variants are only ever added at the end: a client and a watcher
/// of different versions then fail to understand each other, and the save walks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Request {
    /// The first protocol's question, whose answer named directories only. Answered with a
    /// walk: its client would read the names of [`DirtyDir`] as something else.
    Changes {
        /// The tree, as an absolute path without symlinks.
        root: PathBuf,
        /// The token of the previous answer.
        since: Option<Token>,
    },
    /// Start watching one more tree.
    Watch {
        /// The tree, as an absolute path without symlinks.
        root: PathBuf,
    },
    /// What the watcher watches and what it costs.
    Status,
    /// Stop the watcher.
    Stop,
    /// What changed below `root` since `since` (none: this is the first question), down to
    /// the names of the entries that changed.
    ChangedEntries {
        /// The tree, as an absolute path without symlinks.
        root: PathBuf,
        /// The token of the previous answer.
        since: Option<Token>,
    },
    /// Run a job in the watcher's process (a save, which then needs neither a process of its
    /// own to open the store nor a question over this socket): the watcher hands `job` to the
    /// [`Performer`](crate::server::Performer) it runs with and answers with its outcome.
    Perform {
        /// The job, in the performer's own encoding.
        job: Vec<u8>,
    },
}

/// The watcher's reply.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Response {
    /// The answer to [`Request::Changes`].
    Changes(Changes),
    /// The tree is watched from now on (or already was).
    Watching {
        /// How many directories it watches below the tree.
        dirs: u64,
    },
    /// The answer to [`Request::Status`].
    Status(Status),
    /// The watcher is stopping.
    Stopped,
    /// The request could not be answered.
    Refused {
        /// One sentence saying why.
        message: String,
    },
    /// The answer to [`Request::Perform`]: the job's outcome, in the performer's encoding.
    Performed {
        /// The outcome.
        outcome: Vec<u8>,
    },
    /// Sent as a job starts and every half second while it runs, before [`Response::Performed`]:
    /// the asker knows the watcher is not stopped or stuck.
    Working,
}

/// What changed below a tree since a token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Changes {
    /// The token to ask with next time.
    pub token: Token,
    /// The directories to look at again, or why the whole tree must be walked.
    pub answer: Answer,
}

/// How much of a tree a save must look at again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Answer {
    /// The journal cannot vouch for the tree: walk all of it.
    Walk {
        /// One sentence: why (first question, queue overflow, watch limit, restarted watcher…).
        reason: String,
    },
    /// Only these directories changed. Every directory not listed, and not below a listed
    /// `subtree`, has the same entries with the same metadata as at the token.
    Dirs(Vec<DirtyDir>),
}

/// A directory that changed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DirtyDir {
    /// Relative to the root, as raw bytes; empty for the root itself.
    pub path: Vec<u8>,
    /// Everything below it is new to the journal too (a directory created or moved in).
    pub subtree: bool,
    /// The entries of the directory that changed (created, written, removed, renamed, their
    /// metadata changed), when the journal knows them all; `None`: any of them may have.
    /// Always `None` with `subtree`.
    pub names: Option<Vec<Vec<u8>>>,
}

impl DirtyDir {
    /// A directory any of whose entries may have changed.
    pub fn whole(path: Vec<u8>, subtree: bool) -> Self {
        Self { path, subtree, names: None }
    }
}

/// What a watcher watches and what it costs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    /// The watcher's process id.
    pub pid: u32,
    /// This run of the watcher.
    pub epoch: uuid::Uuid,
    /// Each watched tree.
    pub roots: Vec<RootStatus>,
    /// The kernel's limit on watches per user (`fs.inotify.max_user_watches`), when readable.
    pub max_user_watches: Option<u64>,
    /// The kernel's event queue length per watcher (`fs.inotify.max_queued_events`).
    pub max_queued_events: Option<u64>,
    /// Jobs (saves, in-place restores) the watcher ran in its own process since it started.
    pub performed: u64,
}

/// One watched tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootStatus {
    /// The tree.
    pub root: PathBuf,
    /// Directories watched below it.
    pub dirs: u64,
    /// Directories changed since the oldest token still answerable.
    pub dirty: u64,
    /// Events read for it.
    pub events: u64,
    /// Bytes the watcher holds for it (paths and marks), roughly.
    pub memory_bytes: u64,
    /// Why the next save must walk the whole tree, when it must.
    pub walk_reason: Option<String>,
}

/// Writes one message.
pub fn send<T: Serialize>(w: &mut impl Write, message: &T) -> Result<()> {
    let bytes = postcard::to_stdvec(message).map_err(|e| Error::Protocol(e.to_string()))?;
    let len = u32::try_from(bytes.len()).ok().filter(|&l| l <= MAX_MESSAGE);
    let len =
        len.ok_or_else(|| Error::Protocol(format!("a message of {} bytes is too large", bytes.len())))?;
    w.write_all(&len.to_le_bytes()).map_err(Error::Socket)?;
    w.write_all(&bytes).map_err(Error::Socket)?;
    w.flush().map_err(Error::Socket)
}

/// Reads one message; `None` when the other end closed the connection before a new one.
pub fn receive<T: for<'de> Deserialize<'de>>(r: &mut impl Read) -> Result<Option<T>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(Error::Socket(e)),
    }
    let len = u32::from_le_bytes(len);
    if len > MAX_MESSAGE {
        return Err(Error::Protocol(format!("a message of {len} bytes is too large")));
    }
    let mut bytes = vec![0u8; len as usize];
    r.read_exact(&mut bytes).map_err(Error::Socket)?;
    postcard::from_bytes(&bytes).map(Some).map_err(|e| Error::Protocol(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_round_trips_and_a_closed_stream_reads_as_none() {
        let request =
            Request::Changes { root: "/w".into(), since: Some(Token { epoch: uuid::Uuid::nil(), seq: 7 }) };
        let mut buf = Vec::new();
        send(&mut buf, &request).unwrap();
        let mut r = buf.as_slice();
        let back: Request = receive(&mut r).unwrap().unwrap();
        assert!(matches!(back, Request::Changes { since: Some(Token { seq: 7, .. }), .. }));
        assert!(receive::<Request>(&mut r).unwrap().is_none());
    }

    #[test]
    fn an_oversized_length_is_refused_without_allocating_it() {
        let bytes = u32::MAX.to_le_bytes();
        let err = receive::<Request>(&mut bytes.as_slice()).unwrap_err();
        assert!(err.to_string().contains("too large"), "{err}");
    }
}
