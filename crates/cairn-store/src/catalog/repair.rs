//! What `check` and `repair` need from the catalog beyond everyday use: pack sizes, putting a
//! damaged catalog aside, and rebuilding the blob index, sessions and records from objects.

use rusqlite::{OptionalExtension, params};

use super::{Catalog, Flush};
use crate::error::Result;
use crate::id::{ObjectId, SessionId};
use crate::pack::PackEntry;

/// A snapshot's id, target, kind and root.
pub type SnapshotRoot = (String, String, String, Option<ObjectId>);

impl Catalog {
    /// The size the catalog recorded for pack `key`, if it knows the pack.
    pub fn pack_size(&self, key: &str) -> Result<Option<u64>> {
        let conn = self.reader()?;
        let mut stmt = conn.prepare_cached("SELECT size FROM packs WHERE key = ?1 AND state = 'ready'")?;
        Ok(stmt.query_row([key], |r| r.get::<_, i64>(0)).optional()?.map(|s| s as u64))
    }

    /// SQLite's own structural check of the catalog file; empty when it is sound.
    pub fn integrity_problems(&self) -> Result<Vec<String>> {
        self.sqlite_check("quick_check")
    }

    /// [`Catalog::integrity_problems`], also checking that every index agrees with its table:
    /// slower, for a repair, where an index damaged in place would hide a row from lookups.
    pub fn thorough_integrity_problems(&self) -> Result<Vec<String>> {
        self.sqlite_check("integrity_check")
    }

