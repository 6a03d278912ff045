//! `cairn debug run`: run a program under its debug adapter from breakpoint to breakpoint,
//! storing a capture at each stop and diffing consecutive captures.
//!
//! The live debug session is async (a DAP connection), so this runs on a small runtime of
//! its own; the session is always stopped before the call returns, so no adapter or
//! debuggee outlives it whatever fails.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cairn_dap::{AdapterCommand, CaptureDiff, DebugSession, LaunchOptions, RefusalCode, SourceBreakpoints};
use serde::Serialize;

use super::{DebugDiffOptions, DebugSaveOptions, DebugSnapshot, dap_error, new_debug_session_id};
use crate::Repository;
use crate::error::{Error, ErrorKind, Result};
use crate::ops::resolve::CallContext;

/// The adapter that debugs `program`: debugpy for a Python script (`.py`), lldb-dap for
/// anything else (an executable built with debug information). A program that is not a file is
/// refused here: adapters accept it and report the failure only as program output.
pub fn adapter_for(program: &Path) -> Result<AdapterCommand> {
    if !program.is_file() {
        return Err(Error::not_found(format!(
            "the program {} does not exist or is not a file; pass the path of a Python script or an executable built with debug information",
            program.display()
        ))
        .with_code(super::PROGRAM_NOT_FOUND));
    }
    let adapter = if program.extension().is_some_and(|e| e == "py") {
        AdapterCommand::debugpy()
    } else {
        AdapterCommand::lldb_dap()
    };
    adapter.map_err(dap_error)
}

/// What to run and how, for [`Repository::debug_run`].
#[derive(Debug, Clone)]
pub struct DebugRunOptions {
    /// The program: a Python script, or an executable built with debug information.
    pub program: PathBuf,
    /// Its command-line arguments.
    pub args: Vec<String>,
    /// Its working directory; the adapter's default when absent.
    pub cwd: Option<PathBuf>,
    /// Line breakpoints, set before the program starts (absolute paths: adapters match
    /// them by path).
    pub breakpoints: Vec<SourceBreakpoints>,
    /// Limit for the start, for each wait for a stop, and for each capture.
    pub timeout: Duration,
    /// Capture the top frame's variables at each stop and diff consecutive captures.
    pub capture_each_stop: bool,
    /// Levels of children to expand in each capture (0 = top-level variables only).
    pub depth: u32,
    /// Compare object addresses and pointer values raw instead of masking them.
    pub exact: bool,
    /// End the program after this many stops.
    pub max_stops: usize,
    /// The cairn session to save the captures into.
    pub session: Option<String>,
}

/// What [`Repository::debug_run`] did.
#[derive(Debug, Clone, Serialize)]
pub struct DebugRunResult {
    /// The `debug:<id>` target the captures were stored under.
    pub target: String,
    /// The adapter that ran the program.
    pub adapter: String,
    /// Each stop, in order.
    pub stops: Vec<DebugStop>,
    /// The diff between each pair of consecutive captures.
    pub diffs: Vec<CaptureDiff>,
    /// The program's exit code, when it ran to its end.
    pub exit_code: Option<i64>,
    /// True when the program was ended at `max_stops` instead of running to its end.
    pub stopped_early: bool,
}

/// One stop of the program.
#[derive(Debug, Clone, Serialize)]
pub struct DebugStop {
    /// The function it stopped in.
    pub function_name: String,
    /// Its source file, when known.
    pub path: Option<PathBuf>,
    /// Its line.
    pub line: u32,
    /// The capture stored at this stop, when capturing each stop.
    pub snapshot: Option<DebugSnapshot>,
}

impl Repository {
    /// Runs `options.program` under its adapter to each breakpoint until it ends or
    /// `max_stops` is reached, capturing and diffing if asked; the program and the adapter
    /// are ended before this returns.
    pub fn debug_run(&self, options: &DebugRunOptions, context: &CallContext) -> Result<DebugRunResult> {
        let adapter = adapter_for(&options.program)?;
        let launch = LaunchOptions {
            program: options.program.clone(),
            args: options.args.clone(),
            cwd: options.cwd.clone(),
            stop_on_entry: false,
        };
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().map_err(
                |e| {
                    Error::new(
                        ErrorKind::Io,
                        format!("cannot start the async runtime for the debug session: {e}"),
                    )
                },
            )?;
        runtime.block_on(async {
            let limits = cairn_dap::SessionOptions { start_timeout: options.timeout, ..Default::default() };
            let session = DebugSession::launch(&adapter, &launch, &options.breakpoints, limits)
                .await
                .map_err(dap_error)?;
            let outcome = self.drive(&session, options, context).await;
            // Always end the session, so no adapter or debuggee outlives the call.
            let stopped = session.stop().await.map_err(dap_error);
            let result = outcome?;
            stopped?;
            Ok(result)
        })
    }

    /// Runs the program from stop to stop until it ends or `max_stops` is reached.
    async fn drive(
        &self,
        session: &DebugSession,
        options: &DebugRunOptions,
        context: &CallContext,
    ) -> Result<DebugRunResult> {
        let target_id = new_debug_session_id();
        let mut result = DebugRunResult {
            target: format!("{}:{target_id}", super::KIND),
            adapter: session.adapter_kind().name().to_owned(),
            stops: Vec::new(),
            diffs: Vec::new(),
            exit_code: None,
            stopped_early: false,
        };
        loop {
            match session.wait_until_stopped(options.timeout).await {
                Ok(_) => {}
                Err(e) if e.refusal_code() == Some(RefusalCode::SessionEnded) => break,
                Err(e) => return Err(dap_error(e)),
            }
            let top = session.stack(None, Some(1)).await.map_err(dap_error)?.into_iter().next();
            let mut stop = DebugStop {
                function_name: top.as_ref().map(|f| f.name.clone()).unwrap_or_default(),
                path: top.as_ref().and_then(|f| f.path.clone()),
                line: top.as_ref().map_or(0, |f| f.line),
                snapshot: None,
            };
            if options.capture_each_stop {
                stop.snapshot =
                    Some(self.capture_stop(session, options, context, &target_id, &mut result).await?);
            }
            result.stops.push(stop);
            if result.stops.len() >= options.max_stops {
                result.stopped_early = true;
                break;
            }
            match session.resume(None).await {
                Ok(()) => {}
                Err(e) if e.refusal_code() == Some(RefusalCode::SessionEnded) => break,
                Err(e) => return Err(dap_error(e)),
            }
        }
        result.exit_code = session.state().exit_code;
        Ok(result)
    }

    /// Stores a capture of the current stop and appends its diff with the previous one.
    async fn capture_stop(
        &self,
        session: &DebugSession,
        options: &DebugRunOptions,
        context: &CallContext,
        target_id: &str,
        result: &mut DebugRunResult,
    ) -> Result<DebugSnapshot> {
        let capture =
            session.capture_frame(None, 0, options.depth, options.timeout).await.map_err(dap_error)?;
        let save = DebugSaveOptions {
            debug_session: target_id.to_owned(),
            label: Some(format!("stop {}", result.stops.len() + 1)),
            session: options.session.clone(),
        };
        let snapshot = self.debug_save(&save, &capture, context)?;
        if let Some(previous) = result.stops.iter().rev().find_map(|s| s.snapshot.as_ref()) {
            let diff = DebugDiffOptions {
                snapshot_a: previous.id.to_string(),
                snapshot_b: snapshot.id.to_string(),
                exact: options.exact,
                session: options.session.clone(),
            };
            result.diffs.push(self.debug_diff(&diff, context)?);
        }
        Ok(snapshot)
    }
}
