//! What gc may not delete: every object reachable from a snapshot the catalog holds, from a
//! stat cache, or from a record object the catalog lacks and no removal explains.
//!
//! gc deletes only what it can prove unreferenced from records it has read. A record object
//! whose snapshot the catalog does not hold is one of two things. Either the catalog removed
//! it: a catalog records the key of every record it ever committed or applied (`synced`), in
//! the transaction that commits it, so a key it holds for a snapshot it no longer has is a
//! removal it committed; and it notes the key of every record a save of its own begins to
//! write (`records_begun`), so one it holds without a snapshot is a save killed before its
//! commit. Or the catalog lost track of it (deleted, emptied, restored from an
//! older copy): then it is an orphan, kept, reported, and its roots count as live. The walk
//! is complete only when every object it reached is indexed or held whole by no pack file: an
//! object the index lacks but a pack holds (its header lists it and its bytes pass their hash
//! check) is index damage, below which nothing could be walked, so gc deletes no pack until
//! `cairn repair` has indexed it. One that no pack holds whole is known lost (a repair dropped
//! it as damaged). A pack file the catalog does not know whose header does not read might hold
//! anything, so it too stops gc, unless orphans are pruned.

use std::collections::HashSet;

use crate::Repository;
use crate::error::Result;
use crate::id::ObjectId;
use crate::targets::dir::statcache::StatCache;

/// What a mark found.
#[derive(Debug, Default)]
pub(crate) struct Live {
    /// Every object reachable from what is kept.
    pub objects: HashSet<ObjectId>,
    /// Record objects the catalog lacks and no removal explains: kept unless pruned.
    pub orphan_records: Vec<String>,
    /// Record objects of snapshots the catalog removed: no catalog needs them again.
    pub removed_records: Vec<String>,
    /// Why the walk cannot vouch for being complete (one sentence); `None` when it can.
    pub incomplete: Option<String>,
}

/// The snapshot id a record key names.
pub(crate) fn record_id(key: &str) -> &str {
    key.trim_start_matches("records/").trim_end_matches(".json")
}

/// The kind and root a record object holds, as `(kind, root)`; an error says why it does not
/// read (in an encrypted store the backend opens it first).
pub(crate) fn read_record(
    store: &Repository,
    key: &str,
) -> std::result::Result<(String, Option<ObjectId>), String> {
    let bytes = store.backend().get(key).map_err(|e| format!("record {key} does not read ({e})"))?;
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("record {key} does not decode ({e})"))?;
    let kind = value["kind"].as_str().ok_or_else(|| format!("record {key} names no kind"))?.to_owned();
    let root = match &value["root"] {
        serde_json::Value::Null => None,
        serde_json::Value::String(hex) => Some(
            ObjectId::from_hex(hex)
                .map_err(|_| format!("record {key} holds a root that is not an object id"))?,
        ),
        _ => return Err(format!("record {key} holds a root that is not an object id")),
    };
    Ok((kind, root))
}

impl Repository {
    /// Marks what gc must keep. With `prune_orphans`, records the catalog lacks are not walked:
    /// the caller deletes them.
    pub(crate) fn live(&self, prune_orphans: bool) -> Result<Live> {
        let mut live = Live::default();
        for (kind, root) in self.catalog().all_roots_with_kind()? {
            crate::targets::referenced_objects(self, &kind, &root, &mut live.objects)?;
        }
        self.catalog()
            .for_each_stat_cache_files(|blob| live.objects.extend(StatCache::decode_content_ids(blob)))?;
        self.catalog()
            .for_each_stat_cache_meta(|blob| live.objects.extend(StatCache::decode_tree_ids(blob)))?;
        let known: HashSet<String> = self.catalog().all_snapshot_ids()?.into_iter().collect();
        let mut unread = Vec::new();
        for key in self.backend().list("records/")? {
            if known.contains(record_id(&key)) {
                continue;
            }
            // Removed by this catalog, or written by a save killed before its commit (a power
            // cut's lost commits are back by now: `power_cut.rs`).
            if self.catalog().seen(&key)? || self.catalog().record_begun(&key)? {
                live.removed_records.push(key);
                continue;
            }
            if !prune_orphans {
                match read_record(self, &key) {
                    Ok((kind, Some(root))) => {
                        if let Err(e) =
                            crate::targets::referenced_objects(self, &kind, &root, &mut live.objects)
                        {
                            unread.push(format!("{key} ({e})"));
                        }
                    }
                    Ok((_, None)) => {}
                    Err(why) => unread.push(why),
                }
            }
            live.orphan_records.push(key);
        }
        if let Some(first) = unread.first() {
            live.incomplete = Some(format!(
                "{} record(s) the catalog lacks could not be walked (first: {first}); repair the store first",
                unread.len()
            ));
            return Ok(live);
        }
        let missing = self.catalog().unindexed(&live.objects)?;
        if !missing.is_empty() {
            live.incomplete = self.packs_hold_any(&missing, prune_orphans)?;
        }
        Ok(live)
    }

    /// Why the objects in `missing` (reachable, not indexed) may not be lost: a pack file's
    /// header lists one whose bytes pass their hash check, or (unless orphans are pruned) a
    /// pack file the catalog does not know has a header that does not read. `None` when no
    /// pack file can hold any whole: they are known lost (a repair dropped them as damaged).
    fn packs_hold_any(&self, missing: &HashSet<ObjectId>, prune_orphans: bool) -> Result<Option<String>> {
        let known: HashSet<String> = self.catalog().all_pack_keys()?.into_iter().collect();
        let mut listed = 0usize;
        let mut unreadable = Vec::new();
        for (key, size) in self.backend().list_sizes("packs/")? {
            match crate::store::pack::read_header_ranged(self.backend(), &key, size, self.sealing()) {
                Ok(entries) => {
                    let wanted: Vec<_> = entries.into_iter().filter(|e| missing.contains(&e.id)).collect();
                    if !wanted.is_empty() {
                        let bytes = self.backend().get(&key)?;
                        listed += crate::store::pack::sort_sound(&bytes, wanted, self.sealing()).0.len();
                    }
                }
                Err(_) if !known.contains(&key) && !prune_orphans => unreadable.push(key),
                Err(_) => {}
            }
        }
        if listed > 0 {
            return Ok(Some(format!(
                "{listed} object(s) snapshots refer to are whole in pack files but not in the index; repair the store first"
            )));
        }
        Ok(unreadable.first().map(|first| {
            format!(
                "{} object(s) snapshots refer to are not in the index, and pack file {first} the catalog does not know has a damaged header; repair the store first",
                missing.len()
            )
        }))
    }
}
