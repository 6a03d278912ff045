//! One DAP connection: sends requests and matches their responses, tracks the debuggee's run
//! state from events, and refuses the adapter's reverse requests.
//!
//! A background task owns the read half. It routes each response to the request waiting for
//! it, folds events into a `watch` channel of [`RunState`] (so waiters never miss a change
//! that happened before they started waiting), and answers every reverse request with an
//! error at once: an adapter that asks us to open a terminal must hear "no" rather than wait
//! forever.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::protocol::bodies::{ExitedEvent, ProcessEvent, StoppedEvent, ThreadEvent};
use crate::protocol::{
    Event, Incoming, OutgoingRequest, OutgoingResponse, Response, ReverseRequest, decode_body,
};
use crate::transport::{read_message, write_message};

/// The write half of a connection, boxed so stdio and TCP share one type.
pub(crate) type BoxWriter = Box<dyn AsyncWrite + Send + Unpin>;
/// The read half of a connection.
pub(crate) type BoxReader = Box<dyn AsyncRead + Send + Unpin>;

/// What the events have told us about the debuggee so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunState {
    /// The adapter sent `initialized`: it is ready for breakpoints.
    pub initialized: bool,
    /// The debuggee is stopped and its variable references are valid.
    pub paused: bool,
    /// Reason of the last stop (`breakpoint`, `step`, `pause`, `entry`, ...).
    pub reason: Option<String>,
    /// Thread of the last stop.
    pub thread_id: Option<i64>,
    /// A live thread the adapter announced with a `thread` event; lets `pause` name a
    /// thread while the program runs, when adapters refuse to list threads.
    pub any_thread: Option<i64>,
    /// How many `stopped` events have arrived; lets a resume tell whether a stop raced it.
    pub stops: u64,
    /// The debug session is over (`terminated` event).
    pub terminated: bool,
    /// The debuggee's exit code, once it has exited.
    pub exit_code: Option<i64>,
    /// The debuggee's process id, when the adapter reported it.
    pub debuggee_pid: Option<i64>,
    /// The adapter's connection has ended.
    pub closed: bool,
}

struct Pending {
    waiters: HashMap<i64, oneshot::Sender<Response>>,
    closed: bool,
}

struct Shared {
    writer: tokio::sync::Mutex<Option<BoxWriter>>,
    seq: AtomicI64,
    pending: Mutex<Pending>,
    state: watch::Sender<RunState>,
    channel: String,
}

/// A live connection to a debug adapter.
pub(crate) struct Connection {
    shared: Arc<Shared>,
    reader_task: JoinHandle<()>,
    request_timeout: Duration,
}

/// A request that has been sent and whose response has not yet been awaited.
pub(crate) struct PendingResponse {
    command: String,
    receiver: oneshot::Receiver<Response>,
    timeout: Duration,
}

impl Connection {
    /// Starts the reader task over `reader` and returns the connection; `channel` names the
    /// link in error messages.
    pub(crate) fn start(
        reader: BoxReader,
        writer: BoxWriter,
        channel: String,
        request_timeout: Duration,
    ) -> Self {
        let (state, _) = watch::channel(RunState::default());
        let shared = Arc::new(Shared {
            writer: tokio::sync::Mutex::new(Some(writer)),
            seq: AtomicI64::new(1),
            pending: Mutex::new(Pending { waiters: HashMap::new(), closed: false }),
            state,
            channel,
        });
        let reader_task = tokio::spawn(read_loop(Arc::clone(&shared), reader));
        Connection { shared, reader_task, request_timeout }
    }

    /// A snapshot of the run state.
    pub(crate) fn state(&self) -> RunState {
        self.shared.state.borrow().clone()
    }

    /// Applies `change` to the run state and wakes waiters.
    pub(crate) fn update_state(&self, change: impl FnOnce(&mut RunState)) {
        self.shared.state.send_modify(change);
    }

