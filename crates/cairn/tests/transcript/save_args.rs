//! How `cairn transcript save` tells a session file from a name when given one argument: the
//! file only when it exists, the name otherwise (so the name rule judges it).

use crate::{Agents, TestEnv};

const RULE: &str = "begin and end with a letter or digit";

#[test]
fn one_argument_that_is_no_file_is_judged_by_the_name_rule() {
    let env = TestEnv::new();
    // A session the save would take, were the argument accepted as a name.
    env.place("pi_v2.jsonl", "s.jsonl");
    let cases: [&[&str]; 5] = [&["../x"], &["a b"], &["a/b"], &["--", "-x"], &[""]];
    for args in cases {
        let mut argv = vec!["transcript", "save"];
        argv.extend_from_slice(args);
        let err = env.fails(&argv, 2);
        assert!(err.contains("invalid snapshot name") && err.contains(RULE), "{args:?}: {err}");
        assert!(!err.contains("does not exist"), "{args:?}: {err}");
    }
    assert!(env.listed().is_empty());
}

#[test]
fn one_argument_without_the_separator_that_starts_with_a_dash_is_a_usage_error() {
    let env = TestEnv::new();
    // clap reads `-x` as an option; its message says how to pass it as a value, which then
    // meets the name rule (above).
    let err = env.fails(&["transcript", "save", "-x"], 2);
    assert!(err.contains("'-x'") && err.contains("-- -x"), "{err}");
    assert!(env.listed().is_empty());
}

#[test]
fn one_argument_that_names_an_existing_file_is_the_file() {
    let env = TestEnv::new();
    let file = env.place("pi_v3_branched.jsonl", "session");
    // A relative path that is also a valid name: it exists, so it is the file.
    let saved = env
        .cairn(&["transcript", "save", "session", "--json"])
        .current_dir(file.parent().unwrap())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let saved: serde_json::Value = serde_json::from_slice(&saved).unwrap();
    assert_eq!(saved["file"], file.to_str().unwrap());
    assert!(saved["name"].is_null(), "{saved}");
}

#[test]
fn one_argument_that_is_a_valid_name_names_the_newest_session() {
    let env = TestEnv::new();
    let file = env.place("pi_v2.jsonl", "s.jsonl");
    let saved = env.json(&["transcript", "save", "checkpoint.v2"]);
    assert_eq!(saved["name"], "checkpoint.v2");
    assert_eq!(saved["file"], file.to_str().unwrap());
}

#[test]
fn one_missing_file_ending_in_jsonl_is_not_taken_as_a_name() {
    let env = TestEnv::new();
    env.place("pi_v2.jsonl", "s.jsonl");
    let err = env.fails(&["transcript", "save", "typo.jsonl"], 2);
    assert!(err.contains("typo.jsonl does not exist"), "{err}");
    assert!(env.listed().is_empty());
}
