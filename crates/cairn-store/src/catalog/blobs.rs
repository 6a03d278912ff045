//! The blob index and pack states.

use rusqlite::{OptionalExtension, params};

use super::{Catalog, Flush};
use crate::error::Result;
use crate::id::ObjectId;
use crate::pack::{BlobKind, PackEntry};

/// Where a blob's stored bytes are.
#[derive(Debug, Clone)]
pub struct BlobLocation {
    /// The key of the pack holding it.
    pub pack_key: String,
    /// Data or tree.
    pub kind: BlobKind,
    /// Where its stored bytes start in the pack: the blob's own, or its frame's.
    pub offset: u64,
    /// Stored length (compressed, when `compressed`); a frame's whole length for a member.
    pub length: u64,
    /// Plain length.
    pub raw_length: u32,
    /// Whether the stored bytes are zstd-compressed.
    pub compressed: bool,
    /// For a member of a shared frame (at `offset`, `length` long), where it starts in the
    /// frame's plain bytes.
    pub within: Option<u32>,
}

/// Gives a catalog made before shared frames their column: its blobs have none.
pub(super) fn migrate(conn: &rusqlite::Connection) -> Result<()> {
    let has: bool = conn.query_row(
        "SELECT COUNT(*) > 0 FROM pragma_table_info('blobs') WHERE name = 'within'",
        [],
        |r| r.get(0),
    )?;
    if !has {
        conn.execute_batch("ALTER TABLE blobs ADD COLUMN within INTEGER")?;
    }
    Ok(())
}

/// Where blob `id` is stored, as `conn` sees the index.
pub(super) fn locate(conn: &rusqlite::Connection, id: &ObjectId) -> Result<Option<BlobLocation>> {
    let mut stmt = conn.prepare_cached(
        "SELECT p.key, b.kind, b.offset, b.length, b.raw_length, b.compressed, b.within
         FROM blobs b JOIN packs p ON p.id = b.pack WHERE b.id = ?1",
    )?;
    Ok(stmt
        .query_row([&id.0[..]], |r| {
            Ok(BlobLocation {
                pack_key: r.get(0)?,
                kind: BlobKind::from_i64(r.get(1)?),
                offset: r.get(2)?,
                length: r.get(3)?,
                raw_length: r.get(4)?,
                compressed: r.get(5)?,
                within: r.get(6)?,
            })
        })
        .optional()?)
}

fn now_secs() -> i64 {
    jiff::Timestamp::now().as_second()
}

impl Catalog {
    /// Where blob `id` is stored, if the store holds it.
    pub fn blob_location(&self, id: &ObjectId) -> Result<Option<BlobLocation>> {
        locate(&*self.reader()?, id)
    }

    /// Those of `ids` the index does not hold, looked up in one read transaction.
    pub fn unindexed(
        &self,
        ids: &std::collections::HashSet<ObjectId>,
    ) -> Result<std::collections::HashSet<ObjectId>> {
        let conn = self.reader()?;
        let tx = conn.unchecked_transaction()?;
        let mut out = std::collections::HashSet::new();
        {
            let mut stmt = tx.prepare_cached("SELECT 1 FROM blobs WHERE id = ?1")?;
            for id in ids {
                if !stmt.exists([&id.0[..]])? {
                    out.insert(*id);
                }
            }
        }
        tx.commit()?;
        Ok(out)
    }

    /// Records that `key` is about to be written by this process (crash recovery finds it).
    pub fn begin_pack(&self, key: &str, flush: Flush) -> Result<()> {
        self.writing(flush, |conn| {
            conn.execute(
                "INSERT OR IGNORE INTO packs(key, state, pid, created_at) VALUES (?1, 'pending', ?2, ?3)",
                params![key, std::process::id(), now_secs()],
            )?;
            Ok(())
        })
    }

    /// Indexes a published pack's blobs and marks it ready, in one transaction. A blob the
    /// index already holds (another writer stored it too) keeps its first location.
    pub fn commit_pack(&self, key: &str, size: u64, entries: &[PackEntry], flush: Flush) -> Result<()> {
        self.writing(flush, |conn| index_pack(conn, key, size, entries, "DO NOTHING"))
    }

    /// Indexes several published packs and marks them ready, in one transaction: a first save
    /// that committed each of its packs alone rewrote most of the blob index's pages once per
    /// pack, as blob ids are random.
    pub fn commit_packs(&self, packs: &[(String, u64, Vec<PackEntry>)], flush: Flush) -> Result<()> {
        self.writing(flush, |conn| {
            let tx = conn.transaction()?;
            let packs: Vec<_> = packs.iter().map(|(k, size, e)| (k.as_str(), *size, &e[..])).collect();
            index_packs_in(&tx, &packs, "DO NOTHING")?;
            tx.commit()?;
            Ok(())
        })
    }

