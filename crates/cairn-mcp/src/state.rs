//! What every tool call sees: the open store and the server's own settings.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use cairn_lib::Store;
use cairn_lib::ops::agent::{Capability, INVALID_CONFIG_CODE, check_agent_permission};

use crate::error::ToolError;

/// Shared by every call of one server. Engine calls block, so handlers run on the blocking
/// pool with an `Arc` of this.
#[derive(Debug)]
pub struct ServerState {
    /// The open store.
    pub store: Arc<Store>,
    /// The session the server is pinned to (`--session` / `CAIRN_SESSION`).
    pub pinned_session: Option<String>,
    /// Capabilities allowed for this server's lifetime (`--allow`).
    pub allow: Vec<Capability>,
    /// Where the codecalc profile's workspaces live.
    pub workspace_root: Option<PathBuf>,
    /// The debug profile's live debug session, one at a time.
    pub debug: crate::profiles::debug::DebugSlot,
    /// The conversation the pi profile serves, once it is known.
    pub pi: crate::profiles::pi::PiSlot,
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
        check_agent_permission(&self.store, capability, &self.allow).map_err(|err| {
            if err.code() == Some(INVALID_CONFIG_CODE) {
                warn(&err.render(&crate::words::CliWords));
            }
            ToolError::from(err)
        })
    }
}

/// Writes one warning line to stderr. Failing to write a warning is not worth failing a call.
pub fn warn(message: &str) {
    let _ = writeln!(std::io::stderr(), "cairn mcp: warning: {message}");
}
