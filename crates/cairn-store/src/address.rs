//! Where a store is and how every front opens it: a directory, or a shared store (an S3 bucket
//! prefix) with the folder that caches catalogs on this machine. [`StoreOpener::from_env`] is
//! the one place that decides, from the environment a front passes in (the engine reads none
//! itself), where the store is, how it is unlocked and where its catalog is cached; the CLI,
//! the MCP server and the UI all open through it, so they cannot disagree about a store.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::backend::LocalBackend;
use super::remote::STORE_OBJECT;
use super::s3::{S3Backend, S3Settings};
use super::unlock::Prompt;
use super::{OpenMode, Store, Unlock};
use crate::error::{Error, Result};

/// The environment a front hands the engine: a variable's value by name. The engine never
/// reads the process environment; a test or a server passes any lookup it likes.
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<OsString> + Send + Sync>;

/// The engine's reads of the environment a front handed it: every variable the engine reads
/// is named at a call of [`env::var`] or [`env::var_os`], so the reads are easy to find (and
/// the check that library words name no variable knows these are reads, not words).
pub mod env {
    use std::ffi::OsString;
    use std::path::PathBuf;

    use super::EnvLookup;

    /// Variable `name` of `env`; unset and empty read alike (an empty variable is usually an
    /// unset one in a script).
    pub fn var_os(name: &str, env: &EnvLookup) -> Option<OsString> {
        env(name).filter(|v| !v.is_empty())
    }

    /// Variable `name` of `env` as a path (see [`var_os`]).
    pub fn var(name: &str, env: &EnvLookup) -> Option<PathBuf> {
        var_os(name, env).map(PathBuf::from)
    }
}

/// The code of the refusal when no store was given and no home directory is known, for a front
/// to say which of its settings would give one.
pub const STORE_UNKNOWN: &str = "STORE_UNKNOWN";

/// The code of the refusal when a remote store's catalog cache has no folder (no cache or home
/// directory is known), for a front to say which of its settings would give one.
pub const CACHE_HOME_UNKNOWN: &str = "CACHE_HOME_UNKNOWN";

/// A store as every front opens it: where it is and how it is unlocked.
#[derive(Debug, Clone)]
pub struct StoreOpener {
    /// Where the store is.
    pub address: StoreAddress,
    /// How it is unlocked when it turns out to be encrypted.
    pub unlock: Unlock,
}

impl StoreOpener {
    /// Resolves the store from `flag` (`--store`) and `env`: the flag, else `CAIRN_STORE`, else
    /// `$XDG_DATA_HOME/cairn`, else `~/.local/share/cairn`; an `s3://BUCKET/PREFIX` store takes
    /// `s3_options` (the AWS settings, asked only for such a store) and caches its catalog below
    /// `$XDG_CACHE_HOME/cairn`, else `~/.cache/cairn`. The secret of an encrypted store comes
    /// from `CAIRN_PASSWORD`, `CAIRN_PASSWORD_FILE` or `CAIRN_KEY_FILE`, else from `prompt`.
    pub fn from_env(
        flag: Option<&Path>,
        env: EnvLookup,
        s3_options: impl FnOnce() -> Vec<(String, String)>,
        prompt: Option<Prompt>,
    ) -> Result<Self> {
        let path = store_path(flag, &env)?;
        let address = match path.to_str().and_then(S3Settings::parse) {
            None => StoreAddress::Dir(path),
            Some(parsed) => {
                let mut settings = parsed?;
                settings.options = s3_options();
                let cache_home = cache_home(&env).ok_or_else(|| {
                    Error::invalid(
                        "cannot find a cache folder for the remote store's catalog: no cache or home directory is known",
                    )
                    .with_code(CACHE_HOME_UNKNOWN)
                })?;
                StoreAddress::S3 { settings, cache_home }
            }
        };
        let unlock = Self::unlock_from_env(env, &address, prompt);
        Ok(Self { address, unlock })
    }

    /// How the store at `address` is unlocked: its secret from `env`, else `prompt` (see
    /// [`Unlock::from_env`]), and its catalog cached below `$XDG_CACHE_HOME/cairn`, else
    /// `~/.cache/cairn`.
    pub fn unlock_from_env(env: EnvLookup, address: &StoreAddress, prompt: Option<Prompt>) -> Unlock {
        let cache = cache_home(&env);
        let unlock = Unlock::from_env(env, address.to_string(), prompt);
        match cache {
            Some(dir) => unlock.cache_home(dir),
            None => unlock,
        }
    }

    /// How the destination of a copy at `address` is unlocked: see [`Unlock::for_destination`]
    /// (`password_file`, else the `CAIRN_TO_*` secrets, else the store's own), with its
    /// catalog cached as [`StoreOpener::unlock_from_env`] caches it.
    pub fn destination_unlock(
        env: EnvLookup,
        address: &StoreAddress,
        password_file: Option<PathBuf>,
        prompt: Option<Prompt>,
    ) -> Unlock {
        let cache = cache_home(&env);
        let unlock = Unlock::for_destination(env, address.to_string(), password_file, prompt);
        match cache {
            Some(dir) => unlock.cache_home(dir),
            None => unlock,
        }
    }

    /// Opens the store, unlocking it when it is encrypted.
    pub fn open(&self, mode: OpenMode) -> Result<Store> {
        Store::open_address_with(&self.address, mode, &self.unlock)
    }
}

/// Where the store is: `flag`, else `CAIRN_STORE`, else `$XDG_DATA_HOME/cairn`, else
/// `~/.local/share/cairn`.
pub fn store_path(flag: Option<&Path>, env: &EnvLookup) -> Result<PathBuf> {
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = env::var("CAIRN_STORE", env) {
        return Ok(p);
    }
    if let Some(p) = env::var("XDG_DATA_HOME", env) {
        return Ok(p.join("cairn"));
    }
    match env::var("HOME", env) {
        Some(home) => Ok(home.join(".local/share/cairn")),
        None => Err(Error::invalid("cannot find a store: none was given and no home directory is known")
            .with_code(STORE_UNKNOWN)),
    }
}

/// Where catalogs of remote and encrypted stores are cached: `$XDG_CACHE_HOME/cairn`, else
/// `~/.cache/cairn`.
fn cache_home(env: &EnvLookup) -> Option<PathBuf> {
    match (env::var("XDG_CACHE_HOME", env), env::var("HOME", env)) {
        (Some(cache), _) => Some(cache.join("cairn")),
        (None, Some(home)) => Some(home.join(".cache/cairn")),
        (None, None) => None,
    }
}

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
    pub fn open_object_dir(dir: &Path, mode: OpenMode, unlock: &Unlock) -> Result<Self> {
        let (backend, cache_home) = object_dir_backend(dir, unlock)?;
        Self::open_shared_with(backend, cache_home, mode, unlock)
    }
}

/// The backend of the encrypted store whose objects are the files below `dir`, and the folder
/// its catalog is cached in.
pub fn object_dir_backend<'u>(
    dir: &Path,
    unlock: &'u Unlock,
) -> Result<(Arc<dyn super::backend::Backend>, &'u Path)> {
    let Some(cache_home) = unlock.cache_dir() else {
        return Err(Error::invalid(format!(
            "the encrypted store at {} needs a folder on this machine to cache its catalog in, and none was given",
            dir.display()
        )));
    };
    let dir = std::path::absolute(dir).map_err(|e| Error::io("resolve", dir, e))?;
    let tmp = dir.join("tmp");
    super::backend::create_dir_durably(&tmp)?;
    Ok((Arc::new(LocalBackend::new(dir, tmp)), cache_home))
}
