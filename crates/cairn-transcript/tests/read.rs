//! Reading real-format fixtures: format detection, leaf and active path, refusals.

use std::path::PathBuf;

use cairn_transcript::{Format, Transcript, TranscriptError};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn read(name: &str) -> Transcript {
    match Transcript::read(&fixture(name)) {
        Ok(t) => t,
        Err(e) => panic!("{name} should parse: {e}"),
    }
}

fn path_ids(t: &Transcript) -> Vec<String> {
    t.active_path().entries.iter().map(|e| e.id.clone().unwrap_or_else(|| format!("<{}>", e.kind))).collect()
}

fn error_of(name: &str) -> TranscriptError {
    match Transcript::read(&fixture(name)) {
        Ok(_) => panic!("{name} should be refused"),
        Err(e) => e,
    }
}

#[test]
fn pi_v3_branched_takes_the_leaf_branch() {
    let t = read("pi_v3_branched.jsonl");
    assert_eq!(t.format(), Format::Pi);
    assert_eq!(t.pi_version(), Some(3));
    assert_eq!(t.leaf_id(), Some("c0000005"));
    assert_eq!(t.session_id(), Some("0193a1f0-4b2c-7d10-9e8f-1a2b3c4d5e6f"));
    assert_eq!(t.cwd(), Some("/home/a/proj"));
    assert_eq!(
        path_ids(&t),
        [
            "a0000001", "a0000002", "a0000003", "a0000004", "a0000005", "c0000001", "c0000002", "c0000003",
            "c0000004", "c0000005"
        ]
    );
    let path = t.active_path();
    assert!(path.entries.iter().any(|e| e.kind == "compaction"));
    assert!(!path.entries.iter().any(|e| e.id.as_deref() == Some("b0000001")));
}

