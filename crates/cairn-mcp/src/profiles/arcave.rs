//! The arcave profile: exactly arcave's ten tools (four for savepoints of a compose project,
//! six for sessions), with its argument names, result shapes and refusals, over cairn's
//! compose target. Each savepoint tool names its project, so one server serves every project.

use cairn_lib::Session;
use cairn_lib::ops::compose::{
    ComposeListOptions, ComposeRollbackOptions, ComposeRollbackResult, ComposeSaveOptions, ComposeSavepoint,
    ComposeSavepointList,
};
use cairn_lib::ops::permissions::Capability;
use cairn_lib::ops::remove::RemoveOptions;
use cairn_lib::ops::session::{
    SessionCreateOptions, SessionDeleteOptions, SessionDeleted, SessionListOptions, SessionSetOptions,
};
use serde::{Deserialize, Serialize};

use crate::error::{ServeError, ToolError};
use crate::registry::{Hints, ToolSpec};
use crate::state::ServerState;

/// What the server tells an agent when it connects.
pub const INSTRUCTIONS: &str = "Take a savepoint of a Docker Compose project with savepoint_create before risky steps, and return to it with rollback. Read not_covered in every savepoint before relying on it.";

/// Arguments of `savepoint_create`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    /// The compose project, as docker compose ls names it.
    pub project: String,
    /// The session to work in for this call only (name or id).
    pub session: Option<String>,
    /// A short name to refer to the savepoint by. Ids are assigned by the server.
    pub name: Option<String>,
    /// What this savepoint is being taken before.
    pub description: Option<String>,
    /// How long to wait for services to become healthy on restart, e.g. 2m or 90s. Omit for the project's own bound.
    pub wait_timeout: Option<String>,
}

/// Arguments of `savepoint_list`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// The compose project.
    pub project: String,
    /// The session to work in for this call only.
    pub session: Option<String>,
    /// Also list the safety snapshots a rollback commits of the live state before it overwrites it.
    #[serde(default)]
    pub include_safety_snapshots: bool,
    /// desc (the default) lists the newest first, asc the oldest.
    pub sort: Option<String>,
}

/// Arguments of `savepoint_remove`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveArgs {
    /// The compose project.
    pub project: String,
    /// The session to work in for this call only.
    pub session: Option<String>,
    /// Savepoint ids to delete. Cannot be combined with the retention fields.
    #[serde(default)]
    pub ids: Vec<String>,
    /// Keep this many newest savepoints and delete the rest.
    pub retain_recent: Option<u64>,
    /// Keep savepoints younger than this duration, e.g. 24h or 7d.
    pub retain_for: Option<String>,
    /// Delete savepoints created before this RFC 3339 timestamp, e.g. 2026-06-01T00:00:00Z.
    pub before_date: Option<String>,
    /// Report what would be deleted, and delete nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// Arguments of `rollback`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RollbackArgs {
    /// The compose project.
    pub project: String,
    /// The session to work in for this call only.
    pub session: Option<String>,
    /// The savepoint to return to: its id, its name, or the literal latest.
    #[serde(rename = "ref")]
    pub reference: String,
    /// How long to wait for services to become healthy on restart. Omit for the project's own bound.
    pub wait_timeout: Option<String>,
}

/// Arguments of `session_list`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionListArgs {
    /// Also list sessions without a record (cairn's forks are records only, so there are none).
    #[serde(default)]
    pub all: bool,
    /// desc (the default) lists the newest first, asc the oldest.
    pub sort: Option<String>,
}

/// Arguments of `session_create`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionCreateArgs {
    /// A name for the session, unique within the store.
    pub name: Option<String>,
    /// The session to copy, by name or id. Omit for an empty session.
    pub from: Option<String>,
}

/// Arguments of `session_delete`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionDeleteArgs {
    /// The session to delete, by name or id.
    pub session: String,
    /// Also delete the current session (clearing the pointer) or the session the server is pinned to.
    #[serde(default)]
    pub force: bool,
}

/// Arguments of `session_set`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionSetArgs {
    /// The session to make current, by name or id.
    pub session: String,
}

