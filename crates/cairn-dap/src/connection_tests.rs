//! Tests of the connection against an in-memory peer playing the adapter's side of the
//! wire: they pin down message routing and the refusal of reverse requests, which the real
//! adapters rarely exercise.

use super::*;
use crate::protocol::bodies::Ignored;
use serde_json::{Value, json};
use tokio::io::{BufReader, DuplexStream};

/// A connection wired to an in-memory peer that plays the adapter's side of the wire.
fn wired() -> (Connection, BufReader<DuplexStream>, DuplexStream) {
    let (ours_read, theirs_write) = tokio::io::duplex(64 * 1024);
    let (theirs_read, ours_write) = tokio::io::duplex(64 * 1024);
    let conn = Connection::start(
        Box::new(ours_read),
        Box::new(ours_write),
        "test".to_owned(),
        Duration::from_secs(10),
    );
    (conn, BufReader::new(theirs_read), theirs_write)
}

async fn receive(peer: &mut BufReader<DuplexStream>) -> Value {
    let body = read_message(peer, "peer").await.expect("read").expect("a message");
    serde_json::from_slice(&body).expect("json")
}

async fn send(peer: &mut DuplexStream, message: Value) {
    let body = serde_json::to_vec(&message).expect("encode");
    write_message(peer, "peer", &body).await.expect("write");
}

#[tokio::test]
async fn refuses_reverse_requests_instead_of_hanging() {
    let (_conn, mut from_us, mut to_us) = wired();
    send(&mut to_us, json!({"seq": 7, "type": "request", "command": "runInTerminal", "arguments": {}})).await;
    let answer = receive(&mut from_us).await;
    assert_eq!(answer["type"], "response");
    assert_eq!(answer["request_seq"], 7);
    assert_eq!(answer["success"], false);
    assert_eq!(answer["command"], "runInTerminal");
}

#[tokio::test]
async fn routes_answers_and_folds_events_into_state() {
    let (conn, mut from_us, mut to_us) = wired();
    let pending = conn.send("threads", None::<()>).await.expect("send");
    let request = receive(&mut from_us).await;
    assert_eq!(request["command"], "threads");
    assert!(request.get("arguments").is_none());
    send(&mut to_us, json!({"type": "event", "event": "stopped", "body": {"reason": "step", "threadId": 4}}))
        .await;
    send(
        &mut to_us,
        json!({"type": "response", "request_seq": request["seq"], "success": false,
               "message": "short", "body": {"error": {"format": "longer reason"}}}),
    )
    .await;
    match pending.wait().await {
        Err(Error::RequestFailed { command, message }) => {
            assert_eq!(command, "threads");
            assert_eq!(message, "longer reason");
        }
        other => panic!("expected a failed request, got {other:?}"),
    }
    let state = conn.wait_for_state("stop", Duration::from_secs(10), |s| s.paused).await.expect("stopped");
    assert_eq!(state.thread_id, Some(4));
    assert_eq!(state.reason.as_deref(), Some("step"));
}

#[tokio::test]
async fn a_closed_adapter_fails_waiting_and_later_requests() {
    let (conn, mut from_us, to_us) = wired();
    let pending = conn.send("threads", None::<()>).await.expect("send");
    let _ = receive(&mut from_us).await;
    drop(to_us);
    assert!(matches!(pending.wait().await, Err(Error::AdapterGone { .. })));
    let later = conn.request::<Ignored>("threads", None::<()>).await;
    assert!(matches!(later, Err(Error::AdapterGone { .. })));
    assert!(conn.state().closed);
}
