//! The cairn store: the floor every other part of cairn stands on.
//!
//! A store is a local directory (catalog, settings, locks, restore journal) and a [`Backend`]
//! holding the objects: by default the directory's own `objects/`, or any other backend given
//! to [`Store::open_with`]. This crate holds the handle ([`Store`]), the backends (local, S3,
//! encrypted), packs, the chunker, the catalog, Merkle trees, ids, settings, the error type and
//! the plain model types the catalog and the record objects hold (snapshots, sessions, moments,
//! target kinds, capabilities). It knows nothing of targets, operations or agents: those are
//! the engine's (`cairn-lib`), which builds on this crate's public API.

#![warn(missing_docs)]

/// Gives an enum that serialises as one word the JSON schema of a plain string, as the field
/// had before it was an enum, so the schemas the MCP tools publish do not change.
#[macro_export]
#[doc(hidden)]
macro_rules! word_schema {
    ($ty:ty) => {
        impl schemars::JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($ty).into()
            }

            fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                <String as schemars::JsonSchema>::json_schema(generator)
            }

            fn inline_schema() -> bool {
                true
            }
        }
    };
}

pub mod address;
pub mod backend;
pub mod catalog;
pub mod chunker;
pub mod config;
#[cfg(test)]
mod contract;
pub mod crypto;
pub mod duration;
pub mod error;
pub mod fault;
pub mod fetch;
mod frame;
pub mod id;
pub mod keys;
pub mod layout;
pub mod lock;
pub mod model;
pub mod moment_records;
pub mod name;
mod names;
pub mod pack;
pub mod pack_cache;
pub mod pack_recover;
mod pack_watch;
mod publisher;
pub mod remote;
mod remote_gc;
pub mod reopen;
pub mod s3;
pub mod sealed;
pub mod snapshot_records;
pub mod time;
pub mod tree;
mod unlock;
pub mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::error::{Error, IoContext, Result};
use crate::id::{ObjectId, SessionId};
pub use backend::{Backend, LocalBackend, MemoryBackend, Staged};
use catalog::Catalog;
pub use crypto::Secret;
use layout::{Created, Layout};
pub use lock::LockGuard;
pub use unlock::{Prompt, SecretUse, Unlock, secret_from_env, secret_from_key_file};

/// Receives one-line notices while a command runs.
type Notify = dyn Fn(&str) + Send + Sync;

/// An open cairn store.
pub struct Store {
    layout: Layout,
    backend: Arc<dyn Backend>,
    catalog: Catalog,
    config: Config,
    /// Whether this open created the store, so that a refusal can take it away again.
    created: Created,
    /// Where one-line notices go (a front end shows them at once), if anywhere.
    notifier: Option<Box<Notify>>,
    /// Whether other machines write to the same objects (the catalog is a cache of them).
    shared: bool,
    /// Packs a shared store's gc condemned: no save dedups against them (read by the sync).
    condemned: std::sync::Mutex<std::collections::HashSet<String>>,
    /// An encrypted store's repository key and the key object that unlocked it.
    unlocked: Option<unlock::Unlocked>,
    /// Ranges of a remote store's packs kept on this machine (none for a local store).
    pack_cache: Option<pack_cache::PackCache>,
    /// Large trees this command read or wrote, kept decoded for its diffs.
    trees: crate::tree::memo::TreeMemo,
    /// The last shared frames this command decoded.
    frames: frame::FrameCache,
    /// Changes to a local store's packs heard since its last pack check, in a process that
    /// asked for them ([`Store::watch_packs`]).
    pack_watch: std::sync::Mutex<Option<pack_watch::PackWatch>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("root", &self.layout.root).finish()
    }
}

/// Whether opening a store may create it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpenMode {
    /// Create the store when there is none (commands that write).
    #[default]
    CreateIfMissing,
    /// Refuse when there is no store (commands that only read: they have nothing to show).
    Existing,
}

impl Store {
    /// Opens the store at `root`, creating it (0700) when it does not exist, checking its format
    /// version, and cleaning up what an interrupted command left half-written.
    pub fn open(root: &Path) -> Result<Self> {
        Self::open_in(root, OpenMode::CreateIfMissing)
    }

