//! Opening a shared store (an encrypted store directory, or a bucket) for `repair`: unlocked
//! as every command unlocks it, but without bringing the catalog cache up to date first: that
//! catch-up is what the repair does itself, object by object, listing what it cannot read. An
//! encrypted store directory that lost its marker (`cairn-store.json`) gets a new one, once its
//! secret opens one of its key objects.

use std::path::Path;
use std::sync::Arc;

use super::address::StoreAddress;
use super::backend::{Backend, LocalBackend};
use super::remote::{AEAD, ENCRYPTED_FORMAT, EncryptionInfo, STORE_OBJECT, StoreInfo};
use super::s3::S3Backend;
use super::{OpenMode, SecretUse, Store, Unlock};
use crate::error::{Error, Result};

impl Store {
    /// Opens the shared store at `address` for a repair (see the module documentation).
    pub fn open_shared_to_rebuild(address: &StoreAddress, unlock: &Unlock) -> Result<Self> {
        let (backend, cache_home): (Arc<dyn Backend>, &Path) = match address {
            StoreAddress::Dir(dir) => super::address::object_dir_backend(dir, unlock)?,
            StoreAddress::S3 { settings, cache_home } => (Arc::new(S3Backend::new(settings)?), cache_home),
        };
        Self::open_shared_unsynced(backend, cache_home, OpenMode::Existing, unlock, true)
    }
}

/// Writes a new marker for the encrypted store directory `dir` when it lost its own: its key
/// objects prove it a store, and the key one of them opens with the secret `unlock` gives is
/// its key. The store gets a new id, so its catalog cache is rebuilt in full. Returns whether
/// a marker was written.
pub fn rewrite_lost_marker(dir: &Path, unlock: &Unlock) -> Result<bool> {
    let has_keys = std::fs::read_dir(dir.join(super::keys::PREFIX)).is_ok_and(|mut d| d.next().is_some());
    // A plain store directory has a FORMAT file and no key objects.
    if dir.join(STORE_OBJECT).exists() || dir.join("FORMAT").exists() || !has_keys {
        return Ok(false);
    }
    let tmp = dir.join("tmp");
    super::backend::create_dir_durably(&tmp)?;
    let backend = LocalBackend::new(dir.to_path_buf(), tmp);
    let secret = unlock.secret(SecretUse::Unlock, &backend.describe())?;
    let (key, _) = super::keys::unlock_without_marker(&backend, &secret)?;
    let info = StoreInfo {
        format: ENCRYPTED_FORMAT,
        id: uuid::Uuid::now_v7(),
        encryption: Some(EncryptionInfo { aead: AEAD.to_owned(), key_fingerprint: key.fingerprint() }),
    };
    let bytes = serde_json::to_vec(&info).map_err(|e| Error::corrupt(e.to_string()))?;
    backend.put_if_absent(STORE_OBJECT, &bytes)?;
    Ok(true)
}
