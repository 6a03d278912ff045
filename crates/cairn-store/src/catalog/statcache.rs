//! The stat caches' tables: one header row per target (`stat_caches`: where its last capture
//! stood in the watcher's journal) and one row per captured directory (`stat_cache_dirs`: the
//! directory's summary and its files' stamps), so a save reads and writes only the directories
//! it looks at. A large directory's files are kept in parts (`stat_cache_parts`, keyed by the
//! directory and the part's first name), its row holding their index, so a save that looks at
//! a few of its files rewrites only their parts. The rows are opaque here;
//! `targets/dir/statcache.rs` encodes and checks them.
//!
//! Directory keys are the raw bytes of the path relative to the target's root (`""` for the
//! root), compared as bytes, so everything below `a/b` is the key range `[a/b/, a/b0)`.

use rusqlite::{OptionalExtension, params};

use super::{Catalog, Flush};
use crate::error::Result;
use crate::id::ObjectId;

/// The directory rows' table; the header table is in the main schema.
pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS stat_cache_dirs(
    target TEXT NOT NULL,
    dir BLOB NOT NULL,
    meta BLOB NOT NULL,
    files BLOB NOT NULL,
    PRIMARY KEY(target, dir)
);
CREATE TABLE IF NOT EXISTS stat_cache_parts(
    target TEXT NOT NULL,
    dir BLOB NOT NULL,
    part BLOB NOT NULL,
    files BLOB NOT NULL,
    PRIMARY KEY(target, dir, part)
);
";

/// One directory row to write.
pub enum RowWrite {
    /// Its summary and its files.
    Full {
        /// The encoded summary (the `meta` column).
        meta: Vec<u8>,
        /// The encoded files (the `files` column).
        files: Vec<u8>,
    },
    /// Its summary only: its files are as stored.
    Meta(Vec<u8>),
    /// Its summary, and its files' index (the `files` column) with the parts that change: parts
    /// put by key, parts dropped by key, or, with `replace`, every other part dropped.
    Parts {
        /// The encoded summary (the `meta` column).
        meta: Vec<u8>,
        /// The files' index (the `files` column).
        index: Vec<u8>,
        /// Parts to write, as (key, files).
        put: Vec<(Vec<u8>, Vec<u8>)>,
        /// Keys of parts to drop.
        drop: Vec<Vec<u8>>,
        /// Drop all the directory's stored parts before writing `put`.
        replace: bool,
    },
}

/// Changes to one target's stat cache, applied in one transaction.
#[derive(Default)]
pub struct StatCacheWrite {
    /// The new header, when it changes.
    pub header: Option<Vec<u8>>,
    /// Drop every directory row first.
    pub replace_all: bool,
    /// Rows at or below these directories are dropped.
    pub drop_at_or_below: Vec<Vec<u8>>,
    /// Rows strictly below the directory, other than at or below one of its listed children,
    /// are dropped (a directory whose old children were not known).
    pub drop_below_except: Vec<(Vec<u8>, Vec<Vec<u8>>)>,
    /// Directory rows to write, by directory.
    pub rows: Vec<(Vec<u8>, RowWrite)>,
    /// Pairs of trees a restore's plan found alike but for mtimes (`alike.rs`), recorded with
    /// the rows.
    pub alike: Vec<(ObjectId, ObjectId)>,
}

impl StatCacheWrite {
    /// True when it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.header.is_none()
            && !self.replace_all
            && self.drop_at_or_below.is_empty()
            && self.drop_below_except.is_empty()
            && self.rows.is_empty()
            && self.alike.is_empty()
    }
}

/// Keys at or below directory `?2`, with `?3` and `?4` the bounds [`below`] gives. The range
/// `[dir, dir0)` is what the index searches; written as `dir = ?2 OR dir >= ?3`, the query
/// read every row of the target, and an amendment dropping 20 paths took 4 ms.
const AT_OR_BELOW: &str = "dir >= ?2 AND dir < ?4 AND (dir = ?2 OR dir >= ?3)";

/// The key range strictly below directory `dir`: `[dir/, dir0)` (`'0'` follows `'/'`).
fn below(dir: &[u8]) -> (Vec<u8>, Vec<u8>) {
    if dir.is_empty() {
        // Every key but the root's own: all are at least one byte long.
        return (vec![0], vec![0xff; 4097]);
    }
    ([dir, b"/"].concat(), [dir, b"0"].concat())
}

