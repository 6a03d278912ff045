//! `cairn watch` through the real binary: saves trust its journal, and when the kernel's event
//! queue overflows (the watcher stopped while 20,000 files appear) the next save walks the whole
//! tree, says why, and is exact; the save after it trusts the journal again. The watcher makes
//! the saves of its trees and their in-place restores as the command would, and the command
//! makes them itself when the watcher declines (an encrypted store, a command with other rights,
//! a refusal, a restore that is not a directory snapshot put back in place) or dies in the
//! middle of one.

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

/// Starts `cairn watch` on the work tree and waits until it answers.
fn start_watcher(env: &TestEnv) -> Watcher {
    let work = env.work().display().to_string();
    let watcher = Watcher(env.process(&["watch", &work]).spawn().unwrap());
    common::eventually("the watcher", || env.json(&["watch", "--status"])["running"] == true);
    watcher
}

/// The saves the running watcher made.
fn made_by_watcher(env: &TestEnv) -> u64 {
    env.json(&["watch", "--status"])["performed"].as_u64().expect("a count of saves")
}

/// The keys of a JSON object, and of each object inside it, as dotted paths.
fn shape(value: &serde_json::Value, prefix: &str, out: &mut Vec<String>) {
    if let serde_json::Value::Object(map) = value {
        for (key, inner) in map {
            let path = format!("{prefix}{key}");
            shape(inner, &format!("{path}."), out);
            out.push(path);
        }
    }
    out.sort();
}

#[test]
fn the_watcher_makes_the_saves_of_its_trees_as_the_command_would() {
    let env = TestEnv::new();
    env.write("src/main.rs", "fn main() {}\n");
    env.write("README.md", "hello\n");
    let unwatched = env.json(&["save", "--json"]);
    let _watcher = start_watcher(&env);
    assert_eq!(made_by_watcher(&env), 0);

    // The first save the watcher makes walks the tree; the next trusts its journal, asked in
    // the watcher's own process.
    let walked = env.json(&["save", "--json"]);
    assert_eq!(made_by_watcher(&env), 1, "the watcher made the save: {walked}");
    let (mut made, mut own) = (Vec::new(), Vec::new());
    shape(&walked, "", &mut made);
    shape(&unwatched, "", &mut own);
    own.retain(|k| !k.starts_with("stats.change_journal"));
    made.retain(|k| !k.starts_with("stats.change_journal"));
    assert_eq!(made, own, "the same fields as a save of the command's own");
    assert_eq!(walked["target"], unwatched["target"], "a relative target is the same directory");
    env.write("src/lib.rs", "pub fn f() {}\n");
    let journaled = env.json(&["save", "--json"]);
    assert_eq!(journal(&journaled)["used"], true, "{journaled}");
    assert_eq!(journaled["stats"]["files"], 3);
    assert_eq!(made_by_watcher(&env), 2);

    // The human words are the command's; the session pin is honored.
    env.ok(&["session", "create", "pinned"]);
    let pinned = |args: &[&str]| env.cairn(args).env("CAIRN_SESSION", "pinned").output().unwrap();
    let said = pinned(&["save", "--name", "first"]);
    let said = String::from_utf8_lossy(&said.stdout);
    assert!(said.starts_with("saved ") && said.contains(" (first) of "), "{said}");
    assert!(said.lines().nth(1).is_some_and(|l| l.trim_start().starts_with("3 files, 2 dirs")), "{said}");
    assert_eq!(made_by_watcher(&env), 3);
    let names = |session: &str| -> Vec<serde_json::Value> {
        let listed = env.json(&["list", "--session", session, "--json"]);
        listed["snapshots"].as_array().unwrap().iter().map(|s| s["name"].clone()).collect()
    };
    assert_eq!(names("pinned"), ["first"], "saved in the pinned session");
    assert!(!names("baseline").contains(&"first".into()));

    // A save the watcher cannot make is the command's, refusal and all.
    let refused = pinned(&["save", "--name", "first"]);
    assert_eq!(refused.status.code(), Some(1));
    let refused = String::from_utf8_lossy(&refused.stderr);
    assert!(refused.contains("already exists"), "{refused}");
    assert_eq!(made_by_watcher(&env), 3);

    // A setting changed while the watcher runs applies to its next save.
    env.ok(&["config", "set", "keep.recent", "1"]);
    let kept = env.json(&["save", "--json"]);
    assert_eq!(made_by_watcher(&env), 4);
    assert_eq!(kept["removed_by_policy"].as_array().map(Vec::len), Some(3), "the three before it: {kept}");
}

