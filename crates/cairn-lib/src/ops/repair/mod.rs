//! `cairn repair`: rebuild what the catalog says from the objects, so a damaged store can be
//! used again, and say which snapshots lost what. A repair only adds: it never deletes an
//! object and never marks one for deletion.
//!
//! Pipeline: open the store as it is (`open.rs`: a damaged catalog or `config.toml` is put
//! aside, a lost `FORMAT` written again when the objects prove a store) → take the store alone
//! → keep a copy of the blob index, then rebuild it pack by pack: from the header where it
//! verifies, else blob by blob (`store/pack_recover.rs`: the header found by a search, the
//! kept index, a damaged catalog put aside, zstd frames), keeping only blobs whose bytes pass
//! their hash check → add every snapshot record (and event, and moment) the catalog lacks,
//! listing those that do not read (`records.rs`) → look again in packs without a header for
//! the raw blobs those snapshots want → drop every stat cache (none is vouched for)
//! → walk every snapshot and list what it refers to that the store no longer holds
//! (`lost.rs`). Like `restic repair index` followed by `repair snapshots`, except that a
//! damaged snapshot is kept as it is (what it still holds restores) and listed with what it
//! lost.

mod lost;
mod open;
mod power_cut;
mod records;

use std::path::PathBuf;

use serde::Serialize;

use crate::Repository;
use crate::error::Result;
use crate::store::pack_recover::{self, Source};

pub use open::RepairStart;

/// What `repair` did.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct RepairResult {
    /// Where the damaged catalog was put aside, when it had to be rebuilt from the objects.
    pub catalog_set_aside: Option<String>,
    /// Where a `config.toml` that did not load was put aside (the store now uses defaults).
    pub config_set_aside: Option<String>,
    /// Whether the store's `FORMAT` file was missing or garbled and was written again: its
    /// packs and records proved it a store.
    pub format_rewritten: bool,
    /// Whether an encrypted store directory's marker (`cairn-store.json`) was missing and was
    /// written again: its key objects proved it a store, and the secret opened one. The store
    /// has a new id, so its catalog cache was made anew.
    pub marker_rewritten: bool,
    /// Packs indexed.
    pub packs_indexed: u64,
    /// Blobs indexed (their bytes passed the hash check).
    pub blobs_indexed: u64,
    /// Packs whose header or trailer does not verify, and what was recovered from them.
    pub packs_recovered: Vec<RecoveredPack>,
    /// Packs from which nothing could be recovered. They are kept as they are, not indexed;
    /// the snapshots that needed them are listed in `damaged_snapshots`.
    pub packs_damaged: Vec<String>,
    /// Blobs whose bytes fail their hash check, left out of the index so the next save of
    /// the same content writes them again.
    pub blobs_dropped: Vec<String>,
    /// Snapshot records added to the catalog from the objects.
    pub snapshots_recovered: u64,
    /// Records whose snapshot the catalog held wrongly (its row damaged in place, or in no
    /// session): the catalog now says what the record says.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub snapshots_corrected: Vec<String>,
    /// Record and event objects that do not read (damaged): left as they are, not applied.
    pub records_damaged: Vec<DamagedRecord>,
    /// Snapshots that refer to data the store no longer holds, with what they lost.
    pub damaged_snapshots: Vec<DamagedSnapshot>,
}

/// A pack whose header or trailer does not verify, recovered blob by blob.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RecoveredPack {
    /// The pack's key.
    pub key: String,
    /// How its blobs were found.
    pub recovery: Recovery,
    /// Blobs recovered and indexed.
    pub blobs: u64,
    /// True when its header was found and every blob it lists verified.
    pub whole: bool,
}

/// How a damaged pack's blobs were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// Its header, found by a search and proven by the pack's name (only the trailer was
    /// damaged).
    Header,
    /// The blob index a catalog had, and the zstd frames in the pack: what verified.
    Blobs,
    /// A whole copy in this machine's pack cache, its header proven by the pack's name and
    /// every blob verified: put back into the store as it was.
    Cache,
}

