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
use super::catalog::{Flush, NewSnapshot};
use super::crypto::RepoKey;
use super::{OpenMode, SecretUse, Store, Unlock};
use crate::error::{Error, ErrorKind, Result};
use crate::id::ObjectId;
use crate::model::snapshot::Snapshot;

/// The object that marks a bucket prefix as a cairn store, and names it.
pub const STORE_OBJECT: &str = "cairn-store.json";

/// The format version of an encrypted store: a cairn that predates encryption refuses it in
/// one line rather than misread it. Plain stores stay at version 1, unchanged.
pub const ENCRYPTED_FORMAT: u32 = 2;

/// What [`STORE_OBJECT`] holds.
#[derive(Debug, Serialize, Deserialize)]
pub struct StoreInfo {
    /// The store's format version.
    pub format: u32,
    /// The store's id, which names its catalog cache on each machine.
    pub id: uuid::Uuid,
    /// Present when the store is encrypted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<EncryptionInfo>,
}

/// How an encrypted store is sealed. Its keys are the objects below `keys/`, not a list here:
/// the marker is written once, and a listing cannot disagree with itself.
#[derive(Debug, Serialize, Deserialize)]
pub struct EncryptionInfo {
    /// The AEAD every object is sealed with.
    pub aead: String,
    /// [`RepoKey::fingerprint`] of the repository key.
    pub key_fingerprint: String,
}

pub(super) const AEAD: &str = "xchacha20-poly1305";

impl Store {
    /// Opens the shared store whose objects `backend` holds, with its catalog cached below
    /// `cache_home` (in a folder named by the store's id, so one machine can use many stores).
    /// With [`OpenMode::CreateIfMissing`] a plain store is made when the backend holds none.
    pub fn open_shared(backend: Arc<dyn Backend>, cache_home: &Path, mode: OpenMode) -> Result<Self> {
        Self::open_shared_with(backend, cache_home, mode, &Unlock::default())
    }

    /// [`Store::open_shared`], unlocking an encrypted store with `unlock`'s secret, and making
    /// a missing store encrypted when `unlock` says so.
    pub fn open_shared_with(
        backend: Arc<dyn Backend>,
        cache_home: &Path,
        mode: OpenMode,
        unlock: &Unlock,
    ) -> Result<Self> {
        let store = Self::open_shared_unsynced(backend, cache_home, mode, unlock, false)?;
        store.sync()?;
        Ok(store)
    }

    /// [`Store::open_shared_with`] without the catch-up that brings the catalog cache up to
    /// date: for a repair, which does the catch-up's work itself, object by object. With
    /// `check_cache`, a cache whose catalog SQLite finds damaged is put aside too, to be built
    /// again from the objects.
    pub(super) fn open_shared_unsynced(
        backend: Arc<dyn Backend>,
        cache_home: &Path,
        mode: OpenMode,
        unlock: &Unlock,
        check_cache: bool,
    ) -> Result<Self> {
        let (info, made) = match read_info(backend.as_ref())? {
            Some(info) => (info, None),
            None if mode == OpenMode::Existing => {
                // A reader never makes a store; saving does, so that is the next step.
                return Err(Error::not_found(format!("there is no store at {}", backend.describe()))
                    .hint(crate::error::Hint::Run(crate::error::Operation::Save))
                    .with_code(crate::error::NO_STORE));
            }
            None => {
                let made = create_info(backend.as_ref(), unlock)?;
                let info = read_info(backend.as_ref())?.ok_or_else(|| {
                    Error::corrupt(format!(
                        "{} lost its store marker while it was being made",
                        backend.describe()
                    ))
                })?;
                // Two machines creating one store at once: the first marker wins, and both
                // then use the store it names; the loser's key object is taken back.
                let made = match made {
                    Some((key, id)) if info.id != key.0 => {
                        super::keys::remove(backend.as_ref(), &id)?;
                        None
                    }
                    other => other.map(|(k, id)| (k.1, id)),
                };
                (info, made)
            }
        };
        let expected =
            if info.encryption.is_some() { ENCRYPTED_FORMAT } else { super::layout::FORMAT_VERSION };
        if info.format != expected {
            return Err(Error::corrupt(format!(
                "the store at {} has format version {}, and this cairn reads version {expected}",
                backend.describe(),
                info.format,
            )));
        }
        let (backend, unlocked) = match &info.encryption {
            None => (backend, None),
            Some(encryption) => {
                let (key, key_id) = match made {
                    Some(made) => made,
                    None => {
                        let secret = unlock.secret(SecretUse::Unlock, &backend.describe())?;
                        super::keys::unlock(backend.as_ref(), &secret, &encryption.key_fingerprint)?
                    }
                };
                let key = Arc::new(key);
                let sealed: Arc<dyn Backend> =
                    Arc::new(super::sealed::SealedBackend::new(backend, key.clone()));
                (sealed, Some(super::unlock::Unlocked { key, key_id }))
            }
        };
        let root = cache_home.join(info.id.simple().to_string());
        // The catalog cache is built from the objects: one whose format file (or, for a
        // repair, catalog) was damaged or lost is put aside (renamed, not deleted), and a new one is built, rather than leave
        // every command, repair included, refusing the store.
        let cache = super::layout::Layout { root: root.clone() };
        let lost_format = !cache.format_file().exists()
            && std::fs::read_dir(&root).is_ok_and(|mut entries| entries.next().is_some());
        let damaged_catalog = check_cache
            && cache.catalog().exists()
            && !super::catalog::Catalog::open(&cache.catalog())
                .and_then(|c| c.thorough_integrity_problems())
                .is_ok_and(|problems| problems.is_empty());
        if lost_format || damaged_catalog || !cache.format_file_reads() {
            let aside = root.with_extension(format!("damaged-{}", uuid::Uuid::now_v7().simple()));
            std::fs::rename(&root, &aside).map_err(|e| Error::io("set aside", &root, e))?;
        }
        let mut store = Self::open_unlocked(backend, &root, OpenMode::CreateIfMissing, unlocked)?;
        store.catalog.share(store.backend.clone());
        store.shared = true;
        store.pack_cache = Some(store.new_pack_cache());
        Ok(store)
    }

