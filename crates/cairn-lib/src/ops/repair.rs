//! `cairn repair`: rebuild what the catalog says from the objects, so a damaged store can be
//! used again, and say which snapshots lost what.
//!
//! Pipeline: take the store alone → if the catalog is damaged, put it aside and start a new one
//! → rebuild the blob index from every pack whose header verifies, keeping only the blobs whose
//! bytes pass their hash check (so the next save writes the others again) → when the catalog
//! was new, add every snapshot record object → drop every stat cache (none is vouched for) →
//! walk every snapshot and list what it refers to that the store no longer holds. Like
//! `restic repair index` followed by `repair snapshots`, except that a damaged snapshot is kept
//! as it is (what it still holds restores) and listed with what it lost.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::id::{ObjectId, SessionId};
use crate::snapshot::Snapshot;
use crate::store::Store;
use crate::store::catalog::NewSnapshot;
use crate::store::pack;
use crate::tree::NodeKind;

/// What `repair` did.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct RepairResult {
    /// Where the damaged catalog was put aside, when it had to be rebuilt from the objects.
    pub catalog_set_aside: Option<String>,
    /// Packs indexed from their headers.
    pub packs_indexed: u64,
    /// Blobs indexed (their bytes passed the hash check).
    pub blobs_indexed: u64,
    /// Packs whose header is damaged: none of their blobs is indexed (gc removes the files).
    pub packs_damaged: Vec<String>,
    /// Blobs whose bytes fail their hash check, dropped from the index so the next save of
    /// the same content writes them again.
    pub blobs_dropped: Vec<String>,
    /// Snapshot records added back to a rebuilt catalog.
    pub snapshots_recovered: u64,
    /// Snapshots that refer to data the store no longer holds, with what they lost.
    pub damaged_snapshots: Vec<DamagedSnapshot>,
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

impl Store {
    /// Opens the store at `root` for a repair: a catalog that does not open, or that SQLite's
    /// own check finds damaged, is put aside (renamed, never deleted) and a new one is made.
    /// Returns where the old one went.
    pub fn open_to_repair(root: &Path) -> Result<(Self, Option<PathBuf>)> {
        let layout = crate::store::layout::Layout {
            root: std::path::absolute(root).map_err(|e| Error::io("resolve", root, e))?,
        };
        if !layout.catalog().exists() && !layout.root.join("FORMAT").exists() {
            return Err(Error::not_found(format!("there is no store at {}", layout.root.display())));
        }
        let sound = crate::store::catalog::Catalog::open(&layout.catalog())
            .and_then(|c| c.integrity_problems())
            .is_ok_and(|p| p.is_empty());
        let mut aside = None;
        if !sound {
            let stamp = jiff::Timestamp::now().as_second();
            for suffix in ["", "-wal", "-shm"] {
                let from = PathBuf::from(format!("{}{suffix}", layout.catalog().display()));
                let to = PathBuf::from(format!("{}.damaged-{stamp}{suffix}", layout.catalog().display()));
                if from.exists() {
                    std::fs::rename(&from, &to).map_err(|e| Error::io("set aside", &from, e))?;
                }
            }
            aside = Some(PathBuf::from(format!("{}.damaged-{stamp}", layout.catalog().display())));
        }
        Ok((Self::open(&layout.root)?, aside))
    }

