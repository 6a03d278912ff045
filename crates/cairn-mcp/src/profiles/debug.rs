//! The debug profile: the debugger snapshot tools (`snapshot_create`, `snapshot_diff`,
//! `snapshot_delete`) with their exact arguments and result shapes, plus the session tools
//! they need (`debug_launch`, `debug_attach`, `debug_set_breakpoints`, `debug_continue`,
//! `debug_step`, `debug_stack`, `debug_stop`).
//!
//! The server holds one live debug session at a time in its state; captures go to the store
//! as snapshots of `debug:<session id>`, so they outlive the session and the server, and two
//! captures from different runs can be diffed. Handlers run on the blocking pool and drive
//! the async session with the runtime's handle.

use std::path::PathBuf;
use std::time::Duration;

use cairn_dap::{
    AdapterCommand, DebugSession, FrameInfo, LaunchOptions, SessionOptions, SourceBreakpoints, StepKind,
};
use cairn_lib::ops::agent::Capability;
use cairn_lib::ops::debug::{
    DebugDeleteOptions, DebugDiffOptions, DebugSaveOptions, DebugSnapshot, dap_error, new_debug_session_id,
};
use serde::{Deserialize, Serialize};

use crate::error::{ServeError, ToolError};
use crate::registry::{Hints, ToolSpec};
use crate::state::ServerState;

/// What the server tells an agent when it connects.
pub const INSTRUCTIONS: &str = "Debugger state snapshots. Start a program with debug_launch (or debug_attach), \
let it run to a breakpoint, capture its variables with snapshot_create, continue, capture again, and compare \
with snapshot_diff. Captures are kept in the cairn store, so they can be diffed across debug sessions. \
Every session tool reports whether the program is paused; snapshot_create needs it paused.";

/// The live debug session of one server, if any.
#[derive(Default)]
pub struct DebugSlot(tokio::sync::Mutex<Option<Live>>);

impl std::fmt::Debug for DebugSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DebugSlot")
    }
}

/// A running session and the id its captures are stored under.
struct Live {
    id: String,
    session: DebugSession,
}

/// A line breakpoint.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Breakpoint {
    /// The source file (absolute, or relative to the server's working directory).
    pub file: PathBuf,
    /// The 1-based line.
    pub line: u32,
}

/// Arguments of `debug_launch`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchArgs {
    /// The program: a Python script (run under debugpy) or an executable built with debug information (run under lldb-dap).
    pub program: PathBuf,
    /// The program's arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Its working directory (default: the server's).
    pub cwd: Option<PathBuf>,
    /// Breakpoints set before the program starts.
    #[serde(default)]
    pub breakpoints: Vec<Breakpoint>,
    /// Stop at the program's first line or entry point.
    #[serde(default)]
    pub stop_on_entry: bool,
    /// How long to wait for the program to stop before returning, in milliseconds (default 10000; 0 returns at once).
    pub wait_ms: Option<u64>,
}

/// Arguments of `debug_attach`: a debugpy server (`host`/`port`) or a process id (lldb-dap).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachArgs {
    /// Host of a program started with `python3 -m debugpy --listen HOST:PORT` (default 127.0.0.1).
    pub host: Option<String>,
    /// Its port.
    pub port: Option<u16>,
    /// A native process to attach lldb-dap to.
    pub pid: Option<u32>,
    /// Breakpoints to set.
    #[serde(default)]
    pub breakpoints: Vec<Breakpoint>,
    /// How long to wait for the program to stop before returning, in milliseconds (default 0).
    pub wait_ms: Option<u64>,
}

/// Arguments of `debug_set_breakpoints`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BreakpointsArgs {
    /// The source file.
    pub file: PathBuf,
    /// Its breakpoint lines; replaces the file's earlier ones (empty clears them).
    pub lines: Vec<u32>,
}

/// Arguments of `debug_continue` and `debug_step`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// For debug_step: `over` (default), `in` or `out`.
    #[schemars(with = "Option<String>")]
    pub kind: Option<StepKind>,
    /// The thread (default: the one that stopped).
    pub thread_id: Option<i64>,
    /// How long to wait for the next stop before returning, in milliseconds (default 10000; 0 returns at once).
    pub wait_ms: Option<u64>,
}

