//! Moments in the catalog: one row per moment (id, session, name, agent turn) and one row per
//! part (the snapshot it holds of each target). The tables are added to a catalog of any age
//! when it opens (`CREATE … IF NOT EXISTS`), so an older store gains them and loses nothing.
//!
//! Like snapshots, moments are also written as record objects (`moments/<id>.json`), from
//! which [`Catalog::insert_moment`] rebuilds a catalog that was put aside.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::Catalog;
use crate::error::{Error, Result};
use crate::id::{MomentId, SessionId, SnapshotId};
use crate::model::moment::{AgentTurn, Moment, MomentPart};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS moments(
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    name TEXT,
    description TEXT,
    created_at TEXT NOT NULL,
    auto INTEGER NOT NULL DEFAULT 0,
    turn TEXT                     -- JSON of the agent turn an automatic moment was taken at
);
CREATE UNIQUE INDEX IF NOT EXISTS moment_names ON moments(session_id, name) WHERE name IS NOT NULL;
CREATE TABLE IF NOT EXISTS moment_parts(
    moment_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    snapshot_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    PRIMARY KEY(moment_id, position)
);
CREATE INDEX IF NOT EXISTS moment_parts_by_snapshot ON moment_parts(snapshot_id);
";

/// Adds the moment tables to a catalog that lacks them.
pub fn migrate(conn: &Connection) -> Result<()> {
    conn.execute_batch(SCHEMA)?;
    Ok(())
}

fn uuid_at(r: &Row<'_>, i: usize) -> rusqlite::Result<uuid::Uuid> {
    let text: String = r.get(i)?;
    uuid::Uuid::parse_str(&text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e)))
}

fn moment_row(r: &Row<'_>) -> rusqlite::Result<Moment> {
    let turn: Option<String> = r.get(6)?;
    Ok(Moment {
        id: MomentId(uuid_at(r, 0)?),
        session: SessionId(uuid_at(r, 1)?),
        name: r.get(2)?,
        description: r.get(3)?,
        created_at: r.get(4)?,
        auto: r.get(5)?,
        turn: turn.and_then(|t| serde_json::from_str::<AgentTurn>(&t).ok()),
        parts: Vec::new(),
    })
}

/// The rows of a new moment and its parts, in one transaction.
fn insert_moment_rows(conn: &mut Connection, moment: &Moment) -> Result<()> {
    let tx = conn.transaction()?;
    if let Some(name) = &moment.name {
        let taken: bool = tx
            .prepare("SELECT 1 FROM moments WHERE session_id = ?1 AND name = ?2")?
            .exists(params![moment.session.to_string(), name])?;
        if taken {
            return Err(Error::conflict(format!(
                "a moment named {name:?} already exists; pick another name"
            )));
        }
    }
    let turn = moment
        .turn
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| Error::corrupt(format!("could not encode a moment: {e}")))?;
    tx.execute(
        "INSERT INTO moments(id, session_id, name, description, created_at, auto, turn)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            moment.id.to_string(),
            moment.session.to_string(),
            moment.name,
            moment.description,
            moment.created_at,
            moment.auto,
            turn
        ],
    )?;
    for (position, part) in moment.parts.iter().enumerate() {
        tx.execute(
            "INSERT INTO moment_parts(moment_id, position, snapshot_id, kind, target)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                moment.id.to_string(),
                position as i64,
                part.snapshot.to_string(),
                part.kind,
                part.target
            ],
        )?;
    }
    tx.commit()?;
    Ok(())
}

const SELECT: &str = "SELECT id, session_id, name, description, created_at, auto, turn FROM moments";

impl Catalog {
    /// Commits a moment and its parts at once; fails on a name the session already gives
    /// another moment.
    pub fn insert_moment(&self, moment: &Moment) -> Result<()> {
        // Its record object is flushed first (`commit_moment`), and so are its parts' records.
        self.writing(super::Flush::Recoverable, |conn| insert_moment_rows(conn, moment))
    }

    /// The moments of `session`, oldest first, with their parts.
    pub fn list_moments(&self, session: SessionId) -> Result<Vec<Moment>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!("{SELECT} WHERE session_id = ?1 ORDER BY id ASC"))?;
        let mut moments: Vec<Moment> =
            stmt.query_map([session.to_string()], moment_row)?.collect::<rusqlite::Result<_>>()?;
        let mut parts = conn.prepare_cached(
            "SELECT snapshot_id, kind, target FROM moment_parts WHERE moment_id = ?1 ORDER BY position",
        )?;
        for moment in &mut moments {
            moment.parts = parts
                .query_map([moment.id.to_string()], |r| {
                    Ok(MomentPart {
                        snapshot: SnapshotId(uuid_at(r, 0)?),
                        kind: r.get(1)?,
                        target: r.get(2)?,
                    })
                })?
                .collect::<rusqlite::Result<_>>()?;
        }
        Ok(moments)
    }

    /// Forgets a moment (its part snapshots are the caller's to remove).
    pub fn delete_moment(&self, id: MomentId) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute("DELETE FROM moment_parts WHERE moment_id = ?1", [id.to_string()])?;
        tx.execute("DELETE FROM moments WHERE id = ?1", [id.to_string()])?;
        tx.commit()?;
        Ok(())
    }

    /// How many moments hold snapshot `id` as a part.
    pub fn moments_holding(&self, id: SnapshotId) -> Result<u64> {
        let conn = self.conn();
        let n: i64 = conn
            .query_row(
                "SELECT COUNT(DISTINCT moment_id) FROM moment_parts WHERE snapshot_id = ?1",
                [id.to_string()],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0);
        Ok(n as u64)
    }

    /// Whether the catalog has moment `id`.
    pub fn has_moment(&self, id: MomentId) -> Result<bool> {
        Ok(self.conn().prepare("SELECT 1 FROM moments WHERE id = ?1")?.exists([id.to_string()])?)
    }
}