    fn sqlite_check(&self, pragma: &str) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!("PRAGMA {pragma}"))?;
        let rows: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        Ok(rows.into_iter().filter(|r| r != "ok").collect())
    }

    /// True when the catalog knows no pack and no snapshot: new, or lost and made anew.
    pub fn lists_nothing(&self) -> Result<bool> {
        let conn = self.conn();
        let any: bool = conn.query_row(
            "SELECT EXISTS(SELECT 1 FROM packs) OR EXISTS(SELECT 1 FROM snapshots)",
            [],
            |r| r.get(0),
        )?;
        Ok(!any)
    }

    /// Keeps a copy of the blob index as it is (in a temporary table of this connection), so a
    /// repair that resets the index can still ask where a damaged pack's blobs were.
    pub fn keep_old_blob_index(&self) -> Result<()> {
        self.conn().execute_batch(
            "DROP TABLE IF EXISTS temp.old_blobs;
             CREATE TEMP TABLE old_blobs AS
                 SELECT p.key AS pack_key, b.id, b.kind, b.offset, b.length, b.raw_length, b.compressed, b.within
                 FROM blobs b JOIN packs p ON p.id = b.pack;
             CREATE INDEX temp.old_blobs_pack ON old_blobs(pack_key);",
        )?;
        Ok(())
    }

    /// What the kept copy of the blob index (see [`Catalog::keep_old_blob_index`]) placed in
    /// pack `key`.
    pub fn old_pack_entries(&self, key: &str) -> Result<Vec<PackEntry>> {
        let conn = self.conn();
        entries_in(&conn, "temp.old_blobs", key)
    }

    /// What the catalog at `path` (a damaged one put aside) placed in pack `key`; nothing when
    /// it does not open or cannot say. Opened read-only: a damaged catalog is evidence, and is
    /// left as it is.
    pub fn entries_in_file(path: &std::path::Path, key: &str) -> Vec<PackEntry> {
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let Ok(conn) = rusqlite::Connection::open_with_flags(path, flags) else { return Vec::new() };
        let view = "(SELECT p.key AS pack_key, b.id, b.kind, b.offset, b.length, b.raw_length, b.compressed,
                        b.within FROM blobs b JOIN packs p ON p.id = b.pack)";
        entries_in(&conn, view, key).unwrap_or_default()
    }

    /// Records pack `key` of a shared store as one a repair could not read: known, so the
    /// catch-up on open does not stop at its header again, and never `ready`, so nothing is
    /// read from it and gc never counts its blobs dead.
    pub fn note_damaged_pack(&self, key: &str, size: u64) -> Result<()> {
        self.conn().execute(
            "INSERT OR IGNORE INTO packs(key, state, pid, size, created_at) VALUES (?1, 'damaged', 0, ?2, ?3)",
            params![key, size as i64, jiff::Timestamp::now().as_second()],
        )?;
        Ok(())
    }

    /// The packs noted as ones whose header does not read ([`Catalog::note_damaged_pack`]).
    pub fn damaged_packs(&self) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT key FROM packs WHERE state = 'damaged' ORDER BY key")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Drops the kept copy of the blob index.
    pub fn drop_old_blob_index(&self) -> Result<()> {
        self.conn().execute_batch("DROP TABLE IF EXISTS temp.old_blobs")?;
        Ok(())
    }

    /// Forgets every pack and blob, so the index can be rebuilt from the pack headers.
    pub fn reset_blob_index(&self) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute("DELETE FROM blobs", [])?;
        tx.execute("DELETE FROM packs", [])?;
        tx.commit()?;
        Ok(())
    }

    /// Indexes a pack found on disk (only the `entries` that were verified).
    pub fn index_found_pack(&self, key: &str, size: u64, entries: &[PackEntry]) -> Result<()> {
        self.begin_pack(key, Flush::Now)?;
        self.commit_pack(key, size, entries, Flush::Now)
    }

    /// Whether the catalog has the snapshot record `id`.
    pub fn has_snapshot(&self, id: &str) -> Result<bool> {
        let conn = self.conn();
        Ok(conn.query_row("SELECT 1 FROM snapshots WHERE id = ?1", [id], |_| Ok(())).optional()?.is_some())
    }

    /// Makes sure session `id` exists, under `name` when it has to be created.
    pub fn ensure_session(&self, id: SessionId, name: &str) -> Result<()> {
        self.conn().execute(
            "INSERT OR IGNORE INTO sessions(id, name, created_at, from_session) VALUES (?1, ?2, ?3, NULL)",
            params![id.to_string(), name, crate::time::now_rfc3339()],
        )?;
        Ok(())
    }

    /// Every snapshot record: id, target, kind and root.
    pub fn all_snapshot_roots(&self) -> Result<Vec<SnapshotRoot>> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT id, target, kind, root FROM snapshots ORDER BY id")?;
        let rows = stmt.query_map([], |r| {
            let root: Option<Vec<u8>> = r.get(3)?;
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                root.and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok()).map(ObjectId),
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Blobs a check found damaged and no save has written again.
    pub fn damaged_blobs(&self) -> Result<std::collections::HashSet<ObjectId>> {
        let conn = self.reader()?;
        let mut stmt = conn.prepare_cached("SELECT id FROM damaged_blobs")?;
        let rows = stmt.query_map([], |r| r.get::<_, Vec<u8>>(0))?;
        let mut out = std::collections::HashSet::new();
        for id in rows {
            if let Ok(id) = <[u8; 32]>::try_from(id?.as_slice()) {
                out.insert(ObjectId(id));
            }
        }
        Ok(out)
    }

    /// Records that blob `id` failed its check, so no save dedups against it.
    pub fn mark_damaged(&self, id: &ObjectId) -> Result<()> {
        self.conn().execute("INSERT OR IGNORE INTO damaged_blobs(id) VALUES (?1)", [&id.0[..]])?;
        Ok(())
    }

    /// Forgets the damage of blobs that were just written again.
    pub fn clear_damaged(&self, entries: &[PackEntry]) -> Result<()> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("DELETE FROM damaged_blobs WHERE id = ?1")?;
        for e in entries {
            stmt.execute([&e.id.0[..]])?;
        }
        Ok(())
    }

    /// Forgets every recorded damage (a repair dropped the blobs from the index).
    pub fn clear_all_damaged(&self) -> Result<()> {
        self.conn().execute("DELETE FROM damaged_blobs", [])?;
        Ok(())
    }

    /// Dates packs back past any grace period: a failed save's own packs, free for gc now.
    pub fn abandon_packs(&self, keys: &[String]) -> Result<()> {
        let conn = self.conn();
        for key in keys {
            conn.execute("UPDATE packs SET created_at = 0 WHERE key = ?1", [key])?;
        }
        Ok(())
    }
}

/// The entries `table` (rows of pack key, id, kind and place) lists for pack `key`. A row
/// that does not read as an entry (a damaged page) is skipped: each is checked against the
/// pack's bytes anyway.
fn entries_in(conn: &rusqlite::Connection, table: &str, key: &str) -> Result<Vec<PackEntry>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT id, kind, offset, length, raw_length, compressed, within FROM {table} WHERE pack_key = ?1"
    ))?;
    let rows = stmt.query_map([key], |r| {
        Ok((
            r.get::<_, Vec<u8>>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, i64>(4)?,
            r.get::<_, bool>(5)?,
            r.get::<_, Option<i64>>(6)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows.flatten() {
        let (id, kind, offset, length, raw_length, compressed, within) = row;
        let Ok(id) = <[u8; 32]>::try_from(id.as_slice()) else { continue };
        let (Ok(offset), Ok(length), Ok(raw_length)) =
            (u32::try_from(offset), u32::try_from(length), u32::try_from(raw_length))
        else {
            continue;
        };
        out.push(PackEntry {
            id: ObjectId(id),
            kind: crate::pack::BlobKind::from_i64(kind),
            offset,
            length,
            raw_length,
            compressed,
            within: within.and_then(|w| u32::try_from(w).ok()),
        });
    }
    Ok(out)
}
