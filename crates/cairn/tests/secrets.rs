//! Files holding credentials are left out of directory saves by default, listed in
//! `not_covered`, left alone by in-place restores, and captured when the user opts in.

mod common;

use common::{TestEnv, describe, write};

/// An AWS-shaped access key id, assembled here so no file of the repository holds one whole.
fn access_key() -> String {
    format!("AKIA{}", "Q3".repeat(8))
}

fn secret_tree(env: &TestEnv) {
    write(&env.work(), ".env", "DATABASE_PASSWORD=hunter2\n");
    write(&env.work(), ".env.example", "DATABASE_PASSWORD=\n");
    write(&env.work(), ".ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n");
    write(&env.work(), "config.toml", format!("[aws]\naccess_key_id = \"{}\"\n", access_key()));
    write(&env.work(), "src/main.rs", "fn main() {}\n");
}

fn names(tree: &std::collections::BTreeMap<std::path::PathBuf, common::Entry>) -> Vec<String> {
    tree.keys().map(|p| p.display().to_string()).collect()
}

#[test]
fn a_save_leaves_out_env_files_keys_and_files_with_tokens_and_says_which_rule_matched() {
    let env = TestEnv::new();
    secret_tree(&env);
    let saved = env.json(&["save", "--name", "s"]);
    insta::assert_json_snapshot!(saved["not_covered"], @r#"
    {
      "ignored": 0,
      "ignored_paths": [],
      "secrets": [
        {
          "path": ".env",
          "rule": "dotenv"
        },
        {
          "path": ".ssh/id_ed25519",
          "rule": "ssh-private-key"
        },
        {
          "path": "config.toml",
          "rule": "aws-access-key-id"
        }
      ],
      "skipped": []
    }
    "#);
    assert_eq!(saved["stats"]["files"], 2, "{saved}");
    let dest = env.root().join("restored");
    env.ok(&["restore", "s", "--to", dest.to_str().unwrap()]);
    assert_eq!(names(&describe(&dest)), [".env.example", ".ssh", "src", "src/main.rs"]);

    let human = env.ok(&["save"]);
    env.filters().bind(|| {
        insta::assert_snapshot!(human, @r"
        saved [ID] of [TMP]/work
          2 files, 3 dirs, 0 links, 32 B; read 0 B, stored 0 B new (0 B after compression) in [DURATION]
        not covered: .env (secret: dotenv; --include-secrets captures it)
        not covered: .ssh/id_ed25519 (secret: ssh-private-key; --include-secrets captures it)
        not covered: config.toml (secret: aws-access-key-id; --include-secrets captures it)
        ");
    });
}

#[test]
fn an_unchanged_file_left_out_by_its_content_stays_out_without_being_read_again() {
    let env = TestEnv::new();
    secret_tree(&env);
    env.json(&["save"]);
    // Let the coarse clock move past the files' times, so none of them is racy.
    std::thread::sleep(std::time::Duration::from_millis(30));
    env.json(&["save"]);
    let third = env.json(&["save"]);
    assert_eq!(third["stats"]["read_bytes"], 0, "{third}");
    assert_eq!(third["not_covered"]["secrets"].as_array().unwrap().len(), 3, "{third}");
}

#[test]
fn include_secrets_captures_everything_and_an_in_place_restore_leaves_secrets_alone() {
    let env = TestEnv::new();
    secret_tree(&env);
    let all = env.json(&["save", "--include-secrets"]);
    assert_eq!(all["stats"]["files"], 5, "{all}");
    assert_eq!(all["not_covered"]["secrets"], serde_json::json!([]));

    env.json(&["save", "--name", "without"]);
    write(&env.work(), ".env", "DATABASE_PASSWORD=changed\n");
    std::fs::remove_file(env.work().join(".ssh/id_ed25519")).unwrap();
    write(&env.work(), ".ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\nnew\n");
    write(&env.work(), "src/main.rs", "fn main() { edited() }\n");
    let before = describe(&env.work());
    env.ok(&["restore", "without"]);
    let after = describe(&env.work());
    for secret in [".env", ".ssh/id_ed25519", "config.toml"] {
        assert_eq!(before[std::path::Path::new(secret)], after[std::path::Path::new(secret)], "{secret}");
    }
    assert_eq!(std::fs::read_to_string(env.work().join("src/main.rs")).unwrap(), "fn main() {}\n");
}

#[test]
fn a_cairnignore_negation_or_the_setting_opts_back_in() {
    let env = TestEnv::new();
    write(&env.work(), ".env.local", "TOKEN=1\n");
    write(&env.work(), ".env", "TOKEN=2\n");
    write(&env.work(), ".cairnignore", "!.env.local\n");
    let saved = env.json(&["save"]);
    assert_eq!(saved["not_covered"]["secrets"], serde_json::json!([{ "path": ".env", "rule": "dotenv" }]));

    env.ok(&["config", "set", "secrets.include", "true"]);
    let saved = env.json(&["save"]);
    assert_eq!(saved["not_covered"]["secrets"], serde_json::json!([]));
    assert_eq!(saved["stats"]["files"], 3, "{saved}");
}

#[test]
fn docs_and_tests_with_bare_key_markers_or_placeholders_are_saved_and_real_keys_are_not() {
    let env = TestEnv::new();
    let key = "PRIVATE KEY";
    let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7";
    write(
        &env.work(),
        "docs/tls.md",
        format!(
            "A key file starts with `-----BEGIN {key}-----`.\n\n```\n-----BEGIN RSA {key}-----\nMIIE...\n```\n"
        ),
    );
    write(&env.work(), "tests/fixtures.py", format!("PEM = \"-----BEGIN EC {key}-----\\n\" + body\n"));
    write(&env.work(), ".env.example", "SLACK_BOT_TOKEN=xoxb-your-token-here\n");
    write(&env.work(), "README.md", "export OPENAI_API_KEY=sk-...\nexport ANTHROPIC_API_KEY=<your-key>\n");
    write(&env.work(), "config/slack.yaml", "token: xoxb-your-token-here\n");
    write(
        &env.work(),
        "deploy/key.json",
        format!("{{\"private_key\": \"-----BEGIN {key}-----\\n{body}\\n\"}}\n"),
    );
    write(
        &env.work(),
        "deploy/slack.yaml",
        format!("token: xoxb-2417345-1093486712-{}\n", "Zk3tQ9vBw7LmR2pXa8cYdE4u"),
    );
    write(&env.work(), "deploy/server.key", format!("-----BEGIN RSA {key}-----\n"));
    let saved = env.json(&["save"]);
    insta::assert_json_snapshot!(saved["not_covered"]["secrets"], @r#"
    [
      {
        "path": "deploy/key.json",
        "rule": "private-key"
      },
      {
        "path": "deploy/server.key",
        "rule": "private-key"
      },
      {
        "path": "deploy/slack.yaml",
        "rule": "slack-token"
      }
    ]
    "#);
    assert_eq!(saved["stats"]["files"], 5, "{saved}");
}
