//! `cairn watch` through the real binary: saves trust its journal, and when the kernel's event
//! queue overflows (the watcher stopped while 20,000 files appear) the next save walks the whole
//! tree, says why, and is exact; the save after it trusts the journal again.

mod common;

use common::TestEnv;

/// The journal report of a `cairn save --json`.
fn journal(save: &serde_json::Value) -> serde_json::Value {
    save["stats"]["change_journal"].clone()
}

/// The watcher process, killed when the test ends however it ends.
struct Watcher(std::process::Child);

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn signal(pid: u32, sig: &str) {
    let status = std::process::Command::new("kill").args([sig, &pid.to_string()]).status().unwrap();
    assert!(status.success(), "kill {sig} {pid}");
}

#[test]
fn a_queue_overflow_makes_the_next_save_walk_and_it_is_exact() {
    let env = TestEnv::new();
    env.write("src/main.rs", "fn main() {}\n");
    let work = env.work().display().to_string();
    assert_eq!(env.json(&["watch", "--status"])["running"], false, "no store, no watcher");
    // The store exists before the watcher and the saves open it at once.
    env.ok(&["save", &work]);
    let watcher = Watcher(env.process(&["watch", &work]).spawn().unwrap());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while env.json(&["watch", "--status"])["running"] != true {
        assert!(std::time::Instant::now() < deadline, "the watcher did not answer");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }

    let first = env.json(&["save", &work]);
    assert_eq!(journal(&first)["used"], false, "the first save walks: {first}");
    let second = env.json(&["save", &work]);
    assert_eq!(journal(&second)["used"], true, "{second}");
    assert_eq!(journal(&second)["dirs_listed"], 0, "nothing changed: {second}");

    // Stopped, the watcher reads nothing while the kernel's queue (16,384 events by default)
    // fills and overflows.
    let limit: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(16_384);
    std::fs::create_dir_all(env.work().join("many")).unwrap();
    // Watched before the watcher stops (a status reads every queued event first), so the files
    // made in it then are events that fill the queue.
    let watched = |env: &TestEnv| env.json(&["watch", "--status"])["roots"][0]["dirs"].clone();
    while watched(&env) != 3 {
        assert!(std::time::Instant::now() < deadline, "many/ is not watched");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    signal(watcher.0.id(), "-STOP");
    for i in 0..limit + 2_000 {
        std::fs::write(env.work().join(format!("many/{i}")), b"x").unwrap();
    }
    signal(watcher.0.id(), "-CONT");

    let walked = env.json(&["save", &work]);
    let report = journal(&walked);
    assert_eq!(report["used"], false, "{walked}");
    assert!(report["reason"].as_str().unwrap_or_default().contains("overflowed"), "{report}");
    assert_eq!(walked["stats"]["files"], (limit + 2_000 + 1) as u64, "every file is in the snapshot");

    let edited = "fn main() { println!(\"after\"); }\n";
    std::fs::write(env.work().join("src/main.rs"), edited).unwrap();
    let after = env.json(&["save", &work]);
    assert_eq!(journal(&after)["used"], true, "the journal is trusted again: {after}");
    assert_eq!(after["stats"]["files"], (limit + 2_000 + 1) as u64);
    assert_eq!(after["stats"]["read_bytes"], edited.len() as u64, "only the edited file is read: {after}");

    env.ok(&["watch", "--stop"]);
    let mut watcher = watcher;
    let status = watcher.0.wait().unwrap();
    assert!(status.success(), "the watcher stopped cleanly: {status}");
    assert_eq!(env.json(&["watch", "--status"])["running"], false);
}

#[test]
fn a_watcher_ends_when_its_store_is_deleted() {
    let env = TestEnv::new();
    env.write("a.txt", "a\n");
    let work = env.work().display().to_string();
    env.ok(&["save", &work]);
    let mut watcher = Watcher(env.process(&["watch", &work]).spawn().unwrap());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while env.json(&["watch", "--status"])["running"] != true {
        assert!(std::time::Instant::now() < deadline, "the watcher did not answer");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::fs::remove_dir_all(env.store()).unwrap();
    // It looks every two seconds; give it a few.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if let Some(status) = watcher.0.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the watcher outlived its store");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