    /// Repairs the store (see the module documentation). `set_aside` is what
    /// [`Store::open_to_repair`] returned: records are added back only into a new catalog.
    pub fn repair(&self, set_aside: Option<&Path>) -> Result<RepairResult> {
        let _lock = self.lock_store_exclusive("a repair")?;
        let mut result = RepairResult {
            catalog_set_aside: set_aside.map(|p| p.display().to_string()),
            ..Default::default()
        };
        self.catalog.reset_blob_index()?;
        for key in self.backend().list("packs/")? {
            if !key.ends_with(".pack") {
                continue;
            }
            let bytes = self.backend().get(&key)?;
            let entries = match pack::verify_header(&key, &bytes, self.sealing()) {
                Ok(entries) => entries,
                Err(_) => {
                    result.packs_damaged.push(key);
                    continue;
                }
            };
            let (good, damaged) = pack::sort_sound(&bytes, entries, self.sealing());
            result.blobs_dropped.extend(damaged.iter().map(|e| e.id.to_string()));
            result.blobs_indexed += good.len() as u64;
            result.packs_indexed += 1;
            self.catalog.index_found_pack(&key, bytes.len() as u64, &good)?;
        }
        if set_aside.is_some() {
            result.snapshots_recovered = self.add_records()?;
            self.add_moment_records()?;
        }
        self.catalog.drop_all_stat_caches()?;
        self.catalog.clear_all_damaged()?;
        for (id, target, kind, root) in self.catalog.all_snapshot_roots()? {
            let lost = match (kind.parse::<crate::targets::TargetKind>(), root) {
                (_, None) => vec!["/".to_owned()],
                (Ok(crate::targets::TargetKind::Dir), Some(root)) => self.lost_paths(&root)?,
                (_, Some(root)) => {
                    let mut live = std::collections::HashSet::new();
                    match crate::targets::referenced_objects(self, &kind, &root, &mut live) {
                        Ok(()) if self.all_indexed(&live)? => Vec::new(),
                        _ => vec!["/".to_owned()],
                    }
                }
            };
            if !lost.is_empty() {
                result.damaged_snapshots.push(DamagedSnapshot { id, target, lost });
            }
        }
        result.packs_damaged.sort();
        result.blobs_dropped.sort();
        Ok(result)
    }

    fn all_indexed(&self, ids: &std::collections::HashSet<ObjectId>) -> Result<bool> {
        for id in ids {
            if self.catalog.blob_location(id)?.is_none() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Adds every snapshot record object the catalog lacks; returns how many.
    fn add_records(&self) -> Result<u64> {
        let mut added = 0;
        for key in self.backend().list("records/")? {
            let Ok(bytes) = self.backend().get(&key) else { continue };
            let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else { continue };
            let Ok(mut snapshot) = serde_json::from_value::<Snapshot>(value.clone()) else { continue };
            if self.catalog.has_snapshot(&snapshot.id.to_string())? {
                continue;
            }
            snapshot.root = value["root"].as_str().and_then(|h| ObjectId::from_hex(h).ok());
            let name = if snapshot.session == SessionId::BASELINE {
                "baseline".to_owned()
            } else {
                format!("recovered-{}", &snapshot.session.to_string()[..8])
            };
            self.catalog.ensure_session(snapshot.session, &name)?;
            if self
                .catalog
                .insert_snapshot(NewSnapshot { snapshot: &snapshot, force_name: false, stat_cache: None })
                .is_err()
            {
                // Its name is taken in the rebuilt session: keep the snapshot, by id.
                snapshot.name = None;
                self.catalog.insert_snapshot(NewSnapshot {
                    snapshot: &snapshot,
                    force_name: false,
                    stat_cache: None,
                })?;
            }
            added += 1;
        }
        Ok(added)
    }

    /// The paths of a directory snapshot whose data the store no longer holds.
    fn lost_paths(&self, root: &ObjectId) -> Result<Vec<String>> {
        let Ok(doc) = crate::tree::read_root(self, root) else {
            return Ok(vec!["/".to_owned()]);
        };
        let mut lost = Vec::new();
        let mut stack = Vec::new();
        if let NodeKind::Dir { tree } = doc.top.kind {
            stack.push((Vec::new(), tree));
        }
        while let Some((path, id)) = stack.pop() {
            let Ok(tree) = crate::tree::read_tree(self, &id) else {
                lost.push(format!("{}/", String::from_utf8_lossy(&path)));
                continue;
            };
            for node in tree.nodes {
                let child =
                    if path.is_empty() { node.name.clone() } else { [&path[..], b"/", &node.name].concat() };
                match node.kind {
                    NodeKind::Dir { tree } => stack.push((child, tree)),
                    NodeKind::File { content, .. } => {
                        for id in &content {
                            if self.catalog.blob_location(id)?.is_none() {
                                lost.push(String::from_utf8_lossy(&child).into_owned());
                                break;
                            }
                        }
                    }
                    NodeKind::Symlink { .. } => {}
                }
            }
        }
        lost.sort();
        Ok(lost)
    }
}
