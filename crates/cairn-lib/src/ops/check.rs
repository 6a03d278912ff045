//! `cairn check`: verify that every object a snapshot needs is in the store, and with
//! `read_data` read back every pack, blob and record object.
//!
//! What it finds damaged or missing it records (`damaged_blobs`), so the next save stores
//! that content again instead of deduplicating against it. Its advice never leads to deleting
//! data that still restores: a pack file or a record object the catalog does not know is sent
//! to `cairn repair`, which indexes or adds back what it holds, never to gc.
//!
//! `read_data` reads each pack whole, once, several at a time, and checks its header and
//! every blob from that one read (`Store::read_packs`): on a remote store one request per pack
//! (none for a pack the pack cache holds whole), where reading blob by blob cost one request
//! per blob. The packs are read before the snapshots' trees are walked, so the walk finds a
//! remote store's trees in the pack cache.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::live::{read_record, record_id};
use crate::Repository;
use crate::error::Result;
use crate::id::ObjectId;
use crate::store::fetch::{PackRead, PackToRead};

/// How thoroughly to check the store.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct CheckOptions {
    /// Also read every object back and check its hash, and every snapshot record.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub read_data: bool,
}

/// What `check` found.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct CheckResult {
    /// Snapshot records checked.
    pub snapshots: u64,
    /// Objects reachable from them.
    pub objects: u64,
    /// Objects whose bytes were read and hash-checked (with `read_data`).
    pub objects_read: u64,
    /// Problems found; empty when the store is sound.
    pub problems: Vec<String>,
}

/// Who left what `check` finds half done: a gc that was killed, or else a save.
fn culprit(interrupted_gc: Option<u32>, pid: Option<u32>) -> String {
    match interrupted_gc {
        Some(gc) if pid.is_none_or(|p| p == gc) => format!("an interrupted gc (pid {gc})"),
        _ => "an interrupted save".to_owned(),
    }
}

