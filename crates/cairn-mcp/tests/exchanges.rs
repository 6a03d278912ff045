//! The whole request/response exchange of every tool of the default and codecalc profiles,
//! and the refusals of the pi, arcave and debug profiles that need no engine, adapter or agent
//! files: successes, permission refusals, not found, name taken and invalid arguments, pinned as
//! snapshots (`snapshots/exchanges__*.snap`) with ids, times and temp paths as stable tokens.

mod common;

use common::Harness;
use serde_json::json;

#[tokio::test]
async fn default_profile_snapshot_tools() {
    let h = Harness::start().await;
    let tree = h.tree("work");
    let t = tree.to_str().unwrap();
    assert_exchanges!(
        h,
        "cairn_snapshots",
        [
            ("snapshot_save", json!({"target": t, "name": "first", "description": "before the edit"})),
            ("snapshot_save", json!({"target": t, "name": "first"})),
            ("snapshot_save", json!({"target": t, "name": "../x"})),
            ("snapshot_save", json!({"target": h.dir.path().join("missing")})),
            ("snapshot_save", json!({"name": "no-target"})),
            ("snapshot_list", json!({})),
            ("snapshot_list", json!({"sort": "sideways"})),
            ("snapshot_list", json!({"sorting": "asc"})),
            ("snapshot_show", json!({"ref": "first"})),
            ("snapshot_show", json!({"ref": "nope"})),
            ("snapshot_diff", json!({"from": "nope"})),
        ]
    );
    std::fs::write(tree.join("README"), "changed\n").unwrap();
    std::fs::write(tree.join("new.txt"), "new\n").unwrap();
    assert_exchanges!(
        h,
        "cairn_diff_restore_remove",
        [
            ("snapshot_diff", json!({"from": "first"})),
            ("snapshot_diff", json!({"from": "first", "stat": true})),
            ("snapshot_save", json!({"target": t, "name": "second", "force": true})),
            ("snapshot_diff", json!({"from": "first", "to": "second", "patch": true})),
            ("snapshot_restore", json!({"ref": "first"})),
            ("snapshot_restore", json!({"ref": "first", "dry_run": true})),
            ("snapshot_remove", json!({"refs": ["first"]})),
            ("session_delete", json!({"session": "baseline"})),
        ]
    );
}

#[tokio::test]
async fn default_profile_restore_and_remove_when_allowed() {
    let h = Harness::start_with(|o| o.allow = vec!["restore".into(), "remove".into()]).await;
    let tree = h.tree("work");
    let t = tree.to_str().unwrap();
    h.ok("snapshot_save", json!({"target": t, "name": "first"})).await;
    std::fs::write(tree.join("README"), "changed\n").unwrap();
    let copy = h.dir.path().join("copy");
    assert_exchanges!(
        h,
        "cairn_allowed",
        [
            ("snapshot_restore", json!({"ref": "first", "dry_run": true})),
            ("snapshot_restore", json!({"ref": "first"})),
            ("snapshot_restore", json!({"ref": "first", "to": copy})),
            ("snapshot_restore", json!({"ref": "first", "to": copy})),
            ("snapshot_restore", json!({"ref": "nope"})),
            ("snapshot_remove", json!({"retain_recent": 0, "dry_run": true})),
            ("snapshot_remove", json!({"refs": ["first"]})),
            ("snapshot_remove", json!({"refs": ["first"]})),
            ("snapshot_remove", json!({})),
            ("snapshot_remove", json!({"retain_for": "forever"})),
        ]
    );
}

