//! The catalog of a shared store: what it has applied from the objects, and the events it
//! publishes for the changes that no record carries (a session made, forked or deleted, a
//! snapshot taken out of a session).
//!
//! An event is written to the objects first and applied to this catalog second, so the
//! objects are never behind a catalog; one applied twice (a command died between the two)
//! changes nothing the second time.

use std::sync::Arc;

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::Catalog;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::id::SessionId;

/// The table of objects applied to this catalog (records and events), by key; and of the
/// record objects this machine's saves began to write (`Catalog::note_record`).
pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS synced(
    key TEXT PRIMARY KEY
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS records_begun(
    key TEXT PRIMARY KEY
) WITHOUT ROWID;
";

/// One snapshot's place in a session.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Member {
    /// The snapshot's id.
    pub snapshot: String,
    /// The target it captured.
    pub target: String,
    /// Its name in the session, if it has one.
    pub name: Option<String>,
}

/// A change to the catalog that no snapshot record carries.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A session was made; a fork lists the snapshots it copied, as the writer saw them.
    SessionCreated {
        /// The new session.
        id: SessionId,
        /// Its name.
        name: String,
        /// Creation time, RFC 3339 UTC.
        created_at: String,
        /// The session it was forked from, if any.
        from: Option<SessionId>,
        /// The snapshots it starts with.
        members: Vec<Member>,
    },
    /// A session and its memberships were deleted.
    SessionDeleted {
        /// The deleted session.
        id: SessionId,
    },
    /// A snapshot was taken out of a session.
    MembershipRemoved {
        /// The session it left.
        session: SessionId,
        /// The snapshot's id.
        snapshot: String,
    },
}

impl Catalog {
    /// Makes this the catalog of a shared store: its changes are published to `objects`.
    pub fn share(&mut self, objects: Arc<dyn Backend>) {
        self.shared = Some(objects);
    }

    /// Whether object `key` was applied to this catalog.
    pub fn seen(&self, key: &str) -> Result<bool> {
        let conn = self.reader()?;
        let mut stmt = conn.prepare_cached("SELECT 1 FROM synced WHERE key = ?1")?;
        Ok(stmt.exists([key])?)
    }

    /// Records that object `key` was applied.
    pub fn mark_seen(&self, key: &str) -> Result<()> {
        self.conn().execute("INSERT OR IGNORE INTO synced(key) VALUES (?1)", [key])?;
        Ok(())
    }

    /// Publishes `event` to the shared objects, when the store is shared; returns its key.
    pub fn publish(&self, event: &Event) -> Result<Option<String>> {
        let Some(objects) = &self.shared else { return Ok(None) };
        let key = format!("log/{}.json", uuid::Uuid::now_v7());
        let bytes = serde_json::to_vec(event)
            .map_err(|e| Error::corrupt(format!("could not encode an event: {e}")))?;
        objects.put_if_absent(&key, &bytes)?;
        Ok(Some(key))
    }

    /// Creates a session in a shared store: the event first, with the fork's members listed.
    pub(super) fn create_session_shared(&self, name: &str, from: Option<SessionId>) -> Result<SessionId> {
        let taken: bool = self.conn().prepare("SELECT 1 FROM sessions WHERE name = ?1")?.exists([name])?;
        if taken {
            return Err(Error::conflict(format!(
                "a session named {name:?} already exists; pick another name"
            )));
        }
        let members = match from {
            Some(from) => {
                let conn = self.conn();
                let mut stmt =
                    conn.prepare("SELECT snapshot_id, target, name FROM memberships WHERE session_id = ?1")?;
                let rows = stmt.query_map([from.to_string()], |r| {
                    Ok(Member { snapshot: r.get(0)?, target: r.get(1)?, name: r.get(2)? })
                })?;
                rows.collect::<rusqlite::Result<Vec<_>>>()?
            }
            None => Vec::new(),
        };
        let id = SessionId::new();
        let event = Event::SessionCreated {
            id,
            name: name.to_owned(),
            created_at: crate::time::now_rfc3339(),
            from,
            members,
        };
        let key = self.publish(&event)?;
        self.apply_event(&event)?;
        if let Some(key) = key {
            self.mark_seen(&key)?;
        }
        Ok(id)
    }

    /// Makes `session` here under its own id, name and creation time (a copy from another
    /// store), or adds `members` to it when it exists: one session event either way, published
    /// first on a shared store, whose apply inserts what is missing and changes nothing else.
    pub fn adopt_session(
        &self,
        session: &crate::model::session::Session,
        members: Vec<Member>,
    ) -> Result<()> {
        let event = Event::SessionCreated {
            id: session.id,
            name: session.name.clone(),
            created_at: session.created_at.clone(),
            from: session.from.as_ref().map(|f| f.session),
            members,
        };
        let key = self.publish(&event)?;
        self.apply_event(&event)?;
        if let Some(key) = key {
            self.mark_seen(&key)?;
        }
        Ok(())
    }

    /// Applies an event published by this or another machine.
    pub fn apply_event(&self, event: &Event) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        match event {
            Event::SessionCreated { id, name, created_at, from, members } => {
                // Two machines that made one name at once: the later one keeps its session
                // under a name of its id, so nothing is lost and nothing is merged.
                let taken: bool = tx
                    .prepare("SELECT 1 FROM sessions WHERE name = ?1 AND id != ?2")?
                    .exists(params![name, id.to_string()])?;
                let name = if taken { format!("{name}-{}", &id.to_string()[..8]) } else { name.clone() };
                tx.execute(
                    "INSERT OR IGNORE INTO sessions(id, name, created_at, from_session) VALUES (?1, ?2, ?3, ?4)",
                    params![id.to_string(), name, created_at, from.map(|f| f.to_string())],
                )?;
                for m in members {
                    tx.execute(
                        "INSERT OR IGNORE INTO memberships(session_id, snapshot_id, target, name)
                         SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM snapshots WHERE id = ?2)",
                        params![id.to_string(), m.snapshot, m.target, m.name],
                    )?;
                }
            }
            Event::SessionDeleted { id } => {
                tx.execute("DELETE FROM memberships WHERE session_id = ?1", [id.to_string()])?;
                tx.execute(
                    "DELETE FROM snapshots WHERE id NOT IN (SELECT snapshot_id FROM memberships)",
                    [],
                )?;
                tx.execute("DELETE FROM sessions WHERE id = ?1", [id.to_string()])?;
            }
            Event::MembershipRemoved { session, snapshot } => {
                tx.execute(
                    "DELETE FROM memberships WHERE session_id = ?1 AND snapshot_id = ?2",
                    params![session.to_string(), snapshot],
                )?;
                tx.execute(
                    "DELETE FROM snapshots WHERE id = ?1 AND id NOT IN (SELECT snapshot_id FROM memberships)",
                    [snapshot],
                )?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}