/// Arguments of `debug_stack`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StackArgs {
    /// The thread (default: the one that stopped).
    pub thread_id: Option<i64>,
    /// At most this many frames.
    pub levels: Option<u32>,
}

/// Arguments of `debug_stop` (none).
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// Arguments of `snapshot_create`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    /// Human-readable label for the snapshot (auto-generated if omitted).
    pub label: Option<String>,
    /// Thread to capture variables from (default: active thread).
    pub thread_id: Option<i64>,
    /// Stack frame index, 0 = top of stack (default: 0).
    pub frame_index: Option<usize>,
    /// Expansion depth for nested objects, 0 = top-level only (default: 0).
    pub depth: Option<u32>,
    /// Maximum time to wait for the snapshot to be created, in milliseconds (default: 30000).
    pub timeout_ms: Option<u64>,
}

/// Arguments of `snapshot_diff`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffArgs {
    /// First snapshot ID (baseline).
    pub snapshot_id_1: String,
    /// Second snapshot ID (comparison).
    pub snapshot_id_2: String,
}

/// Arguments of `snapshot_delete`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    /// Snapshot ID to delete. If omitted, deletes all snapshots.
    pub snapshot_id: Option<String>,
}

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
    pub breakpoints: Option<Vec<cairn_dap::BreakpointStatus>>,
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
    pub diff: cairn_dap::CaptureDiff,
}

/// What `snapshot_delete` returns.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DeleteResult {
    /// Always true.
    pub success: bool,
    /// The id deleted, or `all`.
    pub deleted: String,
    /// How many snapshots remain.
    pub remaining: usize,
}

/// The profile's tools.
pub fn tools() -> Result<Vec<ToolSpec>, ServeError> {
    let control = Hints { read_only: false, destructive: false, idempotent: false, open_world: true };
    let look = Hints { read_only: true, destructive: false, idempotent: true, open_world: true };
    Ok(vec![
        ToolSpec::blocking("debug_launch", "Start a program under its debug adapter (debugpy for .py, lldb-dap otherwise) with breakpoints; replaces any running debug session. Says whether it is paused.", control, launch)?.changing_snapshots(false),
        ToolSpec::blocking("debug_attach", "Attach to a debugpy server (host, port) or a native process (pid); replaces any running debug session. Says whether it is paused.", control, attach)?.changing_snapshots(false),
        ToolSpec::blocking("debug_set_breakpoints", "Replace the line breakpoints of one source file in the running debug session.", control, set_breakpoints)?.changing_snapshots(false),
        ToolSpec::blocking("debug_continue", "Let the paused program run, then wait up to wait_ms for its next stop. Says whether it is paused.", control, resume)?.changing_snapshots(false),
        ToolSpec::blocking("debug_step", "Step the paused program over, into or out of the current line. Says whether it is paused.", control, step)?.changing_snapshots(false),
        ToolSpec::blocking("debug_stack", "The paused program's stack, innermost frame first.", look, stack)?,
        ToolSpec::blocking("debug_stop", "End the debug session: the program is terminated (or detached from) and the adapter exits. Captures stay in the store.", control, stop)?.changing_snapshots(false),
        ToolSpec::blocking("snapshot_create", "Capture the current debug state (variables, arguments, this) as a named snapshot. Requires a paused session (NOT_PAUSED otherwise).", Hints::ADD, create)?,
        ToolSpec::blocking("snapshot_diff", "Compare two snapshots and return structured differences (added, removed, modified variables). SNAPSHOT_NOT_FOUND for an unknown id.", Hints::READ, diff)?,
        ToolSpec::blocking("snapshot_delete", "Delete a specific snapshot by ID, or clear all snapshots if no ID is provided.", Hints::DESTROY, delete)?,
    ])
}

/// Runs `work` on the server's runtime from a blocking-pool thread, with the live slot.
fn with_slot<T>(
    state: &ServerState,
    work: impl AsyncFnOnce(&mut Option<Live>) -> Result<T, ToolError>,
) -> Result<T, ToolError> {
    let handle = tokio::runtime::Handle::current();
    handle.block_on(async {
        let mut slot = state.debug.0.lock().await;
        work(&mut slot).await
    })
}

