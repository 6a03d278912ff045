//! What reading a remote store costs, counted by `scripts/s3-fault-proxy` in front of a real
//! S3 server (`moto_server`): `check --read-data` reads each pack once, whole, and nothing
//! again with a warm pack cache; the packs a save uploads enter the pack cache, so a restore on
//! the machine that saved fetches no data; a pack above the multipart threshold goes up in
//! parts, each retried on its own; and a copy between two encrypted stores takes the
//! destination's own password.

mod common;

use std::path::Path;

use cairn_lib::Backend;
use cairn_test_support::{FaultProxy as Proxy, Moto};
use common::{TestEnv, write};
use serde_json::{Value, json};

/// A machine (its own HOME, so its own caches) on `s3://team/cairn` through the proxy.
fn machine(proxy: &Proxy) -> TestEnv {
    TestEnv::new()
        .with_store("s3://team/cairn")
        .with_var("CAIRN_PASSWORD", "the fleet's password")
        .with_var("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{}", proxy.port))
        .with_var("AWS_ALLOW_HTTP", "true")
        .with_var("AWS_ACCESS_KEY_ID", "test")
        .with_var("AWS_SECRET_ACCESS_KEY", "test")
        .with_var("AWS_REGION", "us-east-1")
}

fn setup() -> (Moto, Proxy, TestEnv) {
    let moto = Moto::start();
    moto.create_bucket("team");
    let proxy = Proxy::start(&moto);
    let env = machine(&proxy);
    (moto, proxy, env)
}

/// Empties every pack cache below `root` (the machine's HOME and caches).
fn clear_pack_caches(root: &Path) {
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

fn packs_in(moto: &Moto) -> u64 {
    moto.backend("team", "cairn").list("packs/").unwrap().iter().filter(|k| k.ends_with(".pack")).count()
        as u64
}

/// Requests of one run of `args`, with the count of those whose line contains `what`.
fn counted(env: &TestEnv, proxy: &Proxy, what: &str, args: &[&str]) -> (Value, String) {
    proxy.count_matching(what);
    let out = env.ok(args);
    (proxy.stats(), out)
}

#[test]
fn check_read_data_reads_each_pack_once_whole_and_nothing_again_with_a_warm_cache() {
    let (moto, proxy, env) = setup();
    // Several packs (each about 16 MiB; the noise does not compress) and 60 directories.
    for i in 0..300 {
        write(&env.work(), &format!("d{}/f{i}.bin", i % 60), common::noise(150_000, 2 * i + 1));
    }
    env.ok(&["save"]);
    let packs = packs_in(&moto);
    assert!(packs >= 2, "{packs} packs");
    clear_pack_caches(env.root());

    let pack_gets = "GET /team/cairn/packs/";
    let (cold, out) = counted(&env, &proxy, pack_gets, &["check", "--read-data", "--json"]);
    let check: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(check["problems"], json!([]), "{check}");
    assert!(check["objects_read"].as_u64().unwrap() >= 300, "{check}");
    // One GET per pack, and no request per blob or per tree.
    assert_eq!(cold["faults_applied"], packs, "{cold}");
    assert!(cold["requests"].as_u64().unwrap() <= packs + 16, "{cold}");

    let (warm, _) = counted(&env, &proxy, pack_gets, &["check", "--read-data", "--json"]);
    assert_eq!(warm["faults_applied"], 0, "the warm cache serves every pack: {warm}");
    assert_eq!(
        warm["requests"].as_u64().unwrap() + packs,
        cold["requests"].as_u64().unwrap(),
        "{warm} vs {cold}"
    );

    // A damaged blob in a cached pack is the cache's fault, not the bucket's: the pack is
    // fetched again and the check passes.
    damage_cache_files(env.root());
    let (again, out) = counted(&env, &proxy, pack_gets, &["check", "--read-data", "--json"]);
    let check: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(check["problems"], json!([]), "{check}");
    assert_eq!(again["faults_applied"], packs, "{again}");
}

/// Flips a byte in the middle of every cached range.
fn damage_cache_files(root: &Path) {
    for entry in std::fs::read_dir(root).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            damage_cache_files(&path);
        } else if path.parent().is_some_and(|p| p.ends_with("pack-cache")) {
            let mut bytes = std::fs::read(&path).unwrap();
            let middle = bytes.len() / 2;
            bytes[middle] ^= 0xff;
            std::fs::write(&path, bytes).unwrap();
        }
    }
}

