//! Settings resolved once per command: the store and the session choice. The CLI reads the
//! process environment and hands it to the engine, which decides where the store is and how it
//! is unlocked ([`StoreOpener::from_env`]); the terminal prompt for a password is `password.rs`.

use std::path::PathBuf;
use std::sync::Arc;

use cairn_lib::{EnvLookup, Repository, StoreAddress, StoreOpener, Unlock};

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

/// The process environment, as the engine takes it: the CLI is the one front that reads it.
pub fn process_env() -> EnvLookup {
    Arc::new(|name: &str| std::env::var_os(name))
}

/// The store this command works on, and how it is unlocked, as the engine decides it from
/// `--store` and the environment (see [`StoreOpener::from_env`]); an encrypted store's secret
/// not in the environment is asked on the terminal.
pub fn opener(global: &GlobalArgs) -> CommandResult<StoreOpener> {
    StoreOpener::from_env(
        global.store.as_deref(),
        process_env(),
        crate::aws::settings_from_env,
        Some(prompt()),
    )
    .map_err(worded)
}

/// The engine's refusals that a setting of the CLI's would answer, in the CLI's words.
fn worded(err: cairn_lib::Error) -> crate::error::CommandError {
    match err.code() {
        Some(cairn_lib::STORE_UNKNOWN) => {
            crate::error::usage("cannot find a store: set --store, CAIRN_STORE or HOME")
        }
        Some(cairn_lib::CACHE_HOME_UNKNOWN) => crate::error::usage(
            "cannot find a cache folder for the remote store's catalog: set XDG_CACHE_HOME or HOME",
        ),
        _ => err,
    }
}

/// Where the store is: `--store`, else `$CAIRN_STORE`, else `$XDG_DATA_HOME/cairn`, else
/// `~/.local/share/cairn`.
pub fn store_path(global: &GlobalArgs) -> CommandResult<PathBuf> {
    cairn_lib::store_path(global.store.as_deref(), &process_env()).map_err(worded)
}

/// Where the store is (see [`opener`]).
pub fn store_address(global: &GlobalArgs) -> CommandResult<StoreAddress> {
    Ok(opener(global)?.address)
}

/// How an encrypted store at `address` is unlocked (see [`opener`]).
pub fn unlock(address: &StoreAddress) -> Unlock {
    StoreOpener::unlock_from_env(process_env(), address, Some(prompt()))
}

/// The terminal prompt for a store's password.
fn prompt() -> cairn_lib::Prompt {
    Arc::new(crate::password::store_secret)
}

/// Opens the store, scoped to the current directory; a command that only reads refuses a store that does not exist (see
/// [`GlobalArgs::open_mode`]) rather than leave an empty one behind.
pub fn open_store(global: &GlobalArgs) -> CommandResult<Repository> {
    open_with(&opener(global)?, global)
}

/// Opens the destination of a copy as [`open_store`] does, unlocked by its own secret:
/// `password_file` (`--to-password-file`), else `CAIRN_TO_PASSWORD`, `CAIRN_TO_PASSWORD_FILE`
/// or `CAIRN_TO_KEY_FILE`, else the store's usual secret, else the prompt, which names it.
pub fn open_destination(global: &GlobalArgs, password_file: Option<PathBuf>) -> CommandResult<Repository> {
    let mut opener = opener(global)?;
    opener.unlock =
        StoreOpener::destination_unlock(process_env(), &opener.address, password_file, Some(prompt()));
    open_with(&opener, global)
}

fn open_with(opener: &StoreOpener, global: &GlobalArgs) -> CommandResult<Repository> {
    let mut store = Repository::open_located(opener, global.open_mode)?;
    store.set_notifier(crate::printer::Printer::notice);
    store.set_scope(scope());
    Ok(store)
}

/// The directory a command works on, the one it is run in: `latest` is that directory's newest
/// snapshot, and restoring another directory in place needs its target named.
pub fn scope() -> Option<PathBuf> {
    std::env::current_dir().and_then(|d| d.canonicalize()).ok()
}

/// What the engine needs to know about every command: `CAIRN_SESSION`, the pin.
pub fn call_context() -> cairn_lib::ops::resolve::CallContext {
    cairn_lib::ops::resolve::CallContext {
        pinned_session: std::env::var("CAIRN_SESSION").ok().filter(|s| !s.is_empty()),
    }
}
