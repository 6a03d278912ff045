//! Sessions: named lines of snapshots. `baseline` always exists; forks share all data.

use serde::{Deserialize, Serialize};

use crate::id::SessionId;

/// The session a command works in: what every operation needs of it. Finding it costs the
/// same for any number of snapshots, where a [`Session`]'s counts sum every snapshot of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRef {
    /// Its id.
    pub id: SessionId,
    /// Its unique name.
    pub name: String,
}

/// A session record, as `session list` shows it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Session {
    /// UUIDv7 id (`baseline` has the fixed id `00000000-0000-0000-0000-000000000001`).
    pub id: SessionId,
    /// Unique name.
    pub name: String,
    /// Creation time, RFC 3339 UTC.
    pub created_at: String,
    /// The session this one was forked from, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<SessionOrigin>,
    /// Always `ready`: a fork copies records in one transaction, so no session is half made.
    pub status: String,
    /// True for the session a command given no `--session` works in.
    pub current: bool,
    /// Snapshots in the session (safety snapshots not counted).
    pub snapshot_count: u64,
    /// The targets the session has snapshots of.
    pub targets: Vec<String>,
    /// Logical bytes the session's snapshots hold: what a full copy of the session would cost.
    pub size_bytes: u64,
}

impl Session {
    /// Its id and name, as an operation takes them.
    pub fn to_ref(&self) -> SessionRef {
        SessionRef { id: self.id, name: self.name.clone() }
    }
}

/// Where a forked session came from.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionOrigin {
    /// The source session's id.
    pub session: SessionId,
}