#[tokio::test]
async fn default_profile_session_tools() {
    let h = Harness::start_with(|o| o.allow = vec!["remove".into()]).await;
    assert_exchanges!(
        h,
        "cairn_sessions",
        [
            ("session_list", json!({})),
            ("session_create", json!({"name": "work", "from": "baseline"})),
            ("session_create", json!({"name": "work"})),
            ("session_create", json!({"name": "bad/name"})),
            ("session_create", json!({"name": "x", "from": "nope"})),
            ("session_set", json!({"session": "work"})),
            ("session_current", json!({})),
            ("session_set", json!({"session": "nope"})),
            ("session_set", json!({})),
            ("session_list", json!({"sort": "asc"})),
            ("session_delete", json!({"session": "work"})),
            ("session_unset", json!({})),
            ("session_delete", json!({"session": "baseline"})),
            ("session_delete", json!({"session": "work"})),
            ("session_delete", json!({"session": "work"})),
            ("session_current", json!({"extra": 1})),
        ]
    );
}

#[tokio::test]
async fn default_profile_with_a_pinned_session() {
    let h = Harness::start_with(|o| o.pinned_session = Some("baseline".into())).await;
    assert_exchanges!(
        h,
        "cairn_pinned",
        [
            ("session_current", json!({})),
            ("session_create", json!({"name": "other"})),
            ("session_set", json!({"session": "other"})),
            ("session_unset", json!({})),
            ("snapshot_list", json!({"session": "other"})),
        ]
    );
}

async fn codecalc(allow: &[&str]) -> Harness {
    let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
    Harness::start_with(|o| {
        let root = o.store.local_dir().parent().unwrap().join("workspaces");
        std::fs::create_dir_all(root.join("s1/.codecalc-run")).unwrap();
        std::fs::write(root.join("s1/data.csv"), "a,b\n1,2\n").unwrap();
        std::fs::write(root.join("s1/.codecalc-run/pid"), "42").unwrap();
        o.profile = "codecalc".into();
        o.workspace_root = Some(root);
        o.allow = allow;
    })
    .await
}

#[tokio::test]
async fn codecalc_session_snapshot_actions_and_refusals() {
    let h = codecalc(&[]).await;
    assert_exchanges!(
        h,
        "codecalc_refused",
        [
            ("session_snapshot", json!({"session_id": "s1", "label": "first try"})),
            ("session_snapshot", json!({"action": "list", "session_id": "s1"})),
            ("session_snapshot", json!({"action": "restore", "session_id": "s1", "snapshot_id": "latest"})),
            (
                "session_snapshot",
                json!({"action": "restore", "session_id": "s1", "snapshot_id": "latest", "replace": true})
            ),
            ("session_snapshot", json!({"action": "delete", "session_id": "s1", "snapshot_id": "latest"})),
            ("session_snapshot", json!({"session_id": "../etc"})),
            ("session_snapshot", json!({"session_id": "nope"})),
            ("session_snapshot", json!({"action": "explode", "session_id": "s1"})),
            ("session_snapshot", json!({})),
        ]
    );
    let h = codecalc(&["restore", "remove"]).await;
    let root = h.dir.path().join("workspaces");
    h.ok("session_snapshot", json!({"session_id": "s1", "label": "first"})).await;
    std::fs::write(root.join("s1/data.csv"), "changed\n").unwrap();
    assert_exchanges!(
        h,
        "codecalc_allowed",
        [
            ("session_snapshot", json!({"action": "save", "session_id": "s1", "label": "first"})),
            (
                "session_snapshot",
                json!({"action": "save", "session_id": "s1", "label": "first", "replace": true})
            ),
            ("session_snapshot", json!({"action": "list", "session_id": "s1"})),
            ("session_snapshot", json!({"action": "restore", "session_id": "s1", "snapshot_id": "nope"})),
            ("session_snapshot", json!({"action": "restore", "session_id": "s1"})),
            ("session_snapshot", json!({"action": "delete", "session_id": "s1"})),
        ]
    );
}

#[tokio::test]
async fn pi_profile_refusals() {
    let h = Harness::start_with(|o| o.profile = "pi".into()).await;
    assert_exchanges!(
        h,
        "pi_refused",
        [
            ("snapshot_save", json!({"name": "x"})),
            ("snapshot_restore", json!({"name": "x"})),
            ("snapshot_save", json!({"nmae": "x"})),
        ]
    );
}

