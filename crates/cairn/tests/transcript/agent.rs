//! `cairn agent status` and `cairn agent reset` for the pi profile's two capabilities.

use serde_json::Value;

use crate::TestEnv;

/// (allowed, set) of one capability in a status result.
fn answer(status: &Value, capability: &str) -> (bool, bool) {
    let entry = status["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["capability"] == capability)
        .unwrap_or_else(|| panic!("{capability} missing from {status}"));
    (entry["allowed"].as_bool().unwrap(), entry["set"].as_bool().unwrap())
}

/// The line `cairn agent status` prints for `capability`.
fn human_line(env: &TestEnv, capability: &str) -> String {
    let out = env.cairn(&["agent", "status"]).assert().success().get_output().stdout.clone();
    let out = String::from_utf8(out).unwrap();
    out.lines()
        .find(|l| l.split_whitespace().next() == Some(capability))
        .unwrap_or_else(|| panic!("{capability} missing from {out}"))
        .to_owned()
}

#[test]
fn status_shows_each_transcript_capability_refused_by_default_then_as_set() {
    let env = TestEnv::new();
    for capability in ["transcript-save", "transcript-restore"] {
        let status = env.json(&["agent", "status"]);
        assert_eq!(answer(&status, capability), (false, false), "{capability}");
        let entry = status["capabilities"].as_array().unwrap().iter().find(|c| c["capability"] == capability);
        assert_eq!(entry.unwrap()["key"], format!("agent.{capability}"));
        let line = human_line(&env, capability);
        assert!(line.contains("refused") && line.contains("(default)"), "{line}");
    }

    env.json(&["agent", "allow", "transcript-save"]);
    let status = env.json(&["agent", "status"]);
    assert_eq!(answer(&status, "transcript-save"), (true, true));
    assert_eq!(answer(&status, "transcript-restore"), (false, false), "each is allowed on its own");
    let line = human_line(&env, "transcript-save");
    assert!(line.contains("allowed") && !line.contains("(default)"), "{line}");

    env.json(&["agent", "deny", "transcript-restore"]);
    let status = env.json(&["agent", "status"]);
    assert_eq!(answer(&status, "transcript-restore"), (false, true), "denied explicitly is set");
    assert!(!human_line(&env, "transcript-restore").contains("(default)"));
}

#[test]
fn reset_returns_each_transcript_capability_to_its_default() {
    let env = TestEnv::new();
    env.json(&["agent", "allow", "transcript-save", "transcript-restore"]);
    let config = env.store().join("config.toml");

    let status = env.json(&["agent", "reset", "transcript-save"]);
    assert_eq!(answer(&status, "transcript-save"), (false, false));
    assert_eq!(answer(&status, "transcript-restore"), (true, true), "the other is untouched");
    let settings = std::fs::read_to_string(&config).unwrap();
    assert!(!settings.contains("transcript-save") && settings.contains("transcript-restore"), "{settings}");
    // What reset returned is what status reads back from the store.
    assert_eq!(env.json(&["agent", "status"]), status);

    let status = env.json(&["agent", "reset", "transcript-restore"]);
    assert_eq!(answer(&status, "transcript-restore"), (false, false));
    assert!(!std::fs::read_to_string(&config).unwrap().contains("transcript-"));
    let line = human_line(&env, "transcript-restore");
    assert!(line.contains("refused") && line.contains("(default)"), "{line}");
}
