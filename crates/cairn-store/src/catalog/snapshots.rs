//! Snapshot records and their membership in sessions.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::Catalog;
use crate::error::{Error, Result};
use crate::id::{ObjectId, SessionId, SnapshotId};
use crate::model::snapshot::Snapshot;
use crate::model::target_kind::TargetKind;

/// What a list query selects.
#[derive(Debug, Clone, Default)]
pub struct SnapshotFilter {
    /// Only snapshots of this target, when given.
    pub target: Option<String>,
    /// Also the safety snapshots taken before a destructive restore.
    pub include_safety: bool,
}

/// A record about to be committed, with the name to give it in its session.
pub struct NewSnapshot<'a> {
    /// The record.
    pub snapshot: &'a Snapshot,
    /// Move the name from whichever snapshot holds it (`--force`).
    pub force_name: bool,
    /// Rows of the target's stat cache that the capture changed, committed with the snapshot.
    pub stat_cache: Option<&'a super::statcache::StatCacheWrite>,
}

const SELECT: &str = "SELECT s.id, m.name, s.description, s.target, s.kind, m.session_id, s.created_at,
        s.safety, s.stats, s.not_covered, s.details, s.root
     FROM memberships m JOIN snapshots s ON s.id = m.snapshot_id";

fn from_row(r: &Row<'_>) -> rusqlite::Result<Snapshot> {
    let json_err = |i, e: serde_json::Error| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    };
    let id: String = r.get(0)?;
    let session: String = r.get(5)?;
    let stats: String = r.get(8)?;
    let not_covered: String = r.get(9)?;
    let details: Option<String> = r.get(10)?;
    let root: Option<Vec<u8>> = r.get(11)?;
    let parse_uuid = |i, s: &str| {
        uuid::Uuid::parse_str(s).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
        })
    };
    Ok(Snapshot {
        id: SnapshotId(parse_uuid(0, &id)?),
        name: r.get(1)?,
        description: r.get(2)?,
        target: r.get(3)?,
        kind: r.get(4)?,
        session: SessionId(parse_uuid(5, &session)?),
        created_at: r.get(6)?,
        safety: r.get(7)?,
        stats: serde_json::from_str(&stats).map_err(|e| json_err(8, e))?,
        not_covered: serde_json::from_str(&not_covered).map_err(|e| json_err(9, e))?,
        details: match details {
            Some(d) => serde_json::from_str(&d).map_err(|e| json_err(10, e))?,
            None => serde_json::Value::Null,
        },
        root: root.and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok()).map(ObjectId),
    })
}

/// The rows of a new snapshot, committed once `durable` has returned.
fn insert_rows(
    conn: &mut Connection,
    new: NewSnapshot<'_>,
    durable: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let s = new.snapshot;
    let tx = conn.transaction()?;
    if let Some(name) = &s.name {
        let holder: Option<String> = tx
            .query_row(
                "SELECT snapshot_id FROM memberships WHERE session_id = ?1 AND target = ?2 AND name = ?3",
                params![s.session.to_string(), s.target, name],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(holder) = holder {
            if !new.force_name {
                return Err(Error::conflict(format!(
                    "a snapshot named {name:?} already exists for {} ({holder}); pick another name",
                    s.target
                ))
                .or_hint(crate::error::Hint::SetOption("force"))
                .purpose("to move the name to the new snapshot"));
            }
            tx.execute(
                "UPDATE memberships SET name = NULL WHERE session_id = ?1 AND snapshot_id = ?2",
                params![s.session.to_string(), holder],
            )?;
        }
    }
    // Statements cached: a watcher commits a snapshot through here every save, for hours.
    tx.prepare_cached(
        "INSERT INTO snapshots(id, target, kind, created_at, description, root, safety, stats, not_covered, details)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
                s.id.to_string(),
                s.target,
                s.kind,
                s.created_at,
                s.description,
                s.root.map(|r| r.0.to_vec()),
                s.safety,
                to_json(&s.stats)?,
                to_json(&s.not_covered)?,
                if s.details.is_null() { None } else { Some(to_json(&s.details)?) },
            ])?;
    tx.prepare_cached(
        "INSERT INTO memberships(session_id, snapshot_id, target, name) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![s.session.to_string(), s.id.to_string(), s.target, s.name])?;
    // Applied: a shared store's sync must not add it back once it is removed.
    tx.prepare_cached("INSERT OR IGNORE INTO synced(key) VALUES (?1)")?
        .execute([format!("records/{}.json", s.id)])?;
    if let Some(write) = new.stat_cache.filter(|w| !w.is_empty()) {
        super::statcache::write_stat_cache_in(&tx, &s.target, write)?;
    }
    durable()?;
    crate::fault::kill_at(crate::fault::FaultPoint::RecordWritten);
    tx.commit()?;
    Ok(())
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| Error::corrupt(format!("could not encode a record: {e}")))
}

