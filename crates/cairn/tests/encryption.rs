//! Encrypted stores through the real binary: `cairn init` (twice), `cairn key add|list|remove`,
//! a wrong password and a missing one, on a real S3-compatible server on loopback
//! (`moto_server`), and an encrypted store in a local directory.

mod common;

use cairn_test_support::Moto;
use common::{TestEnv, write};

/// A machine using `s3://BUCKET/PREFIX` on `moto`, with `vars` (its passwords) set.
fn machine(moto: &Moto, address: &str, vars: &[(&str, &str)]) -> TestEnv {
    let mut env = TestEnv::new().with_store(address);
    for (k, v) in moto.env() {
        env = env.with_var(k, v);
    }
    for (k, v) in vars {
        env = env.with_var(*k, *v);
    }
    env
}

#[test]
fn init_twice_then_keys_added_and_removed() {
    let moto = Moto::start();
    moto.create_bucket("keys");
    let first =
        machine(&moto, "s3://keys/store", &[("CAIRN_PASSWORD", "first"), ("CAIRN_NEW_PASSWORD", "second")]);
    assert_cli!(
        first,
        "encryption_init_twice_and_key_add",
        [["init"], ["init"], ["key", "add", "--label", "laptop"], ["key", "list"]]
    );
    write(&first.work(), "notes.txt", "kept\n");
    first.ok(&["save", "--name", "kept"]);
    let first_key = first.json(&["key", "list"])["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["current"] == true)
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // Another machine, with the second password, removes the first key.
    let second = machine(&moto, "s3://keys/store", &[("CAIRN_PASSWORD", "second")]);
    second.ok(&["key", "remove", &first_key]);
    assert_eq!(second.json(&["list"])["snapshots"].as_array().unwrap().len(), 1);
    let left = second.json(&["key", "list"])["keys"].as_array().unwrap().clone();
    let last = left[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(left.len(), 1);
    assert_cli!(second, "encryption_last_key_is_kept", [["key", "remove", &last]]);
    assert_cli!(first, "encryption_removed_password", [["list"]]);
}

#[test]
fn a_remote_store_without_a_password_or_a_terminal_says_what_to_set() {
    let moto = Moto::start();
    moto.create_bucket("nopw");
    let env = machine(&moto, "s3://nopw/store", &[]);
    env.write("a.txt", "a\n");
    assert_cli!(env, "encryption_no_password", [["save"]]);
    let made = machine(&moto, "s3://nopw/store", &[("CAIRN_PASSWORD", "pw")]);
    made.ok(&["init"]);
    assert_cli!(env, "encryption_no_password_to_unlock", [["list"]]);
}

#[test]
fn a_password_file_and_a_key_file_unlock_too() {
    let moto = Moto::start();
    moto.create_bucket("files");
    let env = machine(&moto, "s3://files/store", &[("CAIRN_PASSWORD", "typed")]);
    env.ok(&["init"]);
    let key_file = env.root().join("key.bin");
    std::fs::write(&key_file, common::noise(64, 7)).unwrap();
    env.ok(&["key", "add", "--key-file", key_file.to_str().unwrap()]);
    let password_file = env.root().join("password.txt");
    std::fs::write(&password_file, "typed\n").unwrap();
    let by_file =
        machine(&moto, "s3://files/store", &[("CAIRN_PASSWORD_FILE", password_file.to_str().unwrap())]);
    assert_eq!(by_file.json(&["key", "list"])["keys"].as_array().unwrap().len(), 2);
    let by_key = machine(&moto, "s3://files/store", &[("CAIRN_KEY_FILE", key_file.to_str().unwrap())]);
    let listed = by_key.json(&["key", "list"]);
    let current = listed["keys"].as_array().unwrap().iter().find(|k| k["current"] == true).unwrap().clone();
    assert_eq!(current["kind"], "key_file");
}

#[test]
fn an_encrypted_local_store_holds_objects_only_and_restores() {
    let env = TestEnv::new().with_var("CAIRN_PASSWORD", "local");
    env.write("secret-plans.txt", "the plans\n");
    assert_cli!(env, "encryption_local_init", [["init", "--encrypt"], ["init"], ["save", "--name", "one"]]);
    let mut top: Vec<String> = std::fs::read_dir(env.store())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(top, ["cairn-store.json", "keys", "names", "packs", "records", "tmp"]);
    let out = env.root().join("out");
    env.ok(&["restore", "one", "--to", out.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(out.join("secret-plans.txt")).unwrap(), "the plans\n");
    let plain = TestEnv::new();
    plain.write("a.txt", "a\n");
    assert_cli!(plain, "encryption_key_on_a_plain_store", [["save"], ["key", "list"]]);
}