#[test]
fn the_watcher_makes_in_place_restores_as_the_command_would() {
    let env = TestEnv::new();
    env.write("src/main.rs", "fn main() {}\n");
    env.write("src/lib.rs", "pub fn f() {}\n");
    env.write("README.md", "hello\n");
    let first = env.json(&["save", "--json"]);
    let first = first["id"].as_str().unwrap().to_owned();
    let read = |rel: &str| std::fs::read_to_string(env.work().join(rel)).ok();
    let change = || {
        env.write("src/main.rs", "fn main() { changed() }\n");
        env.write("notes.txt", "new\n");
        std::fs::remove_file(env.work().join("README.md")).unwrap();
    };
    let restored = |r: &serde_json::Value| {
        assert_eq!(read("src/main.rs").as_deref(), Some("fn main() {}\n"), "{r}");
        assert_eq!(read("README.md").as_deref(), Some("hello\n"), "{r}");
        assert_eq!(read("notes.txt"), None, "{r}");
    };
    change();
    let own = env.json(&["restore", &first, "--json"]);
    restored(&own);
    let _watcher = start_watcher(&env);
    // The first save the watcher makes walks the tree; the restores after it trust its journal.
    env.ok(&["save"]);

    // Put back by the watcher, with the same result: a safety snapshot holding the change,
    // and the plan.
    change();
    let made = env.json(&["restore", &first, "--json"]);
    assert_eq!(made_by_watcher(&env), 2, "the watcher made the restore: {made}");
    restored(&made);
    let (mut shape_made, mut shape_own) = (Vec::new(), Vec::new());
    shape(&made, "", &mut shape_made);
    shape(&own, "", &mut shape_own);
    // The watcher's safety snapshot says how its journal served it.
    shape_made.retain(|k| !k.starts_with("safety_snapshot.stats.change_journal"));
    assert_eq!(shape_made, shape_own, "the same fields as a restore of the command's own");
    assert_eq!(made["safety_snapshot"]["stats"]["change_journal"]["used"], true, "{made}");
    assert_eq!(made["plan"], own["plan"]);
    assert_eq!((&made["files_written"], &made["destination"]), (&own["files_written"], &own["destination"]));
    let safety = made["safety_snapshot"]["id"].as_str().unwrap();
    let held = env.json(&["diff", &first, safety, "--json"]);
    assert_eq!(held["entries"].as_array().map(Vec::len), Some(3), "{held}");

    // The human words are the command's; paths are the shell's, relative to where it runs.
    change();
    let said = env.run_in(&env.work().join("src"), &["restore", &first, "--", "main.rs"]);
    assert_eq!(said.code, 0, "{}", said.stderr);
    assert!(
        said.stdout.starts_with("restored ") && said.stdout.contains("1 files written"),
        "{}",
        said.stdout
    );
    assert!(said.stdout.contains("safety snapshot of the previous state: "), "{}", said.stdout);
    assert_eq!(made_by_watcher(&env), 3);
    assert_eq!(read("src/main.rs").as_deref(), Some("fn main() {}\n"));
    assert_eq!(read("notes.txt").as_deref(), Some("new\n"), "only the path asked for goes back");

    // What is not a snapshot put back in place is the command's, refusals worded by it.
    let elsewhere = env.root().join("elsewhere");
    env.ok(&["restore", &first, "--to", elsewhere.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(elsewhere.join("README.md")).unwrap(), "hello\n");
    env.ok(&["restore", &first, "--dry-run"]);
    let refused = env.fails(&["restore", "nosuch"], 1);
    assert!(refused.contains("nosuch"), "{refused}");
    assert_eq!(made_by_watcher(&env), 3);
}

#[test]
fn a_watcher_killed_in_the_middle_of_a_save_leaves_the_command_to_make_it() {
    use std::os::unix::process::ExitStatusExt;
    // Fault points exist in debug builds only.
    if !cfg!(debug_assertions) {
        return;
    }
    let env = TestEnv::new();
    env.write("a.txt", "a\n");
    env.ok(&["save"]);
    let work = env.work().display().to_string();
    let mut watcher =
        Watcher(env.process(&["watch", &work]).env("CAIRN_FAULT_KILL_AT", "record-written").spawn().unwrap());
    common::eventually("the watcher", || env.json(&["watch", "--status"])["running"] == true);
    env.write("b.txt", "b\n");

    let saved = env.json(&["save", "--json"]);
    assert_eq!(saved["stats"]["files"], 2, "{saved}");
    let status = watcher.0.wait().unwrap();
    assert_eq!(status.signal(), Some(9), "the watcher died at its fault point: {status}");
    // The command's own snapshot, and nothing of the watcher's half-made one.
    let listed = env.json(&["list", "--json"]);
    assert_eq!(listed["snapshots"].as_array().map(Vec::len), Some(2), "{listed}");
    let check = env.json(&["check", "--read-data"]);
    assert_eq!(check["problems"], serde_json::json!([]), "{check}");
}

#[test]
fn a_watcher_killed_in_the_middle_of_a_restore_leaves_it_to_be_continued() {
    use std::os::unix::process::ExitStatusExt;
    // Fault points exist in debug builds only.
    if !cfg!(debug_assertions) {
        return;
    }
    let env = TestEnv::new();
    for i in 0..20 {
        env.write(&format!("f{i:02}.txt"), format!("A {i}\n"));
    }
    env.ok(&["save", "--name", "a"]);
    let work = env.work().display().to_string();
    let mut watcher = Watcher(
        env.process(&["watch", &work]).env("CAIRN_FAULT_KILL_AT", "restore-half-applied").spawn().unwrap(),
    );
    common::eventually("the watcher", || env.json(&["watch", "--status"])["running"] == true);
    for i in 0..20 {
        env.write(&format!("f{i:02}.txt"), format!("B {i}\n"));
    }

    // The command finds the restore the watcher left half done, and says how to resolve it,
    // as it would after a restore of its own was killed.
    let refused = env.fails(&["restore", "a"], 1);
    let status = watcher.0.wait().unwrap();
    assert_eq!(status.signal(), Some(9), "the watcher died at its fault point: {status}");
    assert!(refused.contains("interrupted restore") && refused.contains("--continue"), "{refused}");
    env.ok(&["restore", "--continue"]);
    for i in 0..20 {
        let text = std::fs::read_to_string(env.work().join(format!("f{i:02}.txt"))).unwrap();
        assert_eq!(text, format!("A {i}\n"));
    }
    let check = env.json(&["check", "--read-data"]);
    assert_eq!(check["problems"], serde_json::json!([]), "{check}");
}

#[test]
fn a_command_with_other_rights_than_the_watcher_s_saves_and_restores_itself() {
    use std::os::unix::process::CommandExt;
    // Only root can run a command in another group.
    if std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m)).ok() != Some(0) {
        return;
    }
    let env = TestEnv::new();
    env.write("a.txt", "a\n");
    let first = env.json(&["save", "--json"])["id"].as_str().unwrap().to_owned();
    let _watcher = start_watcher(&env);
    env.ok(&["save"]);
    assert_eq!(made_by_watcher(&env), 1);
    let in_other_group = |args: &[&str]| {
        let out = env.command(args).gid(4242).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    env.write("a.txt", "b\n");
    in_other_group(&["save"]);
    in_other_group(&["restore", &first]);
    assert_eq!(std::fs::read_to_string(env.work().join("a.txt")).unwrap(), "a\n");
    assert_eq!(made_by_watcher(&env), 1, "the watcher read and wrote nothing with its own rights");
    // The first, the watcher's and the command's own (safety snapshots are not listed).
    assert_eq!(env.json(&["list", "--json"])["snapshots"].as_array().map(Vec::len), Some(3));
}