    /// Packs a gc condemned: a save stores their blobs again rather than refer to them.
    pub fn condemned_packs(&self) -> std::collections::HashSet<String> {
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
    pub fn sync(&self) -> Result<()> {
        let condemned: std::collections::HashSet<String> =
            self.gc_marks()?.into_iter().flat_map(|(_, m)| m.packs).collect();
        let listed = self.backend.list_sizes("packs/")?;
        let known: std::collections::HashSet<String> = self.catalog.all_pack_keys()?.into_iter().collect();
        for (key, size) in &listed {
            if key.ends_with(".pack") && !known.contains(key) {
                let Some(entries) = self.pack_header_or_note(key, *size)? else { continue };
                if condemned.is_empty() {
                    self.catalog.index_found_pack(key, *size, &entries)?;
                } else {
                    // While gc has packs condemned, a new pack may hold their blobs anew: its
                    // place wins, so the condemned pack's re-check finds it unreferenced.
                    self.catalog.begin_pack(key, Flush::Now)?;
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
                    let Some(entries) = self.pack_header_or_note(key, *size)? else { continue };
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
            let applied = self.backend.get(&key).and_then(|bytes| {
                if key.starts_with("records/") {
                    self.apply_record(&key, &bytes)
                } else if key.starts_with("moments/") {
                    self.add_moment_record(&bytes)
                } else {
                    let event = serde_json::from_slice(&bytes)
                        .map_err(|e| Error::corrupt(format!("event {key} does not decode: {e}")))?;
                    self.catalog.apply_event(&event)
                }
            });
            match applied {
                Ok(()) => self.catalog.mark_seen(&key)?,
                // One damaged object costs what it holds, not the store: it is passed by, and
                // tried again by the next catch-up, until a repair lists it.
                Err(e) if e.kind() == ErrorKind::Corrupt => self.notice(&format!(
                    "{key} does not read and was passed by ({}); repair the store to list what it held",
                    e.message()
                )),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The header of pack `key` (`size` bytes), or `None` for one whose header does not read:
    /// that pack is noted as damaged, so no catch-up reads it again and nothing is read from
    /// it, and a repair recovers what it holds.
    fn pack_header_or_note(&self, key: &str, size: u64) -> Result<Option<Vec<super::pack::PackEntry>>> {
        match super::pack::read_header_ranged(self.backend.as_ref(), key, size, self.sealing()) {
            Ok(entries) => Ok(Some(entries)),
            Err(e) if e.kind() == ErrorKind::Corrupt => {
                self.catalog.note_damaged_pack(key, size)?;
                self.notice(&format!(
                    "pack {key} has a damaged header and was passed by; repair the store to recover what it holds"
                ));
                Ok(None)
            }
            Err(e) => Err(e),
        }
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
        self.catalog.insert_snapshot(NewSnapshot { snapshot: &snapshot, force_name: true, stat_cache: None })
    }
}

/// Writes the marker of a new store, encrypted when `unlock` says so: its first key object
/// first, so no marker ever names a store that no key unlocks. Returns the new store's id and
/// key, and the key object's id, when it made an encrypted one.
fn create_info(backend: &dyn Backend, unlock: &Unlock) -> Result<Option<((uuid::Uuid, RepoKey), String)>> {
    let id = uuid::Uuid::now_v7();
    let (info, made) = if unlock.encrypts_new() {
        let secret = unlock.secret(SecretUse::Create, &backend.describe())?;
        let key = RepoKey::random();
        let key_id = super::keys::add(backend, &key, &secret, None)?;
        let encryption = EncryptionInfo { aead: AEAD.to_owned(), key_fingerprint: key.fingerprint() };
        (StoreInfo { format: ENCRYPTED_FORMAT, id, encryption: Some(encryption) }, Some(((id, key), key_id)))
    } else {
        (StoreInfo { format: super::layout::FORMAT_VERSION, id, encryption: None }, None)
    };
    let bytes = serde_json::to_vec(&info).map_err(|e| Error::corrupt(e.to_string()))?;
    backend.put_if_absent(STORE_OBJECT, &bytes)?;
    Ok(made)
}

/// The marker of the store `backend` holds, if it holds one.
pub fn read_info(backend: &dyn Backend) -> Result<Option<StoreInfo>> {
    let Some(bytes) = backend.size(STORE_OBJECT)?.map(|_| backend.get(STORE_OBJECT)).transpose()? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        Error::corrupt(format!("{} has a store marker that does not decode: {e}", backend.describe()))
    })
}
