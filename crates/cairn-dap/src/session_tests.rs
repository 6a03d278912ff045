//! The start handshake against a scripted adapter, in each order real adapters answer in.
//!
//! debugpy sends `initialized` only once `launch` arrives and answers `launch` only after
//! `configurationDone`; lldb-dap may answer `launch` before it sends `initialized`; others
//! send `initialized` right after `initialize`. Only some of these orders occur with the
//! adapters installed here, so each is pinned down with a peer that plays it exactly.

use std::path::PathBuf;

use serde_json::{Value, json};
use tokio::io::{BufReader, DuplexStream};

use super::*;
use crate::transport::{read_message, write_message};

/// The order in which the scripted adapter answers `launch` around the handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    /// `initialized` right after the `initialize` answer; `launch` answered at once.
    InitializedFirst,
    /// `launch` answered first; `initialized` follows a moment later.
    LaunchAnsweredFirst,
    /// `initialized` when `launch` arrives; `launch` answered after `configurationDone`.
    LaunchAnsweredAfterConfigurationDone,
}

/// How the scripted adapter answers `launch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Succeed,
    /// `launch` fails, and so does `configurationDone` (lldb-dap's way with a missing program).
    Fail,
}

/// The adapter's side: answers requests in `order` and returns the log of what crossed the
/// wire, `> name` for what the client sent and `< name` for what the adapter sent.
async fn scripted_adapter(
    order: Order,
    outcome: Outcome,
    mut from_client: BufReader<DuplexStream>,
    mut to_client: DuplexStream,
) -> Vec<String> {
    let mut log = Vec::new();
    let mut seq = 1000;
    let mut deferred_launch: Option<Value> = None;
    while let Ok(Some(body)) = read_message(&mut from_client, "adapter").await {
        let request: Value = serde_json::from_slice(&body).expect("the client sends JSON");
        let command = request["command"].as_str().expect("a command").to_owned();
        log.push(format!("> {command}"));
        let mut out = Vec::new();
        match command.as_str() {
            "initialize" => {
                out.push(answer(&request, true, json!({"supportsConfigurationDoneRequest": true})));
                if order == Order::InitializedFirst {
                    out.push(json!({"type": "event", "event": "initialized"}));
                }
            }
            "launch" => match order {
                Order::InitializedFirst => out.push(launch_answer(&request, outcome)),
                Order::LaunchAnsweredFirst => {
                    send(&mut to_client, &mut seq, &mut log, launch_answer(&request, outcome)).await;
                    // Long enough that a client that configures before `initialized` would
                    // show up in the log.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    out.push(json!({"type": "event", "event": "initialized"}));
                }
                Order::LaunchAnsweredAfterConfigurationDone => {
                    out.push(json!({"type": "event", "event": "initialized"}));
                    deferred_launch = Some(request.clone());
                }
            },
            "setBreakpoints" => {
                let lines = request["arguments"]["breakpoints"].as_array().cloned().unwrap_or_default();
                let placed: Vec<Value> =
                    lines.iter().map(|b| json!({"verified": true, "line": b["line"]})).collect();
                out.push(answer(&request, true, json!({"breakpoints": placed})));
            }
            "configurationDone" => {
                out.push(answer(&request, outcome == Outcome::Succeed, json!({})));
                if let Some(launch) = deferred_launch.take() {
                    out.push(launch_answer(&launch, outcome));
                }
            }
            _ => out.push(answer(&request, true, json!({}))),
        }
        for message in out {
            send(&mut to_client, &mut seq, &mut log, message).await;
        }
    }
    log
}

fn answer(request: &Value, success: bool, body: Value) -> Value {
    let mut response = json!({
        "type": "response", "request_seq": request["seq"], "command": request["command"],
        "success": success, "body": body,
    });
    if !success {
        response["message"] = json!(format!("{} refused by the script", request["command"]));
    }
    response
}

fn launch_answer(request: &Value, outcome: Outcome) -> Value {
    answer(request, outcome == Outcome::Succeed, json!({}))
}

async fn send(to_client: &mut DuplexStream, seq: &mut i64, log: &mut Vec<String>, mut message: Value) {
    *seq += 1;
    message["seq"] = json!(*seq);
    let name = message["command"].as_str().or(message["event"].as_str()).unwrap_or_default().to_owned();
    log.push(format!("< {name}"));
    let body = serde_json::to_vec(&message).expect("encode");
    write_message(to_client, "adapter", &body).await.expect("the client is listening");
}