/// Arguments of the tools that take none.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `{"dry_run", "removed"}`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Removed {
    /// True when nothing was deleted.
    pub dry_run: bool,
    /// The savepoints deleted (or that would be).
    pub removed: Vec<ComposeSavepoint>,
}

/// A session as arcave shows it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ArcaveSession {
    /// The session id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Creation time, RFC 3339 UTC.
    pub created_at: String,
    /// The session it was forked from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<cairn_lib::SessionOrigin>,
    /// Always `ready`: a fork copies records in one step.
    pub status: String,
    /// True for the session a call given no session works in.
    pub current: bool,
    /// Savepoints in the session.
    pub savepoint_count: u64,
    /// Compose projects the session holds savepoints of.
    pub compose_projects: Vec<String>,
    /// What a full copy of the session's data would cost.
    pub size_bytes: u64,
}

/// `{"sessions": [...]}`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ArcaveSessionList {
    /// The sessions.
    pub sessions: Vec<ArcaveSession>,
}

const CREATE: &str = "Capture a savepoint of a compose project: its services are stopped, every volume, bind mount and container layer is captured (only what changed since the last savepoint is read), and the services are started again. Returns the savepoint record; report its not_covered before relying on it. An error 'savepoint <id> committed; services failed to start: ...' means the savepoint exists and is safe to roll back to; only the restart failed: report the id, do not take another savepoint.";
const LIST: &str = "List a compose project's savepoints, newest first. Reads the store only: stops nothing, takes no lock. Returns {\"savepoints\": [...]}.";
const REMOVE: &str = "Delete savepoints of a compose project, permanently: either ids, or retention fields (retain_recent, retain_for, before_date), not both. dry_run reports without deleting. Refused only when the user has denied removing to agents.";
const ROLLBACK: &str = "Return a compose project to a savepoint. Destructive: every volume and bind mount it covers is overwritten with the savepoint's data and container layers are put back. A safety snapshot of the live state is taken first and replayed if the rollback fails. A project with no containers is recreated from the savepoint. Refused only when the user has denied restoring to agents.";
const S_LIST: &str = "List the sessions, newest first. Read-only. Returns {\"sessions\": [...]}; current marks the session a call given no session works in.";
const S_CREATE: &str = "Create a session: empty, or with from a fork holding every savepoint of another session (records only: nothing is copied and no container is touched). Returns the session record.";
const S_DELETE: &str = "Delete a session and every savepoint it holds, permanently. Running projects are left as they are. baseline cannot be deleted. Needs the user's permission.";
const S_CURRENT: &str = "Return the session a call given no session works in: the pinned session, else the current one, else baseline. Read-only.";
const S_SET: &str = "Make a session current: later calls given no session work in it. Refused on a pinned server. Returns the session record.";
const S_UNSET: &str = "Clear the current session so calls given no session work in baseline; returns baseline's record. Refused on a pinned server.";

/// arcave's words: its tools, and its CLI's flag names where the contract keeps them in errors
/// ("invalid --before-date …"; a bare `wait_timeout` reads `wait_timeout "120": want …`).
pub static WORDS: ArcaveWords = ArcaveWords;

/// How arcave's refusals name arguments and tools.
#[derive(Debug, Clone, Copy)]
pub struct ArcaveWords;

impl cairn_lib::Words for ArcaveWords {
    fn option(&self, name: &str) -> String {
        match name {
            "retain_for" | "before_date" | "retain_recent" => format!("--{}", name.replace('_', "-")),
            other => other.to_owned(),
        }
    }

    fn invalid_value(&self, option: &str, rest: &str) -> String {
        if option == "wait_timeout" && rest.ends_with(cairn_lib::BARE_NUMBER) {
            return format!("wait_timeout {rest}");
        }
        format!("invalid {} {rest}", self.option(option))
    }

    fn hint(&self, hint: &cairn_lib::Hint) -> String {
        use cairn_lib::Operation;
        crate::words::tool_hint(hint, |op| match op {
            Operation::Save => Some("call savepoint_create".to_owned()),
            Operation::ListSnapshots | Operation::ListSavepoints { .. } => {
                Some("call savepoint_list".to_owned())
            }
            Operation::ListSessions => Some("call session_list".to_owned()),
            Operation::SetSession => Some("call session_set".to_owned()),
            Operation::UnsetSession => Some("call session_unset".to_owned()),
            Operation::Rollback { project, snapshot } => {
                Some(format!("call rollback with project {project:?} and ref {snapshot:?}"))
            }
            _ => None,
        })
    }
}

