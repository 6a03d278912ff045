//! The session tools of cairn's own profile. Sessions are named lines of snapshots; the
//! current-session pointer is shared with the user's own `cairn` commands.

use cairn_lib::Session;
use cairn_lib::ops::permissions::Capability;
use cairn_lib::ops::session::{
    SessionCreateOptions, SessionDeleteOptions, SessionDeleted, SessionList, SessionListOptions,
    SessionSetOptions,
};
use serde::Deserialize;

use crate::error::{ServeError, ToolError};
use crate::registry::{Hints, ToolSpec};
use crate::state::ServerState;

/// Arguments of `session_list`: the engine's options as they are.
pub type ListArgs = SessionListOptions;

/// Arguments of `session_create`: the engine's options as they are.
pub type CreateArgs = SessionCreateOptions;

/// Arguments of `session_delete`: the engine's options as they are.
pub type DeleteArgs = SessionDeleteOptions;

/// Arguments of `session_set`: the engine's options as they are.
pub type SetArgs = SessionSetOptions;

/// Arguments of the tools that take none.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

const LIST: &str = "List every session, newest first. Read-only. Returns {\"sessions\": [...]}; `current` marks the session calls without `session` work in (the pinned session on a pinned server).";
const CREATE: &str = "Create a session: empty, or with `from` a fork holding the same snapshots as another session (records only; no data is copied and nothing on disk changes). It does not become current; call session_set or pass `session` on later calls. Returns the session record.";
const DELETE: &str = "Delete a session and its snapshot records, permanently. Files on disk are not touched. baseline cannot be deleted; the current or pinned session only with `force`. Needs the user's permission (`cairn agent allow remove`); a refusal names the command.";
const CURRENT: &str = "Return the session calls without `session` work in: the pinned session, else the current one, else baseline. Read-only. Fails when the current session no longer exists; session_unset or session_set repairs that.";
const SET: &str = "Make a session current: later calls without `session` work in it, and so do the user's own cairn commands, which share the pointer. Refused on a server pinned with --session or CAIRN_SESSION. Returns the session record.";
const UNSET: &str = "Clear the current session so calls without `session` work in baseline again; also the way out when the current session was deleted. Refused on a pinned server. Returns baseline's record.";

/// The session tools.
pub fn tools() -> Result<Vec<ToolSpec>, ServeError> {
    let set_hints = Hints { idempotent: true, ..Hints::ADD };
    Ok(vec![
        ToolSpec::blocking("session_list", LIST, Hints::READ, list)?,
        ToolSpec::blocking("session_create", CREATE, Hints::ADD, create)?.changing_snapshots(false),
        ToolSpec::blocking("session_delete", DELETE, Hints::DESTROY, delete)?,
        ToolSpec::blocking("session_current", CURRENT, Hints::READ, current)?,
        ToolSpec::blocking("session_set", SET, set_hints, set)?,
        ToolSpec::blocking("session_unset", UNSET, set_hints, unset)?,
    ])
}

fn list(state: &ServerState, a: ListArgs) -> Result<SessionList, ToolError> {
    state.store.session_list(&a, &state.context())
}

fn create(state: &ServerState, a: CreateArgs) -> Result<Session, ToolError> {
    state.store.session_create(&a, &state.context())
}

fn delete(state: &ServerState, a: DeleteArgs) -> Result<SessionDeleted, ToolError> {
    state.permit(Capability::Remove)?;
    state.store.session_delete(&a, &state.context())
}

fn current(state: &ServerState, _: NoArgs) -> Result<Session, ToolError> {
    state.store.session_current(&state.context())
}

fn set(state: &ServerState, a: SetArgs) -> Result<Session, ToolError> {
    state.store.session_set(&a, &state.context())
}

fn unset(state: &ServerState, _: NoArgs) -> Result<Session, ToolError> {
    state.store.session_unset(&state.context())
}
