//! Settings resolved once per command: the store path and the session choice, from flags and
//! the environment (`CAIRN_STORE`, `XDG_DATA_HOME`, `HOME`, `CAIRN_SESSION`).

use std::path::PathBuf;

use cairn_lib::Store;
use cairn_lib::ops::resolve::SessionChoice;

use crate::commands::GlobalArgs;
use crate::error::CommandResult;

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

/// Opens the store.
pub fn open_store(global: &GlobalArgs) -> CommandResult<Store> {
    let mut store = Store::open(&store_path(global)?)?;
    store.set_notifier(crate::printer::Printer::notice);
    Ok(store)
}

/// What the engine needs to know about every command: `CAIRN_SESSION`, the pin.
pub fn call_context() -> cairn_lib::ops::resolve::CallContext {
    cairn_lib::ops::resolve::CallContext {
        pinned_session: std::env::var("CAIRN_SESSION").ok().filter(|s| !s.is_empty()),
    }
}

/// The session choice: `--session` for this command, `CAIRN_SESSION` as the pin.
pub fn session_choice(session: Option<&str>) -> SessionChoice {
    SessionChoice {
        session: session.map(str::to_owned),
        pinned: std::env::var("CAIRN_SESSION").ok().filter(|s| !s.is_empty()),
    }
}
