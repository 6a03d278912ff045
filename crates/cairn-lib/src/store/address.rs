//! Where a store is, as a front resolved it from its flags and environment: a directory, or a
//! shared store (an S3 bucket prefix) with the folder that caches catalogs on this machine.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::backend::LocalBackend;
use super::remote::STORE_OBJECT;
use super::s3::{S3Backend, S3Settings};
use super::{OpenMode, Store, Unlock};
use crate::error::{Error, Result};

/// Where a store is.
#[derive(Debug, Clone)]
pub enum StoreAddress {
    /// A store directory on this machine.
    Dir(PathBuf),
    /// A store in an S3-compatible bucket; its catalog is cached below `cache_home`.
    S3 {
        /// The bucket, prefix and client settings.
        settings: S3Settings,
        /// The folder of catalog caches on this machine, one folder per store id.
        cache_home: PathBuf,
    },
}

impl From<PathBuf> for StoreAddress {
    fn from(dir: PathBuf) -> Self {
        Self::Dir(dir)
    }
}

impl std::fmt::Display for StoreAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Dir(dir) => write!(f, "{}", dir.display()),
            Self::S3 { settings, .. } => f.write_str(&settings.address()),
        }
    }
}

impl StoreAddress {
    /// The local directory: the store's own, or the cache home of a remote one.
    pub fn local_dir(&self) -> &Path {
        match self {
            Self::Dir(dir) => dir,
            Self::S3 { cache_home, .. } => cache_home,
        }
    }
}

impl Store {
    /// Opens the store at `address` with no secret: a plain store, or a refusal in one line
    /// for an encrypted one (see [`Store::open_address_with`]).
    pub fn open_address(address: &StoreAddress, mode: OpenMode) -> Result<Self> {
        Self::open_address_with(address, mode, &Unlock::default())
    }

    /// Opens the store at `address` (see [`Store::open_in`] and [`Store::open_shared_with`]),
    /// unlocking it with `unlock` when it is encrypted. A remote store this open makes is
    /// encrypted unless `unlock` says otherwise; a directory holding an encrypted store's
    /// objects is opened as a shared store whose catalog is cached below `unlock`'s cache home.
    pub fn open_address_with(address: &StoreAddress, mode: OpenMode, unlock: &Unlock) -> Result<Self> {
        match address {
            StoreAddress::Dir(dir) if dir.join(STORE_OBJECT).exists() => {
                Self::open_object_dir(dir, mode, unlock)
            }
            StoreAddress::Dir(dir) => Self::open_in(dir, mode),
            StoreAddress::S3 { settings, cache_home } => Self::open_shared_with(
                Arc::new(S3Backend::new(settings)?),
                cache_home,
                mode,
                &unlock.encrypting_by_default(),
            ),
        }
    }

    /// Opens (or, with `unlock` encrypting new stores, makes) the encrypted store whose
    /// objects are the files below `dir`.
    pub(crate) fn open_object_dir(dir: &Path, mode: OpenMode, unlock: &Unlock) -> Result<Self> {
        let Some(cache_home) = unlock.cache_dir() else {
            return Err(Error::invalid(format!(
                "the encrypted store at {} needs a folder on this machine to cache its catalog in, and none was given",
                dir.display()
            )));
        };
        let dir = std::path::absolute(dir).map_err(|e| Error::io("resolve", dir, e))?;
        let tmp = dir.join("tmp");
        super::backend::create_dir_durably(&tmp)?;
        Self::open_shared_with(Arc::new(LocalBackend::new(dir, tmp)), cache_home, mode, unlock)
    }
}
