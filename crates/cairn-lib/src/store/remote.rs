//! Stores whose objects many machines share (an S3 bucket): the bucket is the truth, and the
//! local catalog is a cache under `<cache home>/<store id>`, brought up to date from the
//! bucket every time the store is opened.
//!
//! Everything the catalog says is in the bucket as immutable objects: packs (their headers
//! index their blobs), snapshot records (`records/<id>.json`) and events (`log/<id>.json`: a
//! session made or forked, a session deleted, a snapshot taken out of a session). Opening
//! lists the three prefixes and applies what this cache has not seen, in the order of the ids
//! (UUIDv7, so time order). A cache deleted at any time is rebuilt in full on the next open.

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::backend::Backend;
use super::catalog::NewSnapshot;
use super::{OpenMode, Store};
use crate::error::{Error, Result};
use crate::id::ObjectId;
use crate::snapshot::Snapshot;

/// The object that marks a bucket prefix as a cairn store, and names it.
pub(crate) const STORE_OBJECT: &str = "cairn-store.json";

/// What [`STORE_OBJECT`] holds.
#[derive(Debug, Serialize, Deserialize)]
struct StoreInfo {
    format: u32,
    id: uuid::Uuid,
}

impl Store {
    /// Opens the shared store whose objects `backend` holds, with its catalog cached below
    /// `cache_home` (in a folder named by the store's id, so one machine can use many stores).
    /// With [`OpenMode::CreateIfMissing`] a store is made when the backend holds none.
    pub fn open_shared(backend: Arc<dyn Backend>, cache_home: &Path, mode: OpenMode) -> Result<Self> {
        let info = match read_info(backend.as_ref())? {
            Some(info) => info,
            None if mode == OpenMode::Existing => {
                return Err(Error::not_found(format!("there is no store at {}", backend.describe())));
            }
            None => {
                let info = StoreInfo { format: super::layout::FORMAT_VERSION, id: uuid::Uuid::now_v7() };
                let bytes = serde_json::to_vec(&info).map_err(|e| Error::corrupt(e.to_string()))?;
                // Two machines creating one store at once: the first write wins, and both
                // then use the store it named.
                backend.put_if_absent(STORE_OBJECT, &bytes)?;
                read_info(backend.as_ref())?.ok_or_else(|| {
                    Error::corrupt(format!(
                        "{} lost its store marker while it was being made",
                        backend.describe()
                    ))
                })?
            }
        };
        if info.format != super::layout::FORMAT_VERSION {
            return Err(Error::corrupt(format!(
                "the store at {} has format version {}, and this cairn reads version {}",
                backend.describe(),
                info.format,
                super::layout::FORMAT_VERSION
            )));
        }
        let root = cache_home.join(info.id.simple().to_string());
        let mut store = Self::open_with(backend, &root, OpenMode::CreateIfMissing)?;
        store.catalog.share(store.backend.clone());
        store.shared = true;
        store.pack_cache = Some(store.new_pack_cache());
        store.sync()?;
        Ok(store)
    }

    /// Packs a gc condemned: a save stores their blobs again rather than refer to them.
    pub(crate) fn condemned_packs(&self) -> std::collections::HashSet<String> {
        self.condemned.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// True when other machines may write to this store's objects.
    pub fn is_shared(&self) -> bool {
        self.shared
    }

    /// Where the objects are: the store's directory, or its remote address.
    pub fn location(&self) -> String {
        if self.shared { self.backend.describe() } else { self.layout.root.display().to_string() }
    }

    /// Brings the catalog cache up to date with the objects: packs first (so every record
    /// applied next finds its blobs), then records and events in time order.
    pub(crate) fn sync(&self) -> Result<()> {
        let condemned: std::collections::HashSet<String> =
            self.gc_marks()?.into_iter().flat_map(|(_, m)| m.packs).collect();
        let listed = self.backend.list_sizes("packs/")?;
        let known: std::collections::HashSet<String> = self.catalog.all_pack_keys()?.into_iter().collect();
        for (key, size) in &listed {
            if key.ends_with(".pack") && !known.contains(key) {
                let entries = super::pack::read_header_ranged(self.backend.as_ref(), key, *size)?;
                if condemned.is_empty() {
                    self.catalog.index_found_pack(key, *size, &entries)?;
                } else {
                    // While gc has packs condemned, a new pack may hold their blobs anew: its
                    // place wins, so the condemned pack's re-check finds it unreferenced.
                    self.catalog.begin_pack(key)?;
                    self.catalog.reassign_blobs(key, *size, &entries)?;
                }
            }
        }
        let present: std::collections::HashSet<&String> = listed.iter().map(|(k, _)| k).collect();
        let mut gone = false;
        for (key, _, _) in self.catalog.ready_packs()? {
            if !present.contains(&key) {
                self.catalog.forget_pack(&key)?;
                gone = true;
            }
        }
        *self.condemned.lock().unwrap_or_else(|p| p.into_inner()) = condemned;
        if gone {
            // Another machine's gc removed packs. Their blobs that were stored again elsewhere
            // (a save stores a condemned pack's blobs anew) are indexed under their first
            // place only, so every pack's header is read again to find their new one; and a
            // stat cache may name blobs that are gone, so a save reads those files again.
            for (key, size) in &listed {
                if key.ends_with(".pack") && known.contains(key) {
                    let entries = super::pack::read_header_ranged(self.backend.as_ref(), key, *size)?;
                    self.catalog.index_found_pack(key, *size, &entries)?;
                }
            }
            self.catalog.drop_all_stat_caches()?;
        }
        let mut pending: Vec<(String, String)> = Vec::new();
        for prefix in ["records/", "log/", "moments/"] {
            for key in self.backend.list(prefix)? {
                if !self.catalog.seen(&key)? {
                    let id = key.trim_start_matches(prefix).trim_end_matches(".json").to_owned();
                    pending.push((id, key));
                }
            }
        }
        pending.sort();
        for (_, key) in pending {
            let bytes = self.backend.get(&key)?;
            if key.starts_with("records/") {
                self.apply_record(&key, &bytes)?;
            } else if key.starts_with("moments/") {
                self.add_moment_record(&bytes)?;
            } else {
                let event = serde_json::from_slice(&bytes)
                    .map_err(|e| Error::corrupt(format!("event {key} does not decode: {e}")))?;
                self.catalog.apply_event(&event)?;
            }
            self.catalog.mark_seen(&key)?;
        }
        Ok(())
    }

    fn apply_record(&self, key: &str, bytes: &[u8]) -> Result<()> {
        let value: serde_json::Value = serde_json::from_slice(bytes)
            .map_err(|e| Error::corrupt(format!("record {key} does not decode: {e}")))?;
        let mut snapshot: Snapshot = serde_json::from_value(value.clone())
            .map_err(|e| Error::corrupt(format!("record {key} does not decode: {e}")))?;
        if self.catalog.has_snapshot(&snapshot.id.to_string())? {
            return Ok(());
        }
        snapshot.root = value["root"].as_str().and_then(|h| ObjectId::from_hex(h).ok());
        // The writer held the name when it committed; a later record with the same name moved
        // it there, as it did on the writer's machine.
        self.catalog.insert_snapshot(NewSnapshot { snapshot: &snapshot, force_name: true })
    }
}

fn read_info(backend: &dyn Backend) -> Result<Option<StoreInfo>> {
    let Some(bytes) = backend.size(STORE_OBJECT)?.map(|_| backend.get(STORE_OBJECT)).transpose()? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        Error::corrupt(format!("{} has a store marker that does not decode: {e}", backend.describe()))
    })
}
