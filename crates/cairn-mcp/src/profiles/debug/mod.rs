//! The debug profile: the debugger snapshot tools (`snapshot_create`, `snapshot_diff`,
//! `snapshot_delete`) with their exact arguments and result shapes, plus the session tools
//! they need (`debug_launch`, `debug_attach`, `debug_set_breakpoints`, `debug_continue`,
//! `debug_step`, `debug_stack`, `debug_stop`).
//!
//! The server holds one live debug session at a time in its state; captures go to the store
//! as snapshots of `debug:<session id>`, so they outlive the session and the server, and two
//! captures from different runs can be diffed. Handlers run on the blocking pool and drive
//! the async session with the runtime's handle.

mod args;
mod results;
mod session_tools;
mod snapshot_tools;

use std::time::Duration;

use cairn_dap::{DebugSession, SourceBreakpoints};
use cairn_lib::ops::debug::{dap_error, new_debug_session_id};

pub use args::*;
pub use results::*;

use crate::error::{ServeError, ToolError};
use crate::registry::{Hints, ToolSpec};
use crate::state::ServerState;

/// What the server tells an agent when it connects.
pub const INSTRUCTIONS: &str = "Debugger state snapshots. Start a program with debug_launch (or debug_attach), \
let it run to a breakpoint, capture its variables with snapshot_create, continue, capture again, and compare \
with snapshot_diff. Captures are kept in the cairn store, so they can be diffed across debug sessions. \
Every session tool reports whether the program is paused; snapshot_create needs it paused.";

/// The live debug session of one server, if any, and the id of the latest one (kept after it
/// ends, so `snapshot_delete` with no id still clears that session's captures).
#[derive(Default)]
pub struct DebugSlot(tokio::sync::Mutex<Option<Live>>, std::sync::Mutex<Option<String>>);

impl DebugSlot {
    /// The id of the server's latest debug session, live or ended.
    fn latest(&self) -> Option<String> {
        self.1.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

impl std::fmt::Debug for DebugSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DebugSlot")
    }
}

/// A running session and the id its captures are stored under.
struct Live {
    id: String,
    session: DebugSession,
    /// The program was attached to rather than launched: ending the session leaves it
    /// running unless asked otherwise, since cairn did not start it.
    attached: bool,
}

/// The profile's tools.
pub fn tools() -> Result<Vec<ToolSpec>, ServeError> {
    use session_tools::{attach, launch, resume, set_breakpoints, stack, step, stop};
    use snapshot_tools::{create, delete, diff};
    let control = Hints { read_only: false, destructive: false, idempotent: false, open_world: true };
    let look = Hints { read_only: true, destructive: false, idempotent: true, open_world: true };
    Ok(vec![
        ToolSpec::blocking("debug_launch", "Start a program under its debug adapter (debugpy for .py, lldb-dap otherwise) with breakpoints; replaces any running debug session. Says whether it is paused.", control, launch)?.changing_snapshots(false),
        ToolSpec::blocking("debug_attach", "Attach to a debugpy server (host, port) or a native process (pid); replaces any running debug session. Says whether it is paused.", control, attach)?.changing_snapshots(false),
        ToolSpec::blocking("debug_set_breakpoints", "Replace the line breakpoints of one source file in the running debug session.", control, set_breakpoints)?.changing_snapshots(false),
        ToolSpec::blocking("debug_continue", "Let the paused program run, then wait up to wait_ms for its next stop. Says whether it is paused.", control, resume)?.changing_snapshots(false),
        ToolSpec::blocking("debug_step", "Step the paused program over, into or out of the current line, then wait up to wait_ms for it to stop. Says whether it is paused.", control, step)?.changing_snapshots(false),
        ToolSpec::blocking("debug_stack", "The paused program's stack, innermost frame first.", look, stack)?,
        ToolSpec::blocking("debug_stop", "End the debug session: a launched program is terminated, an attached one is detached from and keeps running (detach chooses), and the adapter exits. Captures stay in the store.", control, stop)?.changing_snapshots(false),
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

/// The debugger tools' words: their tools, and the resource that lists the captures.
pub static WORDS: DebugWords = DebugWords;

/// How the debug profile's refusals name arguments and tools.
#[derive(Debug, Clone, Copy)]
pub struct DebugWords;

impl cairn_lib::Words for DebugWords {
    fn hint(&self, hint: &cairn_lib::Hint) -> String {
        use cairn_lib::Operation;
        crate::words::tool_hint(hint, |op| match op {
            Operation::Save => Some("call snapshot_create".to_owned()),
            Operation::ListDebugCaptures | Operation::ListSnapshots => {
                Some(format!("read {}", crate::resources::DEBUG_SNAPSHOTS_URI))
            }
            Operation::DiffDebugCaptures => Some("call snapshot_diff".to_owned()),
            _ => None,
        })
    }
}

/// A debug adapter failure as a tool error whose sentence starts with its code, so the agent
/// sees `NOT_PAUSED` or `SESSION_ENDED` as the spec names them.
fn dap(err: cairn_dap::Error) -> ToolError {
    coded(dap_error(err))
}

fn coded(err: cairn_lib::Error) -> ToolError {
    let err = without_session(err);
    match err.code() {
        // `context` keeps the kind, the code and the hints, which the profile's words render.
        Some(code) if !err.message().starts_with(code) => err.context(code),
        _ => err,
    }
}

/// The engine's not-found sentence names the cairn session it looked in ("… in session
/// \"baseline\""); the debugger's tools have no sessions of that kind, so an agent written for
/// them reads only which snapshot does not exist.
fn without_session(err: cairn_lib::Error) -> cairn_lib::Error {
    let code = cairn_lib::ops::debug::SNAPSHOT_NOT_FOUND;
    let message = err.render_message(&WORDS);
    match message.rfind(" in session \"") {
        Some(at) if err.code() == Some(code) => {
            cairn_lib::Error::not_found(&message[..at]).with_hints(err.hints()).with_code(code)
        }
        _ => err,
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
        detached: None,
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

/// Ends `live`: detaches (the program runs on) or terminates the program; either way the
/// adapter exits.
async fn end(live: Live, detach: bool) -> Result<(), ToolError> {
    if detach { live.session.detach().await } else { live.session.stop().await }.map_err(dap)
}

/// Ends the previous session, if any (as debug_stop would by default), before a new one
/// takes the slot.
async fn replace<'a>(
    state: &ServerState,
    slot: &'a mut Option<Live>,
    session: DebugSession,
    attached: bool,
) -> &'a Live {
    if let Some(old) = slot.take() {
        let detach = old.attached;
        // The old session is being replaced; a failure to end it cleanly must not refuse
        // the new one (a failed stop still kills the adapter).
        let _ = end(old, detach).await;
    }
    let id = new_debug_session_id();
    *state.debug.1.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(id.clone());
    slot.insert(Live { id, session, attached })
}
