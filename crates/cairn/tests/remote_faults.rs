//! A remote store behind a faulty network: the real binary talks to a real S3 server
//! (`moto_server`) through `scripts/s3-fault-proxy`, which answers 500s, drops connections,
//! slows or holds answers, and counts requests. Saves and restores succeed by retrying, or
//! fail in one line with nothing half-visible; a command killed with SIGKILL while an upload
//! or a gc delete is in flight loses nothing committed, the next command cleans up, and
//! `check --read-data` passes. The same proxy counts what saves and restores cost in requests.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use cairn_test_support::fixtures::read_tree;
use cairn_test_support::{FaultProxy, Moto};
use common::{TestEnv, write};
use serde_json::{Value, json};

/// A machine on `s3://team/cairn` reached through the proxy.
fn machine(proxy: &FaultProxy) -> TestEnv {
    TestEnv::new()
        .with_store("s3://team/cairn")
        .with_var("CAIRN_PASSWORD", "the fleet's password")
        .with_var("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{}", proxy.port))
        .with_var("AWS_ALLOW_HTTP", "true")
        .with_var("AWS_ACCESS_KEY_ID", "test")
        .with_var("AWS_SECRET_ACCESS_KEY", "test")
        .with_var("AWS_REGION", "us-east-1")
}

fn setup() -> (Moto, FaultProxy, TestEnv) {
    let moto = Moto::start();
    moto.create_bucket("team");
    let proxy = FaultProxy::start(&moto);
    let env = machine(&proxy);
    for i in 0..40 {
        write(&env.work(), &format!("src/m{i}.rs"), format!("pub fn f{i}() -> u32 {{ {i} }}\n").repeat(50));
    }
    (moto, proxy, env)
}

fn assert_checks(env: &TestEnv) {
    let check = env.json(&["check", "--read-data"]);
    assert_eq!(check["problems"].as_array().unwrap().len(), 0, "{check}");
}

fn restores_exactly(env: &TestEnv, reference: &str, expected: &[(PathBuf, Vec<u8>)], into: &str) {
    let out = env.root().join(into);
    env.ok(&["restore", reference, "--to", out.to_str().unwrap()]);
    assert!(read_tree(&out) == expected, "{reference} restores exactly");
}

#[test]
fn saves_and_restores_through_500s_dropped_connections_and_slow_answers_succeed() {
    let (_moto, proxy, env) = setup();
    env.ok(&["save", "--name", "first"]);
    proxy.faults(json!([
        {"match": "PUT", "action": "fail", "status": 500, "count": 2},
        {"match": "PUT", "action": "drop", "count": 1},
        {"match": "GET", "action": "fail", "status": 503, "count": 2},
        {"match": "GET", "action": "drop", "count": 2},
        {"match": "", "action": "delay", "ms": 150, "count": 5},
    ]));
    write(&env.work(), "src/m1.rs", "changed\n");
    env.ok(&["save", "--name", "second"]);
    let out = env.root().join("restored");
    env.ok(&["restore", "second", "--to", out.to_str().unwrap()]);
    assert_eq!(common::describe(&out), common::describe(&env.work()), "the restore is exact");
    let stats = proxy.stats();
    assert_eq!(stats["faults_applied"], 12, "every fault was met: {stats}");
    proxy.faults(json!([]));
    assert_checks(&env);
}

#[test]
fn a_save_against_a_failing_server_fails_in_one_line_and_leaves_nothing_half_visible() {
    let (_moto, proxy, env) = setup();
    let env = env.with_var("AWS_MAX_ATTEMPTS", "2");
    env.ok(&["save", "--name", "first"]);
    write(&env.work(), "src/new.rs", "fn new() {}\n");
    proxy.faults(json!([{"match": "/records/", "action": "fail", "status": 500, "count": -1}]));
    let err = env.fails(&["save", "--name", "second"], 1);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("error: could not reach s3://team/cairn/records/"), "{err}");
    proxy.faults(json!([]));
    let names: Vec<String> = env.json(&["list"])["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(names, ["first"], "the failed save is not visible");
    assert_checks(&env);
    env.ok(&["save", "--name", "second"]);
    assert_checks(&env);
}

#[test]
fn a_save_killed_during_an_upload_loses_nothing_and_the_next_command_cleans_up() {
    let (_moto, proxy, env) = setup();
    env.ok(&["save", "--name", "first"]);
    let first = read_tree(&env.work());
    write(&env.work(), "src/big.bin", common::noise(3 << 20, 7));

    proxy.faults(json!([{"match": "PUT /team/cairn/packs/", "action": "hold", "count": 1}]));
    let mut save = env.process(&["save", "--name", "second"]).spawn().unwrap();
    proxy.wait_in_flight("PUT /team/cairn/packs/");
    save.kill().unwrap();
    save.wait().unwrap();
    proxy.release();

    assert_eq!(env.json(&["list"])["snapshots"].as_array().unwrap().len(), 1, "only the committed one");
    assert_checks(&env);
    env.ok(&["save", "--name", "second"]);
    restores_exactly(&env, "first", &first, "restored-first");

    // Killed after a pack was published and before it was indexed: the next open indexes it.
    write(&env.work(), "src/late.rs", "fn late() {}\n");
    let killed =
        env.command(&["save", "--name", "third"]).env("CAIRN_FAULT_KILL_AT", "pack-published").output();
    assert!(!killed.unwrap().status.success(), "the fault point killed the save");
    assert_eq!(env.json(&["list"])["snapshots"].as_array().unwrap().len(), 2);
    env.ok(&["save", "--name", "third"]);
    assert_checks(&env);
}

