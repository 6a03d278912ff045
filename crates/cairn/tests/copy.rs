//! `cairn copy` through the real binary: between two local stores, to and from a remote store
//! on a real S3-compatible server (`moto_server`), idempotent, refusing what the destination
//! cannot take, and redacting transcripts bound for a remote store.

mod common;

use cairn_test_support::Moto;
use common::{TestEnv, write};

/// A machine of its own on `s3://BUCKET/PREFIX` of `moto`.
fn machine(moto: &Moto, address: &str) -> TestEnv {
    with_aws(TestEnv::new().with_store(address), moto)
}

/// `env` with the AWS settings that reach `moto`, and the password of the (encrypted) remote
/// stores it makes.
fn with_aws(env: TestEnv, moto: &Moto) -> TestEnv {
    let env = env.with_var("CAIRN_PASSWORD", "the fleet's password");
    moto.env().into_iter().fold(env, |env, (k, v)| env.with_var(k, v))
}

/// What `list` shows of a session, without what a store may tell apart (nothing should).
fn listing(env: &TestEnv, session: &str) -> Vec<serde_json::Value> {
    let listed = env.json(&["list", "--session", session]);
    listed["snapshots"].as_array().unwrap().clone()
}

#[test]
fn a_copy_between_local_stores_shows_the_same_list_and_sends_nothing_twice() {
    let env = TestEnv::new();
    write(&env.work(), "src/main.rs", "fn main() {}\n");
    write(&env.work(), "big.txt", "line of text\n".repeat(20_000));
    env.ok(&["save", "--name", "first"]);
    write(&env.work(), "src/lib.rs", "pub fn f() {}\n");
    env.ok(&["save", "--name", "second"]);
    env.ok(&["session", "create", "side", "--from", "baseline"]);
    let other = env.root().join("other-store");
    let other_arg = other.to_str().unwrap();

    let first = env.json(&["copy", "--to", other_arg]);
    assert_eq!(first["snapshots_copied"], 2, "{first}");
    assert!(first["blobs_sent"].as_u64().unwrap() >= 4, "{first}");
    assert!(first["bytes_sent"].as_u64().unwrap() > 0, "{first}");
    let copied = TestEnv::new().with_store(other_arg);
    assert_eq!(listing(&copied, "baseline"), listing(&env, "baseline"));

    // Again: nothing new is sent.
    let again = env.json(&["copy", "--to", other_arg]);
    assert_eq!((again["snapshots_copied"].as_u64(), again["snapshots_present"].as_u64()), (Some(0), Some(2)));
    assert_eq!((again["blobs_sent"].as_u64(), again["bytes_sent"].as_u64()), (Some(0), Some(0)), "{again}");

    // A session, fetched back the other way: its id, name and snapshots come along.
    let side = copied.json(&["copy", "--session", "side", "--from", env.store().to_str().unwrap()]);
    assert_eq!(side["session_created"], true, "{side}");
    assert_eq!(side["blobs_sent"], 0, "the other store has every blob already: {side}");
    let sessions = copied.json(&["session", "list"]);
    let side_here =
        sessions["sessions"].as_array().unwrap().iter().find(|s| s["name"] == "side").unwrap().clone();
    let side_there = env.json(&["session", "list"])["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "side")
        .unwrap()
        .clone();
    assert_eq!(side_here["id"], side_there["id"]);
    assert_eq!(side_here["created_at"], side_there["created_at"]);
    assert_eq!(listing(&copied, "side"), listing(&env, "side"));

    let out = env.root().join("restored");
    copied.ok(&["restore", "second", "--to", out.to_str().unwrap()]);
    assert_eq!(common::describe(&out).len(), common::describe(&env.work()).len());
    let check = copied.json(&["check", "--read-data"]);
    assert_eq!(check["problems"].as_array().unwrap().len(), 0, "{check}");
}

#[test]
fn a_large_directory_stored_in_parts_is_copied_whole() {
    let env = TestEnv::new();
    for i in 0..2_500 {
        write(&env.work(), &format!("many/f{i:04}.txt"), format!("file {i}\n"));
    }
    env.ok(&["save", "--name", "first"]);
    write(&env.work(), "many/f0100.txt", "changed\n");
    env.ok(&["save", "--name", "second"]);
    let other = env.root().join("other-store");
    let first = env.json(&["copy", "--to", other.to_str().unwrap()]);
    assert_eq!(first["snapshots_copied"], 2, "{first}");

    let copied = TestEnv::new().with_store(other.to_str().unwrap());
    let check = copied.json(&["check", "--read-data"]);
    assert_eq!(check["problems"].as_array().unwrap().len(), 0, "{check}");
    let out = env.root().join("restored");
    copied.ok(&["restore", "second", "--to", out.to_str().unwrap()]);
    assert_eq!(common::describe(&out), common::describe(&env.work()));
}

#[test]
fn a_copy_prints_what_it_sent_and_refuses_a_name_held_by_another_snapshot() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    env.ok(&["save", "--name", "one"]);
    // Another store, under this test's folder, whose own snapshot of the tree holds "one".
    let to = env.root().join("other");
    let other = TestEnv::new().with_store(to.as_os_str());
    other.ok(&["save", env.work().to_str().unwrap(), "--name", "one"]);
    let to_arg = to.to_str().unwrap();
    let from = env.store();
    assert_cli!(
        env,
        "copy_refusals",
        [
            ["copy", "one", "--to", to_arg],
            ["copy", "nothing-by-this-name", "--to", to_arg],
            ["copy", "one", "--to", from.to_str().unwrap()],
            ["copy", "one"],
        ]
    );
    let listed = other.json(&["list"]);
    assert_eq!(listed["snapshots"].as_array().unwrap().len(), 1, "the refusal wrote nothing");

    let fresh = env.root().join("fresh");
    let fresh_arg = fresh.to_str().unwrap();
    assert_cli!(env, "copy_human", [["copy", "one", "--to", fresh_arg], ["copy", "one", "--to", fresh_arg]]);
}