#[test]
fn pi_document_is_header_plus_original_lines() {
    let text = std::fs::read_to_string(fixture("pi_v3_branched.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let document = read("pi_v3_branched.jsonl").active_path().document();
    // Lines 7 and 8 (index 6, 7) are the abandoned branch.
    let expected: Vec<&str> =
        lines.iter().enumerate().filter(|(i, _)| *i != 6 && *i != 7).map(|(_, l)| *l).collect();
    assert_eq!(document, expected.join("\n") + "\n");
}

#[test]
fn pi_v2_keeps_the_branch_ending_at_the_last_line() {
    let t = read("pi_v2.jsonl");
    assert_eq!(t.pi_version(), Some(2));
    assert_eq!(t.leaf_id(), Some("d0000005"));
    assert_eq!(path_ids(&t), ["d0000001", "d0000002", "d0000003", "d0000005"]);
}

#[test]
fn pi_v1_is_chained_in_file_order_with_stable_ids() {
    let t = read("pi_v1_linear.jsonl");
    assert_eq!(t.pi_version(), Some(1));
    let entries = t.entries();
    assert_eq!(entries.len(), 5);
    assert_eq!(entries[0].parent_id, None);
    for pair in entries.windows(2) {
        assert_eq!(pair[1].parent_id, pair[0].id);
    }
    for entry in entries {
        let id = entry.id.as_deref().unwrap_or_default();
        assert!(id.len() == 8 && id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
    }
    // The blank line is skipped but line numbers still match the file.
    assert_eq!(entries[4].line, 7);
    assert_eq!(path_ids(&read("pi_v1_linear.jsonl")), path_ids(&t));
    assert_eq!(t.active_path().entries.len(), 5);
}

#[test]
fn claude_leaf_skips_sidechains_and_keeps_path_bookkeeping() {
    let t = read("claude_sidechain.jsonl");
    assert_eq!(t.format(), Format::Claude);
    assert_eq!(t.leaf_id(), Some("55555555-0000-4000-8000-000000000005"));
    assert_eq!(t.session_id(), Some("5f2c7e3a-1111-4222-8333-444455556666"));
    assert_eq!(
        path_ids(&t),
        [
            "<summary>",
            "11111111-0000-4000-8000-000000000001",
            "<file-history-snapshot>",
            "22222222-0000-4000-8000-000000000002",
            "33333333-0000-4000-8000-000000000003",
            "55555555-0000-4000-8000-000000000005",
        ]
    );
}

#[test]
fn claude_compaction_boundary_follows_the_logical_parent() {
    let text = concat!(
        r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","cwd":"/p","type":"user","message":{"role":"user","content":"one"},"uuid":"u1","timestamp":"t"}"#,
        "\n",
        r#"{"parentUuid":null,"logicalParentUuid":"u1","isSidechain":false,"sessionId":"s","cwd":"/p","type":"system","subtype":"compact_boundary","content":"Conversation compacted","uuid":"u2","timestamp":"t"}"#,
        "\n",
        r#"{"parentUuid":"u2","isSidechain":false,"sessionId":"s","cwd":"/p","type":"user","message":{"role":"user","content":"two"},"uuid":"u3","timestamp":"t"}"#,
        "\n",
    );
    let t = Transcript::parse("inline", text).unwrap();
    assert_eq!(path_ids(&t), ["u1", "u2", "u3"]);
}

#[test]
fn claude_exact_repeat_is_dropped_but_a_conflicting_one_is_refused() {
    let line = r#"{"parentUuid":null,"sessionId":"s","type":"user","message":{"role":"user","content":"a"},"uuid":"u1"}"#;
    let t = Transcript::parse("inline", &format!("{line}\n{line}\n")).unwrap();
    assert_eq!(t.entries().len(), 1);
    let other = line.replace("\"a\"", "\"b\"");
    let err = Transcript::parse("inline", &format!("{line}\n{other}\n")).unwrap_err();
    assert!(matches!(err, TranscriptError::DuplicateId { line: 2, first_line: 1, .. }), "{err}");
}

#[test]
fn malformed_line_is_named() {
    let err = error_of("bad_malformed.jsonl");
    assert!(matches!(err, TranscriptError::Malformed { line: 3, .. }), "{err}");
    let message = err.to_string();
    assert!(message.contains("bad_malformed.jsonl line 3"), "{message}");
}

#[test]
fn missing_parent_is_named() {
    let err = error_of("bad_missing_parent.jsonl");
    assert!(
        matches!(&err, TranscriptError::UnknownParent { line: 3, parent, .. } if parent == "gone0000"),
        "{err}"
    );
    assert!(err.to_string().contains("line 3"));
}

#[test]
fn cycle_is_named() {
    let err = error_of("bad_cycle.jsonl");
    assert!(matches!(err, TranscriptError::Cycle { line: 3, .. }), "{err}");
    assert!(err.to_string().contains("bad_cycle.jsonl line 3"));
}

#[test]
fn missing_id_empty_file_and_unknown_content_are_refused() {
    assert!(matches!(
        error_of("bad_missing_id.jsonl"),
        TranscriptError::MissingId { line: 2, field: "id", .. }
    ));
    assert!(matches!(error_of("bad_empty.jsonl"), TranscriptError::Empty { .. }));
    assert!(matches!(error_of("bad_unknown.jsonl"), TranscriptError::UnknownFormat { line: 1, .. }));
}

#[test]
fn unsupported_pi_version_and_missing_file_are_refused() {
    let err = Transcript::parse("v9", r#"{"type":"session","version":9,"id":"x"}"#).unwrap_err();
    assert!(matches!(err, TranscriptError::UnsupportedVersion { line: 1, .. }), "{err}");
    let missing = fixture("no_such_file.jsonl");
    let err = Transcript::read(&missing).unwrap_err();
    assert!(err.to_string().contains("no_such_file.jsonl"), "{err}");
}

#[test]
fn header_only_pi_session_has_an_empty_path() {
    let t = Transcript::parse("new", r#"{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/p"}"#)
        .unwrap();
    assert_eq!(t.leaf_id(), None);
    assert!(t.active_path().entries.is_empty());
}

#[test]
fn a_saved_document_reads_back_as_the_same_path() {
    for name in ["pi_v3_branched.jsonl", "pi_v2.jsonl", "pi_v1_linear.jsonl", "claude_sidechain.jsonl"] {
        let path = read(name).active_path();
        let again = Transcript::parse(&path.source, &path.document()).unwrap().active_path();
        assert_eq!(again.entries.len(), path.entries.len(), "{name}");
        for (a, b) in again.entries.iter().zip(&path.entries) {
            assert_eq!((&a.id, &a.parent_id, &a.text), (&b.id, &b.parent_id, &b.text), "{name}");
        }
    }
}
