//! `transcript:` targets in cairn's own MCP tools (the default profile of `cairn mcp`), with
//! paths spelled relative to the server's working directory.

use serde_json::{Value, json};

use crate::client::Client;
use crate::{TestEnv, fixture};

const DEFAULT: &[&str] = &["mcp"];

/// The names of the snapshots a `snapshot_list` result holds.
fn names(list: &Value) -> Vec<&str> {
    list["snapshots"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap_or("-")).collect()
}

#[test]
fn save_list_and_diff_of_a_transcript_target_spelled_relative_to_the_server() {
    let env = TestEnv::new();
    let file = env.work().join("conv.jsonl");
    std::fs::copy(fixture("pi_v3_branched.jsonl"), &file).unwrap();
    std::os::unix::fs::symlink("conv.jsonl", env.work().join("link.jsonl")).unwrap();
    let key = format!("transcript:{}", file.display());
    let mut client = Client::start(&env, DEFAULT);

    let (failed, before) =
        client.call("snapshot_save", json!({"target": "transcript:conv.jsonl", "name": "before"}));
    assert!(!failed, "{before}");
    assert_eq!(before["target"], key);
    assert_eq!(before["kind"], "transcript");

    // The user goes back to the abandoned branch and continues there.
    let entry = r#"{"type":"message","id":"d0000001","parentId":"b0000002","timestamp":"2025-01-10T10:00:00.000Z","message":{"role":"user","content":"Fine, show me the Python version after all.","timestamp":1736503200000}}"#;
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(entry);
    text.push('\n');
    std::fs::write(&file, text).unwrap();
    let (failed, after) =
        client.call("snapshot_save", json!({"target": "transcript:./link.jsonl", "name": "after"}));
    assert!(!failed, "{after}");
    assert_eq!(after["target"], key, "a symlink names the file it points to");

    // Every spelling of the file lists the same two snapshots, oldest first.
    for spelling in ["transcript:conv.jsonl", "transcript:link.jsonl", key.as_str()] {
        let (failed, list) = client.call("snapshot_list", json!({"target": spelling, "sort": "asc"}));
        assert!(!failed, "{spelling}: {list}");
        assert_eq!(names(&list), ["before", "after"], "{spelling}");
    }
    // A file with no snapshots, or one that does not exist, lists none.
    let (failed, list) = client.call("snapshot_list", json!({"target": "transcript:gone.jsonl"}));
    assert!(!failed, "{list}");
    assert_eq!(names(&list), Vec::<&str>::new());

    let (failed, diff) = client
        .call("snapshot_diff", json!({"from": "before", "to": "after", "target": "transcript:conv.jsonl"}));
    assert!(!failed, "{diff}");
    let added: Vec<&str> =
        diff["transcript"]["added"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(added, ["b0000001", "b0000002", "d0000001"]);
    let removed = diff["transcript"]["removed"].as_array().unwrap();
    assert_eq!(removed.len(), 5);
    assert_eq!(diff["transcript"]["added"][2]["role"], "user");

    // One side only: the snapshot against the file as it is now, which holds the new entry.
    let (failed, live) =
        client.call("snapshot_diff", json!({"from": "before", "target": "transcript:link.jsonl"}));
    assert!(!failed, "{live}");
    assert_eq!(live["transcript"]["added"].as_array().unwrap().len(), 3, "{live}");
}
