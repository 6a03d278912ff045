//! Starting and ending a debug session: spawning or dialling the adapter, the
//! `initialize` → `initialized` → breakpoints → `configurationDone` handshake, and a stop
//! that leaves no child process behind.

use std::process::Stdio;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::process::{Child, Command};

use crate::adapter::{
    AdapterCommand, AdapterKind, LaunchOptions, SourceBreakpoints, attach_debugpy_arguments,
    attach_pid_arguments, launch_arguments,
};
use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::protocol::bodies::{Capabilities, DisconnectArguments, Ignored, InitializeArguments};

/// Time limits of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionOptions {
    /// Limit for each request's answer.
    pub request_timeout: Duration,
    /// Limit for the whole start: handshake, breakpoints and the launch or attach answer.
    pub start_timeout: Duration,
    /// How long `stop` waits for the adapter to exit before killing it.
    pub stop_timeout: Duration,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            request_timeout: Duration::from_secs(30),
            start_timeout: Duration::from_secs(60),
            stop_timeout: Duration::from_secs(5),
        }
    }
}

/// Where the debuggee stands, as far as the adapter's events tell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionState {
    /// The program is stopped; variables can be read.
    pub paused: bool,
    /// Why it last stopped (`breakpoint`, `step`, `pause`, `entry`, ...).
    pub reason: Option<String>,
    /// The thread that last stopped; the default thread of other calls.
    pub thread_id: Option<i64>,
    /// The debug session has ended (the program exited or the adapter went away).
    pub terminated: bool,
    /// The program's exit code, once it has exited.
    pub exit_code: Option<i64>,
    /// The program's process id, when the adapter reported it.
    pub debuggee_pid: Option<i64>,
}

/// A live debug session with one adapter and one program.
pub struct DebugSession {
    pub(crate) kind: AdapterKind,
    pub(crate) conn: Connection,
    child: tokio::sync::Mutex<Option<Child>>,
    adapter_pid: Option<u32>,
    pub(crate) options: SessionOptions,
}

impl DebugSession {
    /// Starts `adapter`, launches `program` under it with `breakpoints` set before it runs,
    /// and returns once the program is running (or stopped at a breakpoint or its entry).
    pub async fn launch(
        adapter: &AdapterCommand,
        program: &LaunchOptions,
        breakpoints: &[SourceBreakpoints],
        options: SessionOptions,
    ) -> Result<Self> {
        let session = Self::spawn(adapter, options)?;
        let arguments = launch_arguments(adapter.kind, program);
        session.start("launch", arguments, breakpoints).await?;
        Ok(session)
    }

    /// Starts `adapter` (lldb-dap) and attaches it to the running process `pid`, which is
    /// left paused (wait for the stop with [`DebugSession::wait_until_stopped`], then
    /// capture or [`DebugSession::resume`]).
    pub async fn attach_pid(
        adapter: &AdapterCommand,
        pid: u32,
        breakpoints: &[SourceBreakpoints],
        options: SessionOptions,
    ) -> Result<Self> {
        let session = Self::spawn(adapter, options)?;
        session.start("attach", attach_pid_arguments(pid), breakpoints).await?;
        Ok(session)
    }

    /// Connects over TCP to a program started with
    /// `python3 -m debugpy --listen HOST:PORT [--wait-for-client] prog.py` and attaches.
    pub async fn attach_debugpy(
        host: &str,
        port: u16,
        breakpoints: &[SourceBreakpoints],
        options: SessionOptions,
    ) -> Result<Self> {
        let address = format!("{host}:{port}");
        let stream = tokio::time::timeout(options.request_timeout, tokio::net::TcpStream::connect(&address))
            .await
            .map_err(|_| Error::Timeout {
                what: format!("a connection to {address}"),
                after: options.request_timeout,
            })?
            .map_err(|source| Error::Connect { address: address.clone(), source })?;
        // Small request messages; waiting to batch them only adds latency.
        let _ = stream.set_nodelay(true);
        let (reader, writer) = stream.into_split();
        let conn = Connection::start(Box::new(reader), Box::new(writer), address, options.request_timeout);
        let session = DebugSession::over(AdapterKind::Debugpy, conn, options);
        session.start("attach", attach_debugpy_arguments(host, port), breakpoints).await?;
        Ok(session)
    }

    /// Which adapter drives this session.
    pub fn adapter_kind(&self) -> AdapterKind {
        self.kind
    }

    /// The adapter's process id, when this session started the adapter.
    pub fn adapter_pid(&self) -> Option<u32> {
        self.adapter_pid
    }

    /// The session's state as of the last event.
    pub fn state(&self) -> SessionState {
        let s = self.conn.state();
        SessionState {
            paused: s.paused,
            reason: s.reason,
            thread_id: s.thread_id,
            terminated: s.terminated || s.closed,
            exit_code: s.exit_code,
            debuggee_pid: s.debuggee_pid,
        }
    }

    /// Ends the session: asks the adapter to disconnect and terminate the program, closes
    /// its input, waits for it to exit and kills it (with anything it started) if it does
    /// not. Calling it again does nothing.
    pub async fn stop(&self) -> Result<()> {
        self.end(true).await
    }

    /// Ends the session like [`DebugSession::stop`] but leaves the program running, as
    /// when detaching from a process that was attached to.
    pub async fn detach(&self) -> Result<()> {
        self.end(false).await
    }

