//! Execution control and inspection of a session: breakpoints, continue, steps, threads,
//! stack frames, and waiting for the next stop.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, RefusalCode, Result};
use crate::protocol::bodies::{
    ContinueResponse, Ignored, SetBreakpointsArguments, SetBreakpointsResponse, Source, SourceBreakpoint,
    StackTraceArguments, StackTraceResponse, ThreadArguments, ThreadsResponse,
};
use crate::session::{DebugSession, SessionState};

/// How long a pause refused right after a resume is retried (see [`DebugSession::pause`]).
const PAUSE_SETTLE: Duration = Duration::from_secs(2);

/// One breakpoint as the adapter accepted it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BreakpointStatus {
    /// The line asked for.
    pub requested_line: u32,
    /// The line the adapter placed it on (it may move it to the next executable line).
    pub line: Option<u32>,
    /// The adapter could bind it to code.
    pub verified: bool,
    /// The adapter's explanation when it could not.
    pub message: Option<String>,
}

/// A thread of the debuggee.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadInfo {
    /// The adapter's thread id, used by the other calls.
    pub id: i64,
    /// The thread's name.
    pub name: String,
}

/// One frame of a thread's stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameInfo {
    /// Position on the stack, 0 = innermost.
    pub index: usize,
    /// The function's name as the adapter shows it.
    pub name: String,
    /// The source file, when known.
    pub path: Option<PathBuf>,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

/// Which way to step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// Run to the next line of this function (DAP `next`).
    Over,
    /// Enter the call on this line (DAP `stepIn`).
    In,
    /// Run until this function returns (DAP `stepOut`).
    Out,
}

impl DebugSession {
    /// Replaces the line breakpoints of `file` with `lines` (an empty list clears them).
    pub async fn set_breakpoints(&self, file: &Path, lines: &[u32]) -> Result<Vec<BreakpointStatus>> {
        let arguments = SetBreakpointsArguments {
            source: Source { path: Some(file.to_string_lossy().into_owned()), name: None },
            breakpoints: lines.iter().map(|&line| SourceBreakpoint { line }).collect(),
        };
        let response: SetBreakpointsResponse = self.conn.request("setBreakpoints", Some(arguments)).await?;
        Ok(lines
            .iter()
            .enumerate()
            .map(|(i, &requested_line)| {
                let placed = response.breakpoints.get(i);
                BreakpointStatus {
                    requested_line,
                    line: placed.and_then(|b| b.line),
                    verified: placed.is_some_and(|b| b.verified),
                    message: placed.and_then(|b| b.message.clone()),
                }
            })
            .collect())
    }

    /// Lets the paused program run (DAP `continue`) on `thread`, default the stopped one.
    pub async fn resume(&self, thread: Option<i64>) -> Result<()> {
        let thread_id = self.paused_thread(thread, "continue")?;
        self.run_command::<ContinueResponse>("continue", thread_id).await
    }

    /// Steps the paused program over, into or out of the current line.
    pub async fn step(&self, kind: StepKind, thread: Option<i64>) -> Result<()> {
        let thread_id = self.paused_thread(thread, "step")?;
        let command = match kind {
            StepKind::Over => "next",
            StepKind::In => "stepIn",
            StepKind::Out => "stepOut",
        };
        self.run_command::<Ignored>(command, thread_id).await
    }

