//! The codecalc profile: exactly codecalc's `session_snapshot` tool.
//!
//! A codecalc session is a workspace folder under `--workspace-root`; its id is the folder's
//! name. Snapshots are cairn snapshots of that folder (kept in the store, outside the
//! workspace), saved without the runner's `.codecalc-run/` folder and refused when the
//! workspace holds a symbolic or hard link. The label is kept as the snapshot's description.

use std::path::PathBuf;

use cairn_lib::Snapshot;
use cairn_lib::ops::list::{ListOptions, ShowOptions};
use cairn_lib::ops::permissions::Capability;
use cairn_lib::ops::remove::RemoveOptions;
use cairn_lib::ops::restore::RestoreOptions;
use cairn_lib::ops::workspace::WorkspaceSaveOptions;
use serde::{Deserialize, Serialize};

use crate::error::{ServeError, ToolError};
use crate::registry::{Hints, ToolSpec};
use crate::state::ServerState;

/// The runner's own folder in every workspace, never part of a snapshot.
pub const RUN_DIR: &str = ".codecalc-run";

/// Arguments of `session_snapshot`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionSnapshotArgs {
    /// What to do: 'save' (the default) archives the workspace, 'restore' puts a snapshot back, 'list' shows the session's snapshots, 'delete' removes one.
    #[serde(default = "default_action")]
    pub action: String,
    /// The session (workspace folder) the snapshot is taken of, belongs to, or is restored into with replace.
    pub session_id: String,
    /// The snapshot to act on, as save returned it; needed by 'restore' and 'delete'.
    pub snapshot_id: Option<String>,
    /// A free-form label kept with a new snapshot; used by 'save' only.
    pub label: Option<String>,
    /// For 'restore': wipe the session's own workspace and restore into it, instead of into a new session.
    #[serde(default)]
    pub replace: bool,
}

fn default_action() -> String {
    "save".into()
}

/// One snapshot as `list` shows it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SnapshotEntry {
    /// The snapshot's id.
    pub snapshot_id: String,
    /// The label given at save time.
    pub label: Option<String>,
    /// When it was saved, RFC 3339 UTC.
    pub created_at: String,
    /// Files it holds.
    pub files: u64,
    /// Bytes of file content it holds.
    pub bytes: u64,
}

/// What `session_snapshot` returns; the fields present depend on the action.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SessionSnapshotResult {
    /// The action performed.
    pub action: String,
    /// The session acted on; for a restore, the session the files went into.
    pub session_id: String,
    /// The snapshot saved, restored or deleted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<String>,
    /// The snapshot's label (save).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// When the snapshot was saved (save).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Files saved or restored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<u64>,
    /// True when a restore replaced the session's own workspace; false when it made a new session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced: Option<bool>,
    /// The session's snapshots, oldest first (list).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshots: Option<Vec<SnapshotEntry>>,
    /// True when the snapshot was deleted (delete).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted: Option<bool>,
    /// What the saved snapshot leaves out of the workspace, and why (save): a FIFO, a socket,
    /// a file that could not be read. Present only when something was left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_covered: Option<cairn_lib::NotCovered>,
}

const DESCRIPTION: &str = "Save, restore, list or delete snapshots of a session's workspace files. `action`: 'save' (default) stores the workspace's files — without .codecalc-run/, and refusing symlinks and hardlinks — in a store outside the workspace that sandboxed code cannot reach, and returns snapshot_id. 'restore' puts snapshot_id's files into a brand-new session and returns its session_id, or with replace=true makes session_id's own workspace exactly the snapshot (destructive, behind a safety snapshot). Only files come back; interpreter state is never part of a snapshot. 'list' returns session_id's snapshots, oldest first. 'delete' removes snapshot_id. The user may deny restore with replace and delete to agents.";

/// What the server tells an agent when it connects.
pub const INSTRUCTIONS: &str =
    "Use session_snapshot to save a session's workspace before risky steps and to restore it afterwards.";

/// codecalc's words: its one tool and its actions.
pub static WORDS: CodecalcWords = CodecalcWords;

