//! The permission gate and the pinned-session refusal.

mod common;

use cairn_lib::ops::permissions::Capability;
use common::Harness;
use serde_json::json;

#[tokio::test]
async fn restore_is_refused_until_the_user_allows_it_on_the_running_server() {
    let h = Harness::start().await;
    let tree = h.tree("work");
    h.ok("snapshot_save", json!({"target": tree, "name": "before"})).await;
    std::fs::write(tree.join("README"), "broken\n").unwrap();

    let refusal = h.err("snapshot_restore", json!({"ref": "before"})).await;
    let store = h.dir.path().join("store");
    let command = format!("cairn --store {} agent allow restore", store.display());
    assert!(refusal.contains(&command), "{refusal}");
    assert_eq!(std::fs::read_to_string(tree.join("README")).unwrap(), "broken\n");
    // A dry run changes nothing, so it needs no permission.
    let plan = h.ok("snapshot_restore", json!({"ref": "before", "dry_run": true})).await;
    assert_eq!(plan["dry_run"], true);

    // What `cairn agent allow restore` does, while the server keeps running.
    let mut other = cairn_lib::Repository::open(&store).unwrap();
    other.agent_allow(&[Capability::Restore]).unwrap();
    let restored = h.ok("snapshot_restore", json!({"ref": "before"})).await;
    assert!(restored["safety_snapshot"]["id"].is_string());
    assert_eq!(std::fs::read_to_string(tree.join("README")).unwrap(), "hello\n");

    other.agent_deny(&[Capability::Restore]).unwrap();
    assert!(h.err("snapshot_restore", json!({"ref": "before"})).await.contains("agent allow restore"));
}

#[tokio::test]
async fn remove_and_session_delete_are_refused_by_default() {
    let h = Harness::start().await;
    let tree = h.tree("work");
    h.ok("snapshot_save", json!({"target": tree, "name": "a"})).await;
    h.ok("session_create", json!({"name": "s1"})).await;
    assert!(h.err("snapshot_remove", json!({"refs": ["a"]})).await.contains("agent allow remove"));
    assert!(h.err("session_delete", json!({"session": "s1"})).await.contains("agent allow remove"));
}

#[tokio::test]
async fn an_invalid_setting_fails_closed() {
    let h = Harness::start().await;
    let tree = h.tree("work");
    std::fs::write(h.dir.path().join("store/config.toml"), "[agent]\nsave = \"yes\"\n").unwrap();
    let refusal = h.err("snapshot_save", json!({"target": tree})).await;
    assert!(refusal.contains("agent.save = \"yes\""), "{refusal}");
    assert!(refusal.contains("agent reset save`"), "{refusal}");
    // The invalid value does not stop another server from starting on the store.
    let opts = common::options(&h.dir);
    assert!(cairn_mcp::CairnServer::from_options(&opts).is_ok());
    std::fs::write(h.dir.path().join("store/config.toml"), "[agent\n").unwrap();
    let unreadable = h.err("snapshot_save", json!({"target": tree})).await;
    assert!(unreadable.contains("settings cannot be read"), "{unreadable}");
}

#[tokio::test]
async fn a_pinned_server_refuses_session_set_and_unset() {
    let h = Harness::start_with(|o| o.pinned_session = Some("baseline".into())).await;
    h.ok("session_create", json!({"name": "other"})).await;
    for (tool, args) in [("session_set", json!({"session": "other"})), ("session_unset", json!({}))] {
        let refusal = h.err(tool, args).await;
        assert!(
            refusal.contains(
                "these calls are pinned to session \"baseline\", which outranks the current session; pass session or restart the server without the pin"
            ),
            "{refusal}"
        );
    }
    assert_eq!(h.ok("session_current", json!({})).await["name"], "baseline");
}

#[tokio::test]
async fn unknown_profiles_and_pins_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = common::options(&dir);
    o.profile = "nope".into();
    let err = cairn_mcp::CairnServer::from_options(&o).unwrap_err().to_string();
    assert!(err.contains("the profiles are: cairn, codecalc"), "{err}");
    o.profile = "cairn".into();
    o.pinned_session = Some("ghost".into());
    assert!(cairn_mcp::CairnServer::from_options(&o).is_err());
}