impl Catalog {
    /// Commits a snapshot record and its membership in its session, atomically. The snapshot
    /// exists from this moment on.
    pub fn insert_snapshot(&self, new: NewSnapshot<'_>) -> Result<()> {
        self.insert_snapshot_when(new, || Ok(()))
    }

    /// [`Catalog::insert_snapshot`], committed once `durable` (which makes the snapshot's
    /// record object durable) has returned; its rows are written first, so a name another
    /// snapshot holds is refused before `durable` runs.
    pub fn insert_snapshot_when(
        &self,
        new: NewSnapshot<'_>,
        durable: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        // Not flushed on its own in a store of this machine's own: `durable` flushed the
        // record, and the packs it points at were flushed before it (`power_cut.rs`).
        self.writing(super::Flush::Recoverable, |conn| insert_rows(conn, new, durable))?;
        crate::fault::kill_at(crate::fault::FaultPoint::SnapshotCommitted);
        Ok(())
    }

    /// The root of snapshot `id`'s row when the row decodes whole (its stats and root of the
    /// forms a save writes); `None` when it does not, or the catalog has no such row.
    pub fn sound_row_root(&self, id: &str) -> Result<Option<ObjectId>> {
        let conn = self.conn();
        let row = conn
            .query_row(
                "SELECT kind, stats, not_covered, details, root FROM snapshots WHERE id = ?1",
                [id],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, Option<String>>(3)?,
                        r.get::<_, Option<Vec<u8>>>(4)?,
                    ))
                },
            )
            .optional()?;
        let Some((kind, stats, not_covered, details, root)) = row else { return Ok(None) };
        // A kind damaged in place is left to the kinds' own checks: the catalog knows none.
        let decodes = !kind.is_empty()
            && serde_json::from_str::<crate::model::snapshot::SnapshotStats>(&stats).is_ok()
            && serde_json::from_str::<crate::model::snapshot::NotCovered>(&not_covered).is_ok()
            && details.is_none_or(|d| serde_json::from_str::<serde_json::Value>(&d).is_ok());
        Ok(root.and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok()).map(ObjectId).filter(|_| decodes))
    }

    /// With `row`, makes the catalog's row of snapshot `s` (which it holds) say what its record
    /// says, and, with `membership`, gives the snapshot a membership of its record's session when it has
    /// none (under no name when its name is taken; a shared store's memberships come from its
    /// events instead). Rows are written once, when a snapshot is saved, so a row that differs
    /// from its record was damaged in place, in a way SQLite's checks do not see. Returns
    /// whether anything was put right.
    pub fn correct_snapshot(&self, s: &Snapshot, row: bool, membership: bool) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let id = s.id.to_string();
        let root = s.root.map(|r| r.0.to_vec());
        let stats = to_json(&s.stats)?;
        let not_covered = to_json(&s.not_covered)?;
        let details = if s.details.is_null() { None } else { Some(to_json(&s.details)?) };
        let mut corrected = row
            && tx.execute(
                "UPDATE snapshots SET target = ?2, kind = ?3, created_at = ?4, description = ?5, root = ?6,
                 safety = ?7, stats = ?8, not_covered = ?9, details = ?10
             WHERE id = ?1 AND NOT (target IS ?2 AND kind IS ?3 AND created_at IS ?4 AND description IS ?5
                 AND root IS ?6 AND safety IS ?7 AND stats IS ?8 AND not_covered IS ?9 AND details IS ?10)",
                params![
                    id,
                    s.target,
                    s.kind,
                    s.created_at,
                    s.description,
                    root,
                    s.safety,
                    stats,
                    not_covered,
                    details
                ],
            )? > 0;
        let member: bool =
            tx.query_row("SELECT EXISTS(SELECT 1 FROM memberships WHERE snapshot_id = ?1)", [&id], |r| {
                r.get(0)
            })?;
        if membership && !member {
            let session = s.session.to_string();
            let name_taken: bool = tx.query_row(
                "SELECT EXISTS(SELECT 1 FROM memberships WHERE session_id = ?1 AND target = ?2 AND name IS ?3)",
                params![session, s.target, s.name],
                |r| r.get(0),
            )?;
            let name = if name_taken { None } else { s.name.clone() };
            tx.execute(
                "INSERT INTO memberships(session_id, snapshot_id, target, name) VALUES (?1, ?2, ?3, ?4)",
                params![session, id, s.target, name],
            )?;
            corrected = true;
        }
        tx.commit()?;
        Ok(corrected)
    }

    /// Takes charge of record object `key` before a save of this machine's own writes it: a
    /// record the catalog noted so but whose snapshot it does not hold was written by a save
    /// killed before its commit, and gc may delete it; any other record the catalog lacks and
    /// did not remove is one it lost track of, and is kept. Not flushed on its own, and apart
    /// from the records the catalog applied (`synced`): a power cut may take back the snapshot's
    /// commit and keep this note, and the first open after it adds the snapshot back from its
    /// record (`power_cut.rs`), where a removed snapshot's record stays out.
    pub fn note_record(&self, key: &str) -> Result<()> {
        self.writing(super::Flush::WithNext, |conn| {
            conn.prepare_cached("INSERT OR IGNORE INTO records_begun(key) VALUES (?1)")?.execute([key])?;
            Ok(())
        })
    }

    /// Whether a save of this machine's own began to write record object `key`
    /// ([`Catalog::note_record`]).
    pub fn record_begun(&self, key: &str) -> Result<bool> {
        let conn = self.reader()?;
        let mut stmt = conn.prepare_cached("SELECT 1 FROM records_begun WHERE key = ?1")?;
        Ok(stmt.exists([key])?)
    }

    /// The snapshots of `session`, oldest first.
    pub fn list_snapshots(&self, session: SessionId, filter: &SnapshotFilter) -> Result<Vec<Snapshot>> {
        let conn = self.conn();
        let sql = format!(
            "{SELECT} WHERE m.session_id = ?1 AND (?2 IS NULL OR s.target = ?2) AND (?3 OR s.safety = 0)
             ORDER BY s.id ASC"
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows =
            stmt.query_map(params![session.to_string(), filter.target, filter.include_safety], from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The targets of `session`'s snapshots, safety snapshots aside, each with its kind: what
    /// a reference's scope is matched against, without decoding a single record.
    pub fn snapshot_targets(&self, session: SessionId) -> Result<Vec<(String, TargetKind)>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT DISTINCT s.target, s.kind FROM memberships m JOIN snapshots s ON s.id = m.snapshot_id
             WHERE m.session_id = ?1 AND s.safety = 0",
        )?;
        let rows = stmt.query_map([session.to_string()], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The snapshot `back` places before the newest of `session` (of `target`, when given),
    /// safety snapshots aside; else how many there are. Read by `latest~N` in one row, where
    /// listing them all grew with every save of a long session.
    pub fn latest_snapshot(
        &self,
        session: SessionId,
        target: Option<&str>,
        back: usize,
    ) -> Result<std::result::Result<Snapshot, usize>> {
        let conn = self.conn();
        let sql = format!(
            "{SELECT} WHERE m.session_id = ?1 AND (?2 IS NULL OR s.target = ?2) AND s.safety = 0
             ORDER BY s.id DESC LIMIT 1 OFFSET ?3"
        );
        let back = i64::try_from(back).unwrap_or(i64::MAX);
        let found = conn
            .prepare_cached(&sql)?
            .query_row(params![session.to_string(), target, back], from_row)
            .optional()?;
        if let Some(found) = found {
            return Ok(Ok(found));
        }
        let count: i64 = conn.query_row(
            "SELECT COUNT(*) FROM memberships m JOIN snapshots s ON s.id = m.snapshot_id
             WHERE m.session_id = ?1 AND (?2 IS NULL OR s.target = ?2) AND s.safety = 0",
            params![session.to_string(), target],
            |r| r.get(0),
        )?;
        Ok(Err(count as usize))
    }

    /// The snapshots of `session` (of `target`, when given) named `name`, safety snapshots
    /// aside: one per target at most.
    pub fn named_snapshots(
        &self,
        session: SessionId,
        name: &str,
        target: Option<&str>,
    ) -> Result<Vec<Snapshot>> {
        let conn = self.conn();
        let sql = format!(
            "{SELECT} WHERE m.session_id = ?1 AND m.name = ?2 AND (?3 IS NULL OR s.target = ?3) AND s.safety = 0
             ORDER BY s.id ASC"
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![session.to_string(), name, target], from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The safety snapshots of `target` in `session`, oldest first: what a restore weighs when
    /// it expires them, without decoding the target's other snapshots, which grow with every
    /// save of a long session.
    pub fn list_safety_snapshots(&self, session: SessionId, target: &str) -> Result<Vec<Snapshot>> {
        let conn = self.conn();
        let sql =
            format!("{SELECT} WHERE m.session_id = ?1 AND s.target = ?2 AND s.safety = 1 ORDER BY s.id ASC");
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![session.to_string(), target], from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One snapshot of `session` by id.
    pub fn get_snapshot(&self, session: SessionId, id: SnapshotId) -> Result<Option<Snapshot>> {
        let conn = self.conn();
        let sql = format!("{SELECT} WHERE m.session_id = ?1 AND m.snapshot_id = ?2");
        Ok(conn.query_row(&sql, params![session.to_string(), id.to_string()], from_row).optional()?)
    }

    /// Takes snapshot `id` out of `session`; drops the record when no session holds it any more.
    /// Returns whether the record itself was dropped.
    pub fn remove_membership(&self, session: SessionId, id: SnapshotId) -> Result<bool> {
        let event = super::events::Event::MembershipRemoved { session, snapshot: id.to_string() };
        let event = self.publish(&event)?;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute(
            "DELETE FROM memberships WHERE session_id = ?1 AND snapshot_id = ?2",
            params![session.to_string(), id.to_string()],
        )?;
        let still_held: bool =
            tx.prepare("SELECT 1 FROM memberships WHERE snapshot_id = ?1")?.exists([id.to_string()])?;
        if !still_held {
            tx.execute("DELETE FROM snapshots WHERE id = ?1", [id.to_string()])?;
        }
        if let Some(key) = event {
            tx.execute("INSERT OR IGNORE INTO synced(key) VALUES (?1)", [key])?;
        }
        tx.commit()?;
        Ok(!still_held)
    }

    /// The kind and root object of every snapshot record, for gc and check.
    pub fn all_roots_with_kind(&self) -> Result<Vec<(String, ObjectId)>> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT kind, root FROM snapshots WHERE root IS NOT NULL")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (kind, raw) = row?;
            if let Ok(arr) = <[u8; 32]>::try_from(raw.as_slice()) {
                out.push((kind, ObjectId(arr)));
            }
        }
        Ok(out)
    }

    /// The id of every snapshot record.
    pub fn all_snapshot_ids(&self) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT id FROM snapshots")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Whether this is the catalog of a shared store, whose changes are published as events.
    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// Gives `snapshot` the name `name` in `session` (or takes its name away), in one
    /// transaction. Returns the id of another snapshot of the target that holds the name,
    /// changing nothing, unless `force` moves the name from it.
    pub fn rename_membership(
        &self,
        session: SessionId,
        snapshot: &Snapshot,
        name: Option<&str>,
        force: bool,
    ) -> Result<Option<String>> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        if let Some(name) = name {
            let holder: Option<String> = tx
                .query_row(
                    "SELECT snapshot_id FROM memberships WHERE session_id = ?1 AND target = ?2 AND name = ?3
                       AND snapshot_id <> ?4",
                    params![session.to_string(), snapshot.target, name, snapshot.id.to_string()],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(holder) = holder {
                if !force {
                    return Ok(Some(holder));
                }
                tx.execute(
                    "UPDATE memberships SET name = NULL WHERE session_id = ?1 AND snapshot_id = ?2",
                    params![session.to_string(), holder],
                )?;
            }
        }
        tx.execute(
            "UPDATE memberships SET name = ?3 WHERE session_id = ?1 AND snapshot_id = ?2",
            params![session.to_string(), snapshot.id.to_string(), name],
        )?;
        tx.commit()?;
        Ok(None)
    }

    /// True when some session still holds a snapshot of `target`.
    pub fn target_has_snapshots(&self, target: &str) -> Result<bool> {
        Ok(self.conn().prepare("SELECT 1 FROM memberships WHERE target = ?1")?.exists([target])?)
    }
}
