//! The whole output of each `cairn transcript` command, human and `--json`, with its refusals,
//! and of `cairn diff` between transcript snapshots (`snapshots/transcript__*.snap`).

use crate::{Agents, TestEnv, assert_cli};

#[test]
fn save_list_export_load_diff_and_delete() {
    let env = TestEnv::new();
    let pi = env.place("pi_v3_branched.jsonl", "2025-01-10T09-00-00-000Z_0193a1f0.jsonl");
    let claude = env.place("claude_sidechain.jsonl", "5f2c7e3a-1111-4222-8333-444455556666.jsonl");
    let (pi, claude) = (pi.to_str().unwrap(), claude.to_str().unwrap());
    assert_cli!(
        env,
        "transcript_save_list",
        [
            ["transcript", "list"],
            ["transcript", "save", pi, "branched", "--description", "before the refactor"],
            ["--json", "transcript", "save", claude, "claude"],
            ["transcript", "save", pi, "branched"],
            ["transcript", "save", pi, "branched", "--force"],
            ["transcript", "save", "--", pi, "../bad"],
            ["transcript", "save", "missing.jsonl", "x"],
            ["transcript", "list"],
            ["--json", "transcript", "list"],
        ]
    );
    assert_cli!(
        env,
        "transcript_export_load",
        [
            ["transcript", "export", "branched", "-o", "out.jsonl"],
            ["transcript", "export", "branched", "-o", "out.jsonl"],
            ["--json", "transcript", "export", "claude", "-o", "out.jsonl", "--force"],
            ["transcript", "export", "nope", "-o", "x.jsonl"],
            ["transcript", "load", "branched"],
            ["--json", "transcript", "load", "claude", "--prompt", "continue with the fix"],
            ["transcript", "load", "nope"],
        ]
    );
    std::fs::write(
        env.pi_dir().join("2025-01-10T09-00-00-000Z_0193a1f0.jsonl"),
        std::fs::read_to_string(crate::fixture("pi_v3_branched.jsonl")).unwrap()
            + r#"{"type":"message","id":"c0000006","parentId":"c0000005","timestamp":"2025-01-10T09:05:00.000Z","message":{"role":"user","content":[{"type":"text","text":"Now add tests."}]}}"#
            + "\n",
    )
    .unwrap();
    assert_cli!(
        env,
        "transcript_diff_delete",
        [
            ["transcript", "save", pi, "later"],
            ["diff", "branched", "later"],
            ["--json", "diff", "branched", "later"],
            ["transcript", "delete", "later"],
            ["--json", "transcript", "delete", "later", "--force"],
            ["transcript", "delete", "later", "--force"],
            ["transcript"],
        ]
    );
}

/// Regression: `cairn transcript list` printed the full stored time, whose length varies (the
/// fraction drops trailing zeros), so its columns shifted from row to row.
#[test]
fn transcript_list_columns_shifted_with_the_length_of_each_time() {
    let env = TestEnv::new();
    for (n, name) in ["a", "b", "c", "d", "e", "f"].iter().enumerate() {
        let file = env.place("pi_v2.jsonl", &format!("s{n}.jsonl"));
        env.ok(&["transcript", "save", file.to_str().unwrap(), name]);
    }
    let list = env.ok(&["transcript", "list"]);
    let mut lines = list.lines().skip(1);
    let agent = lines.next().and_then(|header| header.find("AGENT")).expect("a header");
    for row in lines {
        assert_eq!(row.get(agent..agent + 3), Some("pi "), "{list}");
    }
}

/// Issue 39: `transcript list` on a store that is not there says so and makes none. Issue 40:
/// the snapshot files the Pi extension wrote itself are listed (marked as its own) before the
/// pi profile restores one, and the `pi --fork` copies cairn writes beside them are not.
#[test]
fn list_makes_no_store_and_shows_the_pi_extensions_own_files() {
    let env = TestEnv::new();
    let folder = env.home().join(".pi/agent/pi-session-snapshot");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::copy(crate::fixture("pi_v3_branched.jsonl"), folder.join("baseline.jsonl")).unwrap();
    std::fs::copy(crate::fixture("pi_v3_branched.jsonl"), folder.join("onboarded.jsonl")).unwrap();
    std::fs::write(folder.join("notes.txt"), "not a snapshot\n").unwrap();
    assert_cli!(env, "transcript_list_no_store", [["transcript", "list"], ["--json", "transcript", "list"]]);
    assert!(!env.store().exists(), "a listing made the store");

    let pi = env.place("pi_v3_branched.jsonl", "2025-01-10T09-00-00-000Z_0193a1f0.jsonl");
    env.json(&["transcript", "save", pi.to_str().unwrap(), "onboarded"]);
    assert_cli!(
        env,
        "transcript_list_extension_files",
        [["transcript", "list"], ["--json", "transcript", "list"]]
    );
}
