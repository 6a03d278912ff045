//! Remote stores through the real binary: `--store s3://BUCKET/PREFIX` on a real S3-compatible
//! server on loopback (`moto_server`), two machines (two HOMEs, so two catalog caches) on one
//! bucket, and readers that must not create a store.

mod common;

use cairn_lib::Backend;
use cairn_test_support::Moto;
use common::{TestEnv, write};

/// A machine of its own (HOME, work tree, catalog cache) using `s3://BUCKET/PREFIX` on `moto`,
/// with the password that unlocks (and on first use makes) the encrypted store.
fn machine(moto: &Moto, address: &str) -> TestEnv {
    let env = TestEnv::new().with_store(address).with_var("CAIRN_PASSWORD", "the fleet's password");
    moto.env().into_iter().fold(env, |env, (k, v)| env.with_var(k, v))
}

#[test]
fn a_reader_on_a_missing_local_store_says_so_in_one_line_and_creates_nothing() {
    let env = TestEnv::new();
    for args in [&["list"][..], &["show", "latest"], &["check"], &["gc"]] {
        let err = env.fails(args, 1);
        assert_eq!(
            env.normalize(&err),
            "error: there is no store at [TMP]/store; run `cairn save`\n",
            "{args:?}"
        );
        assert!(!env.store().exists(), "{args:?} left a store behind");
    }
    env.write("a.txt", "a\n");
    env.ok(&["save"]);
    assert!(env.store().join("FORMAT").exists(), "save creates the store");
}

#[test]
fn a_reader_on_a_missing_remote_store_says_so_and_writes_nothing() {
    let moto = Moto::start();
    moto.create_bucket("empty");
    let env = machine(&moto, "s3://empty/none");
    let err = env.fails(&["list"], 1);
    assert_eq!(err, "error: there is no store at s3://empty/none; run `cairn save`\n");
    assert!(moto.backend("empty", "").list("").unwrap().is_empty(), "the bucket stays empty");
}

#[test]
fn a_second_machine_sees_what_the_first_committed() {
    let moto = Moto::start();
    moto.create_bucket("team");
    let a = machine(&moto, "s3://team/cairn");
    let b = machine(&moto, "s3://team/cairn");
    write(&a.work(), "src/main.rs", "fn main() {}\n");
    write(&a.work(), "README.md", "hello\n".repeat(1000));
    let first = a.json(&["save", "--name", "first"]);
    assert_eq!(first["stats"]["files"], 2);

    let listed = b.json(&["list"]);
    assert_eq!(listed["snapshots"].as_array().unwrap().len(), 1);
    assert_eq!(listed["snapshots"][0]["id"], first["id"]);
    let out = b.root().join("restored");
    b.ok(&["restore", "first", "--to", out.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(out.join("src/main.rs")).unwrap(), "fn main() {}\n");
    assert_eq!(common::describe(&out).len(), common::describe(&a.work()).len());

    // B forks; A sees the fork and saves into it; B sees that save.
    b.ok(&["session", "create", "worker", "--from", "baseline"]);
    let sessions = a.json(&["session", "list"]);
    let names: Vec<&str> =
        sessions["sessions"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"worker"), "{names:?}");
    write(&a.work(), "src/main.rs", "fn main() { println!(\"hi\"); }\n");
    a.ok(&["save", "--session", "worker", "--name", "second"]);
    assert_eq!(b.json(&["list", "--session", "worker"])["snapshots"].as_array().unwrap().len(), 2);

    // A removes from baseline; B sees it gone there and kept in the fork.
    a.ok(&["remove", "first"]);
    assert!(b.json(&["list"])["snapshots"].as_array().unwrap().is_empty());
    assert_eq!(b.json(&["list", "--session", "worker"])["snapshots"].as_array().unwrap().len(), 2);

    // A machine whose cache is deleted rebuilds it from the bucket.
    std::fs::remove_dir_all(b.home().join(".cache/cairn")).unwrap();
    assert_eq!(b.json(&["list", "--session", "worker"])["snapshots"].as_array().unwrap().len(), 2);
    let check = b.json(&["check", "--read-data"]);
    assert_eq!(check["problems"].as_array().unwrap().len(), 0, "{check}");
}
