//! In-place restores killed half way. Only `restore --continue` and `restore --abort` resolve
//! one: each saves the tree as it is found first, then finishes or rolls back all but the files
//! written since the kill, which stay on disk as the user left them and are listed. Every
//! other command refuses (a save, a restore, an agent's checkpoint, which the hook shows the
//! agent's user) or, when it only reads, reports it instead of working on the mixed tree.

mod common;

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};

use common::{Entry, TestEnv, describe, write};

/// Saves state A as `a`, changes the tree to state B, and kills `restore a` half way through
/// its plan. Returns the tree as B was.
fn interrupted(env: &TestEnv) -> BTreeMap<PathBuf, Entry> {
    let w = env.work();
    for i in 0..20 {
        write(&w, &format!("f{i:02}.txt"), format!("A {i}\n"));
    }
    env.ok(&["save", "--name", "a"]);
    for i in 0..20 {
        write(&w, &format!("f{i:02}.txt"), format!("B {i}\n"));
    }
    write(&w, "only-in-b.txt", "B\n");
    env.ok(&["save", "--name", "b"]);
    let b = describe(&w);
    let status = env.process(&["restore", "a"]).env("CAIRN_FAULT_KILL_AT", "restore-half-applied").status();
    assert_eq!(status.unwrap().signal(), Some(9), "the restore was not killed at its fault point");
    let mixed = describe(&w);
    let a_files = mixed
        .keys()
        .filter(|p| std::fs::read_to_string(w.join(p)).is_ok_and(|t| t.starts_with("A ")))
        .count();
    assert!(mixed != b && a_files > 0 && a_files < 20, "the kill did not leave a mixed tree");
    b
}

/// What the user writes after the kill, before the next command: a new file, an edit of a
/// file the restore had not reached yet, and a new directory.
const USER_WRITES: [(&str, &str); 3] = [
    ("f19.txt", "edited after the kill\n"),
    ("new-dir/notes.txt", "notes written after the kill\n"),
    ("written-after-the-kill.txt", "new work\n"),
];

fn user_writes(env: &TestEnv) {
    for (path, text) in USER_WRITES {
        write(&env.work(), path, text);
    }
}

/// Each of the user's writes is in `root` as they wrote it.
fn assert_user_writes_in(root: &Path) {
    for (path, text) in USER_WRITES {
        assert_eq!(std::fs::read_to_string(root.join(path)).unwrap(), text, "{path} in {}", root.display());
    }
}

fn assert_holds_user_writes(env: &TestEnv, snapshot: &str) {
    let dest = env.root().join(format!("recovered-{snapshot}"));
    env.ok(&["restore", snapshot, "--to", dest.to_str().unwrap()]);
    assert_user_writes_in(&dest);
}

/// The tree without the user's writes (and the directory they made), each entry as kind, mode
/// and content: what finishing or rolling back must leave beside them.
fn without_user_writes(tree: BTreeMap<PathBuf, Entry>) -> Vec<(PathBuf, String)> {
    tree.into_iter()
        .filter(|(p, _)| !p.starts_with("new-dir") && !USER_WRITES.iter().any(|(u, _)| p == Path::new(u)))
        .map(|(p, e)| match e {
            Entry::File { mode, content_hash, .. } => (p, format!("file {mode:o} {content_hash}")),
            other => (p, format!("{other:?}")),
        })
        .collect()
}

#[test]
fn a_save_or_a_restore_after_a_killed_restore_refuses_in_one_line_and_changes_nothing() {
    if !cfg!(debug_assertions) {
        return;
    }
    let env = TestEnv::new();
    interrupted(&env);
    user_writes(&env);
    let found = describe(&env.work());
    let save = env.fails(&["save", "--name", "after"], 1);
    env.filters().bind(|| {
        insta::assert_snapshot!(save, @"error: an interrupted restore of snapshot [ID] left [TMP]/work half restored (its state before was saved as snapshot [ID]); finish or roll back that restore first (either way keeps the files written since); run `cairn restore --continue` or run `cairn restore --abort`");
    });
    assert_eq!(save.lines().count(), 1);
    // Another restore would roll back what was written since, as a save used to: refused too.
    assert_eq!(env.fails(&["restore", "b"], 1), save);
    assert_eq!(describe(&env.work()), found, "the tree is as the user left it");
    assert_user_writes_in(&env.work());
    let listed = env.json(&["list"]);
    assert!(!listed.to_string().contains("\"after\""), "no snapshot was saved: {listed}");
}