    fn spawn(adapter: &AdapterCommand, options: SessionOptions) -> Result<Self> {
        let mut command = Command::new(&adapter.program);
        command
            .args(&adapter.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            // Its own process group, so that a forced stop also reaches the launchers and
            // debuggees the adapter started.
            .process_group(0)
            .kill_on_drop(true);
        let mut child =
            command.spawn().map_err(|source| Error::Spawn { program: adapter.program.clone(), source })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(Error::protocol("the adapter's stdio pipes were not created"));
        };
        let channel = format!("stdio of {}", adapter.program.display());
        let conn = Connection::start(Box::new(stdout), Box::new(stdin), channel, options.request_timeout);
        Ok(DebugSession {
            kind: adapter.kind,
            conn,
            adapter_pid: child.id(),
            child: tokio::sync::Mutex::new(Some(child)),
            options,
        })
    }

    /// Runs the start handshake; on failure the adapter is stopped before the error is
    /// returned, so a failed start leaks nothing.
    async fn start(&self, command: &str, arguments: Value, breakpoints: &[SourceBreakpoints]) -> Result<()> {
        let limit = self.options.start_timeout;
        let outcome = tokio::time::timeout(limit, self.handshake(command, arguments, breakpoints))
            .await
            .unwrap_or_else(|_| {
                Err(Error::Timeout { what: format!("the debug adapter to {command}"), after: limit })
            });
        if outcome.is_err() {
            let _ = self.stop().await;
        }
        outcome
    }

    async fn handshake(
        &self,
        command: &str,
        arguments: Value,
        breakpoints: &[SourceBreakpoints],
    ) -> Result<()> {
        let capabilities: Capabilities =
            self.conn.request("initialize", Some(initialize_arguments(self.kind))).await?;
        // Adapters disagree on order: debugpy sends `initialized` only after `launch`
        // arrives and answers `launch` only after `configurationDone`; lldb-dap may answer
        // first. So send the request without awaiting it, configure once `initialized`
        // is seen, and collect the answer last. An early failure answer ends the wait.
        let answer = self.conn.send(command, Some(arguments)).await?;
        let answer = answer.wait();
        tokio::pin!(answer);
        let mut answered = false;
        let initialized =
            self.conn.wait_for_state("the adapter's `initialized` event", self.options.start_timeout, |s| {
                s.initialized || s.closed
            });
        tokio::select! {
            state = initialized => { state?; }
            result = &mut answer => {
                result?;
                answered = true;
                self.conn
                    .wait_for_state(
                        "the adapter's `initialized` event",
                        self.options.start_timeout,
                        |s| s.initialized || s.closed,
                    )
                    .await?;
            }
        }
        if self.conn.state().closed {
            return Err(Error::AdapterGone { command: command.to_owned() });
        }
        let configured = self.configure(&capabilities, breakpoints).await;
        if answered {
            return configured;
        }
        match (configured, answer.await) {
            // When both fail, the launch/attach answer says what went wrong (lldb-dap
            // answers a failed launch only after refusing `configurationDone`).
            (_, Err(start_error)) => Err(start_error),
            (Err(configure_error), Ok(_)) => Err(configure_error),
            (Ok(()), Ok(_)) => Ok(()),
        }
    }

    async fn configure(&self, capabilities: &Capabilities, breakpoints: &[SourceBreakpoints]) -> Result<()> {
        for file in breakpoints {
            self.set_breakpoints(&file.path, &file.lines).await?;
        }
        if capabilities.supports_configuration_done_request {
            self.conn.request::<Ignored>("configurationDone", None::<()>).await?;
        }
        Ok(())
    }

    async fn end(&self, terminate_debuggee: bool) -> Result<()> {
        let state = self.conn.state();
        if !state.closed {
            let arguments = DisconnectArguments { terminate_debuggee };
            let disconnect = self.conn.request::<Ignored>("disconnect", Some(arguments));
            // The adapter may be wedged or already leaving; the kill below covers both.
            let _ = tokio::time::timeout(self.options.stop_timeout, disconnect).await;
        }
        self.conn.close_writer().await;
        let mut guard = self.child.lock().await;
        let Some(child) = guard.as_mut() else {
            return Ok(());
        };
        let exited = tokio::time::timeout(self.options.stop_timeout, child.wait()).await;
        if !matches!(exited, Ok(Ok(_))) {
            // The adapter has not been reaped yet, so its pid and group id cannot have
            // been reused: the kill reaches only what it started.
            kill_tree(child);
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
        *guard = None;
        Ok(())
    }
}

impl DebugSession {
    /// A session over a connection this process did not start an adapter for (a debugpy
    /// listening on a socket, or a scripted peer in tests): there is no child to reap.
    pub(crate) fn over(kind: AdapterKind, conn: Connection, options: SessionOptions) -> Self {
        DebugSession { kind, conn, child: tokio::sync::Mutex::new(None), adapter_pid: None, options }
    }
}

impl Drop for DebugSession {
    /// A session dropped without `stop` still must not leak processes: kill the adapter
    /// and everything it started. The adapter is not reaped yet (we still hold it), so its
    /// pid and group id cannot belong to anyone else.
    fn drop(&mut self) {
        if let Ok(mut guard) = self.child.try_lock()
            && let Some(child) = guard.as_mut()
        {
            kill_tree(child);
        }
    }
}

fn kill_tree(child: &Child) {
    if let Some(pid) = child.id() {
        crate::process_tree::kill_tree(pid);
    }
}

fn initialize_arguments(kind: AdapterKind) -> InitializeArguments {
    InitializeArguments {
        client_id: "cairn",
        client_name: "cairn",
        adapter_id: kind.name(),
        lines_start_at1: true,
        columns_start_at1: true,
        path_format: "path",
        supports_variable_type: true,
        supports_variable_paging: true,
        supports_run_in_terminal_request: false,
        supports_start_debugging_request: false,
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