/// Runs a launch handshake against the scripted adapter; returns its result and the log.
async fn handshake(order: Order, outcome: Outcome) -> (Result<()>, Vec<String>) {
    let (ours_read, theirs_write) = tokio::io::duplex(64 * 1024);
    let (theirs_read, ours_write) = tokio::io::duplex(64 * 1024);
    let adapter = tokio::spawn(scripted_adapter(order, outcome, BufReader::new(theirs_read), theirs_write));
    let options = SessionOptions {
        request_timeout: Duration::from_secs(10),
        start_timeout: Duration::from_secs(10),
        stop_timeout: Duration::from_secs(2),
    };
    let conn = Connection::start(
        Box::new(ours_read),
        Box::new(ours_write),
        "test".to_owned(),
        options.request_timeout,
    );
    let session = DebugSession::over(AdapterKind::Debugpy, conn, options);
    let breakpoints = [SourceBreakpoints { path: PathBuf::from("/src/loop.py"), lines: vec![4, 9] }];
    let started = session.start("launch", json!({"program": "/src/loop.py"}), &breakpoints).await;
    // Closing our side ends the script, which hands back its log.
    session.conn.close_writer().await;
    let log = tokio::time::timeout(Duration::from_secs(10), adapter)
        .await
        .expect("the script ends once the client closes")
        .expect("the script ran");
    (started, log)
}

fn position(log: &[String], entry: &str) -> usize {
    log.iter().position(|e| e == entry).unwrap_or_else(|| panic!("{entry:?} missing from {log:#?}"))
}

/// The rules every order must keep: configure only after `initialized`, breakpoints before
/// `configurationDone`, and the start is not over before `launch` is answered.
fn assert_configured_after_initialized(log: &[String]) {
    let initialized = position(log, "< initialized");
    let breakpoints = position(log, "> setBreakpoints");
    let done = position(log, "> configurationDone");
    assert!(initialized < breakpoints && breakpoints < done, "out of order: {log:#?}");
    assert!(position(log, "> initialize") < position(log, "> launch"), "{log:#?}");
    assert_eq!(log.iter().filter(|e| *e == "> setBreakpoints").count(), 1, "{log:#?}");
}

#[tokio::test]
async fn starts_when_initialized_comes_first() {
    let (started, log) = handshake(Order::InitializedFirst, Outcome::Succeed).await;
    started.expect("the handshake succeeds");
    assert_configured_after_initialized(&log);
    assert!(position(&log, "< initialized") < position(&log, "> launch"), "{log:#?}");
}

#[tokio::test]
async fn starts_when_launch_is_answered_before_initialized() {
    let (started, log) = handshake(Order::LaunchAnsweredFirst, Outcome::Succeed).await;
    started.expect("the handshake succeeds");
    assert_configured_after_initialized(&log);
    assert!(position(&log, "< launch") < position(&log, "< initialized"), "{log:#?}");
}

#[tokio::test]
async fn starts_when_launch_is_answered_after_configuration_done() {
    let (started, log) = handshake(Order::LaunchAnsweredAfterConfigurationDone, Outcome::Succeed).await;
    started.expect("the handshake succeeds");
    assert_configured_after_initialized(&log);
    assert!(position(&log, "> configurationDone") < position(&log, "< launch"), "{log:#?}");
}

#[tokio::test]
async fn an_early_launch_failure_is_reported_without_waiting_for_initialized() {
    let (started, log) = handshake(Order::LaunchAnsweredFirst, Outcome::Fail).await;
    match started {
        Err(Error::RequestFailed { command, .. }) => assert_eq!(command, "launch"),
        other => panic!("expected the launch failure, got {other:?}; log {log:#?}"),
    }
    assert!(!log.iter().any(|e| e == "> setBreakpoints"), "configured after a failed launch: {log:#?}");
    assert!(log.iter().any(|e| e == "> disconnect"), "a failed start must disconnect: {log:#?}");
}

#[tokio::test]
async fn a_late_launch_failure_wins_over_the_configuration_failure() {
    let (started, log) = handshake(Order::LaunchAnsweredAfterConfigurationDone, Outcome::Fail).await;
    match started {
        Err(Error::RequestFailed { command, .. }) => assert_eq!(command, "launch"),
        other => panic!("expected the launch failure, got {other:?}; log {log:#?}"),
    }
    assert!(log.iter().any(|e| e == "> disconnect"), "a failed start must disconnect: {log:#?}");
}