    /// [`Store::open`], refusing in one line when `mode` is [`OpenMode::Existing`] and there is
    /// no store at `root`, so that a command that only reads leaves nothing behind.
    pub fn open_in(root: &Path, mode: OpenMode) -> Result<Self> {
        let layout = Layout { root: absolute(root)? };
        if layout.root.join(remote::STORE_OBJECT).exists() {
            // An encrypted store directory holds objects only; its catalog is cached elsewhere.
            return Err(Error::invalid(format!(
                "the store at {} is encrypted and must be opened with its password or key file",
                layout.root.display()
            ))
            .hint(crate::error::Hint::GiveSecret));
        }
        let backend = Arc::new(LocalBackend::new(layout.objects(), layout.tmp()));
        Self::open_with(backend, &layout.root, mode)
    }

    /// Opens the store whose objects `backend` holds, keeping its catalog, settings, locks and
    /// restore journal in the directory `root`.
    pub fn open_with(backend: Arc<dyn Backend>, root: &Path, mode: OpenMode) -> Result<Self> {
        let catalog = absolute(root)?.join("catalog.db");
        let fresh = !catalog.exists();
        let store = Self::open_unlocked(backend, root, mode, None)?;
        if let Err(lost) = store.refuse_lost_catalog(fresh) {
            drop(store);
            if fresh {
                // The catalog this open made is empty: removed again, so the next command
                // finds it missing too, and so does a repair.
                for suffix in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", catalog.display()));
                }
            }
            return Err(lost);
        }
        Ok(store)
    }

    /// [`Store::open_in`] for `repair`: a catalog that lost track of the objects is what it
    /// comes to rebuild, so it is not refused.
    pub fn open_to_rebuild(root: &Path) -> Result<Self> {
        let layout = Layout { root: absolute(root)? };
        let backend = Arc::new(LocalBackend::new(layout.objects(), layout.tmp()));
        Self::open_unlocked(backend, &layout.root, OpenMode::Existing, None)
    }

    /// Refuses a catalog that lists nothing while the store holds snapshot records, or, when
    /// there was no catalog file (`fresh`), packs: it was lost (deleted, emptied) and made
    /// anew, and a store that looks empty would invite a save on top and a gc of everything it
    /// does not know. `repair` adds the records back. An existing catalog that lists nothing
    /// beside packs is a store whose snapshots were all removed (a killed gc left their packs).
    fn refuse_lost_catalog(&self, fresh: bool) -> Result<()> {
        if !self.catalog.lists_nothing()? {
            return Ok(());
        }
        let records = self.backend.list("records/")?.len();
        let packs = if records == 0 && fresh { self.backend.list("packs/")?.len() } else { 0 };
        if records == 0 && packs == 0 {
            return Ok(());
        }
        let holds = if records > 0 {
            format!("{records} snapshot record(s)")
        } else {
            format!("{packs} pack(s) of data")
        };
        Err(Error::corrupt(format!(
            "the store's catalog lists nothing, but the store holds {holds}: the catalog was lost or emptied, and a repair rebuilds it from them"
        ))
        .with_code("catalog_lost")
        .hint(crate::error::Hint::Run(crate::error::Operation::Repair)))
    }

    /// [`Store::open_with`] for an encrypted store's objects, with its key: recovery reads
    /// pack headers, so the key must be there before it runs.
    fn open_unlocked(
        backend: Arc<dyn Backend>,
        root: &Path,
        mode: OpenMode,
        unlocked: Option<unlock::Unlocked>,
    ) -> Result<Self> {
        let layout = Layout { root: absolute(root)? };
        if mode == OpenMode::Existing && !layout.format_file().exists() {
            // A reader never makes a store; saving does, so that is the next step.
            return Err(Error::not_found(format!("there is no store at {}", layout.root.display()))
                .hint(crate::error::Hint::Run(crate::error::Operation::Save))
                .with_code(crate::error::NO_STORE));
        }
        let created = layout.init_or_check()?;
        let catalog = Catalog::open(&layout.catalog())?;
        let config = Config::load(&layout.config())?;
        let store = Self {
            layout,
            backend,
            catalog,
            config,
            created,
            notifier: None,
            shared: false,
            condemned: Default::default(),
            unlocked,
            pack_cache: None,
            trees: Default::default(),
            frames: Default::default(),
            pack_watch: Default::default(),
        };
        store.recover()?;
        Ok(store)
    }

    /// Sends one-line notices (such as an interrupted restore found and being resolved) to
    /// `notify` as they happen, before the work they announce.
    pub fn set_notifier(&mut self, notify: impl Fn(&str) + Send + Sync + 'static) {
        self.notifier = Some(Box::new(notify));
    }

    /// Sends one notice line to the notifier, if there is one.
    pub fn notice(&self, line: &str) {
        if let Some(notify) = &self.notifier {
            notify(line);
        }
    }

    /// The store's directory.
    pub fn root(&self) -> &Path {
        &self.layout.root
    }

    /// The store's settings.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Reads the settings again from disk (a long-running server sees `cairn config` changes).
    pub fn reload_config(&self) -> Result<Config> {
        Config::load(&self.layout.config())
    }

    /// Takes the settings on disk as the store's from now on: a process that keeps the store
    /// open (the watcher running saves) applies each `cairn config` change to the next save.
    pub fn refresh_config(&mut self) -> Result<()> {
        self.config = self.reload_config()?;
        Ok(())
    }

    /// Replaces the store's settings (validated by the caller through [`Config::set`]).
    pub fn save_config(&mut self, config: Config) -> Result<()> {
        config.save(&self.layout.config(), &self.layout.tmp())?;
        self.config = config;
        Ok(())
    }

    /// The backend holding the store's objects.
    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// The backend, for a thread that outlives a borrow of the store.
    pub fn backend_shared(&self) -> Arc<dyn Backend> {
        Arc::clone(&self.backend)
    }

    /// The repository key of an encrypted store: packs seal their blobs and header with it.
    pub fn sealing(&self) -> Option<&crypto::RepoKey> {
        self.unlocked.as_ref().map(|u| u.key.as_ref())
    }

    /// True when the store is encrypted.
    pub fn is_encrypted(&self) -> bool {
        self.unlocked.is_some()
    }

    /// The id of the key object that unlocked an encrypted store.
    pub fn unlocked_key_id(&self) -> Option<&str> {
        self.unlocked.as_ref().map(|u| u.key_id.as_str())
    }

    /// Paths inside the store's directory.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The catalog: snapshots, sessions, names, the chunk index and the stat caches.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The large trees this command read or wrote, kept decoded for its diffs.
    pub fn trees(&self) -> &crate::tree::memo::TreeMemo {
        &self.trees
    }

    /// Reads blob `id` back, checking its hash.
    pub fn read_blob(&self, id: &ObjectId) -> Result<Vec<u8>> {
        self.read_blob_at(id, self.catalog.blob_location(id)?)
    }

    /// [`Store::read_blob`], found through `lookups`, whose read transactions are held across
    /// many lookups: a restore reads a blob a file, and a lookup in a transaction of its own
    /// cost five system calls and a page read.
    pub fn read_blob_held(&self, lookups: &catalog::BlobLookups<'_>, id: &ObjectId) -> Result<Vec<u8>> {
        let loc = match lookups.location(id)? {
            Some(loc) => Some(loc),
            // Indexed after the held transaction began: looked up afresh.
            None => self.catalog.blob_location(id)?,
        };
        self.read_blob_at(id, loc)
    }

    /// Reads blob `id` from `loc`, where the index places it.
    fn read_blob_at(&self, id: &ObjectId, loc: Option<catalog::BlobLocation>) -> Result<Vec<u8>> {
        let loc = loc.ok_or_else(|| {
            Error::corrupt(format!("the store has lost object {id}"))
                .hint(crate::error::Hint::Run(crate::error::Operation::Check))
        })?;
        if let Some(within) = loc.within {
            // Only a local, unencrypted store frames: its packs are read as they are.
            let stored = || self.backend.get_range(&loc.pack_key, loc.offset, loc.length);
            let plain = self.frames.get_or_decode(&loc.pack_key, loc.offset, stored)?;
            return frame::member(id, &plain, within, loc.raw_length);
        }
        let Some(cache) = &self.pack_cache else {
            let stored = self.backend.get_range(&loc.pack_key, loc.offset, loc.length)?;
            let stored = pack::unseal(self.sealing(), id, stored)?;
            return pack::decode(id, &stored, loc.compressed, loc.raw_length);
        };
        // The cache holds the bytes as the bucket does (sealed, for an encrypted store).
        if let Some(stored) = cache.read(&loc.pack_key, loc.offset, loc.length)? {
            let plain = pack::unseal(self.sealing(), id, stored)
                .and_then(|s| pack::decode(id, &s, loc.compressed, loc.raw_length));
            match plain {
                Ok(plain) => return Ok(plain),
                // A damaged cache file: dropped, and the bytes fetched again below.
                Err(_) => cache.drop_covering(&loc.pack_key, loc.offset, loc.length)?,
            }
        }
        let stored = self.backend.get_range(&loc.pack_key, loc.offset, loc.length)?;
        // Trees are small and read again by every diff and restore; content read one blob at
        // a time is not kept (a prefetch caches content in whole ranges).
        let keep = (loc.kind == pack::BlobKind::Tree).then(|| stored.clone());
        let plain =
            pack::decode(id, &pack::unseal(self.sealing(), id, stored)?, loc.compressed, loc.raw_length)?;
        if let Some(stored) = keep {
            cache.insert(&loc.pack_key, loc.offset, &stored)?;
        }
        Ok(plain)
    }

    /// Takes the writer lock of one target, refusing when another command holds it.
    pub fn lock_target(&self, target: &str, command: &str) -> Result<(LockGuard, LockGuard)> {
        let store_lock = lock::lock_store(&self.layout.locks(), false, command)?;
        let name = &ObjectId::of(target.as_bytes()).to_hex()[..24];
        let target_lock = lock::lock_exclusive(&self.layout.locks(), name, target, command)?;
        Ok((store_lock, target_lock))
    }

    /// Takes the whole store for gc.
    pub fn lock_store_exclusive(&self, command: &str) -> Result<LockGuard> {
        lock::lock_store(&self.layout.locks(), true, command)
    }

    /// The session pointed to by `<store>/current_session`, if any.
    pub fn current_session_pointer(&self) -> Result<Option<String>> {
        if self.shared {
            return self.shared_pointer();
        }
        let path = self.layout.current_session();
        match std::fs::read_to_string(&path) {
            Ok(t) if !t.trim().is_empty() => Ok(Some(t.trim().to_owned())),
            Ok(_) => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("read", &path, e)),
        }
    }

    /// Points `<store>/current_session` at `id`, or clears it.
    pub fn set_current_session_pointer(&self, id: Option<SessionId>) -> Result<()> {
        if self.shared {
            return self.set_shared_pointer(id);
        }
        let path = self.layout.current_session();
        match id {
            Some(id) => backend::replace_file(&self.layout.tmp(), id.to_string().as_bytes(), &path, "write"),
            None => match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io("clear", &path, e)),
                _ => Ok(()),
            },
        }
    }

    /// Cleans up after commands that died: temp files and packs of processes that are gone.
    fn recover(&self) -> Result<()> {
        let tmp = self.layout.tmp();
        for entry in std::fs::read_dir(&tmp).at("list", &tmp)?.flatten() {
            let name = entry.file_name();
            let pid = name.to_string_lossy().split('-').next().and_then(|p| p.parse::<u32>().ok());
            if pid.is_some_and(|p| !layout::pid_alive(p)) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        for (key, pid) in self.catalog.pending_packs()? {
            if layout::pid_alive(pid) {
                continue;
            }
            // The pack was published but not indexed: index it from its own header, since the
            // pack is complete (it was renamed into place only after it was flushed).
            match self.backend.get(&key) {
                Ok(bytes) => match pack::read_header(&key, &bytes, self.sealing()) {
                    Ok(entries) => {
                        self.catalog.commit_pack(&key, bytes.len() as u64, &entries, catalog::Flush::Now)?
                    }
                    // Renamed into place only once flushed, so a header that does not read
                    // is damage: the file is kept for `repair`, which recovers it blob by blob.
                    Err(_) => self.catalog.forget_pack(&key)?,
                },
                Err(_) => self.catalog.forget_pack(&key)?,
            }
        }
        Ok(())
    }
}

impl Store {
    /// Removes the store when this open created it and nothing has been stored in it, so a
    /// command refused before its first write (a save whose store would lie inside the tree
    /// it captures) leaves no stray store behind. Anything else is left alone.
    pub fn discard_if_new(&self) -> Result<()> {
        if self.created == Created::No {
            return Ok(());
        }
        // Alone on the store, or not at all: saves, restores and gc hold the store lock. Other
        // writes (a session, a setting) show in the checks below once committed.
        let Ok(_alone) = self.lock_store_exclusive("cairn") else {
            return Ok(());
        };
        let layout = &self.layout;
        let unused = self.backend.list("")?.is_empty()
            && self.catalog.is_empty()?
            && is_empty_dir(&layout.journal())?
            && !layout.config().exists()
            && !layout.current_session().exists();
        if unused {
            layout.remove_new_store(self.created)?;
        }
        Ok(())
    }
}

fn is_empty_dir(dir: &Path) -> Result<bool> {
    Ok(std::fs::read_dir(dir).at("list", dir)?.next().is_none())
}

fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).at("resolve", path)
}