/// How codecalc's refusals name arguments and actions.
#[derive(Debug, Clone, Copy)]
pub struct CodecalcWords;

impl cairn_lib::Words for CodecalcWords {
    fn hint(&self, hint: &cairn_lib::Hint) -> String {
        use cairn_lib::Operation;
        crate::words::tool_hint(hint, |op| match op {
            Operation::Save => Some("call session_snapshot with action='save'".to_owned()),
            Operation::ListSnapshots => Some("action='list' shows its snapshots".to_owned()),
            Operation::Restore { .. } => Some("call session_snapshot with action='restore'".to_owned()),
            _ => None,
        })
    }
}

/// The profile's one tool.
pub fn tools() -> Result<Vec<ToolSpec>, ServeError> {
    Ok(vec![ToolSpec::blocking("session_snapshot", DESCRIPTION, Hints::DESTROY, session_snapshot)?])
}

fn session_snapshot(state: &ServerState, a: SessionSnapshotArgs) -> Result<SessionSnapshotResult, ToolError> {
    let workspace = workspace(state, &a.session_id)?;
    let mut out = SessionSnapshotResult {
        action: a.action.clone(),
        session_id: a.session_id.clone(),
        snapshot_id: None,
        label: None,
        created_at: None,
        files: None,
        replaced: None,
        snapshots: None,
        deleted: None,
        not_covered: None,
    };
    match a.action.as_str() {
        "save" => {
            state.permit(Capability::Save)?;
            if !workspace.is_dir() {
                return Err(no_session(&a.session_id));
            }
            let options = WorkspaceSaveOptions {
                workspace,
                exclude: vec![RUN_DIR.to_owned()],
                description: a.label,
                session: None,
            };
            let s = state.store.save_workspace(&options, &state.context())?;
            state.saved([&s]);
            out.snapshot_id = Some(s.id.to_string());
            out.label = s.description;
            out.created_at = Some(s.created_at);
            out.files = Some(s.stats.files);
            // The agent reads the reply, not the stored record: say what the save left out.
            out.not_covered = (!s.not_covered.is_empty()).then_some(s.not_covered);
        }
        "list" => {
            let list = state.store.list(
                &ListOptions {
                    target: Some(workspace.to_string_lossy().into_owned()),
                    include_safety_snapshots: false,
                    sort: Some("asc".into()),
                    session: None,
                },
                &state.context(),
            )?;
            out.snapshots = Some(list.snapshots.into_iter().map(entry).collect());
        }
        "restore" => {
            let snapshot = owned_snapshot(state, &a, &workspace)?;
            let to = if a.replace {
                // codecalc lets agents replace a workspace without asking; the user may deny it.
                state.permit_ungated(Capability::Restore)?;
                // The snapshot is of this very workspace, so an in-place restore makes it
                // exactly the snapshot (the runner folder included, which the snapshot lacks),
                // behind a safety snapshot that is put back if anything fails.
                None
            } else {
                let id = new_session_id();
                out.session_id = id.clone();
                Some(root(state)?.join(id))
            };
            let r = state.store.restore(
                &RestoreOptions { reference: Some(snapshot.id.to_string()), to, ..RestoreOptions::default() },
                &state.context(),
            )?;
            out.snapshot_id = Some(snapshot.id.to_string());
            out.files = Some(r.snapshot.stats.files);
            out.replaced = Some(a.replace);
        }
        "delete" => {
            let snapshot = owned_snapshot(state, &a, &workspace)?;
            state.permit_ungated(Capability::Remove)?;
            state.store.remove(
                &RemoveOptions { refs: vec![snapshot.id.to_string()], ..RemoveOptions::default() },
                &state.context(),
            )?;
            out.snapshot_id = Some(snapshot.id.to_string());
            out.deleted = Some(true);
        }
        other => {
            return Err(ToolError::invalid(format!(
                "unknown action {:?}: use one of 'save', 'restore', 'list', 'delete'",
                cairn_lib::echo(other)
            )));
        }
    }
    Ok(out)
}