    /// Packs still marked pending, with the pid that was writing them.
    pub fn pending_packs(&self) -> Result<Vec<(String, u32)>> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT key, pid FROM packs WHERE state = 'pending'")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Forgets a pack and every blob it held.
    pub fn forget_pack(&self, key: &str) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute("DELETE FROM blobs WHERE pack = (SELECT id FROM packs WHERE key = ?1)", [key])?;
        tx.execute("DELETE FROM packs WHERE key = ?1", [key])?;
        tx.commit()?;
        Ok(())
    }

    /// The key of every pack the catalog knows, in any state.
    pub fn all_pack_keys(&self) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT key FROM packs")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every ready pack: key, size and creation time (seconds).
    pub fn ready_packs(&self) -> Result<Vec<(String, u64, i64)>> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached("SELECT key, size, created_at FROM packs WHERE state = 'ready'")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The size the index gives ready pack `key`; `None` for a pack it does not hold ready.
    pub fn ready_pack_size(&self, key: &str) -> Result<Option<u64>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT size FROM packs WHERE key = ?1 AND state = 'ready'")?;
        Ok(stmt.query_row([key], |r| r.get(0)).optional()?)
    }

    /// The blobs a pack holds.
    pub fn pack_blobs(&self, key: &str) -> Result<Vec<(ObjectId, BlobLocation)>> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT b.id, b.kind, b.offset, b.length, b.raw_length, b.compressed, b.within
             FROM blobs b JOIN packs p ON p.id = b.pack WHERE p.key = ?1",
        )?;
        let rows = stmt.query_map([key], |r| {
            let raw: Vec<u8> = r.get(0)?;
            let mut id = [0u8; 32];
            id.copy_from_slice(&raw[..32.min(raw.len())]);
            Ok((
                ObjectId(id),
                BlobLocation {
                    pack_key: key.to_owned(),
                    kind: BlobKind::from_i64(r.get(1)?),
                    offset: r.get(2)?,
                    length: r.get(3)?,
                    raw_length: r.get(4)?,
                    compressed: r.get(5)?,
                    within: r.get(6)?,
                },
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Moves blobs to a new pack (after gc repacked them), in one transaction.
    pub fn reassign_blobs(&self, new_key: &str, size: u64, entries: &[PackEntry]) -> Result<()> {
        index_pack(
            &mut self.conn(),
            new_key,
            size,
            entries,
            "DO UPDATE SET pack = excluded.pack, offset = excluded.offset, length = excluded.length,
                raw_length = excluded.raw_length, compressed = excluded.compressed, within = excluded.within",
        )
    }

    /// Total stored bytes of all ready packs.
    pub fn stored_bytes(&self) -> Result<u64> {
        let total: i64 = self.conn().query_row(
            "SELECT COALESCE(SUM(size), 0) FROM packs WHERE state = 'ready'",
            [],
            |r| r.get(0),
        )?;
        Ok(total as u64)
    }
}

/// Marks pack `key` ready with its `size` and indexes its blobs, in one transaction; a blob the
/// index holds already is resolved as `on_conflict` says.
fn index_pack(
    conn: &mut rusqlite::Connection,
    key: &str,
    size: u64,
    entries: &[PackEntry],
    on_conflict: &str,
) -> Result<()> {
    let tx = conn.transaction()?;
    index_packs_in(&tx, &[(key, size, entries)], on_conflict)?;
    tx.commit()?;
    Ok(())
}

/// Marks packs ready and indexes their blobs inside the caller's transaction, in id order: a
/// B-tree takes keys in order with each page written once and in cache.
fn index_packs_in(
    tx: &rusqlite::Transaction<'_>,
    packs: &[(&str, u64, &[PackEntry])],
    on_conflict: &str,
) -> Result<()> {
    let mut rows = Vec::with_capacity(packs.iter().map(|(_, _, e)| e.len()).sum());
    for (key, size, entries) in packs {
        let pack_id: i64 = tx.query_row(
            "UPDATE packs SET state = 'ready', size = ?2 WHERE key = ?1 RETURNING id",
            params![key, *size as i64],
            |r| r.get(0),
        )?;
        rows.extend(entries.iter().map(|e| (e, pack_id)));
    }
    // Stable: of two packs that hold one blob, the first stays its place under `DO NOTHING`.
    rows.sort_by_key(|(e, _)| e.id.0);
    let mut stmt = tx.prepare_cached(&format!(
        "INSERT INTO blobs(id, pack, kind, offset, length, raw_length, compressed, within)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT(id) {on_conflict}"
    ))?;
    for (e, pack_id) in rows {
        stmt.execute(params![
            &e.id.0[..],
            pack_id,
            e.kind as i64,
            e.offset,
            e.length,
            e.raw_length,
            e.compressed,
            e.within
        ])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_catalog_made_before_shared_frames_gains_the_column_and_keeps_its_blobs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.db");
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.execute_batch(
                "CREATE TABLE packs(id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, state TEXT NOT NULL,
                     pid INTEGER NOT NULL, size INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL);
                 CREATE TABLE blobs(id BLOB PRIMARY KEY, pack INTEGER NOT NULL, kind INTEGER NOT NULL,
                     offset INTEGER NOT NULL, length INTEGER NOT NULL, raw_length INTEGER NOT NULL,
                     compressed INTEGER NOT NULL) WITHOUT ROWID;
                 INSERT INTO packs VALUES (1, 'packs/aa/old.pack', 'ready', 1, 100, 0);",
            )
            .unwrap();
            let id = ObjectId::of(b"old");
            conn.execute("INSERT INTO blobs VALUES (?1, 1, 0, 10, 20, 30, 1)", [&id.0[..]]).unwrap();
        }
        let catalog = Catalog::open(&path).unwrap();
        let loc = catalog.blob_location(&ObjectId::of(b"old")).unwrap().unwrap();
        assert_eq!((loc.offset, loc.length, loc.raw_length, loc.within), (10, 20, 30, None));
        // Opening it again finds the column there.
        drop(catalog);
        Catalog::open(&path).unwrap();
    }
}
