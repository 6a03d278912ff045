//! Refusals speak the caller's language: each profile names its own arguments and tools, a
//! codecalc agent never sees cairn's internal session, and echoed input is cut short.

mod common;

use common::Harness;
use serde_json::json;

/// Words of the command line that must never reach an agent of a tool profile.
fn assert_no_cli_words(reply: &str) {
    for cli in ["--force", "--to", "--pi-dir", "`cairn list`", "`cairn save`", "`cairn transcript list`"] {
        assert!(!reply.contains(cli), "{cli} in {reply}");
    }
}

#[tokio::test]
async fn default_profile_refusals_name_its_arguments_and_tools() {
    let h = Harness::start().await;
    let tree = h.tree("t");
    h.ok("snapshot_save", json!({"target": tree, "name": "a"})).await;
    let taken = h.err("snapshot_save", json!({"target": tree, "name": "a"})).await;
    assert!(
        taken.ends_with("; pick another name, or set force: true to move the name to the new snapshot"),
        "{taken}"
    );
    let missing = h.err("snapshot_show", json!({"ref": "nope"})).await;
    assert_eq!(missing, "no snapshot \"nope\" in session \"baseline\"; call snapshot_list");
    let latest = h.err("snapshot_diff", json!({"from": "latest", "target": h.tree("empty")})).await;
    assert!(latest.ends_with("; call snapshot_save"), "{latest}");
    let refused = h.err("snapshot_restore", json!({"ref": "a"})).await;
    let store = h.dir.path().join("store");
    assert_eq!(
        refused,
        format!(
            "restoring snapshots is not allowed for agents; ask the user to run `cairn --store {} agent allow restore` (or to start the server with `cairn mcp --allow restore`), then retry",
            store.display()
        )
    );
    for reply in [&taken, &missing, &latest, &refused] {
        assert_no_cli_words(reply);
    }
}

#[tokio::test]
async fn snapshot_remove_of_the_default_profile_does_not_say_savepoint_ids() {
    let h = Harness::start().await;
    let both = h.err("snapshot_remove", json!({"refs": ["a"], "retain_recent": 1, "dry_run": true})).await;
    assert_eq!(both, "cannot combine snapshot references with retention rules; give one or the other");
    let neither = h.err("snapshot_remove", json!({"dry_run": true})).await;
    assert_eq!(neither, "name the snapshots to remove, or pass retain_recent, retain_for or before_date");
    let bare = h.err("snapshot_remove", json!({"retain_for": "120", "dry_run": true})).await;
    assert_eq!(bare, "invalid retain_for \"120\": want a unit-bearing value like 2m, 90s or 1h30m");
    for reply in [&both, &neither, &bare] {
        assert!(!reply.contains("savepoint") && !reply.contains("--"), "{reply}");
    }
}

#[tokio::test]
async fn a_ten_megabyte_ref_gets_a_short_reply() {
    let h = Harness::start().await;
    let huge = "x".repeat(10 << 20);
    let reply = h.err("snapshot_show", json!({"ref": huge})).await;
    assert!(reply.len() < 1000, "{} bytes", reply.len());
    assert!(
        reply.starts_with("no snapshot \"xxxx")
            && reply.ends_with("…\" in session \"baseline\"; call snapshot_list"),
        "{reply}"
    );
    let wrong_type = h.err("snapshot_show", json!({"ref": huge.len(), "target": huge})).await;
    assert!(wrong_type.len() < 2000, "{} bytes", wrong_type.len());
}

#[tokio::test]
async fn codecalc_replies_never_show_cairns_session_name() {
    let h = Harness::start_with(|o| {
        let root = o.store.local_dir().parent().unwrap().join("workspaces");
        std::fs::create_dir_all(root.join("s1")).unwrap();
        std::fs::write(root.join("s1/data.csv"), "a,b\n").unwrap();
        o.profile = "codecalc".into();
        o.workspace_root = Some(root);
    })
    .await;
    for id in ["latest", "0190aaaa-0000-7000-8000-000000000000", "nope"] {
        let reply = h
            .err("session_snapshot", json!({"action": "restore", "session_id": "s1", "snapshot_id": id}))
            .await;
        // Ids in this profile are ids: anything else is refused before it is looked up.
        let expected = if id.len() == 36 {
            format!("unknown snapshot_id {id}; action='list' shows its snapshots")
        } else {
            format!(
                "snapshot_id {id:?} is not a snapshot id; pass the snapshot_id that action='save' returned (action='list' shows them)"
            )
        };
        assert_eq!(reply, expected);
        assert!(!reply.contains("baseline"), "{reply}");
    }
}

#[tokio::test]
async fn arcave_refusals_use_its_tools_and_its_contract_sentences() {
    let h = Harness::start_with(|o| {
        o.profile = "arcave".into();
        o.allow = vec!["restore".into()];
        // arcave lets an agent remove by default, as its contract does; the user denies it here.
        o.deny = vec!["remove".into()];
    })
    .await;
    let missing = h.err("rollback", json!({"project": "p", "ref": "nope"})).await;
    assert_eq!(missing, "no snapshot \"nope\" in session \"baseline\"; call savepoint_list");
    // Validation comes before the permission check, so the contract's sentences show.
    let both = h.err("savepoint_remove", json!({"project": "p", "ids": ["a"], "retain_recent": 1})).await;
    assert_eq!(both, "cannot combine savepoint ids with retain-recent/retain-for/before-date");
    let bare = h.err("savepoint_remove", json!({"project": "p", "retain_for": "120"})).await;
    assert_eq!(bare, "invalid --retain-for \"120\": want a unit-bearing value like 2m, 90s or 1h30m");
    let valid = h.err("savepoint_remove", json!({"project": "p", "retain_for": "2h"})).await;
    assert!(valid.contains("denying remove"), "with the permission denied the remove is refused: {valid}");
}

#[tokio::test]
async fn debug_refusals_name_its_resource() {
    let h = Harness::start_with(|o| o.profile = "debug".into()).await;
    let reply = h.err("snapshot_diff", json!({"snapshot_id_1": "snap-x", "snapshot_id_2": "snap-y"})).await;
    assert!(reply.starts_with("SNAPSHOT_NOT_FOUND: no debug snapshot"), "{reply}");
    assert!(reply.ends_with("; read debugger://snapshots"), "{reply}");
    assert_no_cli_words(&reply);
}
