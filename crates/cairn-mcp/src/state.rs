//! What every tool call sees: the open store and the server's own settings.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cairn_lib::ops::permissions::{Capability, INVALID_CONFIG_CODE, check_agent_permission_with_default};
use cairn_lib::ops::watch::{AutoWatch, snapshot_wants_watcher};
use cairn_lib::{Repository, Snapshot};

use crate::error::ToolError;

/// Shared by every call of one server. Engine calls block, so handlers run on the blocking
/// pool with an `Arc` of this.
#[derive(Debug)]
pub struct ServerState {
    /// The open store.
    pub store: Arc<Repository>,
    /// The session the server is pinned to (`--session` / `CAIRN_SESSION`).
    pub pinned_session: Option<String>,
    /// Capabilities allowed for this server's lifetime (`--allow`).
    pub allow: Vec<Capability>,
    /// Capabilities refused for this server's lifetime whatever else allows them (`--deny`).
    pub deny: Vec<Capability>,
    /// Where the codecalc profile's workspaces live.
    pub workspace_root: Option<PathBuf>,
    /// The debug profile's live debug session, one at a time.
    pub debug: crate::profiles::debug::DebugSlot,
    /// The conversation the pi profile serves, once it is known.
    pub pi: crate::profiles::pi::PiSlot,
    /// Starts a change-journal watcher for a large directory the server saved.
    pub watch: Option<WatchStarter>,
    /// The directories a watcher was already asked for, so each is asked once per server.
    pub watch_asked: Mutex<HashSet<PathBuf>>,
}

/// Starts a change-journal watcher for a directory (the CLI's, which runs `cairn watch` as a
/// process of its own); an error is one line for the server's stderr.
#[derive(Clone)]
pub struct WatchStarter(pub Arc<StartWatch>);

/// What a [`WatchStarter`] calls: the store, and the directory to watch.
pub type StartWatch = dyn Fn(&Repository, &Path) -> Result<(), String> + Send + Sync;

impl std::fmt::Debug for WatchStarter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WatchStarter")
    }
}

impl ServerState {
    /// What the engine needs to know about every call of this server: its pin.
    pub fn context(&self) -> cairn_lib::ops::resolve::CallContext {
        cairn_lib::ops::resolve::CallContext { pinned_session: self.pinned_session.clone() }
    }

    /// Refuses `capability` unless the user allowed it. The store's config is read again on
    /// each call; an invalid config refuses, and also warns on stderr (never stdout, which
    /// carries the protocol on stdio).
    pub fn permit(&self, capability: Capability) -> Result<(), ToolError> {
        self.permit_with_default(capability, None)
    }

    /// [`ServerState::permit`] for a tool the profile's original lets agents use without a
    /// gate (arcave's `rollback`, debug's `snapshot_delete`, …): allowed unless the user said
    /// otherwise (`cairn agent deny`, the store's settings, `cairn mcp --deny`).
    pub fn permit_ungated(&self, capability: Capability) -> Result<(), ToolError> {
        self.permit_with_default(capability, Some(true))
    }

    /// [`ServerState::permit`] with `default` replacing the capability's built-in default when
    /// the store's settings leave it unset.
    pub fn permit_with_default(
        &self,
        capability: Capability,
        default: Option<bool>,
    ) -> Result<(), ToolError> {
        check_agent_permission_with_default(&self.store, capability, &self.allow, &self.deny, default)
            .map_err(|err| {
                if err.code() == Some(INVALID_CONFIG_CODE) {
                    warn(&err.render(&crate::words::CliWords));
                }
                ToolError::from(err)
            })
    }
}

impl ServerState {
    /// After a save: starts a watcher for each directory snapshot of `hooks.watch_from` entries
    /// or more (with `mcp.watch`), so the next saves of the tree stat only what changed. The
    /// watcher starts on a thread of its own: the tool call does not wait for it.
    pub fn saved<'a>(&self, snapshots: impl IntoIterator<Item = &'a Snapshot>) {
        let Some(starter) = &self.watch else { return };
        // Read now, not at start: `cairn config set` applies to a running server.
        let Ok(config) = self.store.reload_config() else { return };
        for snapshot in snapshots {
            if !snapshot_wants_watcher(&config, AutoWatch::Mcp, snapshot) {
                continue;
            }
            let dir = PathBuf::from(&snapshot.target);
            let mut asked = self.watch_asked.lock().unwrap_or_else(|p| p.into_inner());
            if !asked.insert(dir.clone()) {
                continue;
            }
            drop(asked);
            let (store, starter) = (Arc::clone(&self.store), starter.clone());
            std::thread::spawn(move || {
                if let Err(e) = (starter.0)(&store, &dir) {
                    warn(&format!("could not start a watcher for {}: {e}", dir.display()));
                }
            });
        }
    }
}

/// Writes one warning line to stderr. Failing to write a warning is not worth failing a call.
pub fn warn(message: &str) {
    let _ = writeln!(std::io::stderr(), "cairn mcp: warning: {message}");
}

/// The server's process environment, as the engine takes it: the engine reads none itself, so
/// the agents' variables (`GEMINI_CLI_HOME`, `CLAUDE_CONFIG_DIR`, …) reach it from here.
pub(crate) fn process_env() -> cairn_lib::EnvLookup {
    Arc::new(|name: &str| std::env::var_os(name))
}

/// Where the agents keep their files, for the server's working directory: the one lookup every
/// profile's conversation tools use.
pub fn agent_places() -> Result<cairn_lib::ops::transcript::AgentPlaces, ToolError> {
    let cwd = std::env::current_dir().map_err(|e| {
        crate::error::internal(format!(
            "cannot read the server's working directory ({e}); restart the server in the project"
        ))
    })?;
    cairn_lib::ops::transcript::AgentPlaces::from_env(&process_env(), cwd.to_string_lossy().into_owned())
}