fn entry(s: Snapshot) -> SnapshotEntry {
    SnapshotEntry {
        snapshot_id: s.id.to_string(),
        label: s.description,
        created_at: s.created_at,
        files: s.stats.files,
        bytes: s.stats.bytes,
    }
}

fn root(state: &ServerState) -> Result<PathBuf, ToolError> {
    let root = state.workspace_root.as_deref().ok_or_else(|| {
        ToolError::invalid("this server has no workspace root; restart it with --workspace-root DIR")
    })?;
    std::fs::canonicalize(root).map_err(|e| {
        ToolError::invalid(format!(
            "the workspace root {} cannot be used ({e}); restart the server with an existing --workspace-root",
            root.display()
        ))
    })
}

/// The workspace folder of `session_id`, refusing ids that are not plain folder names.
fn workspace(state: &ServerState, session_id: &str) -> Result<PathBuf, ToolError> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if session_id.is_empty() || session_id.starts_with('.') || !session_id.chars().all(plain) {
        return Err(ToolError::invalid(format!(
            "invalid session_id {:?}: a session id is a workspace folder name of letters, digits, '.', '_' and '-' that does not start with '.'",
            cairn_lib::echo(session_id)
        )));
    }
    let folder = root(state)?.join(session_id);
    // A session folder that is a symlink would take every action to wherever it points, out of
    // the workspace root, and its snapshots into another session's list.
    if folder.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(ToolError::invalid(format!(
            "session {:?}'s workspace folder is a symbolic link; session workspaces refuse symlinks: make it a plain folder under the workspace root",
            cairn_lib::echo(session_id)
        )));
    }
    Ok(folder)
}

fn no_session(session_id: &str) -> ToolError {
    ToolError::from(cairn_lib::Error::not_found(format!(
        "no session {:?}: its workspace folder does not exist under the workspace root",
        cairn_lib::echo(session_id)
    )))
}

/// The snapshot `snapshot_id` names, which must have been saved from `workspace`.
fn owned_snapshot(
    state: &ServerState,
    a: &SessionSnapshotArgs,
    workspace: &std::path::Path,
) -> Result<Snapshot, ToolError> {
    let id = a.snapshot_id.as_deref().ok_or_else(|| {
        ToolError::invalid(format!(
            "snapshot_id is required for action='{}'; action='list' shows the session's snapshots",
            a.action
        ))
    })?;
    // Ids in this profile are the ids save returned; names, `latest` and prefixes are not.
    if uuid::Uuid::try_parse(id).is_err() {
        return Err(ToolError::invalid(format!(
            "snapshot_id {:?} is not a snapshot id; pass the snapshot_id that action='save' returned (action='list' shows them)",
            cairn_lib::echo(id)
        )));
    }
    // cairn's own session is an implementation detail here: a session is a workspace.
    let snapshot = state
        .store
        .show(&ShowOptions { reference: id.to_owned(), ..ShowOptions::default() }, &state.context())
        .map_err(|e| match e.kind() {
            cairn_lib::ErrorKind::NotFound => unknown(id),
            _ => e,
        })?;
    if std::path::Path::new(&snapshot.target) != workspace {
        return Err(not_owned(id, &a.session_id));
    }
    Ok(snapshot)
}

/// The refusal of a snapshot id this session has no snapshot by.
fn not_owned(id: &str, session_id: &str) -> ToolError {
    cairn_lib::Error::not_found(format!(
        "snapshot {} does not belong to session {:?}",
        cairn_lib::echo(id),
        cairn_lib::echo(session_id)
    ))
    .hint(cairn_lib::Hint::Run(cairn_lib::Operation::ListSnapshots))
}

/// The refusal of a well-formed snapshot id no snapshot has.
fn unknown(id: &str) -> ToolError {
    cairn_lib::Error::not_found(format!("unknown snapshot_id {}", cairn_lib::echo(id)))
        .hint(cairn_lib::Hint::Run(cairn_lib::Operation::ListSnapshots))
}

/// A fresh session id for a restore into a new session: a time-ordered UUID, as a folder name.
fn new_session_id() -> String {
    uuid::Uuid::now_v7().simple().to_string()
}
