//! Unit tests of `diff_captures`: a pure function, so hand-made captures suffice.

use super::*;

fn var(path: &str, type_name: &str, value: &str) -> CapturedVariable {
    let name = path.rsplit(['.', '[']).next().unwrap_or(path);
    CapturedVariable {
        name: name.trim_end_matches(']').to_owned(),
        path: path.to_owned(),
        type_name: type_name.to_owned(),
        value: value.to_owned(),
        scope: "Locals".to_owned(),
        level: path.matches(['.', '[']).count() as u32,
        expandable: false,
    }
}

fn capture(thread_id: i64, at_ms: i64, variables: Vec<CapturedVariable>) -> FrameCapture {
    FrameCapture {
        function_name: "recalculate".to_owned(),
        thread_id,
        frame_index: 0,
        depth: 1,
        captured_at: jiff::Timestamp::from_millisecond(at_ms).unwrap_or(jiff::Timestamp::UNIX_EPOCH),
        source_path: None,
        line: 10,
        variables,
        truncated: Vec::new(),
    }
}

#[test]
fn reports_added_removed_modified_and_unchanged() {
    let a = capture(
        1,
        1_000,
        vec![
            var("status", "str", "'Pending'"),
            var("count", "int", "1"),
            var("order", "Order", "<Order object at 0x7f0000001000>"),
            var("order.city", "str", "'Oslo'"),
            var("gone", "int", "3"),
        ],
    );
    let b = capture(
        1,
        3_418,
        vec![
            var("status", "str", "'Confirmed'"),
            var("count", "int", "1"),
            var("order", "Order", "<Order object at 0x7f0000002000>"),
            var("order.city", "str", "'Bergen'"),
            var("total", "float", "299.99"),
        ],
    );
    let diff = diff_captures(&a, &b, false).with_snapshot_ids("snap-a", "snap-b");
    assert_eq!(diff.summary, DiffSummary { added: 1, removed: 1, modified: 2, unchanged: 2 });
    assert!(!diff.thread_mismatch);
    assert_eq!(diff.time_delta, "00:00:02.4180000");
    assert_eq!(diff.added[0].path, "total");
    assert_eq!(diff.removed[0].path, "gone");
    let modified: Vec<_> =
        diff.modified.iter().map(|m| (m.path.as_str(), m.old_value.as_str(), m.new_value.as_str())).collect();
    assert_eq!(modified, [("status", "'Pending'", "'Confirmed'"), ("order.city", "'Oslo'", "'Bergen'")]);

    let json = serde_json::to_value(&diff).unwrap_or_default();
    assert_eq!(json["snapshotIdA"], "snap-a");
    assert_eq!(json["snapshotIdB"], "snap-b");
    assert_eq!(json["threadMismatch"], false);
    assert_eq!(json["timeDelta"], "00:00:02.4180000");
    assert_eq!(json["summary"]["unchanged"], 2);
    assert_eq!(json["modified"][0]["oldValue"], "'Pending'");
    assert_eq!(json["modified"][0]["newValue"], "'Confirmed'");
    assert_eq!(json["modified"][0]["type"], "str");
    assert_eq!(json["added"][0]["value"], "299.99");
    assert_eq!(json["removed"][0]["type"], "int");
}

#[test]
fn exact_mode_compares_addresses_raw() {
    let a = capture(1, 0, vec![var("p", "Point *", "0x00005555555592a0")]);
    let b = capture(1, 0, vec![var("p", "Point *", "0x00005555555592c0")]);
    assert_eq!(diff_captures(&a, &b, false).summary.modified, 0);
    let exact = diff_captures(&a, &b, true);
    assert_eq!(exact.summary.modified, 1);
    assert_eq!(exact.modified[0].old_value, "0x00005555555592a0");
}

#[test]
fn a_type_change_is_a_modification() {
    let a = capture(1, 0, vec![var("x", "int", "1")]);
    let b = capture(1, 0, vec![var("x", "float", "1")]);
    assert_eq!(diff_captures(&a, &b, false).modified[0].type_name, "float");
}

#[test]
fn flags_thread_mismatch_and_negative_delta() {
    let a = capture(1, 90_061_500, Vec::new());
    let b = capture(2, 0, Vec::new());
    let diff = diff_captures(&a, &b, false);
    assert!(diff.thread_mismatch);
    assert_eq!(diff.time_delta, "-25:01:01.5000000");
    let json = serde_json::to_value(&diff).unwrap_or_default();
    assert_eq!(json["added"], serde_json::json!([]));
    assert_eq!(json["removed"], serde_json::json!([]));
    assert_eq!(json["modified"], serde_json::json!([]));
}

#[test]
fn duplicate_paths_count_once() {
    let a = capture(1, 0, vec![var("x", "int", "1"), var("x", "int", "5")]);
    let b = capture(1, 0, vec![var("x", "int", "1")]);
    let diff = diff_captures(&a, &b, false);
    assert_eq!(diff.summary, DiffSummary { unchanged: 1, ..DiffSummary::default() });
}
