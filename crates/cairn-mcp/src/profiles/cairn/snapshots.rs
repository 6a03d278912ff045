//! The snapshot tools of cairn's own profile: save, list, show, diff, restore, remove.

use cairn_lib::Snapshot;
use cairn_lib::ops::diff::{DiffOptions, DiffResult};
use cairn_lib::ops::list::{ListOptions, ShowOptions, SnapshotList};
use cairn_lib::ops::permissions::Capability;
use cairn_lib::ops::remove::{RemoveOptions, RemoveResult};
use cairn_lib::ops::restore::RestoreOptions;
use cairn_lib::ops::save::SaveOptions;

use crate::error::{ServeError, ToolError};
use crate::registry::{Hints, ToolSpec};
use crate::state::ServerState;

/// Arguments of `snapshot_save`: the engine's options as they are (`include_secrets` is not
/// one an agent can set).
pub type SaveArgs = SaveOptions;

/// Arguments of `snapshot_list`: the engine's options as they are.
pub type ListArgs = ListOptions;

/// Arguments of `snapshot_show`: the engine's options as they are.
pub type ShowArgs = ShowOptions;

/// Arguments of `snapshot_diff`: the engine's options as they are.
pub type DiffArgs = DiffOptions;

/// Arguments of `snapshot_restore`: the engine's options as they are (`continue` and `abort`
/// of an interrupted restore are the user's, not an agent's).
pub type RestoreArgs = RestoreOptions;

/// Arguments of `snapshot_remove`: the engine's options as they are; either `refs` or the
/// retention fields, not both.
pub type RemoveArgs = RemoveOptions;

const SAVE: &str = "Capture a target as a new snapshot in cairn's store (kept outside the target): a directory, a running Docker Compose project (compose:PROJECT) or an agent transcript (transcript:FILE). It only reads the target and changes nothing; files unchanged since the last save are not read again. Returns the snapshot record: its id (use it to restore or diff later), stats, and not_covered — what the snapshot does not hold (ignored paths, skipped special or unreadable files, Compose services without volumes). Report not_covered to the user before relying on the snapshot.";
const LIST: &str = "List the snapshots of a session (the server's pinned or current session unless `session` is given), newest first. Read-only. Returns {\"snapshots\": [...]}, an empty list when there are none.";
const SHOW: &str = "Show one snapshot's record: its target, time, stats and not_covered. Read-only.";
const DIFF: &str = "Compare two snapshots of one target, or a snapshot with the live files (omit `to`). Read-only. Returns a summary (added, removed, modified) and the changed entries sorted by path, with patches when `patch` is set.";
const RESTORE: &str = "Put a snapshot back. In place (the default) the target becomes exactly the snapshot: changed files are rewritten, missing ones recreated, files the snapshot lacks deleted. cairn first takes a safety snapshot of the live state and puts it back by itself if the restore fails; tell the user its id (safety_snapshot.id). With `to`, the snapshot is written into a new or empty directory and the target is untouched. Needs the user's permission (`cairn agent allow restore`) unless `dry_run` is set; a refusal names the command.";
const REMOVE: &str = "Delete snapshots permanently: by `refs`, or by retention fields (retain_recent, retain_for, before_date) — not both, and not neither. Data no other snapshot uses is reclaimed by `cairn gc`. Returns the removed records. Needs the user's permission (`cairn agent allow remove`) unless `dry_run` is set.";

/// The snapshot tools.
pub fn tools() -> Result<Vec<ToolSpec>, ServeError> {
    Ok(vec![
        ToolSpec::blocking("snapshot_save", SAVE, Hints::ADD, save)?,
        ToolSpec::blocking("snapshot_list", LIST, Hints::READ, list)?,
        ToolSpec::blocking("snapshot_show", SHOW, Hints::READ, show)?,
        ToolSpec::blocking("snapshot_diff", DIFF, Hints::READ, diff)?,
        ToolSpec::blocking("snapshot_restore", RESTORE, Hints::DESTROY, restore)?,
        ToolSpec::blocking("snapshot_remove", REMOVE, Hints::DESTROY, remove)?,
    ])
}

fn save(state: &ServerState, a: SaveArgs) -> Result<super::moments::SaveOutcome, ToolError> {
    state.permit(Capability::Save)?;
    super::moments::save(state, &a)
}

fn list(state: &ServerState, a: ListArgs) -> Result<SnapshotList, ToolError> {
    state.store.list(&a, &state.context())
}

fn show(state: &ServerState, a: ShowArgs) -> Result<Snapshot, ToolError> {
    state.store.show(&a, &state.context())
}

fn diff(state: &ServerState, a: DiffArgs) -> Result<DiffResult, ToolError> {
    state.store.diff(&a, &state.context())
}

fn restore(state: &ServerState, a: RestoreArgs) -> Result<super::moments::RestoreOutcome, ToolError> {
    if !a.dry_run {
        state.permit(Capability::Restore)?;
    }
    super::moments::restore(state, &a)
}

fn remove(state: &ServerState, a: RemoveArgs) -> Result<RemoveResult, ToolError> {
    if !a.dry_run {
        state.permit(Capability::Remove)?;
    }
    state.store.remove(&a, &state.context())
}
