//! The session tools: start, steer and end the live debug session.

use cairn_dap::{DebugSession, LaunchOptions, SessionOptions, StepKind};
use cairn_lib::ops::debug::adapter_for;

use super::{
    AttachArgs, BreakpointsArgs, ContinueArgs, LaunchArgs, SessionReport, StackArgs, StepArgs, StopArgs,
    coded, dap, end, grouped, live, replace, report, settle, with_slot,
};
use crate::error::ToolError;
use crate::state::ServerState;

pub(super) fn launch(state: &ServerState, args: LaunchArgs) -> Result<SessionReport, ToolError> {
    let program = std::path::absolute(&args.program).unwrap_or(args.program);
    let adapter = adapter_for(&program).map_err(coded)?;
    let options =
        LaunchOptions { program, args: args.args, cwd: args.cwd, stop_on_entry: args.stop_on_entry };
    let breakpoints = grouped(&args.breakpoints);
    with_slot(state, async |slot| {
        let session = DebugSession::launch(&adapter, &options, &breakpoints, SessionOptions::default())
            .await
            .map_err(dap)?;
        let live = replace(state, slot, session, false).await;
        settle(live, args.wait_ms.unwrap_or(10_000)).await;
        Ok(report(Some(live)))
    })
}

pub(super) fn attach(state: &ServerState, args: AttachArgs) -> Result<SessionReport, ToolError> {
    let breakpoints = grouped(&args.breakpoints);
    with_slot(state, async |slot| {
        let options = SessionOptions::default();
        let session = match (args.port, args.pid) {
            (Some(port), None) => {
                let host = args.host.as_deref().unwrap_or("127.0.0.1");
                DebugSession::attach_debugpy(host, port, &breakpoints, options).await
            }
            (None, Some(pid)) => {
                let adapter = cairn_dap::AdapterCommand::lldb_dap().map_err(dap)?;
                DebugSession::attach_pid(&adapter, pid, &breakpoints, options).await
            }
            _ => {
                return Err(ToolError::invalid(
                    "pass either port (a debugpy server) or pid (a native process)",
                ));
            }
        }
        .map_err(dap)?;
        let live = replace(state, slot, session, true).await;
        settle(live, args.wait_ms.unwrap_or(0)).await;
        Ok(report(Some(live)))
    })
}

pub(super) fn set_breakpoints(
    state: &ServerState,
    args: BreakpointsArgs,
) -> Result<SessionReport, ToolError> {
    with_slot(state, async |slot| {
        let live = live(slot)?;
        let path = std::path::absolute(&args.file).unwrap_or(args.file);
        let placed = live.session.set_breakpoints(&path, &args.lines).await.map_err(dap)?;
        Ok(SessionReport { breakpoints: Some(placed), ..report(Some(live)) })
    })
}

pub(super) fn resume(state: &ServerState, args: ContinueArgs) -> Result<SessionReport, ToolError> {
    with_slot(state, async |slot| {
        let live = live(slot)?;
        live.session.resume(args.thread_id).await.map_err(dap)?;
        settle(live, args.wait_ms.unwrap_or(10_000)).await;
        Ok(report(Some(live)))
    })
}

pub(super) fn step(state: &ServerState, args: StepArgs) -> Result<SessionReport, ToolError> {
    with_slot(state, async |slot| {
        let live = live(slot)?;
        live.session.step(args.kind.unwrap_or(StepKind::Over), args.thread_id).await.map_err(dap)?;
        settle(live, args.wait_ms.unwrap_or(10_000)).await;
        Ok(report(Some(live)))
    })
}

pub(super) fn stack(state: &ServerState, args: StackArgs) -> Result<SessionReport, ToolError> {
    with_slot(state, async |slot| {
        let live = live(slot)?;
        let frames = live.session.stack(args.thread_id, args.levels).await.map_err(dap)?;
        Ok(SessionReport { frames: Some(frames), ..report(Some(live)) })
    })
}

pub(super) fn stop(state: &ServerState, args: StopArgs) -> Result<SessionReport, ToolError> {
    with_slot(state, async |slot| {
        let Some(old) = slot.take() else {
            return Ok(report(None));
        };
        let detach = args.detach.unwrap_or(old.attached);
        end(old, detach).await?;
        Ok(SessionReport { detached: Some(detach), ..report(None) })
    })
}
