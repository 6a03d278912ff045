//! The engine's handle: an open [`Store`] with the operations of `ops/` as its methods.
//!
//! The store crate knows nothing of operations, so they cannot be methods of its [`Store`]; a
//! [`Repository`] wraps one and dereferences to it, so `repository.save(..)` (an operation)
//! and `repository.root()` (the store's) read alike at every call site. Targets work on the
//! plain [`Store`]: they sit below the operations and never call one.

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::Result;
use crate::id::ObjectId;
use crate::store::address::{StoreAddress, StoreOpener};
use crate::store::tree::Tree;
use crate::store::tree::diff::{Shape, TreeSource};
use crate::store::{Backend, OpenMode, Store, Unlock};

/// An open store and the engine's operations on it (`save`, `restore`, `list`, `gc`, …).
#[derive(Debug)]
pub struct Repository {
    store: Store,
    /// The directory the caller stands in, when it stands in one (the CLI's current directory):
    /// `latest` then means the newest snapshot of that directory's target ([`Repository::scope`]).
    scope: Option<PathBuf>,
}

impl Repository {
    /// Opens the store at `root`, creating it when it does not exist ([`Store::open`]).
    pub fn open(root: &Path) -> Result<Self> {
        Store::open(root).map(Self::opened)
    }

    /// [`Repository::open`], refusing when `mode` is [`OpenMode::Existing`] and there is no
    /// store at `root` ([`Store::open_in`]).
    pub fn open_in(root: &Path, mode: OpenMode) -> Result<Self> {
        Store::open_in(root, mode).map(Self::opened)
    }

    /// Opens the store whose objects `backend` holds, with its directory at `root`
    /// ([`Store::open_with`]).
    pub fn open_with(backend: Arc<dyn Backend>, root: &Path, mode: OpenMode) -> Result<Self> {
        Store::open_with(backend, root, mode).map(Self::opened)
    }

    /// Opens a store shared by several machines, its catalog cached in `cache`
    /// ([`Store::open_shared`]).
    pub fn open_shared(backend: Arc<dyn Backend>, cache: &Path, mode: OpenMode) -> Result<Self> {
        Store::open_shared(backend, cache, mode).map(Self::from)
    }

    /// [`Repository::open_shared`] for an encrypted store, unlocked by `unlock`
    /// ([`Store::open_shared_with`]).
    pub fn open_shared_with(
        backend: Arc<dyn Backend>,
        cache: &Path,
        mode: OpenMode,
        unlock: &Unlock,
    ) -> Result<Self> {
        Store::open_shared_with(backend, cache, mode, unlock).map(Self::from)
    }

    /// Opens the store at `address` (a directory or a shared store), unlocked by `unlock`
    /// ([`Store::open_address_with`]).
    pub fn open_address_with(address: &StoreAddress, mode: OpenMode, unlock: &Unlock) -> Result<Self> {
        Store::open_address_with(address, mode, unlock).map(Self::opened)
    }

    /// Opens the store `opener` locates and unlocks: the one open path of every front.
    pub fn open_located(opener: &StoreOpener, mode: OpenMode) -> Result<Self> {
        opener.open(mode).map(Self::opened)
    }

    /// The store underneath, for what only the store crate takes.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Scopes references to `dir`, the directory the caller stands in: with no target given,
    /// `latest` is the newest snapshot of the directory target holding `dir`, and an in-place
    /// restore of another directory needs its target named. A front with no current directory
    /// (an MCP server, the web app) leaves the scope unset and references stay session-wide.
    pub fn set_scope(&mut self, dir: Option<PathBuf>) {
        self.scope = dir;
    }

    /// The directory references are scoped to (see [`Repository::set_scope`]).
    pub fn scope(&self) -> Option<&Path> {
        self.scope.as_deref()
    }
}

impl Repository {
    /// A store just opened, with what a power cut took from its catalog back (best effort:
    /// an open never fails for it, and gc, which relies on it, asks again).
    fn opened(store: Store) -> Self {
        let repository = Self::from(store);
        let _ = repository.catch_up_after_power_cut();
        repository
    }
}

impl From<Store> for Repository {
    fn from(store: Store) -> Self {
        Self { store, scope: None }
    }
}

impl DerefMut for Repository {
    fn deref_mut(&mut self) -> &mut Store {
        &mut self.store
    }
}

// Generic code over trees (diffs, plans) takes the repository as it takes the store.
impl TreeSource for Repository {
    fn tree(&self, id: &ObjectId) -> Result<Arc<Tree>> {
        TreeSource::tree(&self.store, id)
    }

    fn shape(&self, id: &ObjectId) -> Result<Shape> {
        TreeSource::shape(&self.store, id)
    }

    fn alike(&self, old: &ObjectId, new: &ObjectId) -> bool {
        TreeSource::alike(&self.store, old, new)
    }
}

impl Deref for Repository {
    type Target = Store;

    fn deref(&self) -> &Store {
        &self.store
    }
}