#[tokio::test]
async fn arcave_profile_refusals_without_a_project() {
    let h = Harness::start_with(|o| {
        o.profile = "arcave".into();
        o.allow = vec!["save".into(), "restore".into(), "remove".into()];
    })
    .await;
    assert_exchanges!(
        h,
        "arcave_sessions_and_refusals",
        [
            ("session_list", json!({})),
            ("session_create", json!({"name": "work"})),
            ("session_create", json!({"name": "work"})),
            ("session_set", json!({"session": "work"})),
            ("session_current", json!({})),
            ("session_unset", json!({})),
            ("session_delete", json!({"session": "work"})),
            ("session_delete", json!({"session": "baseline"})),
            ("savepoint_list", json!({"project": "cairnexchangesnone"})),
            ("savepoint_remove", json!({"project": "cairnexchangesnone", "ids": ["nope"]})),
            ("savepoint_remove", json!({"project": "cairnexchangesnone"})),
            ("rollback", json!({"project": "cairnexchangesnone", "ref": "nope"})),
            ("savepoint_remove", json!({"savepoint_ids": ["0190ffff-0000-7000-8000-000000000000"]})),
            ("savepoint_list", json!({})),
        ]
    );
    // rollback and savepoint_remove are allowed by default, as arcave allows them; a server
    // started with --deny refuses them (and session_delete, gated in every case).
    let denied = Harness::start_with(|o| {
        o.profile = "arcave".into();
        o.deny = vec!["restore".into(), "remove".into()];
    })
    .await;
    assert_exchanges!(
        denied,
        "arcave_denied",
        [
            ("rollback", json!({"project": "cairnexchangesnone", "ref": "nope"})),
            ("savepoint_remove", json!({"project": "cairnexchangesnone", "ids": ["nope"]})),
            ("session_delete", json!({"session": "baseline"})),
        ]
    );
}

#[tokio::test]
async fn debug_profile_refusals_without_an_adapter() {
    let h = Harness::start_with(|o| o.profile = "debug".into()).await;
    assert_exchanges!(
        h,
        "debug_refusals",
        [
            ("debug_stack", json!({})),
            ("debug_continue", json!({})),
            ("debug_step", json!({"kind": "over"})),
            ("debug_step", json!({"kind": "sideways"})),
            ("debug_stop", json!({})),
            ("debug_set_breakpoints", json!({"file": "x.py", "lines": [1]})),
            ("snapshot_create", json!({})),
            ("snapshot_diff", json!({"snapshot_id_1": "nope", "snapshot_id_2": "nope"})),
            ("snapshot_delete", json!({"snapshot_id": "nope"})),
            ("debug_stack", json!({"session_id": "nope"})),
            ("debug_launch", json!({"program": "/nonexistent/prog.py"})),
            ("debug_attach", json!({"bogus": 1})),
        ]
    );
}

#[tokio::test]
async fn codecalc_unknown_id_and_long_echoes_keep_their_advice() {
    let h = codecalc(&[]).await;
    let unknown = h
        .err(
            "session_snapshot",
            json!({"action": "delete", "session_id": "s1", "snapshot_id": "0190ffff-0000-7000-8000-000000000000"}),
        )
        .await;
    assert!(unknown.starts_with("unknown snapshot_id 0190ffff-0000-7000-8000-000000000000"), "{unknown}");
    assert!(!unknown.contains("does not belong"), "{unknown}");
    let long = "x".repeat(5000);
    for args in [json!({"session_id": long}), json!({"action": long, "session_id": "s1"})] {
        let refusal = h.err("session_snapshot", args).await;
        assert!(refusal.len() < 1000, "{refusal}");
        assert!(refusal.ends_with("workspace root") || refusal.contains("use one of"), "{refusal}");
    }
}