/// The profile's ten tools.
pub fn tools() -> Result<Vec<ToolSpec>, ServeError> {
    let set_hints = Hints { idempotent: true, ..Hints::ADD };
    let docker = |h: Hints| Hints { open_world: true, ..h };
    Ok(vec![
        ToolSpec::blocking("savepoint_create", CREATE, docker(Hints::ADD), create)?,
        ToolSpec::blocking("savepoint_list", LIST, Hints::READ, list)?,
        ToolSpec::blocking("savepoint_remove", REMOVE, Hints::DESTROY, remove)?,
        ToolSpec::blocking("rollback", ROLLBACK, docker(Hints::DESTROY), rollback)?,
        ToolSpec::blocking("session_list", S_LIST, Hints::READ, session_list)?,
        ToolSpec::blocking("session_create", S_CREATE, Hints::ADD, session_create)?.changing_snapshots(false),
        ToolSpec::blocking("session_delete", S_DELETE, Hints::DESTROY, session_delete)?,
        ToolSpec::blocking("session_current", S_CURRENT, Hints::READ, session_current)?,
        ToolSpec::blocking("session_set", S_SET, set_hints, session_set)?,
        ToolSpec::blocking("session_unset", S_UNSET, set_hints, session_unset)?,
    ])
}

fn create(state: &ServerState, a: CreateArgs) -> Result<ComposeSavepoint, ToolError> {
    state.permit(Capability::Save)?;
    let options = ComposeSaveOptions {
        project: a.project,
        name: a.name,
        description: a.description,
        wait_timeout: a.wait_timeout,
        session: a.session,
        ..ComposeSaveOptions::default()
    };
    Ok(state.store.compose_save(&options, &state.context()).map_err(without_force)?.savepoint)
}

/// A taken name in arcave's terms: `savepoint_create` has no `force` (the engine's advice to
/// move the name), so the refusal keeps only its own sentence ("…; pick another name").
fn without_force(err: cairn_lib::Error) -> ToolError {
    if err.kind() == cairn_lib::ErrorKind::Conflict
        && err.hints().contains(&cairn_lib::Hint::SetOption("force"))
    {
        return ToolError::from(cairn_lib::Error::conflict(err.render_message(&WORDS)));
    }
    arcave_error(err)
}

fn list(state: &ServerState, a: ListArgs) -> Result<ComposeSavepointList, ToolError> {
    let options = ComposeListOptions {
        project: a.project,
        include_safety_snapshots: a.include_safety_snapshots,
        sort: a.sort,
        session: a.session,
    };
    state.store.compose_list(&options, &state.context())
}

/// `savepoint_remove`: the arguments are checked (by a dry run) before the permission, so an
/// agent sees arcave's own refusal sentences; a dry run deletes nothing and needs no permission.
fn remove(state: &ServerState, a: RemoveArgs) -> Result<Removed, ToolError> {
    // The contract's own refusals, in its words (the engine's name neither ids nor flags).
    let has_rules = a.retain_recent.is_some() || a.retain_for.is_some() || a.before_date.is_some();
    if !a.ids.is_empty() && has_rules {
        return Err(ToolError::invalid(
            "cannot combine savepoint ids with retain-recent/retain-for/before-date",
        ));
    }
    if a.ids.is_empty() && !has_rules {
        return Err(ToolError::invalid(
            "specify savepoint ids, or at least one of retain-recent, retain-for or before-date",
        ));
    }
    let mut options = RemoveOptions {
        refs: a.ids,
        retain_recent: a.retain_recent,
        retain_for: a.retain_for,
        before_date: a.before_date,
        target: Some(format!("compose:{}", a.project)),
        dry_run: true,
        session: a.session,
    };
    let mut r = state.store.remove(&options, &state.context()).map_err(arcave_error)?;
    if !a.dry_run {
        // arcave lets agents remove savepoints without asking; the user may still deny it.
        state.permit_ungated(Capability::Remove)?;
        options.dry_run = false;
        r = state.store.remove(&options, &state.context()).map_err(arcave_error)?;
    }
    Ok(Removed {
        dry_run: r.dry_run,
        removed: r.removed.iter().map(ComposeSavepoint::from_snapshot).collect(),
    })
}

