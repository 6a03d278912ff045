//! The debug profile's results: the debugger snapshot tools' shapes, and the report every
//! session tool returns.

use cairn_dap::{BreakpointStatus, CaptureDiff, FrameInfo};
use cairn_lib::ops::debug::DebugSnapshot;
use serde::Serialize;

/// Where the debug session stands, as every session tool reports it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionReport {
    /// Always true; failures are reported as tool errors.
    pub success: bool,
    /// The live session's id (its captures are stored under `debug:<id>`); absent when none runs.
    pub session_id: Option<String>,
    /// The program is stopped and its variables can be captured.
    pub paused: bool,
    /// The program has ended or the session was stopped.
    pub terminated: bool,
    /// Why it last stopped (`breakpoint`, `step`, `entry`, ...).
    pub reason: Option<String>,
    /// The thread that last stopped.
    pub thread_id: Option<i64>,
    /// The program's exit code, once it exited.
    pub exit_code: Option<i64>,
    /// The stack, for debug_stack.
    #[schemars(with = "Option<Vec<serde_json::Value>>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames: Option<Vec<FrameInfo>>,
    /// The breakpoints as placed, for debug_set_breakpoints.
    #[schemars(with = "Option<Vec<serde_json::Value>>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breakpoints: Option<Vec<BreakpointStatus>>,
    /// For debug_stop: true when the program was left running, false when it was terminated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detached: Option<bool>,
}

/// What `snapshot_create` returns.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct CreateResult {
    /// Always true.
    pub success: bool,
    /// The stored capture.
    pub snapshot: DebugSnapshot,
}

/// What `snapshot_diff` returns.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DiffResult {
    /// Always true.
    pub success: bool,
    /// snapshotIdA, snapshotIdB, threadMismatch, timeDelta, summary, added, removed, modified.
    #[schemars(with = "serde_json::Value")]
    pub diff: CaptureDiff,
}

/// What `snapshot_delete` returns.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DeleteResult {
    /// Always true.
    pub success: bool,
    /// The id deleted (`snap-<uuid>`), or `all`.
    pub deleted: String,
    /// How many snapshots remain.
    pub remaining: usize,
}
