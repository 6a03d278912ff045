//! The snapshot tools of cairn's own profile: save, list, show, diff, restore, remove.

use std::path::PathBuf;

use cairn_lib::Snapshot;
use cairn_lib::ops::agent::Capability;
use cairn_lib::ops::diff::{DiffOptions, DiffResult};
use cairn_lib::ops::list::{ListOptions, ShowOptions, SnapshotList};
use cairn_lib::ops::remove::{RemoveOptions, RemoveResult};
use cairn_lib::ops::restore::RestoreOptions;
use cairn_lib::ops::save::SaveOptions;
use serde::Deserialize;

use crate::error::{ServeError, ToolError};
use crate::registry::{Hints, ToolSpec};
use crate::state::ServerState;

/// Arguments of `snapshot_save`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveArgs {
    /// What to capture: an absolute directory path, compose:PROJECT for a running Compose project, or transcript:FILE for an agent session file.
    pub target: String,
    /// A short name to refer to the snapshot by; letters, digits, '.', '_' and '-'. Unique per session and target.
    pub name: Option<String>,
    /// What the snapshot is being taken before, in your words.
    pub description: Option<String>,
    /// Move an existing name to this new snapshot instead of failing.
    #[serde(default)]
    pub force: bool,
    /// Also capture paths that .gitignore or .cairnignore exclude.
    #[serde(default)]
    pub no_ignore: bool,
    /// The session to save into, for this call only (name or id).
    pub session: Option<String>,
    /// More targets to capture together with `target` as one moment (one id over one snapshot per target); "transcript:auto" is the newest Pi or Claude Code session of the server's directory.
    #[serde(default)]
    pub targets: Vec<String>,
}

/// Arguments of `snapshot_list`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Only snapshots of this target: a directory path, compose:PROJECT or transcript:FILE, as snapshot_save took it.
    pub target: Option<String>,
    /// Also list the safety snapshots cairn takes of the live state before a restore.
    #[serde(default)]
    pub include_safety_snapshots: bool,
    /// "desc" (newest first, the default) or "asc" (oldest first).
    pub sort: Option<String>,
    /// The session to list, for this call only (name or id).
    pub session: Option<String>,
}

/// Arguments of `snapshot_show`: the engine's options as they are.
pub type ShowArgs = ShowOptions;

/// Arguments of `snapshot_diff`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffArgs {
    /// The older side: a snapshot id, name or "latest".
    pub from: String,
    /// The newer side: a snapshot reference. Omit it to compare with the live files.
    pub to: Option<String>,
    /// The target the references are looked up among.
    pub target: Option<String>,
    /// Include unified diffs of changed text files.
    #[serde(default)]
    pub patch: bool,
    /// Include per-file counts of added and removed lines.
    #[serde(default)]
    pub stat: bool,
    /// The session to look in, for this call only (name or id).
    pub session: Option<String>,
}

/// Arguments of `snapshot_restore`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreArgs {
    /// The snapshot to put back: its id, a unique id prefix, its name, or "latest".
    #[serde(rename = "ref")]
    pub reference: String,
    /// The target the reference is looked up among.
    pub target: Option<String>,
    /// Restore into this new or empty directory instead of overwriting the target in place.
    pub to: Option<PathBuf>,
    /// Only report what would change; change nothing (allowed without the restore permission).
    #[serde(default)]
    pub dry_run: bool,
    /// Give rewritten files the snapshot's modification times instead of the current time.
    #[serde(default)]
    pub preserve_mtime: bool,
    /// The session to look in, for this call only (name or id).
    pub session: Option<String>,
    /// When `ref` names a moment: put back only its parts of these kinds ("dir", "transcript", "compose"); every part when omitted.
    #[serde(default)]
    pub only: Vec<String>,
}

/// Arguments of `snapshot_remove`: either `refs` or the retention fields, not both.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveArgs {
    /// Snapshots to delete: ids, names or "latest". Cannot be combined with the retention fields.
    #[serde(default)]
    pub refs: Vec<String>,
    /// Keep this many newest snapshots per target and delete the rest.
    pub retain_recent: Option<u64>,
    /// Keep snapshots younger than this unit-bearing duration, e.g. 24h or 7d; a bare number is refused.
    pub retain_for: Option<String>,
    /// Delete snapshots created before this RFC 3339 time, e.g. 2026-06-01T00:00:00Z.
    pub before_date: Option<String>,
    /// Only snapshots of this target.
    pub target: Option<String>,
    /// Only report what would be deleted; delete nothing (allowed without the remove permission).
    #[serde(default)]
    pub dry_run: bool,
    /// The session to work in, for this call only (name or id).
    pub session: Option<String>,
}

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
    if !a.targets.is_empty() {
        let targets = std::iter::once(a.target).chain(a.targets).collect();
        return super::moments::save(state, targets, a.name, a.description, a.no_ignore, a.session);
    }
    let saved = state.store.save(&SaveOptions {
        target: a.target,
        name: a.name,
        description: a.description,
        force: a.force,
        no_ignore: a.no_ignore,
        session: state.choice(a.session),
        // An agent cannot opt into copying credentials; the user's `secrets.include` can.
        include_secrets: false,
    })?;
    Ok(super::moments::SaveOutcome { snapshot: Some(saved), moment: None })
}

fn list(state: &ServerState, a: ListArgs) -> Result<SnapshotList, ToolError> {
    state.store.list(&ListOptions {
        target: a.target,
        include_safety_snapshots: a.include_safety_snapshots,
        sort: a.sort,
        session: state.choice(a.session),
    })
}

fn show(state: &ServerState, a: ShowArgs) -> Result<Snapshot, ToolError> {
    state.store.show(&a, &state.context())
}

fn diff(state: &ServerState, a: DiffArgs) -> Result<DiffResult, ToolError> {
    state.store.diff(&DiffOptions {
        from: a.from,
        to: a.to,
        target: a.target,
        patch: a.patch,
        stat: a.stat,
        session: state.choice(a.session),
    })
}

fn restore(state: &ServerState, a: RestoreArgs) -> Result<super::moments::RestoreOutcome, ToolError> {
    if !a.dry_run {
        state.permit(Capability::Restore)?;
    }
    if !a.dry_run
        && a.to.is_none()
        && let Some(done) = super::moments::restore(state, &a.reference, a.only.clone(), a.session.clone())?
    {
        return Ok(done);
    }
    let restored = state.store.restore(&RestoreOptions {
        reference: a.reference,
        target: a.target,
        to: a.to,
        dry_run: a.dry_run,
        preserve_mtime: a.preserve_mtime,
        session: state.choice(a.session),
        ..RestoreOptions::default()
    })?;
    Ok(super::moments::RestoreOutcome { snapshot: Some(restored), moment: None })
}

fn remove(state: &ServerState, a: RemoveArgs) -> Result<RemoveResult, ToolError> {
    if !a.dry_run {
        state.permit(Capability::Remove)?;
    }
    state.store.remove(&RemoveOptions {
        refs: a.refs,
        retain_recent: a.retain_recent,
        retain_for: a.retain_for,
        before_date: a.before_date,
        target: a.target,
        dry_run: a.dry_run,
        session: state.choice(a.session),
    })
}
