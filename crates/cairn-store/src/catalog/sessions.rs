//! Session records. A fork copies membership rows only: it costs the same for any data size.

use rusqlite::{Connection, OptionalExtension, params};

use super::Catalog;
use crate::error::{Error, Result};
use crate::id::SessionId;
use crate::model::session::{Session, SessionOrigin, SessionRef};

pub(super) fn ensure_baseline(conn: &Connection) -> Result<()> {
    conn.execute(
        "INSERT OR IGNORE INTO sessions(id, name, created_at, from_session) VALUES (?1, 'baseline', ?2, NULL)",
        params![SessionId::BASELINE.to_string(), crate::time::now_rfc3339()],
    )?;
    Ok(())
}

// The count and the size are of the same snapshots: the ones `cairn list` shows, without the
// safety snapshots restores take.
const SELECT: &str = "SELECT s.id, s.name, s.created_at, s.from_session,
        (SELECT COUNT(*) FROM memberships m JOIN snapshots x ON x.id = m.snapshot_id
            WHERE m.session_id = s.id AND x.safety = 0),
        (SELECT COALESCE(group_concat(DISTINCT m.target), '') FROM memberships m WHERE m.session_id = s.id),
        (SELECT COALESCE(SUM(json_extract(x.stats, '$.bytes')), 0) FROM memberships m
            JOIN snapshots x ON x.id = m.snapshot_id WHERE m.session_id = s.id AND x.safety = 0)
     FROM sessions s";

/// The session id in column `i`, read as `text`.
fn parse(i: usize, text: String) -> rusqlite::Result<SessionId> {
    uuid::Uuid::parse_str(&text)
        .map(SessionId)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e)))
}

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Session> {
    let from: Option<String> = r.get(3)?;
    let targets: String = r.get(5)?;
    let mut targets: Vec<String> = targets.split(',').filter(|t| !t.is_empty()).map(str::to_owned).collect();
    targets.sort();
    Ok(Session {
        id: parse(0, r.get(0)?)?,
        name: r.get(1)?,
        created_at: r.get(2)?,
        from: from.map(|f| parse(3, f)).transpose()?.map(|session| SessionOrigin { session }),
        status: "ready".into(),
        current: false,
        snapshot_count: r.get::<_, i64>(4)? as u64,
        targets,
        size_bytes: r.get::<_, i64>(6)? as u64,
    })
}

impl Catalog {
    /// Every session, oldest first.
    pub fn list_sessions(&self) -> Result<Vec<Session>> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!("{SELECT} ORDER BY s.created_at ASC, s.id ASC"))?;
        let rows = stmt.query_map([], from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// A session by name or id.
    pub fn find_session(&self, name_or_id: &str) -> Result<Option<Session>> {
        let conn = self.conn();
        Ok(conn
            .query_row(&format!("{SELECT} WHERE s.id = ?1 OR s.name = ?1"), [name_or_id], from_row)
            .optional()?)
    }

    /// A session's id and name, by name or id, without its counts.
    pub fn find_session_ref(&self, name_or_id: &str) -> Result<Option<SessionRef>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT id, name FROM sessions WHERE id = ?1 OR name = ?1")?;
        let row = |r: &rusqlite::Row<'_>| Ok(SessionRef { id: parse(0, r.get(0)?)?, name: r.get(1)? });
        Ok(stmt.query_row([name_or_id], row).optional()?)
    }

    /// Creates a session; with `from`, copies every membership of that session.
    pub fn create_session(&self, name: &str, from: Option<SessionId>) -> Result<SessionId> {
        if self.shared.is_some() {
            return self.create_session_shared(name, from);
        }
        let id = SessionId::new();
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let taken: bool = tx.prepare("SELECT 1 FROM sessions WHERE name = ?1")?.exists([name])?;
        if taken {
            return Err(Error::conflict(format!(
                "a session named {name:?} already exists; pick another name"
            )));
        }
        tx.execute(
            "INSERT INTO sessions(id, name, created_at, from_session) VALUES (?1, ?2, ?3, ?4)",
            params![id.to_string(), name, crate::time::now_rfc3339(), from.map(|f| f.to_string())],
        )?;
        if let Some(from) = from {
            tx.execute(
                "INSERT INTO memberships(session_id, snapshot_id, target, name)
                 SELECT ?1, snapshot_id, target, name FROM memberships WHERE session_id = ?2",
                params![id.to_string(), from.to_string()],
            )?;
        }
        tx.commit()?;
        Ok(id)
    }

    /// Deletes a session and its memberships; drops records no session holds any more.
    /// Returns the logical bytes of the records dropped.
    pub fn delete_session(&self, id: SessionId) -> Result<u64> {
        let event = self.publish(&super::events::Event::SessionDeleted { id })?;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute("DELETE FROM memberships WHERE session_id = ?1", [id.to_string()])?;
        let freed: i64 = tx.query_row(
            "SELECT COALESCE(SUM(json_extract(stats, '$.bytes')), 0) FROM snapshots
             WHERE id NOT IN (SELECT snapshot_id FROM memberships)",
            [],
            |r| r.get(0),
        )?;
        tx.execute("DELETE FROM snapshots WHERE id NOT IN (SELECT snapshot_id FROM memberships)", [])?;
        tx.execute("DELETE FROM sessions WHERE id = ?1", [id.to_string()])?;
        if let Some(key) = event {
            tx.execute("INSERT OR IGNORE INTO synced(key) VALUES (?1)", [key])?;
        }
        tx.commit()?;
        Ok(freed as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_found_by_name_or_id_with_or_without_its_counts() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(&dir.path().join("catalog.db")).unwrap();
        let id = catalog.create_session("ocelot", None).unwrap();
        let by_name = catalog.find_session_ref("ocelot").unwrap().unwrap();
        assert_eq!(by_name, SessionRef { id, name: "ocelot".into() });
        assert_eq!(catalog.find_session_ref(&id.to_string()).unwrap(), Some(by_name.clone()));
        assert_eq!(catalog.find_session(&id.to_string()).unwrap().unwrap().to_ref(), by_name);
        let baseline = catalog.find_session_ref("baseline").unwrap().unwrap();
        assert_eq!(baseline.id, SessionId::BASELINE);
        assert_eq!(catalog.find_session_ref("no-such-session").unwrap(), None);
    }
}