/// A record or event object that does not read.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DamagedRecord {
    /// The object's key.
    pub key: String,
    /// What is wrong with it.
    pub problem: String,
}

/// A snapshot that lost data.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DamagedSnapshot {
    /// The snapshot id.
    pub id: String,
    /// Its target.
    pub target: String,
    /// The paths whose content (or, for a directory, whose listing) is lost; `/` when the
    /// whole snapshot is.
    pub lost: Vec<String>,
}

impl Repository {
    /// Repairs the store (see the module documentation). `start` is what
    /// [`Repository::open_to_repair`] or [`Repository::open_address_to_repair`] did to open it.
    pub fn repair(&self, start: &RepairStart) -> Result<RepairResult> {
        let _lock = self.lock_store_exclusive("a repair")?;
        let mut result = RepairResult {
            catalog_set_aside: start.catalog_set_aside.as_ref().map(|p| p.display().to_string()),
            config_set_aside: start.config_set_aside.as_ref().map(|p| p.display().to_string()),
            format_rewritten: start.format_rewritten,
            marker_rewritten: start.marker_rewritten,
            ..Default::default()
        };
        self.catalog().keep_old_blob_index()?;
        let indexed = self.index_packs(start.catalog_set_aside.as_ref(), &mut result);
        self.catalog().drop_old_blob_index()?;
        indexed?;
        self.add_records(&mut result)?;
        self.search_headerless_packs(&mut result)?;
        self.catalog().drop_all_stat_caches()?;
        self.catalog().clear_all_damaged()?;
        result.damaged_snapshots = self.damaged_snapshots()?;
        result.packs_damaged.sort();
        result.blobs_dropped.sort();
        Ok(result)
    }

    /// Rebuilds the blob index from every pack, recovering damaged ones blob by blob.
    fn index_packs(&self, set_aside: Option<&PathBuf>, result: &mut RepairResult) -> Result<()> {
        self.catalog().reset_blob_index()?;
        for key in self.backend().list("packs/")? {
            if !key.ends_with(".pack") {
                continue;
            }
            // A pack that cannot be read at all (a network or disk error) stops the repair, to be
            // run again: taken for damage, it would be left out of a shared store's catch-up.
            let bytes = self.backend().get(&key)?;
            // What catalogs said the pack holds: asked only when its header does not verify.
            let known = || {
                let mut known = self.catalog().old_pack_entries(&key).unwrap_or_default();
                if let Some(path) = set_aside {
                    known.extend(crate::store::catalog::Catalog::entries_in_file(path, &key));
                }
                known
            };
            let mut recovered = match crate::store::pack::verify_header(&key, &bytes, self.sealing()) {
                Ok(entries) => {
                    let (sound, damaged) = crate::store::pack::sort_sound(&bytes, entries, self.sealing());
                    pack_recover::Recovered { sound, damaged, source: Source::Header }
                }
                Err(_) => pack_recover::recover(&key, &bytes, self.sealing(), known()),
            };
            let (mut from_cache, mut size) = (false, bytes.len() as u64);
            let damaged = recovered.source != Source::Header || !recovered.damaged.is_empty();
            if damaged && let Some((cached, sound)) = self.whole_copy_in_cache(&key)? {
                // This machine read the pack whole before it was damaged: the store gets that
                // copy back, and every snapshot that needs it restores on any machine again.
                self.backend().delete(&key)?;
                self.backend().put_if_absent(&key, &cached)?;
                recovered = pack_recover::Recovered { sound, damaged: Vec::new(), source: Source::Header };
                (from_cache, size) = (true, cached.len() as u64);
            }
            result.blobs_dropped.extend(recovered.damaged.iter().map(|e| e.id.to_string()));
            if from_cache {
                result.packs_recovered.push(RecoveredPack {
                    key: key.clone(),
                    recovery: Recovery::Cache,
                    blobs: recovered.sound.len() as u64,
                    whole: recovered.damaged.is_empty(),
                });
            } else if recovered.source != Source::Header {
                if recovered.sound.is_empty() {
                    // Kept as it is: a later repair, or a better tool, may still read it.
                    self.keep_damaged_pack(&key, bytes.len() as u64)?;
                    result.packs_damaged.push(key);
                    continue;
                }
                result.packs_recovered.push(RecoveredPack {
                    key: key.clone(),
                    recovery: if recovered.source == Source::FoundHeader {
                        Recovery::Header
                    } else {
                        Recovery::Blobs
                    },
                    blobs: recovered.sound.len() as u64,
                    whole: recovered.source == Source::FoundHeader && recovered.damaged.is_empty(),
                });
            }
            result.blobs_indexed += recovered.sound.len() as u64;
            result.packs_indexed += 1;
            self.catalog().index_found_pack(&key, size, &recovered.sound)?;
        }
        Ok(())
    }

