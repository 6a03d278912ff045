//! Moments through the default profile's snapshot tools: `snapshot_save` calls the engine's one
//! save entry point, which saves several targets together as one moment, and `snapshot_restore` of a moment reference puts its
//! parts back (`only` picks kinds). The permission gates are the snapshot tools' own.

use cairn_lib::ops::moment::{MomentRestoreResult, MomentSaveResult};
use cairn_lib::ops::restore::{RestoreOptions, RestoreResult, Restored};
use cairn_lib::ops::save::{Progress, SaveOptions, SaveResult, Saved};
use cairn_lib::ops::transcript::AgentPlaces;
use serde::Serialize;

use crate::error::ToolError;
use crate::state::ServerState;

/// What `snapshot_save` returns: one snapshot, or a moment over several.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SaveOutcome {
    /// The snapshot, when one target was given.
    #[serde(flatten)]
    pub snapshot: Option<SaveResult>,
    /// The moment, when several were.
    #[serde(flatten)]
    pub moment: Option<MomentSaveResult>,
}

/// What `snapshot_restore` returns: one snapshot put back, or every part of a moment.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct RestoreOutcome {
    /// The snapshot restore.
    #[serde(flatten)]
    pub snapshot: Option<RestoreResult>,
    /// The moment restore.
    #[serde(flatten)]
    pub moment: Option<MomentRestoreResult>,
}

/// Saves one target as a snapshot or several as a moment, through the engine's one entry
/// point (the caller checked the save permission).
pub fn save(state: &ServerState, options: &SaveOptions) -> Result<SaveOutcome, ToolError> {
    let places = if options.targets.iter().any(|t| t == "transcript:auto") {
        crate::state::agent_places()?
    } else {
        AgentPlaces::default()
    };
    match state.store.save_targets(options, &places, &state.context(), &Progress::default())? {
        Saved::Snapshot(saved) => {
            state.saved([&saved.snapshot]);
            Ok(SaveOutcome { snapshot: Some(saved), moment: None })
        }
        Saved::Moment(saved) => {
            state.saved(&saved.snapshots);
            Ok(SaveOutcome { snapshot: None, moment: Some(saved) })
        }
    }
}

/// Restores a moment or a snapshot, as the engine's one restore entry point decides from the
/// reference (the caller checked the restore permission).
pub fn restore(state: &ServerState, options: &RestoreOptions) -> Result<RestoreOutcome, ToolError> {
    let restored = state.store.restore_ref(
        options,
        crate::state::agent_places(),
        &state.context(),
        &Progress::default(),
    )?;
    Ok(match restored {
        Restored::Snapshot(restored) => RestoreOutcome { snapshot: Some(*restored), moment: None },
        Restored::Moment(restored) => RestoreOutcome { snapshot: None, moment: Some(*restored) },
    })
}
