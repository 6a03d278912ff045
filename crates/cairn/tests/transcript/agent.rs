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

/// Issue 40: `cairn agent status` shows what Pi's own settings give the pi profile's two tools
/// while the store leaves them unset, as a pi-profile server started in the same directory
/// reads them: the global file's answer, an untrusted project's file only turning a tool off.
#[test]
fn status_shows_the_effect_of_pis_settings() {
    let env = TestEnv::new();
    let global = env.home().join(".pi/agent/settings.json");
    std::fs::create_dir_all(global.parent().unwrap()).unwrap();
    std::fs::write(
        &global,
        r#"{"pi-session-snapshot": {"agentSaveToolAllowed": true, "agentRestoreToolAllowed": true}}"#,
    )
    .unwrap();
    let project = env.work().join(".pi/settings.json");
    std::fs::create_dir_all(project.parent().unwrap()).unwrap();
    std::fs::write(&project, r#"{"pi-session-snapshot": {"agentRestoreToolAllowed": false}}"#).unwrap();
    crate::assert_cli!(
        env,
        "agent_status_pi_settings",
        [["agent", "status"], ["agent", "deny", "transcript-save"], ["--json", "agent", "status"]]
    );

    // An untrusted project cannot turn a tool on; CAIRN_PI_TRUST_PROJECT lets it.
    std::fs::write(&project, r#"{"pi-session-snapshot": {"agentRestoreToolAllowed": "yes"}}"#).unwrap();
    std::fs::write(&global, "{}").unwrap();
    crate::assert_cli!(env, "agent_status_pi_settings_invalid", [["agent", "status"]]);
    std::fs::write(&project, r#"{"pi-session-snapshot": {"agentRestoreToolAllowed": true}}"#).unwrap();
    let trusted = env.with_var("CAIRN_PI_TRUST_PROJECT", "1");
    assert_eq!(answer(&trusted.json(&["agent", "status"]), "transcript-restore"), (true, false));
}