#[test]
fn the_packs_a_save_uploads_are_cached_so_a_restore_on_that_machine_fetches_no_data() {
    let (moto, proxy, env) = setup();
    for i in 0..120 {
        write(&env.work(), &format!("d{}/f{i}.rs", i % 12), format!("pub fn f{i}() {{}}\n").repeat(40));
    }
    env.ok(&["save"]);
    assert!(packs_in(&moto) >= 1);
    let pack_gets = "GET /team/cairn/packs/";
    let out = env.root().join("restored");
    let (warm, _) = counted(&env, &proxy, pack_gets, &["restore", "latest", "--to", out.to_str().unwrap()]);
    assert_eq!(warm["faults_applied"], 0, "no pack is fetched: {warm}");
    assert_eq!(common::describe(&out.join("d0")), common::describe(&env.work().join("d0")));

    // Without the cache, the same restore fetches each pack whole, once.
    clear_pack_caches(env.root());
    let cold_out = env.root().join("restored-cold");
    let (cold, _) =
        counted(&env, &proxy, pack_gets, &["restore", "latest", "--to", cold_out.to_str().unwrap()]);
    assert_eq!(cold["faults_applied"], packs_in(&moto), "{cold}");
    assert_eq!(common::describe(&cold_out), common::describe(&out));
}

#[test]
fn a_pack_above_the_multipart_threshold_goes_up_in_parts_each_retried_on_its_own() {
    let (moto, proxy, env) = setup();
    let env = env.with_var("AWS_MULTIPART_THRESHOLD", "6MB").with_var("AWS_MULTIPART_CHUNKSIZE", "5MB");
    write(&env.work(), "small.txt", "small\n");
    env.ok(&["save"]);
    let before = packs_in(&moto);
    for i in 0..12 {
        write(&env.work(), &format!("big/f{i}.bin"), common::noise(1_000_000, 2 * i + 201));
    }
    // The second part fails once with a 500 and the connection of the third drops once: only
    // those parts are sent again.
    proxy.call("POST", "reset", "");
    proxy.faults(json!([
        {"match": "partNumber=2&", "action": "fail", "status": 500, "count": 1},
        {"match": "partNumber=3&", "action": "drop", "count": 1},
    ]));
    env.ok(&["save"]);
    let stats = proxy.stats();
    proxy.faults(json!([]));
    assert_eq!(stats["faults_applied"], 2, "{stats}");
    // One pack of 12 MB: the create and the completion (POSTs), three parts and the two
    // retried, the record; a look first (HEAD), since a completion cannot be create-only.
    assert_eq!(stats["by_method"]["POST"], 2, "{stats}");
    assert_eq!(stats["by_method"]["PUT"], 3 + 2 + 1, "{stats}");
    assert_eq!(packs_in(&moto), before + 1);
    let sizes = moto.backend("team", "cairn").list_sizes("packs/").unwrap();
    assert!(sizes.iter().any(|(_, size)| *size > 12_000_000), "{sizes:?}");

    // Read back by another machine, with no cache of its own.
    let other = machine(&proxy);
    let check = other.json(&["check", "--read-data"]);
    assert_eq!(check["problems"], json!([]), "{check}");
    let out = other.root().join("restored");
    let id = env.json(&["list"])["snapshots"][0]["id"].as_str().unwrap().to_owned();
    other.ok(&["restore", &id, "--to", out.to_str().unwrap()]);
    assert_eq!(common::describe(&out), common::describe(&env.work()));
}

#[test]
fn a_copy_between_two_encrypted_stores_takes_the_destination_password() {
    let source = TestEnv::new().with_var("CAIRN_PASSWORD", "source password");
    source.ok(&["init", "--encrypt"]);
    let to = source.root().join("to");
    let to_s = to.to_str().unwrap().to_owned();
    let destination = TestEnv::new().with_store(&to).with_var("CAIRN_PASSWORD", "destination password");
    destination.ok(&["init", "--encrypt"]);
    source.write("src/a.rs", "fn a() {}\n");
    source.ok(&["save", "--name", "base"]);

    // The source's password does not open the destination, and the refusal names it.
    let refused = source.run(&["copy", "base", "--to", &to_s]);
    assert_ne!(refused.code, 0, "{}", refused.stdout);
    assert!(
        refused.stderr.contains("does not unlock") && refused.stderr.contains(&to_s),
        "{}",
        refused.stderr
    );

    // --to-password-file, or CAIRN_TO_PASSWORD.
    let file = source.root().join("to-password");
    std::fs::write(&file, "destination password\n").unwrap();
    let copied = source.json(&["copy", "base", "--to", &to_s, "--to-password-file", file.to_str().unwrap()]);
    assert_eq!(copied["snapshots_copied"], 1, "{copied}");
    let source = source.with_var("CAIRN_TO_PASSWORD", "destination password");
    let again = source.json(&["copy", "base", "--to", &to_s]);
    assert_eq!(again["snapshots_present"], 1, "{again}");
    let listed = destination.json(&["list"]);
    assert_eq!(listed["snapshots"][0]["name"], "base", "{listed}");
    // The source still opens with its own password only.
    assert_eq!(source.json(&["list"])["snapshots"][0]["name"], "base");
}