/// A Pi session whose tool output holds a GitHub token.
fn pi_session_with_a_token(dir: &std::path::Path) -> std::path::PathBuf {
    let token = format!("ghp_{}", "a1B2".repeat(9));
    let path = dir.join("2025-01-10T09-00-00-000Z_0193a1f0.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"0193a1f0-4b2c-7d10-9e8f-1a2b3c4d5e6f","timestamp":"2025-01-10T09:00:00.000Z","cwd":"/home/a/proj"}"#.to_owned(),
        r#"{"type":"message","id":"a0000001","parentId":null,"timestamp":"2025-01-10T09:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"Hello."}],"timestamp":1736499601000}}"#.to_owned(),
        format!(
            r#"{{"type":"message","id":"a0000002","parentId":"a0000001","timestamp":"2025-01-10T09:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"the token is {token}"}}],"timestamp":1736499602000}}}}"#
        ),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn a_copy_to_a_remote_store_redacts_transcripts_unless_told_not_to_and_comes_back_whole() {
    let moto = Moto::start();
    moto.create_bucket("team");
    let laptop = with_aws(TestEnv::new(), &moto);
    write(&laptop.work(), "src/main.rs", "fn main() {}\n");
    laptop.ok(&["save", "--name", "base"]);
    let session = pi_session_with_a_token(laptop.root());
    laptop.ok(&["transcript", "save", session.to_str().unwrap(), "chat"]);
    let worker = machine(&moto, "s3://team/cairn");

    let remote = "s3://team/cairn";
    let sent = worker.json(&["copy", "--from", laptop.store().to_str().unwrap(), "base", "chat"]);
    assert_eq!(sent["snapshots_copied"], 2, "{sent}");
    assert_eq!(sent["redacted_entries"], 1, "{sent}");
    let bucket_text: String = {
        use cairn_lib::Backend;
        let backend = moto.backend("team", "cairn");
        backend
            .list("")
            .unwrap()
            .iter()
            .map(|k| String::from_utf8_lossy(&backend.get(k).unwrap()).into_owned())
            .collect()
    };
    assert!(!bucket_text.contains("ghp_a1B2"), "the token reached the bucket");

    // A second machine on the bucket sees both, the transcript with a marker for the token.
    let other = machine(&moto, remote);
    let out = other.root().join("chat.jsonl");
    other.ok(&["transcript", "export", "chat", "-o", out.to_str().unwrap()]);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("[REDACTED:github-token]"), "{text}");
    let restored = other.root().join("base");
    other.ok(&["restore", "base", "--to", restored.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(restored.join("src/main.rs")).unwrap(), "fn main() {}\n");

    // Opted out, into another prefix: the transcript goes as it is.
    let kept = laptop.json(&["copy", "chat", "--to", "s3://team/raw", "--no-redact"]);
    assert_eq!(kept["redacted_entries"], 0, "{kept}");

    // And back from the bucket into a new local store: the same list as the worker's.
    let home = TestEnv::new();
    let back = worker.json(&["copy", "--to", home.store().to_str().unwrap()]);
    assert_eq!(back["snapshots_copied"], 2, "{back}");
    assert_eq!(listing(&home, "baseline"), listing(&worker, "baseline"));
    let check = home.json(&["check", "--read-data"]);
    assert_eq!(check["problems"].as_array().unwrap().len(), 0, "{check}");
}
