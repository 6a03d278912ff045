//! Moments through the default profile's snapshot tools: `snapshot_save` with several targets
//! saves them together as one moment, and `snapshot_restore` of a moment reference puts its
//! parts back (`only` picks kinds). The permission gates are the snapshot tools' own.

use cairn_lib::ops::moment::{
    MomentRestoreOptions, MomentRestoreResult, MomentSaveOptions, MomentSaveResult,
};
use cairn_lib::ops::restore::RestoreResult;
use cairn_lib::ops::save::SaveResult;
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

/// Saves `targets` together (the caller checked the save permission).
pub fn save(
    state: &ServerState,
    targets: Vec<String>,
    name: Option<String>,
    description: Option<String>,
    no_ignore: bool,
    session: Option<String>,
) -> Result<SaveOutcome, ToolError> {
    let places =
        if targets.iter().any(|t| t == "transcript:auto") { places()? } else { AgentPlaces::default() };
    let options = MomentSaveOptions {
        targets,
        name,
        description,
        no_ignore,
        // An agent cannot opt into copying credentials; the user's `secrets.include` can.
        include_secrets: false,
        session,
        places,
    };
    let saved = state.store.moment_save(&options, &state.context())?;
    state.saved(&saved.snapshots);
    Ok(SaveOutcome { snapshot: None, moment: Some(saved) })
}

/// Restores moment `reference` when it names one (the caller checked the restore
/// permission); `None` leaves it to the snapshot restore.
pub fn restore(
    state: &ServerState,
    reference: &str,
    only: Vec<String>,
    session: Option<String>,
) -> Result<Option<RestoreOutcome>, ToolError> {
    let resolved = state.store.call_session(session.as_deref(), &state.context())?;
    if state.store.find_moment(&resolved, reference)?.is_none() {
        if !only.is_empty() {
            return Err(ToolError::invalid(format!(
                "`only` picks parts of a moment, and {reference:?} names no moment"
            )));
        }
        return Ok(None);
    }
    let options = MomentRestoreOptions {
        reference: reference.to_owned(),
        only,
        session,
        places: places()?,
        cut_before_prompt: None,
    };
    let restored = state.store.moment_restore(&options, &state.context())?;
    Ok(Some(RestoreOutcome { snapshot: None, moment: Some(restored) }))
}

/// The agents' directories and the server's working directory, read at call time.
fn places() -> Result<AgentPlaces, ToolError> {
    let cwd = std::env::current_dir().map_err(|e| {
        crate::error::internal(format!(
            "cannot read the server's working directory ({e}); restart the server in the project"
        ))
    })?;
    AgentPlaces::from_env(&crate::state::process_env(), cwd.to_string_lossy().into_owned())
}
