//! The debug profile through the rmcp client: a real Python program under the real debugpy
//! adapter, captured at two stops of a loop, diffed and deleted; `NOT_PAUSED` while it runs.

mod common;

use common::Harness;
use serde_json::json;

const PROGRAM: &str = r#"import time


def work(n):
    total = 0
    for i in range(n):
        total += i * 10
        print(total)  # BREAK
    return total


work(2)
time.sleep(120)
"#;

async fn read_debug_snapshots(h: &Harness) -> serde_json::Value {
    use rmcp::model::{ReadResourceRequestParams, ResourceContents};
    let result =
        h.client.read_resource(ReadResourceRequestParams::new("cairn://debug/snapshots")).await.unwrap();
    match &result.contents[0] {
        ResourceContents::TextResourceContents { text, .. } => serde_json::from_str(text).unwrap(),
        other => panic!("expected text, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launch_capture_continue_capture_diff_delete_and_not_paused_while_running() {
    let h = Harness::start_with(|o| {
        o.profile = "debug".into();
        o.allow = vec!["remove".to_owned()];
    })
    .await;
    let script = h.dir.path().join("loop.py");
    std::fs::write(&script, PROGRAM).unwrap();
    let line = PROGRAM.lines().position(|l| l.contains("# BREAK")).unwrap() + 1;

    // No session yet: nothing to capture.
    let refused = h.err("snapshot_create", json!({})).await;
    assert!(refused.starts_with("NOT_PAUSED"), "{refused}");

    let launched = h
        .ok(
            "debug_launch",
            json!({ "program": script, "breakpoints": [{ "file": script, "line": line }], "wait_ms": 30000 }),
        )
        .await;
    assert_eq!(launched["paused"], true, "{launched}");
    assert_eq!(launched["reason"], "breakpoint");

    let stack = h.ok("debug_stack", json!({})).await;
    assert_eq!(stack["frames"][0]["name"], "work");

    let first = h.ok("snapshot_create", json!({ "label": "first", "timeout_ms": 30000 })).await;
    assert_eq!(first["success"], true);
    let snap = &first["snapshot"];
    assert_eq!((snap["label"].as_str(), snap["functionName"].as_str()), (Some("first"), Some("work")));
    assert_eq!((snap["frameIndex"].as_u64(), snap["depth"].as_u64()), (Some(0), Some(0)));
    assert!(
        snap["variableCount"].as_u64().unwrap() >= 3
            && snap["threadId"].is_i64()
            && snap["timestamp"].is_string()
    );

    let resumed = h.ok("debug_continue", json!({ "wait_ms": 30000 })).await;
    assert_eq!(resumed["paused"], true, "{resumed}");
    let second = h.ok("snapshot_create", json!({})).await;

    let (a, b) = (first["snapshot"]["id"].as_str().unwrap(), second["snapshot"]["id"].as_str().unwrap());
    let diffed = h.ok("snapshot_diff", json!({ "snapshot_id_1": a, "snapshot_id_2": b })).await;
    let diff = &diffed["diff"];
    assert_eq!(diff["snapshotIdA"], a);
    assert_eq!(diff["snapshotIdB"], b);
    assert_eq!(diff["threadMismatch"], false);
    assert!(diff["timeDelta"].as_str().unwrap().starts_with("00:00:"));
    assert_eq!(diff["summary"]["modified"], 2, "{diff}");
    assert_eq!(diff["summary"]["added"], 0);
    let mut modified: Vec<(String, String, String)> = diff["modified"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let s = |k: &str| m[k].as_str().unwrap().to_owned();
            (s("path"), s("oldValue"), s("newValue"))
        })
        .collect();
    modified.sort();
    assert_eq!(
        modified,
        vec![("i".into(), "0".into(), "1".into()), ("total".into(), "0".into(), "10".into())]
    );

    // The loop is done and the program sleeps: running, so captures are refused.
    let running = h.ok("debug_continue", json!({ "wait_ms": 0 })).await;
    assert_eq!(running["paused"], false, "{running}");
    let refused = h.err("snapshot_create", json!({ "timeout_ms": 1000 })).await;
    assert!(refused.starts_with("NOT_PAUSED"), "{refused}");

    let missing = h.err("snapshot_diff", json!({ "snapshot_id_1": a, "snapshot_id_2": "snap-nope" })).await;
    assert!(missing.starts_with("SNAPSHOT_NOT_FOUND"), "{missing}");

    let stopped = h.ok("debug_stop", json!({})).await;
    assert_eq!((stopped["paused"].as_bool(), stopped["terminated"].as_bool()), (Some(false), Some(true)));

    // Captures outlive the session, and the resource lists them.
    let listed = read_debug_snapshots(&h).await;
    let entries = listed["snapshots"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{listed}");
    let first = &entries[0];
    assert_eq!(first["id"].as_str(), Some(a));
    for key in ["label", "createdAt", "threadId", "frameIndex", "functionName", "variableCount"] {
        assert!(!first[key].is_null(), "{key} missing in {first}");
    }
    assert_eq!(first["functionName"], "work");
    let one = h.ok("snapshot_delete", json!({ "snapshot_id": a })).await;
    assert_eq!(one, json!({ "success": true, "deleted": a, "remaining": 1 }));
    let all = h.ok("snapshot_delete", json!({})).await;
    assert_eq!(all, json!({ "success": true, "deleted": "all", "remaining": 0 }));
    let gone = h.err("snapshot_delete", json!({ "snapshot_id": b })).await;
    assert!(gone.starts_with("SNAPSHOT_NOT_FOUND"), "{gone}");
}