/// A debug adapter failure as a tool error whose sentence starts with its code, so the agent
/// sees `NOT_PAUSED` or `SESSION_ENDED` as the spec names them.
fn dap(err: cairn_dap::Error) -> ToolError {
    coded(dap_error(err))
}

fn coded(err: cairn_lib::Error) -> ToolError {
    match err.code() {
        Some(code) if !err.message().starts_with(code) => {
            let message = format!("{code}: {}", err.message());
            ToolError::from(cairn_lib::Error::new(err.kind(), message).with_code(code))
        }
        _ => ToolError::from(err),
    }
}

fn no_session() -> ToolError {
    ToolError::from(
        cairn_lib::Error::new(
            cairn_lib::ErrorKind::Conflict,
            "NOT_PAUSED: no debug session is running; start one with debug_launch or debug_attach",
        )
        .with_code("NOT_PAUSED"),
    )
}

fn live(slot: &Option<Live>) -> Result<&Live, ToolError> {
    slot.as_ref().ok_or_else(no_session)
}

fn report(live: Option<&Live>) -> SessionReport {
    let state = live.map(|l| l.session.state());
    SessionReport {
        success: true,
        session_id: live.map(|l| l.id.clone()),
        paused: state.as_ref().is_some_and(|s| s.paused),
        terminated: state.as_ref().is_none_or(|s| s.terminated),
        reason: state.as_ref().and_then(|s| s.reason.clone()),
        thread_id: state.as_ref().and_then(|s| s.thread_id),
        exit_code: state.as_ref().and_then(|s| s.exit_code),
        frames: None,
        breakpoints: None,
    }
}

/// Waits up to `wait_ms` for a stop or the end; running on is not an error.
async fn settle(live: &Live, wait_ms: u64) {
    if wait_ms > 0 {
        let _ = live.session.wait_until_stopped(Duration::from_millis(wait_ms)).await;
    }
}

fn grouped(breakpoints: &[Breakpoint]) -> Vec<SourceBreakpoints> {
    let mut files: Vec<SourceBreakpoints> = Vec::new();
    for b in breakpoints {
        let path = std::path::absolute(&b.file).unwrap_or_else(|_| b.file.clone());
        match files.iter_mut().find(|f| f.path == path) {
            Some(file) => file.lines.push(b.line),
            None => files.push(SourceBreakpoints { path, lines: vec![b.line] }),
        }
    }
    files
}

/// Ends the previous session, if any, before a new one takes the slot.
async fn replace(slot: &mut Option<Live>, session: DebugSession) -> &Live {
    if let Some(old) = slot.take() {
        let _ = old.session.stop().await;
    }
    slot.insert(Live { id: new_debug_session_id(), session })
}

fn launch(state: &ServerState, args: LaunchArgs) -> Result<SessionReport, ToolError> {
    let program = std::path::absolute(&args.program).unwrap_or(args.program);
    let adapter = if program.extension().is_some_and(|e| e == "py") {
        AdapterCommand::debugpy()
    } else {
        AdapterCommand::lldb_dap()
    }
    .map_err(dap)?;
    let options =
        LaunchOptions { program, args: args.args, cwd: args.cwd, stop_on_entry: args.stop_on_entry };
    let breakpoints = grouped(&args.breakpoints);
    with_slot(state, async |slot| {
        let session = DebugSession::launch(&adapter, &options, &breakpoints, SessionOptions::default())
            .await
            .map_err(dap)?;
        let live = replace(slot, session).await;
        settle(live, args.wait_ms.unwrap_or(10_000)).await;
        Ok(report(Some(live)))
    })
}

