//! Where a store is, as a front resolved it from its flags and environment: a directory, or a
//! shared store (an S3 bucket prefix) with the folder that caches catalogs on this machine.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::s3::{S3Backend, S3Settings};
use super::{OpenMode, Store};
use crate::error::Result;

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
    /// Opens the store at `address` (see [`Store::open_in`] and [`Store::open_shared`]).
    pub fn open_address(address: &StoreAddress, mode: OpenMode) -> Result<Self> {
        match address {
            StoreAddress::Dir(dir) => Self::open_in(dir, mode),
            StoreAddress::S3 { settings, cache_home } => {
                Self::open_shared(Arc::new(S3Backend::new(settings)?), cache_home, mode)
            }
        }
    }
}