#[test]
fn check_diff_show_and_a_dry_run_report_an_interrupted_restore_instead_of_using_the_mixed_tree() {
    if !cfg!(debug_assertions) {
        return;
    }
    let env = TestEnv::new();
    interrupted(&env);
    let mixed = describe(&env.work());
    let check = env.cairn(&["check"]).output().unwrap();
    assert_eq!(check.status.code(), Some(1));
    let diff = env.fails(&["diff", "a"], 1);
    let dry = env.fails(&["restore", "a", "--dry-run"], 1);
    let show = env.cairn(&["show", "a"]).output().unwrap();
    assert!(show.status.success());
    env.filters().bind(|| {
        insta::assert_snapshot!(String::from_utf8_lossy(&check.stdout), @r"
        3 snapshot(s), 45 object(s) referenced, 0 read back
        problem: an interrupted restore of snapshot [ID] left [TMP]/work half restored (its state before was saved as snapshot [ID]); finish it (the restore's continue option) or roll it back (its abort option): either keeps the files written since, and until then saves, restores and agent checkpoints of it are refused
        ");
        insta::assert_snapshot!(diff, @"error: an interrupted restore of snapshot [ID] left [TMP]/work half restored (its state before was saved as snapshot [ID]); finish or roll back that restore first (either way keeps the files written since); run `cairn restore --continue` or run `cairn restore --abort`");
        assert_eq!(dry, diff);
        insta::assert_snapshot!(String::from_utf8_lossy(&show.stderr), @"note: an interrupted restore of snapshot [ID] left [TMP]/work half restored (its state before was saved as snapshot [ID]); the live tree is not any snapshot");
    });
    // Nothing was touched.
    assert_eq!(describe(&env.work()), mixed);
}

#[test]
fn restore_continue_and_abort_keep_the_files_written_since_on_disk_and_list_them() {
    if !cfg!(debug_assertions) {
        return;
    }
    for how in ["--continue", "--abort"] {
        let env = TestEnv::new();
        let b = interrupted(&env);
        user_writes(&env);
        let out = env.ok(&["restore", how]);
        env.filters().bind(|| match how {
            "--continue" => insta::assert_snapshot!(out, @r"
            interrupted restore of [TMP]/work: the tree as found is saved as snapshot [ID]; finished restoring snapshot [ID]
            left as found, written since the restore began (3 entries):
              keep     f19.txt (file)
              keep     new-dir/notes.txt (file)
              keep     written-after-the-kill.txt (file)
            "),
            _ => insta::assert_snapshot!(out, @r"
            interrupted restore of [TMP]/work: the tree as found is saved as snapshot [ID]; put back snapshot [ID] (the state before the restore)
            left as found, written since the restore began (3 entries):
              keep     f19.txt (file)
              keep     new-dir/notes.txt (file)
              keep     written-after-the-kill.txt (file)
            "),
        });
        assert_user_writes_in(&env.work());
        let recovery = out.split("saved as snapshot ").nth(1).unwrap().split(';').next().unwrap().to_owned();
        assert_holds_user_writes(&env, &recovery);
        // Everything else is as the goal has it.
        let goal = match how {
            "--continue" => {
                let a = env.root().join("a");
                env.ok(&["restore", "a", "--to", a.to_str().unwrap()]);
                describe(&a)
            }
            _ => b,
        };
        assert_eq!(without_user_writes(describe(&env.work())), without_user_writes(goal), "{how}");
        env.ok(&["check", "--read-data"]);
        let again = env.fails(&["restore", how], 1);
        insta::allow_duplicates! {
            insta::assert_snapshot!(env.normalize(&again), @"error: no interrupted restore was found; there is nothing to continue or abort");
        }
        // Resolved: saving works again, and takes the user's writes.
        let saved = env.json(&["save"]);
        assert_holds_user_writes(&env, saved["id"].as_str().unwrap());
    }
}

#[test]
fn restore_continue_reports_the_kept_files_as_keep_entries_of_its_plan_and_not_its_own_temp_file() {
    if !cfg!(debug_assertions) {
        return;
    }
    let env = TestEnv::new();
    interrupted(&env);
    user_writes(&env);
    // A file the killed restore was writing beside its target is its own, not the user's.
    let half_written = format!(".cairn-tmp-{}", "0a".repeat(16));
    write(&env.work(), &half_written, "half of a file\n");
    let result = env.json(&["restore", "--continue"]);
    assert!(!env.work().join(&half_written).exists(), "the restore's own temp file is gone");
    let kept: Vec<&str> = result["plan"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "keep")
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(kept, ["f19.txt", "new-dir/notes.txt", "written-after-the-kill.txt"]);
    assert_eq!(result["interrupted_restore"]["outcome"], "finished");
}

#[test]
fn a_resolution_killed_after_its_recovery_snapshot_is_done_again_by_the_next_abort() {
    if !cfg!(debug_assertions) {
        return;
    }
    let env = TestEnv::new();
    let b = interrupted(&env);
    user_writes(&env);
    let status = env.process(&["restore", "--abort"]).env("CAIRN_FAULT_KILL_AT", "recovery-saved").status();
    assert_eq!(status.unwrap().signal(), Some(9));
    write(&env.work(), "second.txt", "written after the second kill\n");
    let result = env.json(&["restore", "--abort"]);
    let recovery = result["interrupted_restore"]["recovery_snapshot"].as_str().unwrap().to_owned();
    assert_holds_user_writes(&env, &recovery);
    let dest = env.root().join("second");
    env.ok(&["restore", &recovery, "--to", dest.to_str().unwrap()]);
    assert!(dest.join("second.txt").exists());
    assert_user_writes_in(&env.work());
    assert!(env.work().join("second.txt").exists());
    let mut live = describe(&env.work());
    live.remove(Path::new("second.txt"));
    assert_eq!(without_user_writes(live), without_user_writes(b));
    env.ok(&["check", "--read-data"]);
}

/// The agent's hook: no checkpoint of the mixed tree, one JSON object on stdout whose
/// `systemMessage` Claude Code shows its user, the same line on stderr, exit 0 (the turn goes
/// on), and the refusal in the hook log.
#[test]
fn an_agents_hook_shows_the_interrupted_restore_to_its_user_and_lets_the_turn_go_on() {
    if !cfg!(debug_assertions) {
        return;
    }
    let env = TestEnv::new();
    interrupted(&env);
    user_writes(&env);
    let found = describe(&env.work());
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cairn-lib/tests/fixtures/agents/claude_user_prompt_submit.json");
    let event = std::fs::read_to_string(fixture)
        .unwrap()
        .replace("/home/dev/shop", &env.work().display().to_string());
    let out = env.cairn(&["hook", "claude-code"]).write_stdin(event.clone()).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let message: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object on stdout");
    let stderr = String::from_utf8_lossy(&out.stderr);
    env.filters().bind(|| {
        insta::assert_snapshot!(message["systemMessage"].as_str().unwrap(), @"cairn: an interrupted restore of snapshot [ID] left [TMP]/work half restored (its state before was saved as snapshot [ID]); finish or roll back that restore first (either way keeps the files written since); run `cairn restore --continue` or `cairn restore --abort`; until then no checkpoint is saved");
        insta::assert_snapshot!(stderr, @"error: an interrupted restore of snapshot [ID] left [TMP]/work half restored (its state before was saved as snapshot [ID]); finish or roll back that restore first (either way keeps the files written since); run `cairn restore --continue` or `cairn restore --abort`; until then no checkpoint is saved");
    });
    assert_eq!(stdout.lines().count(), 1);
    assert_eq!(message.as_object().unwrap().len(), 1, "nothing but the message: {message}");
    assert_eq!(describe(&env.work()), found);
    assert_eq!(env.json(&["moment", "list"])["moments"].as_array().unwrap().len(), 0);
    let log = std::fs::read_to_string(env.store().join("logs/hooks.log")).unwrap();
    assert!(log.contains("an interrupted restore of snapshot"), "{log}");
    // Resolved, the next event checkpoints again, and says nothing on stdout.
    env.ok(&["restore", "--abort"]);
    let out = env.cairn(&["hook", "claude-code"]).write_stdin(event).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    assert_eq!(env.json(&["moment", "list"])["moments"].as_array().unwrap().len(), 1);
}

/// A restore writes its journal while it commits its safety snapshot, and changes nothing until
/// both are durable: a journal whose safety snapshot never reached the store was left by a
/// restore stopped before its first change, and is dropped without a word.
#[test]
fn a_journal_whose_safety_snapshot_never_reached_the_store_is_dropped_and_the_tree_left_alone() {
    if !cfg!(debug_assertions) {
        return;
    }
    let env = TestEnv::new();
    interrupted(&env);
    let journal_dir = env.store().join("journal");
    let path = std::fs::read_dir(&journal_dir).unwrap().next().unwrap().unwrap().path();
    let mut journal: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    env.ok(&["restore", "--abort"]);
    let b = describe(&env.work());
    // The same journal, but naming a safety snapshot (and root) the store never committed.
    journal["safety"] = "01a235d0-0000-7000-8000-000000000000".into();
    journal["safety_root"] = "ab".repeat(32).into();
    std::fs::write(&path, serde_json::to_vec(&journal).unwrap()).unwrap();
    let out = env.cairn(&["save"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "",
        "nothing to say about a restore that changed nothing"
    );
    assert!(!path.exists(), "the journal is gone");
    assert_eq!(describe(&env.work()), b);
    env.ok(&["check"]);
}