#[test]
fn an_encrypted_store_s_saves_are_the_command_s_own() {
    let env = TestEnv::new().with_var("CAIRN_PASSWORD", "watched");
    env.ok(&["init", "--encrypt"]);
    env.write("a.txt", "a\n");
    env.ok(&["save"]);
    let _watcher = start_watcher(&env);
    env.ok(&["save"]);
    env.write("b.txt", "b\n");
    let saved = env.json(&["save", "--json"]);
    assert_eq!(saved["stats"]["files"], 2, "{saved}");
    assert_eq!(journal(&saved)["used"], true, "the journal still answers the command: {saved}");
    assert_eq!(made_by_watcher(&env), 0, "the watcher keeps no secret for anyone who reaches its socket");
}

#[test]
fn a_stopped_watcher_leaves_the_save_to_the_command_and_does_not_make_it_again() {
    let env = TestEnv::new();
    env.write("a.txt", "a\n");
    env.ok(&["save"]);
    let watcher = start_watcher(&env);
    env.ok(&["save"]);
    assert_eq!(made_by_watcher(&env), 1);

    // Stopped as Ctrl-Z stops a watcher in a terminal: it says nothing, and the save goes on
    // without it.
    signal(watcher.0.id(), "-STOP");
    env.write("b.txt", "b\n");
    let started = std::time::Instant::now();
    let saved = env.json(&["save", "--json"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    assert_eq!(saved["stats"]["files"], 2, "{saved}");
    signal(watcher.0.id(), "-CONT");
    assert_eq!(made_by_watcher(&env), 1);
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(made_by_watcher(&env), 1, "the abandoned save was not made again");
    let listed = env.json(&["list", "--json"]);
    assert_eq!(listed["snapshots"].as_array().map(Vec::len), Some(3), "{listed}");
}
