//! Pairs of trees known to differ only in the mtimes of files and links, anywhere below them.
//! An in-place restore leaves such differences alone, so its plan can skip a pair it has
//! compared before without reading either tree. Ids are hashes of content, so a pair, once
//! found, stays true; the table is a cache, cleared when it grows past [`MAX_PAIRS`].

use rusqlite::{OptionalExtension, params};

use super::Catalog;
use crate::error::Result;
use crate::id::ObjectId;

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS alike_trees(
    live BLOB NOT NULL,
    want BLOB NOT NULL,
    PRIMARY KEY(live, want)
) WITHOUT ROWID;
";

/// Past this many pairs the table starts again empty: the pairs are a cache of what a plan
/// found, and any plan finds them again.
const MAX_PAIRS: i64 = 50_000;

impl Catalog {
    /// Whether tree `live` is known to differ from tree `want` only in mtimes.
    pub fn trees_alike(&self, live: &ObjectId, want: &ObjectId) -> Result<bool> {
        let reader = self.reader()?;
        let mut stmt = reader.prepare_cached("SELECT 1 FROM alike_trees WHERE live = ?1 AND want = ?2")?;
        Ok(stmt.query_row(params![&live.0[..], &want.0[..]], |_| Ok(())).optional()?.is_some())
    }
}

/// Records `pairs` (as [`Catalog::trees_alike`] reads them) in the transaction `tx`.
pub(super) fn note_alike_in(tx: &rusqlite::Transaction<'_>, pairs: &[(ObjectId, ObjectId)]) -> Result<()> {
    if pairs.is_empty() {
        return Ok(());
    }
    let held: i64 = tx.query_row("SELECT count(*) FROM alike_trees", [], |r| r.get(0))?;
    if held + pairs.len() as i64 > MAX_PAIRS {
        tx.execute("DELETE FROM alike_trees", [])?;
    }
    let mut insert = tx.prepare_cached("INSERT OR IGNORE INTO alike_trees(live, want) VALUES (?1, ?2)")?;
    for (live, want) in pairs {
        insert.execute(params![&live.0[..], &want.0[..]])?;
    }
    Ok(())
}
