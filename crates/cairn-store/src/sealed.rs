//! The backend of an encrypted store: every object except packs, key objects and the store
//! marker is padded and sealed on the way in and opened on the way out, bound to its own key,
//! so records, events, gc marks, names and the session pointer reveal nothing and cannot be
//! swapped for one another. Packs pass through: they seal each blob and their header
//! themselves (`pack.rs`), so that a restore still reads one blob by a byte range.

use std::sync::Arc;

use super::backend::{Backend, Staged, Versioned};
use super::crypto::{self, RepoKey};
use crate::error::{Error, Result};

/// An encrypted store's view of its objects.
pub struct SealedBackend {
    inner: Arc<dyn Backend>,
    key: Arc<RepoKey>,
}

/// `inner` as an encrypted store sees it, sealed under a new random key: the backend contract
/// suite (`cairn-test-support`) runs its object cases through it, which it could not reach
/// otherwise. Not part of the supported API.
#[doc(hidden)]
pub fn sealed_for_contract(inner: Arc<dyn Backend>) -> Arc<dyn Backend> {
    Arc::new(SealedBackend::new(inner, Arc::new(RepoKey::random())))
}

impl SealedBackend {
    pub(crate) fn new(inner: Arc<dyn Backend>, key: Arc<RepoKey>) -> Self {
        Self { inner, key }
    }

    fn seal(&self, key: &str, data: &[u8]) -> Vec<u8> {
        self.key.seal(&crypto::pad(data), key.as_bytes())
    }

    fn open(&self, key: &str, sealed: &[u8]) -> Result<Vec<u8>> {
        let plain = self.key.open(sealed, key.as_bytes()).ok_or_else(|| {
            Error::corrupt(format!(
                "object {key} of {} does not open with the store's key (damaged, or written by another store)",
                self.inner.describe()
            ))
            // A repair lists it and goes on: the catalog's catch-up, which stops here, is one of
            // the things a repair does, so `check` could not open the store either.
            .hint(crate::error::Hint::Run(crate::error::Operation::Repair))
        })?;
        crypto::unpad(plain)
    }
}

/// Objects that are not sealed whole.
fn passes(key: &str) -> bool {
    key.starts_with("packs/") || key.starts_with(super::keys::PREFIX) || key == super::remote::STORE_OBJECT
}

impl Backend for SealedBackend {
    fn put_if_absent(&self, key: &str, data: &[u8]) -> Result<bool> {
        if passes(key) {
            return self.inner.put_if_absent(key, data);
        }
        self.inner.put_if_absent(key, &self.seal(key, data))
    }

    fn get(&self, key: &str) -> Result<Vec<u8>> {
        let bytes = self.inner.get(key)?;
        if passes(key) { Ok(bytes) } else { self.open(key, &bytes) }
    }

    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        if passes(key) {
            return self.inner.get_range(key, offset, len);
        }
        let all = self.get(key)?;
        let end = offset.saturating_add(len) as usize;
        all.get(offset as usize..end)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| Error::corrupt(format!("object {key} is shorter than {end} bytes")))
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>> {
        self.inner.list(prefix)
    }

    fn delete(&self, key: &str) -> Result<()> {
        self.inner.delete(key)
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        self.inner.size(key)
    }

    fn sizes(&self, keys: &[String]) -> Result<Vec<Option<u64>>> {
        self.inner.sizes(keys)
    }

    fn list_sizes(&self, prefix: &str) -> Result<Vec<(String, u64)>> {
        self.inner.list_sizes(prefix)
    }

    fn get_versioned(&self, key: &str) -> Result<Option<Versioned>> {
        match self.inner.get_versioned(key)? {
            Some(v) if !passes(key) => Ok(Some(Versioned { data: self.open(key, &v.data)?, tag: v.tag })),
            other => Ok(other),
        }
    }

    fn put_versioned(&self, key: &str, data: &[u8], expected: Option<&str>) -> Result<bool> {
        if passes(key) {
            return self.inner.put_versioned(key, data, expected);
        }
        self.inner.put_versioned(key, &self.seal(key, data), expected)
    }

    fn stage(&self, key: &str, data: &[u8]) -> Result<Staged> {
        if passes(key) {
            return self.inner.stage(key, data);
        }
        self.inner.stage(key, &self.seal(key, data))
    }

    fn publish(&self, staged: Staged) -> Result<bool> {
        self.inner.publish(staged)
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}