/// `rollback`: allowed unless the user denied `restore`, as arcave lets agents roll back ("what
/// you take, an agent rolls back to"); a safety snapshot of the live state makes it undoable.
fn rollback(state: &ServerState, a: RollbackArgs) -> Result<ComposeRollbackResult, ToolError> {
    state.permit_ungated(Capability::Restore)?;
    let options = ComposeRollbackOptions {
        project: a.project,
        reference: a.reference,
        wait_timeout: a.wait_timeout,
        session: a.session,
    };
    state.store.compose_rollback(&options, &state.context()).map_err(arcave_error)
}

fn arcave(s: Session) -> ArcaveSession {
    ArcaveSession {
        id: s.id.to_string(),
        name: s.name,
        created_at: s.created_at,
        from: s.from,
        status: s.status,
        current: s.current,
        savepoint_count: s.snapshot_count,
        compose_projects: s
            .targets
            .iter()
            .filter_map(|t| t.strip_prefix("compose:"))
            .map(str::to_owned)
            .collect(),
        size_bytes: s.size_bytes,
    }
}

fn session_list(state: &ServerState, a: SessionListArgs) -> Result<ArcaveSessionList, ToolError> {
    let options = SessionListOptions { sort: a.sort, ..SessionListOptions::default() };
    let list = state.store.session_list(&options, &state.context())?;
    Ok(ArcaveSessionList { sessions: list.sessions.into_iter().map(arcave).collect() })
}

fn session_create(state: &ServerState, a: SessionCreateArgs) -> Result<ArcaveSession, ToolError> {
    let options = SessionCreateOptions { name: a.name, from: a.from };
    Ok(arcave(state.store.session_create(&options, &state.context()).map_err(arcave_error)?))
}

fn session_delete(state: &ServerState, a: SessionDeleteArgs) -> Result<SessionDeleted, ToolError> {
    state.permit(Capability::Remove)?;
    let options = SessionDeleteOptions { session: a.session, force: a.force };
    state.store.session_delete(&options, &state.context()).map_err(arcave_error)
}

fn session_current(state: &ServerState, _: NoArgs) -> Result<ArcaveSession, ToolError> {
    Ok(arcave(state.store.session_current(&state.context())?))
}

fn session_set(state: &ServerState, a: SessionSetArgs) -> Result<ArcaveSession, ToolError> {
    refuse_pinned(state)?;
    Ok(arcave(state.store.session_set(&SessionSetOptions { session: a.session }, &state.context())?))
}

fn session_unset(state: &ServerState, _: NoArgs) -> Result<ArcaveSession, ToolError> {
    refuse_pinned(state)?;
    Ok(arcave(state.store.session_unset(&state.context())?))
}

/// arcave's own refusal on a pinned server, naming the pinned session by id.
fn refuse_pinned(state: &ServerState) -> Result<(), ToolError> {
    let Some(pinned) = &state.pinned_session else { return Ok(()) };
    let id = state.store.find_session(pinned).map(|s| s.id.to_string()).unwrap_or_else(|_| pinned.clone());
    Err(ToolError::invalid(format!(
        "this server is pinned to session \"{id}\" by --session or ARCAVE_SESSION, which outranks the current session: pass session on each call, or restart the server without the pin"
    )))
}

/// arcave's lock refusal: what holds a project's lock, in the contract's sentence.
const LOCKED: &str = "another arcave command is already running in this project: a session fork holds the lock for its whole copy, as does a savepoint or rollback for its run; retry when it finishes";

/// An engine error in arcave's words where the contract has its own (the lock refusal).
fn arcave_error(err: cairn_lib::Error) -> ToolError {
    if err.kind() == cairn_lib::ErrorKind::Locked {
        return ToolError::from(cairn_lib::Error::new(cairn_lib::ErrorKind::Locked, LOCKED));
    }
    ToolError::from(err)
}