    /// Waits until `ready` holds for the run state, for at most `timeout`.
    pub(crate) async fn wait_for_state(
        &self,
        what: &str,
        timeout: Duration,
        ready: impl FnMut(&RunState) -> bool,
    ) -> Result<RunState> {
        let mut receiver = self.shared.state.subscribe();
        match tokio::time::timeout(timeout, receiver.wait_for(ready)).await {
            Ok(Ok(state)) => Ok(state.clone()),
            // The sender lives in `shared`, which we hold, so this cannot close under us.
            Ok(Err(_)) => Ok(self.state()),
            Err(_) => Err(Error::Timeout { what: what.to_owned(), after: timeout }),
        }
    }

    /// Sends a request and returns a handle to await its response later. Used where an
    /// adapter answers only after further requests (debugpy answers `launch` after
    /// `configurationDone`).
    pub(crate) async fn send(
        &self,
        command: &str,
        arguments: Option<impl Serialize>,
    ) -> Result<PendingResponse> {
        let arguments = arguments
            .map(serde_json::to_value)
            .transpose()
            .map_err(|e| Error::protocol(format!("could not encode `{command}`: {e}")))?;
        let seq = self.shared.seq.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = oneshot::channel();
        {
            let mut pending = lock_pending(&self.shared.pending);
            if pending.closed {
                return Err(Error::AdapterGone { command: command.to_owned() });
            }
            pending.waiters.insert(seq, sender);
        }
        let message = OutgoingRequest { seq, kind: "request", command, arguments };
        if let Err(error) = self.shared.write(&message, command).await {
            lock_pending(&self.shared.pending).waiters.remove(&seq);
            return Err(error);
        }
        Ok(PendingResponse { command: command.to_owned(), receiver, timeout: self.request_timeout })
    }

    /// Sends a request and decodes its response body.
    pub(crate) async fn request<T: DeserializeOwned>(
        &self,
        command: &str,
        arguments: Option<impl Serialize>,
    ) -> Result<T> {
        let response = self.send(command, arguments).await?.wait().await?;
        decode_body(command, response.body)
    }

