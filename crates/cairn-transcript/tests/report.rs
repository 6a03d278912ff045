//! Diffs and summaries of extracted paths, compared whole with snapshots.

use std::path::PathBuf;

use cairn_transcript::{ActivePath, Transcript, diff_paths};

fn saved(name: &str) -> ActivePath {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    Transcript::read(&file).unwrap().active_path()
}

/// The path as it stood when the session ended at `leaf` (an earlier checkpoint).
fn truncated_at(path: &ActivePath, leaf: &str) -> ActivePath {
    let mut earlier = path.clone();
    let end = earlier.entries.iter().position(|e| e.id.as_deref() == Some(leaf)).unwrap();
    earlier.entries.truncate(end + 1);
    earlier
}

#[test]
fn diff_of_two_pi_branches() {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi_v3_branched.jsonl"),
    )
    .unwrap();
    // The same file before the branch summary was written: its leaf was on the other branch.
    let before: String = text.lines().take(8).map(|l| format!("{l}\n")).collect();
    let old = Transcript::parse("before", &before).unwrap().active_path();
    let new = saved("pi_v3_branched.jsonl");
    insta::assert_json_snapshot!(diff_paths(&old, &new));
}

#[test]
fn diff_of_claude_checkpoints() {
    let new = saved("claude_sidechain.jsonl");
    let old = truncated_at(&new, "11111111-0000-4000-8000-000000000001");
    insta::assert_json_snapshot!(diff_paths(&old, &new));
    let same = diff_paths(&new, &new);
    assert!(same.added.is_empty() && same.removed.is_empty());
    assert_eq!(same.unchanged, 4);
}

#[test]
fn summaries() {
    insta::assert_json_snapshot!("summary_pi_v3", saved("pi_v3_branched.jsonl").summary());
    // Version 1 ids are derived from the entries, so they are the same on every read.
    insta::assert_json_snapshot!("summary_pi_v1", saved("pi_v1_linear.jsonl").summary());
    insta::assert_json_snapshot!("summary_claude", saved("claude_sidechain.jsonl").summary());
}