#[test]
fn a_gc_killed_while_it_deletes_leaves_a_consistent_store_that_the_next_gc_finishes() {
    let (_moto, proxy, env) = setup();
    env.ok(&["config", "set", "gc.grace", "1s"]);
    env.ok(&["save", "--name", "keep"]);
    let kept = read_tree(&env.work());
    write(&env.work(), "big.bin", common::noise(2 << 20, 3));
    env.ok(&["save", "--name", "doomed"]);
    std::fs::remove_file(env.work().join("big.bin")).unwrap();
    // A save after the file went, so no stat cache refers to it either.
    env.ok(&["save", "--name", "after"]);
    env.ok(&["remove", "doomed"]);
    std::thread::sleep(Duration::from_millis(2100));
    let marked = env.json(&["gc"]);
    assert_eq!(marked["packs_removed"], 0, "the first gc only marks: {marked}");
    std::thread::sleep(Duration::from_millis(2100));

    // object_store deletes with S3's multi-object delete: `POST /BUCKET?delete`.
    proxy.faults(json!([{"match": "?delete", "action": "hold", "count": 1}]));
    let mut gc = env.process(&["gc"]).spawn().unwrap();
    proxy.wait_in_flight("?delete");
    gc.kill().unwrap();
    gc.wait().unwrap();
    proxy.release();

    assert_checks(&env);
    restores_exactly(&env, "keep", &kept, "restored-before");
    let finished = env.json(&["gc"]);
    assert!(finished["packs_removed"].as_u64().unwrap() <= 1, "{finished}");
    let objects = proxy.stats();
    assert_eq!(objects["in_flight"].as_array().unwrap().len(), 0);
    assert_checks(&env);
    restores_exactly(&env, "keep", &kept, "restored-after");
}

/// Requests of one run of `args`, by method, counted by the proxy.
fn requests_of(env: &TestEnv, proxy: &FaultProxy, args: &[&str]) -> Value {
    proxy.call("POST", "reset", "");
    env.ok(args);
    proxy.stats()
}

#[test]
fn a_no_change_save_costs_the_same_requests_at_any_size_and_a_second_restore_fetches_no_data() {
    let (_moto, proxy, env) = setup();
    env.ok(&["save"]);
    let small = requests_of(&env, &proxy, &["save"]);
    for i in 0..400 {
        write(&env.work(), &format!("more/d{}/f{i}.txt", i % 20), format!("file {i}\n").repeat(20));
    }
    env.ok(&["save"]);
    let large = requests_of(&env, &proxy, &["save"]);
    assert_eq!(small["requests"], large["requests"], "no-change saves: {small} vs {large}");
    assert!(small["requests"].as_u64().unwrap() <= 12, "a handful of requests: {small}");

    for i in 0..20 {
        write(&env.work(), &format!("more/d{i}/f{i}.txt"), format!("changed {i}\n"));
    }
    let changed = requests_of(&env, &proxy, &["save"]);
    // One pack of the changed files and their trees, and the record.
    assert_eq!(changed["by_method"]["PUT"], 2, "{changed}");

    // The packs the saves uploaded are in this machine's pack cache: emptied, so the first
    // restore fetches them.
    clear_pack_caches(env.root());
    let out = env.root().join("first-restore");
    let first = requests_of(&env, &proxy, &["restore", "latest", "--to", out.to_str().unwrap()]);
    let again_out = env.root().join("second-restore");
    let again = requests_of(&env, &proxy, &["restore", "latest", "--to", again_out.to_str().unwrap()]);
    // What opening the store costs (its sync, the session pointer), and nothing more: the data
    // comes from the cache. A dry run reads only trees, and they are cached by the first restore.
    let dry = env.root().join("dry");
    let opening =
        requests_of(&env, &proxy, &["restore", "latest", "--dry-run", "--to", dry.to_str().unwrap()]);
    assert!(first["requests"].as_u64() > opening["requests"].as_u64(), "{first} vs {opening}");
    assert_eq!(
        again["requests"], opening["requests"],
        "the second restore is served by the pack cache: {again}"
    );
    assert_eq!(common::describe(&again_out), common::describe(&out));
}

/// Empties every pack cache below `root` (the machine's HOME and caches).
fn clear_pack_caches(root: &std::path::Path) {
    for entry in std::fs::read_dir(root).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "pack-cache") {
                std::fs::remove_dir_all(&path).unwrap();
            } else {
                clear_pack_caches(&path);
            }
        }
    }
}