    /// Closes our write half, which tells a stdio adapter that no more requests will come.
    pub(crate) async fn close_writer(&self) {
        if let Some(mut writer) = self.shared.writer.lock().await.take() {
            // The peer may already be gone; there is nothing useful to do with that error.
            let _ = writer.shutdown().await;
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.reader_task.abort();
    }
}

impl PendingResponse {
    /// Awaits the response; a `success: false` answer becomes [`Error::RequestFailed`].
    pub(crate) async fn wait(self) -> Result<Response> {
        let response = match tokio::time::timeout(self.timeout, self.receiver).await {
            Ok(Ok(response)) => response,
            Ok(Err(_)) => {
                return Err(Error::AdapterGone { command: self.command });
            }
            Err(_) => {
                return Err(Error::Timeout {
                    what: format!("the answer to `{}`", self.command),
                    after: self.timeout,
                });
            }
        };
        if response.success {
            return Ok(response);
        }
        Err(Error::RequestFailed { command: self.command, message: failure_message(&response) })
    }
}

impl Shared {
    async fn write(&self, message: &impl Serialize, command: &str) -> Result<()> {
        let body = serde_json::to_vec(message)
            .map_err(|e| Error::protocol(format!("could not encode `{command}`: {e}")))?;
        let mut writer = self.writer.lock().await;
        match writer.as_mut() {
            Some(writer) => write_message(writer, &self.channel, &body).await,
            None => Err(Error::AdapterGone { command: command.to_owned() }),
        }
    }
}

/// The adapter's explanation of a failed request: the short `message`, or the longer
/// `body.error.format` that some adapters fill instead.
fn failure_message(response: &Response) -> String {
    let detail = response
        .body
        .as_ref()
        .and_then(|b| b.get("error"))
        .and_then(|e| e.get("format"))
        .and_then(|f| f.as_str());
    match (response.message.as_deref(), detail) {
        (_, Some(detail)) if !detail.is_empty() => detail.to_owned(),
        (Some(message), _) if !message.is_empty() => message.to_owned(),
        _ => "no reason given".to_owned(),
    }
}

fn lock_pending(pending: &Mutex<Pending>) -> std::sync::MutexGuard<'_, Pending> {
    // A poisoned lock only means another task panicked while holding it; the map itself
    // is still consistent, so keep going rather than cascade the panic.
    pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

async fn read_loop(shared: Arc<Shared>, reader: BoxReader) {
    let mut reader = BufReader::new(reader);
    loop {
        let body = match read_message(&mut reader, &shared.channel).await {
            Ok(Some(body)) => body,
            Ok(None) => break,
            Err(error) => {
                tracing::debug!(%error, "debug adapter stream ended");
                break;
            }
        };
        match Incoming::parse(&body) {
            Ok(Incoming::Response(response)) => {
                let waiter = lock_pending(&shared.pending).waiters.remove(&response.request_seq);
                if let Some(waiter) = waiter {
                    // The requester may have timed out and gone; that is fine.
                    let _ = waiter.send(response);
                }
            }
            Ok(Incoming::Event(event)) => apply_event(&shared.state, event),
            Ok(Incoming::Request(request)) => refuse_reverse_request(&shared, request).await,
            Ok(Incoming::Unknown(kind)) => {
                tracing::debug!(kind, "ignoring a DAP message of unknown type");
            }
            Err(error) => tracing::debug!(%error, "ignoring a malformed DAP message"),
        }
    }
    {
        let mut pending = lock_pending(&shared.pending);
        pending.closed = true;
        // Dropping the senders wakes every waiter with "adapter gone".
        pending.waiters.clear();
    }
    shared.state.send_modify(|s| {
        s.closed = true;
        s.paused = false;
    });
}

async fn refuse_reverse_request(shared: &Shared, request: ReverseRequest) {
    let response = OutgoingResponse {
        seq: shared.seq.fetch_add(1, Ordering::Relaxed),
        kind: "response",
        request_seq: request.seq,
        success: false,
        command: &request.command,
        message: Some(format!("this client does not support the `{}` request", request.command)),
    };
    if let Err(error) = shared.write(&response, &request.command).await {
        tracing::debug!(%error, "could not refuse a reverse request");
    }
}

fn apply_event(state: &watch::Sender<RunState>, event: Event) {
    match event.event.as_str() {
        "initialized" => state.send_modify(|s| s.initialized = true),
        "stopped" => {
            let Ok(stopped) = decode_body::<StoppedEvent>("stopped", event.body) else {
                return;
            };
            state.send_modify(|s| {
                s.paused = true;
                s.reason = Some(stopped.reason);
                if stopped.thread_id.is_some() {
                    s.thread_id = stopped.thread_id;
                }
                s.stops += 1;
            });
        }
        "continued" => state.send_modify(|s| s.paused = false),
        "thread" => {
            let Ok(thread) = decode_body::<ThreadEvent>("thread", event.body) else {
                return;
            };
            state.send_modify(|s| match thread.reason.as_str() {
                "started" if s.any_thread.is_none() => s.any_thread = Some(thread.thread_id),
                "exited" if s.any_thread == Some(thread.thread_id) => s.any_thread = None,
                _ => {}
            });
        }
        "exited" => {
            let exited = decode_body::<ExitedEvent>("exited", event.body).unwrap_or_default();
            state.send_modify(|s| {
                s.exit_code = exited.exit_code;
                s.paused = false;
            });
        }
        "terminated" => state.send_modify(|s| {
            s.terminated = true;
            s.paused = false;
        }),
        "process" => {
            let process = decode_body::<ProcessEvent>("process", event.body).unwrap_or_default();
            if process.system_process_id.is_some() {
                state.send_modify(|s| s.debuggee_pid = process.system_process_id);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
#[path = "connection_tests.rs"]
mod tests;
