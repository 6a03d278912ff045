//! A power cut after a save reported its snapshot: the catalog's last commits are not flushed
//! on their own (the snapshot's packs and record are), so the cut may take them back, and the
//! first command after the reboot must bring back every snapshot and moment it reported,
//! whole, without `cairn repair`; a removal stays a removal.
//!
//! A test cannot cut the power of the machine it runs on. It does what a cut does to the
//! catalog: puts back the catalog's database and write-ahead log as they were on disk before
//! the last commits (with no shared-memory index, as after a reboot), and says the machine is
//! in a new boot (`CAIRN_FAULT_BOOT_ID`, which debug builds take instead of the kernel's).

mod common;

use std::path::{Path, PathBuf};

use common::{TestEnv, describe};

/// Runs `cairn ARGS --json` as if the machine were in boot `boot`; returns its result.
fn json_in(env: &TestEnv, boot: &str, args: &[&str]) -> serde_json::Value {
    let out = env.command(&[&["--json"], args].concat()).env("CAIRN_FAULT_BOOT_ID", boot).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{args:?} failed: {}{stdout}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// The catalog's files on disk, as a power cut would find them.
struct CatalogOnDisk(Vec<(PathBuf, Option<Vec<u8>>)>);

impl CatalogOnDisk {
    fn take(store: &Path) -> Self {
        let files = ["catalog.db", "catalog.db-wal"].map(|name| {
            let path = store.join(name);
            let bytes = std::fs::read(&path).ok();
            (path, bytes)
        });
        Self(files.into())
    }

    /// Puts the files back as they were taken; the shared-memory index does not survive a cut.
    fn put_back(&self, store: &Path) {
        for (path, bytes) in &self.0 {
            match bytes {
                Some(bytes) => std::fs::write(path, bytes).unwrap(),
                None => drop(std::fs::remove_file(path)),
            }
        }
        let _ = std::fs::remove_file(store.join("catalog.db-shm"));
    }
}

fn snapshot_ids(list: &serde_json::Value) -> Vec<String> {
    let mut ids: Vec<String> =
        list["snapshots"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_owned()).collect();
    ids.sort();
    ids
}

#[test]
fn a_power_cut_that_takes_back_the_catalogs_last_commits_loses_no_snapshot_or_moment_a_save_reported() {
    let env = TestEnv::new();
    let other = env.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("config.toml"), "port = 1\n").unwrap();
    env.write("src/main.rs", "fn main() {}\n");
    env.write("data.bin", common::noise(200_000, 1));
    let first = json_in(&env, "boot-1", &["save"]);
    let first = first["id"].as_str().unwrap().to_owned();
    let before_cut = CatalogOnDisk::take(&env.store());

    // Two more saves and a moment, each reported; new data, so new packs too.
    env.write("src/lib.rs", "pub fn f() -> u32 { 2 }\n");
    env.write("data.bin", common::noise(300_000, 2));
    let named = json_in(&env, "boot-1", &["save", "--name", "second"]);
    let second_tree = describe(&env.work());
    env.write("src/lib.rs", "pub fn f() -> u32 { 3 }\n");
    std::fs::write(other.join("config.toml"), "port = 2\n").unwrap();
    let other_arg = other.to_str().unwrap();
    let moment = json_in(&env, "boot-1", &["moment", "save", ".", other_arg, "--name", "both"]);
    let third_tree = describe(&env.work());
    let reported = snapshot_ids(&json_in(&env, "boot-1", &["list"]));
    assert_eq!(reported.len(), 4, "two saves and the moment's two parts: {reported:?}");
    assert_eq!(
        std::fs::read_to_string(env.store().join("catalog.boot")).unwrap().trim(),
        "boot-1",
        "the boot is noted before the first commit left unflushed"
    );

    before_cut.put_back(&env.store());
    // In the same boot nothing is looked for: the catalog did lose the commits.
    assert_eq!(snapshot_ids(&json_in(&env, "boot-1", &["list"])), vec![first.clone()]);

    // After the reboot, the first command brings every reported snapshot and the moment back.
    assert_eq!(snapshot_ids(&json_in(&env, "boot-2", &["list"])), reported);
    assert_eq!(std::fs::read_to_string(env.store().join("catalog.boot")).unwrap().trim(), "boot-2");
    let shown = json_in(&env, "boot-2", &["show", "second"]);
    assert_eq!(shown["id"], named["id"], "the name came back with the snapshot");
    let moments = json_in(&env, "boot-2", &["moment", "list"]);
    let moments = moments["moments"].as_array().expect("moments");
    assert_eq!(moments.len(), 1, "{moments:?}");
    assert_eq!(moments[0]["id"], moment["moment"]["id"]);

    // Whole: gc keeps their data, and each restores byte for byte.
    json_in(&env, "boot-2", &["gc", "--now"]);
    let check = json_in(&env, "boot-2", &["check", "--read-data"]);
    assert_eq!(check["problems"].as_array().map(Vec::len), Some(0), "{check}");
    let parts = &moment["moment"]["parts"];
    let other_tree = describe(&other);
    let work_part = parts[0]["snapshot"].as_str().unwrap();
    let other_part = parts[1]["snapshot"].as_str().unwrap();
    for (reference, tree) in [("second", &second_tree), (work_part, &third_tree), (other_part, &other_tree)] {
        let to = env.root().join(format!("restored-{reference}"));
        json_in(&env, "boot-2", &["restore", reference, "--to", to.to_str().unwrap()]);
        assert_eq!(&describe(&to), tree, "{reference}");
    }
}

#[test]
fn a_snapshot_removed_before_a_power_cut_stays_removed_after_it() {
    let env = TestEnv::new();
    env.write("a.txt", "one\n");
    json_in(&env, "boot-1", &["save"]);
    env.write("a.txt", "two\n");
    let second = json_in(&env, "boot-1", &["save"]);
    let second = second["id"].as_str().unwrap().to_owned();
    // A remove killed after its commit, before it deleted the record object.
    let record = env.store().join(format!("objects/records/{second}.json"));
    let bytes = std::fs::read(&record).unwrap();
    json_in(&env, "boot-1", &["remove", &second]);
    std::fs::write(&record, bytes).unwrap();
    let kept = snapshot_ids(&json_in(&env, "boot-1", &["list"]));
    assert_eq!(kept.len(), 1);

    // The removal was flushed; the reboot finds its record in the store and leaves it out,
    // and gc deletes the record on the catalog's word.
    assert_eq!(snapshot_ids(&json_in(&env, "boot-2", &["list"])), kept);
    let gc = json_in(&env, "boot-2", &["gc", "--now"]);
    assert_eq!(gc["records_removed"], 1, "{gc}");
    assert!(gc.get("kept").is_none(), "{gc}");
}
