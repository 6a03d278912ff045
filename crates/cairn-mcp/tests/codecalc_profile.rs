//! `--profile codecalc`: exactly the `session_snapshot` tool, over workspace folders.

mod common;

use common::Harness;
use serde_json::json;

async fn codecalc(allow: &[&str]) -> (Harness, std::path::PathBuf) {
    let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
    let h = Harness::start_with(|o| {
        let root = o.store.local_dir().parent().unwrap().join("workspaces");
        std::fs::create_dir_all(root.join("s1/.codecalc-run")).unwrap();
        std::fs::write(root.join("s1/data.csv"), "a,b\n1,2\n").unwrap();
        std::fs::write(root.join("s1/.codecalc-run/pid"), "42").unwrap();
        o.profile = "codecalc".into();
        o.workspace_root = Some(root);
        o.allow = allow;
    })
    .await;
    let root = h.dir.path().join("workspaces");
    (h, root)
}

#[tokio::test]
async fn serves_exactly_session_snapshot() {
    let (h, _) = codecalc(&[]).await;
    let tools = h.client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    insta::assert_json_snapshot!("codecalc_tools", tools);
}

#[tokio::test]
async fn save_list_restore_replace_and_delete() {
    let (h, root) = codecalc(&["restore", "remove"]).await;
    let first = h.ok("session_snapshot", json!({"session_id": "s1", "label": "first try"})).await;
    assert_eq!(first["files"], 1, "the runner folder is left out");
    std::fs::write(root.join("s1/data.csv"), "changed\n").unwrap();
    let second = h.ok("session_snapshot", json!({"action": "save", "session_id": "s1"})).await;

    let list = h.ok("session_snapshot", json!({"action": "list", "session_id": "s1"})).await;
    let ids: Vec<&serde_json::Value> =
        list["snapshots"].as_array().unwrap().iter().map(|s| &s["snapshot_id"]).collect();
    assert_eq!(ids, [&first["snapshot_id"], &second["snapshot_id"]], "oldest first");
    assert_eq!(list["snapshots"][0]["label"], "first try");

    let fresh = h
        .ok(
            "session_snapshot",
            json!({"action": "restore", "session_id": "s1", "snapshot_id": first["snapshot_id"]}),
        )
        .await;
    let new_id = fresh["session_id"].as_str().unwrap();
    assert_ne!(new_id, "s1");
    assert_eq!(std::fs::read_to_string(root.join(new_id).join("data.csv")).unwrap(), "a,b\n1,2\n");
    assert!(!root.join(new_id).join(".codecalc-run").exists());
    assert_eq!(std::fs::read_to_string(root.join("s1/data.csv")).unwrap(), "changed\n");

    std::fs::write(root.join("s1/extra.txt"), "stray").unwrap();
    let replaced = h
        .ok(
            "session_snapshot",
            json!({"action": "restore", "session_id": "s1", "snapshot_id": first["snapshot_id"], "replace": true}),
        )
        .await;
    assert_eq!(replaced["session_id"], "s1");
    assert_eq!(std::fs::read_to_string(root.join("s1/data.csv")).unwrap(), "a,b\n1,2\n");
    assert!(!root.join("s1/extra.txt").exists());

    let deleted = h
        .ok(
            "session_snapshot",
            json!({"action": "delete", "session_id": "s1", "snapshot_id": first["snapshot_id"]}),
        )
        .await;
    assert_eq!(deleted["deleted"], true);
    let list = h.ok("session_snapshot", json!({"action": "list", "session_id": "s1"})).await;
    assert_eq!(list["snapshots"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn refusals() {
    let (h, root) = codecalc(&["restore", "remove"]).await;
    let missing = h.err("session_snapshot", json!({"action": "delete", "session_id": "s1"})).await;
    assert!(missing.contains("snapshot_id is required for action='delete'"), "{missing}");
    let restore = h.err("session_snapshot", json!({"action": "restore", "session_id": "s1"})).await;
    assert!(restore.contains("snapshot_id is required for action='restore'"), "{restore}");
    let unknown = h.err("session_snapshot", json!({"action": "archive", "session_id": "s1"})).await;
    assert!(unknown.contains("unknown action \"archive\""), "{unknown}");
    let escape = h.err("session_snapshot", json!({"session_id": "../etc"})).await;
    assert!(escape.contains("invalid session_id"), "{escape}");

    std::os::unix::fs::symlink("/etc/passwd", root.join("s1/link")).unwrap();
    let link = h.err("session_snapshot", json!({"session_id": "s1"})).await;
    assert!(link.contains("link is a symbolic link"), "{link}");
    std::fs::remove_file(root.join("s1/link")).unwrap();
    std::fs::hard_link(root.join("s1/data.csv"), root.join("s1/twin.csv")).unwrap();
    let hard = h.err("session_snapshot", json!({"session_id": "s1"})).await;
    assert!(hard.contains("hard link"), "{hard}");
}

#[tokio::test]
async fn replace_and_delete_are_allowed_until_the_user_denies_them() {
    let (h, _) = codecalc(&[]).await;
    let saved = h.ok("session_snapshot", json!({"session_id": "s1"})).await;
    let replace = json!({"action": "restore", "session_id": "s1", "snapshot_id": saved["snapshot_id"], "replace": true});
    assert_eq!(h.ok("session_snapshot", replace.clone()).await["replaced"], true);
    let mut store = cairn_lib::Repository::open(&h.dir.path().join("store")).unwrap();
    store.agent_deny(&[cairn_lib::ops::permissions::Capability::Restore]).unwrap();
    let refusal = h.err("session_snapshot", replace).await;
    assert!(refusal.contains("agent allow restore"), "{refusal}");
    let delete = json!({"action": "delete", "session_id": "s1", "snapshot_id": saved["snapshot_id"]});
    assert_eq!(h.ok("session_snapshot", delete).await["deleted"], true);
}

#[tokio::test]
async fn codecalc_refuses_a_hard_link_to_a_file_outside_the_workspace() {
    let (h, root) = codecalc(&[]).await;
    let outside = h.dir.path().join("secret.txt");
    std::fs::write(&outside, "not the workspace's\n").unwrap();
    std::fs::hard_link(&outside, root.join("s1/borrowed.txt")).unwrap();
    let refused = h.err("session_snapshot", json!({"session_id": "s1"})).await;
    assert_eq!(
        refused,
        "borrowed.txt is a hard link to a file outside the workspace; workspace snapshots refuse hard links: replace it with a plain copy and save again"
    );
    // The runner's own folder is left out, links and all.
    std::fs::remove_file(root.join("s1/borrowed.txt")).unwrap();
    std::fs::hard_link(&outside, root.join("s1/.codecalc-run/lock")).unwrap();
    h.ok("session_snapshot", json!({"session_id": "s1"})).await;
}

#[tokio::test]
async fn codecalc_refuses_a_session_folder_that_is_a_symlink() {
    let (h, root) = codecalc(&[]).await;
    let elsewhere = h.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("f.txt"), "outside the root\n").unwrap();
    std::os::unix::fs::symlink(&elsewhere, root.join("s2")).unwrap();
    // A folder linking to another session's folder would list (and save into) that session.
    std::os::unix::fs::symlink(root.join("s1"), root.join("s3")).unwrap();
    h.ok("session_snapshot", json!({"session_id": "s1"})).await;
    let want = |id: &str| {
        format!(
            "session {id:?}'s workspace folder is a symbolic link; session workspaces refuse symlinks: make it a plain folder under the workspace root"
        )
    };
    for (action, id) in [("save", "s2"), ("list", "s2"), ("save", "s3"), ("list", "s3")] {
        let refused = h.err("session_snapshot", json!({"action": action, "session_id": id})).await;
        assert_eq!(refused, want(id), "{action} {id}");
    }
}

#[tokio::test]
async fn codecalc_snapshot_id_latest_is_not_an_id() {
    let (h, _) = codecalc(&["restore", "remove"]).await;
    h.ok("session_snapshot", json!({"session_id": "s1"})).await;
    for action in ["restore", "delete"] {
        let refused = h
            .err("session_snapshot", json!({"action": action, "session_id": "s1", "snapshot_id": "latest"}))
            .await;
        assert_eq!(
            refused,
            "snapshot_id \"latest\" is not a snapshot id; pass the snapshot_id that action='save' returned (action='list' shows them)"
        );
    }
}
