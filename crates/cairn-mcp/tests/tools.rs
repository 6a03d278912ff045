//! Every tool of the default profile: its listing, a success and a failure, over a real store.

mod common;

use common::Harness;
use serde_json::json;

#[tokio::test]
async fn every_tool_is_listed_with_schemas_and_all_four_annotations() {
    let h = Harness::start().await;
    let tools = h.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "snapshot_save",
            "snapshot_list",
            "snapshot_show",
            "snapshot_diff",
            "snapshot_restore",
            "snapshot_remove",
            "session_list",
            "session_create",
            "session_delete",
            "session_current",
            "session_set",
            "session_unset"
        ]
    );
    for tool in &tools {
        let a = tool.annotations.as_ref().expect("annotations");
        assert!(
            a.read_only_hint.is_some()
                && a.destructive_hint.is_some()
                && a.idempotent_hint.is_some()
                && a.open_world_hint.is_some(),
            "{} leaves a hint unset",
            tool.name
        );
        assert_eq!(tool.input_schema.get("type"), Some(&json!("object")), "{}", tool.name);
        let out = tool.output_schema.as_ref().expect("output schema");
        assert_eq!(out.get("type"), Some(&json!("object")), "{}", tool.name);
    }
    let destructive: Vec<&str> = tools
        .iter()
        .filter(|t| t.annotations.as_ref().and_then(|a| a.destructive_hint) == Some(true))
        .map(|t| t.name.as_ref())
        .collect();
    assert_eq!(destructive, ["snapshot_restore", "snapshot_remove", "session_delete"]);
    insta::assert_json_snapshot!("cairn_tools", tools);
}

#[tokio::test]
async fn save_list_show_diff_and_their_refusals() {
    let h = Harness::start().await;
    let tree = h.tree("work");
    let target = tree.to_str().unwrap();
    let saved = h.ok("snapshot_save", json!({"target": target, "name": "first"})).await;
    assert_eq!(saved["stats"]["files"], 2);
    assert!(saved["not_covered"].is_object());
    let list = h.ok("snapshot_list", json!({})).await;
    assert_eq!(list["snapshots"].as_array().unwrap().len(), 1);
    let shown = h.ok("snapshot_show", json!({"ref": "first"})).await;
    assert_eq!(shown["id"], saved["id"]);
    std::fs::write(tree.join("README"), "changed\n").unwrap();
    let diff = h.ok("snapshot_diff", json!({"from": "first"})).await;
    assert_eq!(diff["summary"]["modified"], 1);

    let bad_name = h.err("snapshot_save", json!({"target": target, "name": "../x"})).await;
    assert!(bad_name.contains("invalid snapshot name"), "{bad_name}");
    let unknown = h.err("snapshot_show", json!({"ref": "nope"})).await;
    assert!(unknown.contains("no snapshot \"nope\""), "{unknown}");
    let unknown = h.err("snapshot_diff", json!({"from": "nope"})).await;
    assert!(unknown.contains("no snapshot"), "{unknown}");
    let typo = h.err("snapshot_list", json!({"sorting": "asc"})).await;
    assert!(typo.contains("invalid arguments"), "{typo}");
    let sort = h.err("snapshot_list", json!({"sort": "sideways"})).await;
    assert!(sort.contains("invalid sort"), "{sort}");
}

#[tokio::test]
async fn an_empty_store_lists_an_empty_array() {
    let h = Harness::start().await;
    assert_eq!(h.ok("snapshot_list", json!({})).await, json!({"snapshots": []}));
}

#[tokio::test]
async fn remove_refuses_bad_retention_and_removes_with_permission() {
    let h = Harness::start_with(|o| o.allow = vec!["remove".into()]).await;
    let tree = h.tree("work");
    h.ok("snapshot_save", json!({"target": tree, "name": "a"})).await;
    let both = h.err("snapshot_remove", json!({"refs": ["a"], "retain_recent": 1})).await;
    assert!(both.contains("cannot combine"), "{both}");
    let neither = h.err("snapshot_remove", json!({})).await;
    assert!(neither.contains("or pass retain_recent, retain_for or before_date"), "{neither}");
    let bare = h.err("snapshot_remove", json!({"retain_for": "120"})).await;
    assert!(bare.contains("want a unit-bearing value"), "{bare}");
    let dry = h.ok("snapshot_remove", json!({"refs": ["a"], "dry_run": true})).await;
    assert_eq!(dry["dry_run"], true);
    let removed = h.ok("snapshot_remove", json!({"refs": ["a"]})).await;
    assert_eq!(removed["removed"].as_array().unwrap().len(), 1);
    assert_eq!(h.ok("snapshot_list", json!({})).await, json!({"snapshots": []}));
}

#[tokio::test]
async fn session_tools_work_and_refuse() {
    let h = Harness::start_with(|o| o.allow = vec!["remove".into()]).await;
    let created = h.ok("session_create", json!({"name": "agent-work"})).await;
    assert_eq!(created["name"], "agent-work");
    assert_eq!(h.ok("session_set", json!({"session": "agent-work"})).await["name"], "agent-work");
    assert_eq!(h.ok("session_current", json!({})).await["name"], "agent-work");
    let sessions = h.ok("session_list", json!({})).await;
    assert_eq!(sessions["sessions"].as_array().unwrap().len(), 2);
    assert_eq!(h.ok("session_unset", json!({})).await["name"], "baseline");
    let deleted = h.ok("session_delete", json!({"session": "agent-work"})).await;
    assert_eq!(deleted["deleted"], true);

    let bad = h.err("session_create", json!({"name": "a b"})).await;
    assert!(bad.contains("invalid session name"), "{bad}");
    let missing = h.err("session_set", json!({"session": "ghost"})).await;
    assert!(missing.contains("no session \"ghost\""), "{missing}");
    let baseline = h.err("session_delete", json!({"session": "baseline"})).await;
    assert!(baseline.contains("baseline cannot be deleted"), "{baseline}");
    let extra = h.err("session_current", json!({"x": 1})).await;
    assert!(extra.contains("invalid arguments"), "{extra}");
    let sort = h.err("session_list", json!({"sort": "newest"})).await;
    assert!(sort.contains("invalid sort \"newest\": use desc (newest first) or asc"), "{sort}");
}
