//! Moments through the default profile: `snapshot_save` with several targets, and
//! `snapshot_restore` of a moment (all parts, or `only` some), behind the same permission gates.

mod common;

use common::Harness;
use serde_json::json;

#[tokio::test]
async fn snapshot_save_with_several_targets_saves_a_moment_and_restore_puts_it_back() {
    let h = Harness::start().await;
    let (a, b) = (h.tree("a"), h.tree("b"));
    let (ta, tb) = (a.to_str().unwrap(), b.to_str().unwrap());
    assert_exchanges!(
        h,
        "moments_refused",
        [
            ("snapshot_save", json!({"target": ta, "targets": [tb], "name": "both"})),
            ("snapshot_save", json!({"target": ta, "targets": [ta], "name": "twice"})),
            ("snapshot_restore", json!({"ref": "both"})),
            ("snapshot_restore", json!({"ref": "first", "only": ["dir"]})),
        ]
    );
    let h = Harness::start_with(|o| o.allow = vec!["restore".into()]).await;
    let (a, b) = (h.tree("a"), h.tree("b"));
    let (ta, tb) = (a.to_str().unwrap(), b.to_str().unwrap());
    h.ok("snapshot_save", json!({"target": ta, "targets": [tb], "name": "both"})).await;
    std::fs::write(a.join("README"), "changed a\n").unwrap();
    std::fs::write(b.join("README"), "changed b\n").unwrap();
    assert_exchanges!(
        h,
        "moments_restored",
        [
            ("snapshot_restore", json!({"ref": "both", "only": ["compose"]})),
            ("snapshot_restore", json!({"ref": "both", "only": ["dir"]})),
            ("snapshot_restore", json!({"ref": "nope", "only": ["dir"]})),
        ]
    );
    assert_ne!(std::fs::read_to_string(a.join("README")).unwrap(), "changed a\n");
    assert_ne!(std::fs::read_to_string(b.join("README")).unwrap(), "changed b\n");
}