fn attach(state: &ServerState, args: AttachArgs) -> Result<SessionReport, ToolError> {
    let breakpoints = grouped(&args.breakpoints);
    with_slot(state, async |slot| {
        let options = SessionOptions::default();
        let session = match (args.port, args.pid) {
            (Some(port), None) => {
                let host = args.host.as_deref().unwrap_or("127.0.0.1");
                DebugSession::attach_debugpy(host, port, &breakpoints, options).await
            }
            (None, Some(pid)) => {
                let adapter = AdapterCommand::lldb_dap().map_err(dap)?;
                DebugSession::attach_pid(&adapter, pid, &breakpoints, options).await
            }
            _ => {
                return Err(ToolError::invalid(
                    "pass either port (a debugpy server) or pid (a native process)",
                ));
            }
        }
        .map_err(dap)?;
        let live = replace(slot, session).await;
        settle(live, args.wait_ms.unwrap_or(0)).await;
        Ok(report(Some(live)))
    })
}

fn set_breakpoints(state: &ServerState, args: BreakpointsArgs) -> Result<SessionReport, ToolError> {
    with_slot(state, async |slot| {
        let live = live(slot)?;
        let path = std::path::absolute(&args.file).unwrap_or(args.file);
        let placed = live.session.set_breakpoints(&path, &args.lines).await.map_err(dap)?;
        Ok(SessionReport { breakpoints: Some(placed), ..report(Some(live)) })
    })
}

fn resume(state: &ServerState, args: RunArgs) -> Result<SessionReport, ToolError> {
    with_slot(state, async |slot| {
        let live = live(slot)?;
        live.session.resume(args.thread_id).await.map_err(dap)?;
        settle(live, args.wait_ms.unwrap_or(10_000)).await;
        Ok(report(Some(live)))
    })
}

fn step(state: &ServerState, args: RunArgs) -> Result<SessionReport, ToolError> {
    with_slot(state, async |slot| {
        let live = live(slot)?;
        live.session.step(args.kind.unwrap_or(StepKind::Over), args.thread_id).await.map_err(dap)?;
        settle(live, args.wait_ms.unwrap_or(10_000)).await;
        Ok(report(Some(live)))
    })
}

fn stack(state: &ServerState, args: StackArgs) -> Result<SessionReport, ToolError> {
    with_slot(state, async |slot| {
        let live = live(slot)?;
        let frames = live.session.stack(args.thread_id, args.levels).await.map_err(dap)?;
        Ok(SessionReport { frames: Some(frames), ..report(Some(live)) })
    })
}

fn stop(state: &ServerState, _args: NoArgs) -> Result<SessionReport, ToolError> {
    with_slot(state, async |slot| {
        if let Some(old) = slot.take() {
            old.session.stop().await.map_err(dap)?;
        }
        Ok(report(None))
    })
}

fn create(state: &ServerState, args: CreateArgs) -> Result<CreateResult, ToolError> {
    state.permit(Capability::Save)?;
    let timeout = Duration::from_millis(args.timeout_ms.unwrap_or(30_000));
    let (id, capture) = with_slot(state, async |slot| {
        let live = live(slot)?;
        let capture = live
            .session
            .capture_frame(args.thread_id, args.frame_index.unwrap_or(0), args.depth.unwrap_or(0), timeout)
            .await
            .map_err(dap)?;
        Ok((live.id.clone(), capture))
    })?;
    let save = DebugSaveOptions { debug_session: id, label: args.label, session: state.choice(None) };
    let snapshot = state.store.debug_save(&save, &capture).map_err(coded)?;
    Ok(CreateResult { success: true, snapshot })
}

fn diff(state: &ServerState, args: DiffArgs) -> Result<DiffResult, ToolError> {
    let diff = state
        .store
        .debug_diff(&DebugDiffOptions {
            snapshot_a: args.snapshot_id_1,
            snapshot_b: args.snapshot_id_2,
            exact: false,
            session: state.choice(None),
        })
        .map_err(coded)?;
    Ok(DiffResult { success: true, diff })
}

fn delete(state: &ServerState, args: DeleteArgs) -> Result<DeleteResult, ToolError> {
    state.permit(Capability::Remove)?;
    let result = state
        .store
        .debug_delete(&DebugDeleteOptions { snapshot_id: args.snapshot_id, session: state.choice(None) })
        .map_err(coded)?;
    Ok(DeleteResult { success: true, deleted: result.deleted, remaining: result.remaining })
}
