//! The snapshot tools: capture the paused frame into the store, diff and delete captures.

use std::time::Duration;

use cairn_lib::ops::debug::{DebugDeleteOptions, DebugDiffOptions, DebugSaveOptions, INVALID_ARGUMENT};
use cairn_lib::ops::permissions::Capability;
use tokio::time::Instant;

use super::{CreateArgs, CreateResult, DeleteArgs, DeleteResult, DiffArgs, DiffResult, coded, dap, live};
use crate::error::ToolError;
use crate::state::ServerState;

/// What a `snapshot_create` that timed out before it could read the variables waited for.
const BUSY: &str = "the debug session, busy with another debug tool call \
    (a debug_continue or debug_step waiting for a stop)";

/// `snapshot_create`: `timeout_ms` bounds the whole call, including the wait for another
/// debug tool call that holds the session (a `debug_continue` waiting for its next stop
/// holds it for up to its `wait_ms`), not only the reading of the variables.
pub(super) fn create(state: &ServerState, args: CreateArgs) -> Result<CreateResult, ToolError> {
    state.permit(Capability::Save).map_err(coded)?;
    if args.timeout_ms == Some(0) {
        return Err(coded(
            cairn_lib::Error::invalid(
                "timeout_ms is 0, which leaves no time to read a single variable; pass a limit in milliseconds, or leave it out for 30000",
            )
            .with_code(INVALID_ARGUMENT),
        ));
    }
    let timeout = Duration::from_millis(args.timeout_ms.unwrap_or(30_000));
    let timed_out = |what: String| dap(cairn_dap::Error::Timeout { what, after: timeout });
    let handle = tokio::runtime::Handle::current();
    let (id, capture) = handle.block_on(async {
        let deadline = Instant::now() + timeout;
        let slot = tokio::time::timeout_at(deadline, state.debug.0.lock())
            .await
            .map_err(|_| timed_out(BUSY.to_owned()))?;
        let live = live(&slot)?;
        let remaining = deadline.saturating_duration_since(Instant::now());
        let (frame, depth) = (args.frame_index.unwrap_or(0), args.depth.unwrap_or(0));
        let capture = match live.session.capture_frame(args.thread_id, frame, depth, remaining).await {
            Ok(capture) => capture,
            // Report the limit the caller set, not what was left of it.
            Err(cairn_dap::Error::Timeout { what, .. }) => return Err(timed_out(what)),
            Err(e) => return Err(dap(e)),
        };
        Ok((live.id.clone(), capture))
    })?;
    let save = DebugSaveOptions { debug_session: id, label: args.label, session: None };
    let snapshot = state.store.debug_save(&save, &capture, &state.context()).map_err(coded)?;
    Ok(CreateResult { success: true, snapshot })
}

pub(super) fn diff(state: &ServerState, args: DiffArgs) -> Result<DiffResult, ToolError> {
    let options = DebugDiffOptions {
        snapshot_a: args.snapshot_id_1,
        snapshot_b: args.snapshot_id_2,
        exact: false,
        session: None,
    };
    let diff = state.store.debug_diff(&options, &state.context()).map_err(coded)?;
    Ok(DiffResult { success: true, diff })
}

/// `snapshot_delete`: with no id, clears the captures of this server's debug session (the live
/// one, else the latest), as the contract's in-memory store holds only those; captures of
/// earlier debug sessions stay until deleted by id. `remaining` counts the same scope.
///
/// The contract's tool deletes without asking (its captures live in memory), so it is allowed
/// unless the user denied `remove`; a refusal then starts with its code, as this profile's do.
pub(super) fn delete(state: &ServerState, args: DeleteArgs) -> Result<DeleteResult, ToolError> {
    state.permit_ungated(Capability::Remove).map_err(coded)?;
    // A server that never ran a debug session holds no captures of its own: scope to an id no
    // capture has, so "all" deletes nothing.
    let debug_session = Some(state.debug.latest().unwrap_or_else(|| "none".to_owned()));
    let options = DebugDeleteOptions { snapshot_id: args.snapshot_id, debug_session, session: None };
    let result = state.store.debug_delete(&options, &state.context()).map_err(coded)?;
    Ok(DeleteResult { success: true, deleted: result.deleted, remaining: result.remaining })
}