    /// Asks the running program to pause; wait for the stop with
    /// [`DebugSession::wait_until_stopped`].
    pub async fn pause(&self, thread: Option<i64>) -> Result<()> {
        let state = self.conn.state();
        let thread_id = match thread.or(state.thread_id).or(state.any_thread) {
            Some(id) => id,
            None => self.first_thread().await?,
        };
        // lldb-dap answers `continue` before its process has left the stopped state, and
        // refuses a pause sent in that gap ("Process is not running"). While the session still
        // believes the program runs, such a refusal is retried for a short while.
        let deadline = tokio::time::Instant::now() + PAUSE_SETTLE;
        loop {
            match self.conn.request::<Ignored>("pause", Some(ThreadArguments { thread_id })).await {
                Ok(_) => return Ok(()),
                Err(Error::RequestFailed { .. })
                    if tokio::time::Instant::now() < deadline && {
                        let now = self.conn.state();
                        !now.paused && !now.terminated && !now.closed
                    } =>
                {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Waits until the program stops, for at most `timeout`. Refused with `SESSION_ENDED`
    /// when the program ends instead.
    pub async fn wait_until_stopped(&self, timeout: Duration) -> Result<SessionState> {
        let state = self
            .conn
            .wait_for_state("the program to stop", timeout, |s| s.paused || s.terminated || s.closed)
            .await?;
        if !state.paused {
            return Err(ended_error(state.exit_code));
        }
        Ok(self.state())
    }

    /// The debuggee's threads.
    pub async fn threads(&self) -> Result<Vec<ThreadInfo>> {
        let response: ThreadsResponse = self.conn.request("threads", None::<()>).await?;
        Ok(response.threads.into_iter().map(|t| ThreadInfo { id: t.id, name: t.name }).collect())
    }

    /// The stack of `thread` (default the stopped one), innermost first; at most `levels`
    /// frames when given. Needs a paused program.
    pub async fn stack(&self, thread: Option<i64>, levels: Option<u32>) -> Result<Vec<FrameInfo>> {
        let thread_id = self.paused_thread(thread, "read the stack")?;
        let frames = self.raw_stack(thread_id, levels).await?;
        Ok(frames
            .stack_frames
            .into_iter()
            .enumerate()
            .map(|(index, f)| FrameInfo {
                index,
                name: f.name,
                path: f.source.and_then(|s| s.path).map(PathBuf::from),
                line: f.line,
                column: f.column,
            })
            .collect())
    }

    /// The stack of `thread_id`. A thread the program does not have is refused with
    /// `FRAME_NOT_FOUND` naming the threads it has, rather than with the adapter's own words
    /// (debugpy fails the request, lldb-dap answers with no frames).
    pub(crate) async fn raw_stack(&self, thread_id: i64, levels: Option<u32>) -> Result<StackTraceResponse> {
        let arguments = StackTraceArguments { thread_id, start_frame: Some(0), levels };
        let answer: Result<StackTraceResponse> = self.conn.request("stackTrace", Some(arguments)).await;
        let suspicious = match &answer {
            Ok(stack) => stack.stack_frames.is_empty(),
            Err(Error::RequestFailed { .. }) => true,
            Err(_) => false,
        };
        if suspicious && thread_id != self.conn.state().thread_id.unwrap_or(thread_id) {
            let threads = self.threads().await?;
            if !threads.iter().any(|t| t.id == thread_id) {
                let known: Vec<String> = threads.iter().map(|t| format!("{} ({})", t.id, t.name)).collect();
                return Err(Error::refused(
                    RefusalCode::FrameNotFound,
                    format!(
                        "the program has no thread {thread_id}; its threads are {}: pass one of them, or leave the thread out for the one that stopped",
                        known.join(", ")
                    ),
                ));
            }
        }
        answer
    }

    /// The thread a paused-only call acts on, or a `NOT_PAUSED` refusal.
    pub(crate) fn paused_thread(&self, thread: Option<i64>, action: &str) -> Result<i64> {
        let state = self.conn.state();
        if state.terminated || state.closed {
            return Err(ended_error(state.exit_code));
        }
        if !state.paused {
            return Err(Error::refused(
                RefusalCode::NotPaused,
                format!(
                    "cannot {action} while the program is running; wait for a breakpoint or pause it first"
                ),
            ));
        }
        thread.or(state.thread_id).ok_or_else(|| {
            Error::refused(
                RefusalCode::FrameNotFound,
                "the adapter did not say which thread stopped; pass a thread id",
            )
        })
    }

    async fn first_thread(&self) -> Result<i64> {
        self.threads().await?.first().map(|t| t.id).ok_or_else(|| {
            Error::refused(
                RefusalCode::FrameNotFound,
                "the program has no threads; check that it is still running",
            )
        })
    }

    /// Sends a request that resumes the program and marks it running, unless a new stop
    /// arrived before the answer (a breakpoint right after a step can beat the response).
    async fn run_command<T: serde::de::DeserializeOwned>(&self, command: &str, thread_id: i64) -> Result<()> {
        let stops_before = self.conn.state().stops;
        self.conn.request::<T>(command, Some(ThreadArguments { thread_id })).await?;
        self.conn.update_state(|s| {
            if s.stops == stops_before {
                s.paused = false;
            }
        });
        Ok(())
    }
}

fn ended_error(exit_code: Option<i64>) -> Error {
    let detail = match exit_code {
        Some(code) => format!("the program has ended (exit code {code})"),
        None => "the debug session has ended".to_owned(),
    };
    Error::refused(RefusalCode::SessionEnded, format!("{detail}; start a new debug session"))
}