/// A target's directory rows as stored: by directory, its `meta` and `files` columns.
pub type StoredDirRows = std::collections::HashMap<Vec<u8>, (Vec<u8>, Vec<u8>)>;

impl Catalog {
    /// Reads a target's stat cache header.
    pub fn stat_cache(&self, target: &str) -> Result<Option<Vec<u8>>> {
        let reader = self.reader()?;
        let mut stmt = reader.prepare_cached("SELECT data FROM stat_caches WHERE target = ?1")?;
        Ok(stmt.query_row([target], |r| r.get(0)).optional()?)
    }

    /// The `meta` column of a directory row.
    pub fn stat_cache_meta(&self, target: &str, dir: &[u8]) -> Result<Option<Vec<u8>>> {
        let reader = self.reader()?;
        let mut stmt =
            reader.prepare_cached("SELECT meta FROM stat_cache_dirs WHERE target = ?1 AND dir = ?2")?;
        Ok(stmt.query_row(params![target, dir], |r| r.get(0)).optional()?)
    }

    /// Every directory row of `target` by directory, in one read, when there are at most
    /// `limit`; `None` when there are more.
    pub fn stat_cache_rows(&self, target: &str, limit: usize) -> Result<Option<StoredDirRows>> {
        let reader = self.reader()?;
        let mut stmt =
            reader.prepare_cached("SELECT dir, meta, files FROM stat_cache_dirs WHERE target = ?1")?;
        let mut rows = stmt.query([target])?;
        let mut out = StoredDirRows::new();
        while let Some(row) = rows.next()? {
            if out.len() == limit {
                return Ok(None);
            }
            out.insert(row.get(0)?, (row.get(1)?, row.get(2)?));
        }
        Ok(Some(out))
    }

    /// Both columns (`meta`, `files`) of a directory row.
    pub fn stat_cache_row(&self, target: &str, dir: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let reader = self.reader()?;
        let mut stmt = reader
            .prepare_cached("SELECT meta, files FROM stat_cache_dirs WHERE target = ?1 AND dir = ?2")?;
        Ok(stmt.query_row(params![target, dir], |r| Ok((r.get(0)?, r.get(1)?))).optional()?)
    }

