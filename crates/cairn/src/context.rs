//! Settings resolved once per command: the store and the session choice, from flags and the
//! environment (`CAIRN_STORE`, `XDG_DATA_HOME`, `XDG_CACHE_HOME`, `HOME`, `AWS_*`,
//! `CAIRN_SESSION`), and how to unlock an encrypted store (`password.rs`).

use std::path::PathBuf;

use cairn_lib::{S3Settings, Store, StoreAddress, Unlock};

use crate::commands::GlobalArgs;
use crate::error::CommandResult;

/// Reads `--store`'s value: an empty one (`--store ""`, often an unset variable in a script)
/// is refused in one line saying so, where clap's own refusal of an empty path read as if no
/// value had been given at all.
pub fn store_flag(value: &str) -> Result<PathBuf, String> {
    if value.is_empty() {
        return Err("the store's path is empty; give a directory or s3://BUCKET/PREFIX, or leave out --store to use the default store".to_owned());
    }
    Ok(PathBuf::from(value))
}

/// Where the store is: `--store`, else `$CAIRN_STORE`, else `$XDG_DATA_HOME/cairn`, else
/// `~/.local/share/cairn`.
pub fn store_path(global: &GlobalArgs) -> CommandResult<PathBuf> {
    if let Some(p) = &global.store {
        return Ok(p.clone());
    }
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(p) = env("CAIRN_STORE") {
        return Ok(p);
    }
    if let Some(p) = env("XDG_DATA_HOME") {
        return Ok(p.join("cairn"));
    }
    match env("HOME") {
        Some(home) => Ok(home.join(".local/share/cairn")),
        None => Err(crate::error::usage("cannot find a store: set --store, CAIRN_STORE or HOME")),
    }
}

/// Where the store is: a directory, or `s3://BUCKET/PREFIX` (from `--store` or
/// `CAIRN_STORE`) with the AWS settings of the environment and a catalog cache below
/// `$XDG_CACHE_HOME/cairn`, else `~/.cache/cairn`.
pub fn store_address(global: &GlobalArgs) -> CommandResult<StoreAddress> {
    let path = store_path(global)?;
    let Some(parsed) = path.to_str().and_then(S3Settings::parse) else {
        return Ok(StoreAddress::Dir(path));
    };
    let mut settings = parsed?;
    settings.options = crate::aws::settings_from_env();
    let cache_home = cache_home().ok_or_else(|| {
        crate::error::usage(
            "cannot find a cache folder for the remote store's catalog: set XDG_CACHE_HOME or HOME",
        )
    })?;
    Ok(StoreAddress::S3 { settings, cache_home })
}

/// Where catalogs of remote and encrypted stores are cached: `$XDG_CACHE_HOME/cairn`, else
/// `~/.cache/cairn`.
fn cache_home() -> Option<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    match (env("XDG_CACHE_HOME"), env("HOME")) {
        (Some(cache), _) => Some(cache.join("cairn")),
        (None, Some(home)) => Some(home.join(".cache/cairn")),
        (None, None) => None,
    }
}

/// How an encrypted store at `address` is unlocked: its secret asked of `password.rs` only
/// when it turns out to be encrypted, and the cache folder of its catalog.
pub fn unlock(address: &StoreAddress) -> Unlock {
    let location = address.to_string();
    let unlock = Unlock::asking(move |purpose| crate::password::store_secret(purpose, &location));
    match cache_home() {
        Some(dir) => unlock.cache_home(dir),
        None => unlock,
    }
}

/// Opens the store; a command that only reads refuses a store that does not exist (see
/// [`GlobalArgs::open_mode`]) rather than leave an empty one behind.
pub fn open_store(global: &GlobalArgs) -> CommandResult<Store> {
    let address = store_address(global)?;
    let mut store = Store::open_address_with(&address, global.open_mode, &unlock(&address))?;
    store.set_notifier(crate::printer::Printer::notice);
    Ok(store)
}

/// What the engine needs to know about every command: `CAIRN_SESSION`, the pin.
pub fn call_context() -> cairn_lib::ops::resolve::CallContext {
    cairn_lib::ops::resolve::CallContext {
        pinned_session: std::env::var("CAIRN_SESSION").ok().filter(|s| !s.is_empty()),
    }
}