impl Repository {
    /// The pid of a gc that was killed before it finished, if one was.
    fn interrupted_gc(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.layout().locks().join(super::gc::GC_MARK)).ok()?;
        let pid = text.trim().parse::<u32>().ok()?;
        (!crate::store::layout::pid_alive(pid)).then_some(pid)
    }

    /// Verifies a pack read whole against its own header and the index: the header (magic
    /// number, length, hash), the file's size, and every index entry's place. What the index
    /// places wrongly is recorded damaged, so no save dedups against it.
    fn verify_pack(&self, read: &PackRead, problems: &mut Vec<String>) -> Result<()> {
        let key = read.key.as_str();
        let entries = match &read.header {
            Ok(entries) => entries,
            Err(problem) => {
                // Known damaged from now on: no save dedups against what it holds.
                for (id, _) in self.catalog().pack_blobs(key)? {
                    self.catalog().mark_damaged(&id)?;
                }
                problems.push(format!("{problem}; repair the store"));
                return Ok(());
            }
        };
        if let Some(size) = self.catalog().pack_size(key)?
            && size != read.size
        {
            problems.push(format!(
                "pack {key} holds {} bytes where the index recorded {size}; repair the store",
                read.size
            ));
        }
        let in_header: HashMap<ObjectId, _> = entries.iter().map(|e| (e.id, e)).collect();
        for (id, loc) in self.catalog().pack_blobs(key)? {
            let problem = match in_header.get(&id) {
                Some(e)
                    if (e.offset as u64, e.length as u64, e.within)
                        == (loc.offset, loc.length, loc.within) =>
                {
                    continue;
                }
                Some(_) => format!(
                    "the index places blob {id} elsewhere than the header of pack {key} does; repair the store"
                ),
                None => format!(
                    "the index places blob {id} in pack {key}, whose header does not list it; repair the store"
                ),
            };
            self.catalog().mark_damaged(&id)?;
            problems.push(problem);
        }
        Ok(())
    }

    /// Reads every record object back: it must read (opened, in an encrypted store), parse,
    /// and name a root the index holds.
    fn verify_records(&self, problems: &mut Vec<String>) -> Result<()> {
        for key in self.backend().list("records/")? {
            match read_record(self, &key) {
                Ok((_, Some(root))) if self.catalog().blob_location(&root)?.is_none() => {
                    problems.push(format!(
                        "record {key} names root {root}, which the index does not hold; repair the store"
                    ))
                }
                Ok(_) => {}
                Err(why) => problems.push(format!("{why}; repair the store")),
            }
        }
        Ok(())
    }

    /// Checks that every object a snapshot needs is in the store; with `read_data`, reads and
    /// hash-checks each one, and reads every record object.
    pub fn check(&self, options: &CheckOptions) -> Result<CheckResult> {
        let read_data = options.read_data;
        let known_records: HashSet<String> = self.catalog().all_snapshot_ids()?.into_iter().collect();
        let mut result = CheckResult { snapshots: known_records.len() as u64, ..CheckResult::default() };
        let listed: HashMap<String, u64> = self.backend().list_sizes("packs/")?.into_iter().collect();
        let files: HashSet<String> = listed.keys().cloned().collect();
        let known: HashSet<String> = self.catalog().all_pack_keys()?.into_iter().collect();
        // Every pack read whole first (see the module documentation); what it found is
        // reported below, in the order the checks always ran.
        let packs_read = if read_data {
            let mut to_read: Vec<PackToRead> = Vec::new();
            for key in files.intersection(&known) {
                // A pack whose file in the store is not the size the catalog gives is read from
                // the store, not from a copy in the pack cache: the store's file is what a
                // restore on another machine reads, and the copy would hide its damage.
                let size = self.catalog().pack_size(key)?.filter(|size| listed.get(key) == Some(size));
                to_read.push((key.clone(), size, self.catalog().pack_blobs(key)?));
            }
            self.read_packs(&to_read)?
        } else {
            Vec::new()
        };
        let mut live = HashSet::new();
        for (kind, root) in self.catalog().all_roots_with_kind()? {
            if let Err(e) = crate::targets::referenced_objects(self, &kind, &root, &mut live) {
                result.problems.push(format!("snapshot root {root}: {e}"));
            }
        }
        result.objects = live.len() as u64;
        for problem in self.catalog().integrity_problems()? {
            result.problems.push(format!("the catalog is damaged ({problem}); repair the store"));
        }
        for key in known.difference(&files) {
            result.problems.push(format!("pack {key} is in the catalog but its file is missing"));
        }
        let gc = self.interrupted_gc();
        for key in files.difference(&known) {
            result.problems.push(format!(
                "pack file {key} is not in the catalog (left by {}); repair the store to index what it holds",
                culprit(gc, None)
            ));
        }
        for key in self.catalog().damaged_packs()? {
            result.problems.push(format!(
                "pack {key} has a header that does not read, so nothing is read from it; repair the store to recover what it holds"
            ));
        }
        for key in self.backend().list("records/")? {
            if !known_records.contains(record_id(&key))
                && !self.catalog().seen(&key)?
                && !self.catalog().record_begun(&key)?
            {
                result.problems.push(format!(
                    "snapshot record {key} is not in the catalog; repair the store to add it back"
                ));
            }
        }
        for (key, pid) in self.catalog().pending_packs()? {
            if !crate::store::layout::pid_alive(pid) {
                let writer = match culprit(gc, Some(pid)) {
                    save if save.ends_with("save") => format!("its writer (pid {pid})"),
                    gc => gc,
                };
                result.problems.push(format!(
                    "pack {key} is still pending though {writer} is gone; reopen the store to recover it"
                ));
            }
        }
        if read_data {
            for read in &packs_read {
                self.verify_pack(read, &mut result.problems)?;
            }
            self.verify_records(&mut result.problems)?;
        }
        for id in self.catalog().unindexed(&live)? {
            // Recorded, so the next save stores this content again rather than trusting a
            // stat cache entry or a subtree that names it.
            self.catalog().mark_damaged(&id)?;
            result.problems.push(format!("object {id} is missing"));
        }
        if read_data {
            for read in packs_read {
                result.objects_read += read.read.iter().filter(|id| live.contains(id)).count() as u64;
                for (id, e) in read.failed {
                    // Known damaged from now on: no save dedups against it.
                    self.catalog().mark_damaged(&id)?;
                    if live.contains(&id) {
                        result.problems.push(e.to_string());
                    }
                }
            }
            // A ready pack whose file is not there: each blob a snapshot needs from it is
            // tried on its own, and reported as it fails.
            let read_whole: HashSet<&String> = files.intersection(&known).collect();
            for (key, _, _) in self.catalog().ready_packs()? {
                if read_whole.contains(&key) {
                    continue;
                }
                let mut blobs = self.catalog().pack_blobs(&key)?;
                blobs.retain(|(id, _)| live.contains(id));
                blobs.sort_by_key(|(_, loc)| loc.offset);
                for (id, _) in blobs {
                    match self.read_blob(&id) {
                        Ok(_) => result.objects_read += 1,
                        Err(e) => {
                            self.catalog().mark_damaged(&id)?;
                            result.problems.push(e.to_string());
                        }
                    }
                }
            }
        }
        for found in self.interrupted_restores()? {
            result.problems.push(format!(
                "{}; finish it (the restore's continue option) or roll it back (its abort option): either keeps the files written since, and until then saves, restores and agent checkpoints of it are refused",
                found.sentence()
            ));
        }
        for found in self.interrupted_restores_to()? {
            if found.destination_left {
                result.problems.push(found.finding());
            }
        }
        result.problems.sort();
        Ok(result)
    }
}