    /// The parts of directory `dir`'s files, by key.
    pub fn stat_cache_parts(&self, target: &str, dir: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let reader = self.reader()?;
        let mut stmt = reader.prepare_cached(
            "SELECT part, files FROM stat_cache_parts WHERE target = ?1 AND dir = ?2 ORDER BY part",
        )?;
        let rows = stmt.query_map(params![target, dir], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One part of directory `dir`'s files.
    pub fn stat_cache_part(&self, target: &str, dir: &[u8], part: &[u8]) -> Result<Option<Vec<u8>>> {
        let reader = self.reader()?;
        let mut stmt = reader.prepare_cached(
            "SELECT files FROM stat_cache_parts WHERE target = ?1 AND dir = ?2 AND part = ?3",
        )?;
        Ok(stmt.query_row(params![target, dir, part], |r| r.get(0)).optional()?)
    }

    /// The files column of every row at or below `dir`.
    pub fn stat_cache_files_at_or_below(&self, target: &str, dir: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let (lo, hi) = below(dir);
        let reader = self.reader()?;
        let mut stmt = reader.prepare_cached(&format!(
            "SELECT dir, files FROM stat_cache_dirs WHERE target = ?1 AND {AT_OR_BELOW}"
        ))?;
        let rows = stmt.query_map(params![target, dir, lo, hi], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Applies `write` to the stat cache of `target`, all or nothing.
    ///
    /// Flushed with the next commit: a stat cache is a cache, and a power cut that takes this
    /// commit back leaves the rows an earlier commit wrote, whose stamps are still true.
    pub fn write_stat_cache(&self, target: &str, write: &StatCacheWrite) -> Result<()> {
        if write.is_empty() {
            return Ok(());
        }
        self.writing(Flush::WithNext, |conn| {
            let tx = conn.transaction()?;
            write_stat_cache_in(&tx, target, write)?;
            tx.commit()?;
            Ok(())
        })
    }

    /// Drops a target's stat cache (its next save reads every file).
    pub fn drop_stat_cache(&self, target: &str) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute("DELETE FROM stat_caches WHERE target = ?1", [target])?;
        tx.execute("DELETE FROM stat_cache_dirs WHERE target = ?1", [target])?;
        tx.execute("DELETE FROM stat_cache_parts WHERE target = ?1", [target])?;
        tx.commit()?;
        Ok(())
    }

    /// Every target that has a stat cache (its header or any row).
    pub fn stat_cache_targets(&self) -> Result<Vec<String>> {
        let reader = self.reader()?;
        let mut stmt = reader.prepare(
            "SELECT target FROM stat_caches UNION SELECT target FROM stat_cache_dirs
             UNION SELECT target FROM stat_cache_parts",
        )?;
        let targets = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        Ok(targets)
    }

    /// Drops every stat cache.
    pub fn drop_all_stat_caches(&self) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute("DELETE FROM stat_caches", [])?;
        tx.execute("DELETE FROM stat_cache_dirs", [])?;
        tx.execute("DELETE FROM stat_cache_parts", [])?;
        tx.commit()?;
        Ok(())
    }

    /// Calls `each` with the files column of every directory row and every part of every stat
    /// cache, for gc (the blobs they name stay alive), one at a time.
    pub fn for_each_stat_cache_files(&self, each: impl FnMut(&[u8])) -> Result<()> {
        self.for_each_blob(
            "SELECT files FROM stat_cache_dirs UNION ALL SELECT files FROM stat_cache_parts",
            each,
        )
    }

    /// Calls `each` with the meta column of every directory row of every stat cache, for gc
    /// (the trees they name stay alive), one at a time.
    pub fn for_each_stat_cache_meta(&self, each: impl FnMut(&[u8])) -> Result<()> {
        self.for_each_blob("SELECT meta FROM stat_cache_dirs", each)
    }

    fn for_each_blob(&self, query: &str, mut each: impl FnMut(&[u8])) -> Result<()> {
        let reader = self.reader()?;
        let mut stmt = reader.prepare(query)?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            each(row.get_ref(0)?.as_blob().unwrap_or_default());
        }
        Ok(())
    }
}

/// Applies `write` to the stat cache of `target` inside transaction `tx` (a snapshot's commit
/// carries the rows its capture changed, so a save commits once).
pub fn write_stat_cache_in(
    tx: &rusqlite::Transaction<'_>,
    target: &str,
    write: &StatCacheWrite,
) -> Result<()> {
    if write.replace_all {
        tx.execute("DELETE FROM stat_cache_dirs WHERE target = ?1", [target])?;
        tx.execute("DELETE FROM stat_cache_parts WHERE target = ?1", [target])?;
    }
    for dir in &write.drop_at_or_below {
        let (lo, hi) = below(dir);
        for table in ["stat_cache_dirs", "stat_cache_parts"] {
            tx.prepare_cached(&format!("DELETE FROM {table} WHERE target = ?1 AND {AT_OR_BELOW}"))?
                .execute(params![target, dir, lo, hi])?;
        }
    }
    for (dir, keep) in &write.drop_below_except {
        let (lo, hi) = below(dir);
        let keys: Vec<Vec<u8>> = tx
            .prepare_cached("SELECT dir FROM stat_cache_dirs WHERE target = ?1 AND dir >= ?2 AND dir < ?3")?
            .query_map(params![target, lo, hi], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let prefix_len = if dir.is_empty() { 0 } else { dir.len() + 1 };
        for key in keys {
            let rest = &key[prefix_len.min(key.len())..];
            let child = rest.split(|b| *b == b'/').next().unwrap_or(rest);
            if !keep.iter().any(|k| k.as_slice() == child) {
                tx.prepare_cached("DELETE FROM stat_cache_dirs WHERE target = ?1 AND dir = ?2")?
                    .execute(params![target, key])?;
                drop_parts(tx, target, &key)?;
            }
        }
    }
    for (dir, row) in &write.rows {
        let upsert = |meta: &[u8], files: &[u8]| -> Result<()> {
            tx.prepare_cached(
                "INSERT INTO stat_cache_dirs(target, dir, meta, files) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(target, dir) DO UPDATE SET meta = excluded.meta, files = excluded.files",
            )?
            .execute(params![target, dir, meta, files])?;
            Ok(())
        };
        match row {
            RowWrite::Full { meta, files } => {
                upsert(meta, files)?;
                if !write.replace_all {
                    drop_parts(tx, target, dir)?;
                }
            }
            RowWrite::Meta(meta) => {
                tx.prepare_cached("UPDATE stat_cache_dirs SET meta = ?3 WHERE target = ?1 AND dir = ?2")?
                    .execute(params![target, dir, meta])?;
            }
            RowWrite::Parts { meta, index, put, drop, replace } => {
                upsert(meta, index)?;
                if *replace && !write.replace_all {
                    drop_parts(tx, target, dir)?;
                }
                for part in drop {
                    tx.prepare_cached(
                        "DELETE FROM stat_cache_parts WHERE target = ?1 AND dir = ?2 AND part = ?3",
                    )?
                    .execute(params![target, dir, part])?;
                }
                for (part, files) in put {
                    tx.prepare_cached(
                        "INSERT INTO stat_cache_parts(target, dir, part, files) VALUES (?1, ?2, ?3, ?4)
                         ON CONFLICT(target, dir, part) DO UPDATE SET files = excluded.files",
                    )?
                    .execute(params![target, dir, part, files])?;
                }
            }
        }
    }
    if let Some(header) = &write.header {
        tx.execute(
            "INSERT INTO stat_caches(target, data) VALUES (?1, ?2)
             ON CONFLICT(target) DO UPDATE SET data = excluded.data",
            params![target, header],
        )?;
    }
    super::alike::note_alike_in(tx, &write.alike)
}

/// Drops every part of directory `dir`'s files.
fn drop_parts(tx: &rusqlite::Transaction<'_>, target: &str, dir: &[u8]) -> Result<()> {
    tx.prepare_cached("DELETE FROM stat_cache_parts WHERE target = ?1 AND dir = ?2")?
        .execute(params![target, dir])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(catalog: &Catalog) -> Vec<String> {
        let conn = catalog.conn();
        let mut stmt =
            conn.prepare("SELECT dir FROM stat_cache_dirs WHERE target = 't' ORDER BY dir").unwrap();
        let rows = stmt.query_map([], |r| r.get::<_, Vec<u8>>(0)).unwrap();
        rows.map(|k| String::from_utf8(k.unwrap()).unwrap()).collect()
    }

    fn with_rows(dirs: &[&str]) -> (tempfile::TempDir, Catalog) {
        let tmp = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(&tmp.path().join("catalog.db")).unwrap();
        let rows = dirs
            .iter()
            .map(|d| (d.as_bytes().to_vec(), RowWrite::Full { meta: vec![1], files: vec![2] }))
            .collect();
        catalog.write_stat_cache("t", &StatCacheWrite { rows, ..StatCacheWrite::default() }).unwrap();
        catalog
            .write_stat_cache(
                "other",
                &StatCacheWrite {
                    rows: vec![(b"a".to_vec(), RowWrite::Full { meta: vec![1], files: vec![2] })],
                    ..StatCacheWrite::default()
                },
            )
            .unwrap();
        (tmp, catalog)
    }

    const TREE: [&str; 7] = ["", "a", "a/b", "a/b/c", "a-z", "ab", "c/d"];

    #[test]
    fn a_stat_cache_write_leaves_the_connection_syncing_every_commit() {
        let synchronous = |catalog: &Catalog| {
            catalog.conn().pragma_query_value(None, "synchronous", |r| r.get::<_, i64>(0)).unwrap()
        };
        let (_tmp, catalog) = with_rows(&["", "a"]);
        // 2 is FULL: a snapshot's commit after the cache's own must still reach the disk.
        assert_eq!(synchronous(&catalog), 2);
        // A write that fails half way restores it too.
        let bad = StatCacheWrite {
            rows: vec![(b"b".to_vec(), RowWrite::Full { meta: vec![1], files: vec![2] })],
            ..StatCacheWrite::default()
        };
        catalog.conn().execute_batch("DROP TABLE stat_cache_parts").unwrap();
        assert!(catalog.write_stat_cache("t", &StatCacheWrite { replace_all: true, ..bad }).is_err());
        assert_eq!(synchronous(&catalog), 2);
        assert_eq!(keys(&catalog), ["", "a"], "the failed write changed nothing");
    }

    #[test]
    fn a_dropped_directory_takes_its_subtree_and_not_its_siblings_that_share_its_prefix() {
        let (_tmp, catalog) = with_rows(&TREE);
        let write = StatCacheWrite { drop_at_or_below: vec![b"a".to_vec()], ..StatCacheWrite::default() };
        catalog.write_stat_cache("t", &write).unwrap();
        assert_eq!(keys(&catalog), ["", "a-z", "ab", "c/d"]);
        assert_eq!(catalog.stat_cache_files_at_or_below("other", b"").unwrap().len(), 1, "another target");
    }

    #[test]
    fn rows_below_a_directory_of_unknown_children_go_unless_under_a_present_one() {
        let (_tmp, catalog) = with_rows(&TREE);
        let write = StatCacheWrite {
            drop_below_except: vec![(b"".to_vec(), vec![b"a".to_vec()])],
            ..StatCacheWrite::default()
        };
        catalog.write_stat_cache("t", &write).unwrap();
        assert_eq!(keys(&catalog), ["", "a", "a/b", "a/b/c"]);
        let below: Vec<Vec<u8>> =
            catalog.stat_cache_files_at_or_below("t", b"a/b").unwrap().into_iter().map(|(k, _)| k).collect();
        assert_eq!(below, [b"a/b".to_vec(), b"a/b/c".to_vec()]);
    }

    fn parts(catalog: &Catalog, dir: &str) -> Vec<String> {
        let parts = catalog.stat_cache_parts("t", dir.as_bytes()).unwrap();
        parts.into_iter().map(|(k, _)| String::from_utf8(k).unwrap()).collect()
    }

    fn parts_row(put: &[&str], drop: &[&str], replace: bool) -> RowWrite {
        RowWrite::Parts {
            meta: vec![1],
            index: vec![3],
            put: put.iter().map(|k| (k.as_bytes().to_vec(), vec![4])).collect(),
            drop: drop.iter().map(|k| k.as_bytes().to_vec()).collect(),
            replace,
        }
    }

    #[test]
    fn a_directory_s_parts_change_by_key_and_go_with_its_row() {
        let (_tmp, catalog) = with_rows(&TREE);
        let write = |rows: Vec<(&str, RowWrite)>| {
            let rows = rows.into_iter().map(|(d, r)| (d.as_bytes().to_vec(), r)).collect();
            catalog.write_stat_cache("t", &StatCacheWrite { rows, ..StatCacheWrite::default() }).unwrap();
        };
        write(vec![("a/b", parts_row(&["", "m", "t"], &[], true)), ("ab", parts_row(&["", "k"], &[], true))]);
        assert_eq!(parts(&catalog, "a/b"), ["", "m", "t"]);
        write(vec![("a/b", parts_row(&["p"], &["t"], false))]);
        assert_eq!(parts(&catalog, "a/b"), ["", "m", "p"]);
        assert_eq!(catalog.stat_cache_part("t", b"a/b", b"p").unwrap(), Some(vec![4]));
        write(vec![("a/b", parts_row(&["x"], &[], true))]);
        assert_eq!(parts(&catalog, "a/b"), ["x"], "replaced");
        let mut live = 0;
        catalog.for_each_stat_cache_files(|_| live += 1).unwrap();
        assert_eq!(live, TREE.len() + 1 + 1 + 2, "rows of both targets, and every part");

        // A directory written whole again keeps no parts; a dropped one takes its parts along.
        write(vec![("ab", RowWrite::Full { meta: vec![1], files: vec![2] })]);
        assert!(parts(&catalog, "ab").is_empty());
        let drop = StatCacheWrite { drop_at_or_below: vec![b"a".to_vec()], ..StatCacheWrite::default() };
        catalog.write_stat_cache("t", &drop).unwrap();
        assert!(parts(&catalog, "a/b").is_empty());
    }
}