    /// A copy of pack `key` from this machine's pack cache whose header the pack's name proves
    /// and whose every blob verifies, with its entries; `None` when the cache holds no such copy.
    fn whole_copy_in_cache(
        &self,
        key: &str,
    ) -> Result<Option<(Vec<u8>, Vec<crate::store::pack::PackEntry>)>> {
        let Some(cached) = self.cached_pack_from_start(key)? else { return Ok(None) };
        let Ok(entries) = crate::store::pack::verify_header(key, &cached, self.sealing()) else {
            return Ok(None);
        };
        let (sound, damaged) = crate::store::pack::sort_sound(&cached, entries, self.sealing());
        Ok(damaged.is_empty().then_some((cached, sound)))
    }

    /// Looks again in the packs recovered without a header (of a store that does not seal
    /// them) for raw blobs snapshots refer to and the index lacks: known only once the records
    /// are back. A tree found so names more objects, so this runs until a round finds none.
    fn search_headerless_packs(&self, result: &mut RepairResult) -> Result<()> {
        if self.sealing().is_some() {
            return Ok(());
        }
        let keys: Vec<String> = result
            .packs_recovered
            .iter()
            .filter(|p| p.recovery == Recovery::Blobs)
            .map(|p| p.key.clone())
            .chain(result.packs_damaged.iter().cloned())
            .collect();
        for _round in 0..8 {
            let wanted = self.wanted_blobs()?;
            if keys.is_empty() || wanted.is_empty() {
                return Ok(());
            }
            let mut found_any = false;
            for key in &keys {
                let bytes = self.backend().get(key)?;
                let found: Vec<crate::store::pack::PackEntry> = self
                    .catalog()
                    .pack_blobs(key)?
                    .into_iter()
                    .map(|(id, l)| crate::store::pack::PackEntry {
                        id,
                        kind: l.kind,
                        offset: l.offset as u32,
                        length: l.length as u32,
                        raw_length: l.raw_length,
                        compressed: l.compressed,
                        within: l.within,
                    })
                    .collect();
                let more = pack_recover::recover_gaps(&bytes, &found, &wanted);
                if more.is_empty() {
                    continue;
                }
                found_any = true;
                self.catalog().index_found_pack(key, bytes.len() as u64, &more)?;
                result.blobs_indexed += more.len() as u64;
                match result.packs_recovered.iter_mut().find(|p| p.key == *key) {
                    Some(pack) => pack.blobs += more.len() as u64,
                    None => {
                        result.packs_damaged.retain(|k| k != key);
                        result.packs_indexed += 1;
                        result.packs_recovered.push(RecoveredPack {
                            key: key.clone(),
                            recovery: Recovery::Blobs,
                            blobs: more.len() as u64,
                            whole: false,
                        });
                    }
                }
            }
            if !found_any {
                break;
            }
        }
        Ok(())
    }

    /// Leaves a pack nothing could be recovered from as it is. A shared store's catalog notes
    /// it, so the catch-up on open (which indexes every pack it does not know from its header)
    /// does not stop at it again; a local store's leaves it unknown, which gc keeps.
    fn keep_damaged_pack(&self, key: &str, size: u64) -> Result<()> {
        if self.is_shared() { self.catalog().note_damaged_pack(key, size) } else { Ok(()) }
    }
}
