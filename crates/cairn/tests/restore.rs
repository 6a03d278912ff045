//! Round trips and in-place restores of directory snapshots, through the real binary.

mod common;

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use common::{TestEnv, describe, noise, write};

/// A tree with every kind of entry a round trip must keep.
fn rich_tree(root: &Path) {
    write(root, "src/main.rs", "fn main() {}\n");
    write(root, "src/lib/deep/nested.txt", "deep\n");
    write(root, "exec.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(root.join("exec.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    write(root, "private.key", "secret\n");
    std::fs::set_permissions(root.join("private.key"), std::fs::Permissions::from_mode(0o600)).unwrap();
    write(root, "unicodé 文件 ✓.txt", "unicode\n");
    write(root, "odd name with spaces\tand tab", "odd\n");
    write(root, ".hidden/config", "hidden\n");
    write(root, ".git/HEAD", "ref: refs/heads/main\n");
    write(root, ".git/objects/ab/cdef", [0u8, 1, 2, 3]);
    std::fs::create_dir_all(root.join("empty/dir")).unwrap();
    symlink("src/main.rs", root.join("link-to-main")).unwrap();
    symlink("/etc/passwd", root.join("absolute-link")).unwrap();
    symlink("does-not-exist", root.join("dangling")).unwrap();
    std::fs::hard_link(root.join("src/main.rs"), root.join("hardlink-to-main")).unwrap();
    std::fs::hard_link(root.join("src/main.rs"), root.join("src/lib/another-link")).unwrap();
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    write(root, "assets/big.bin", &big);
}

#[test]
fn a_round_trip_equals_the_original() {
    let env = TestEnv::new();
    rich_tree(&env.work());
    let saved = env.json(&["save", ".", "--name", "rich"]);
    assert_eq!(saved["name"], "rich");
    assert!(saved["stats"]["files"].as_u64().unwrap() >= 9);
    let dest = env.root().join("copy");
    env.ok(&["restore", "rich", "--to", dest.to_str().unwrap()]);
    assert_eq!(describe(&env.work()), describe(&dest));
}

#[test]
fn a_200_mb_file_round_trips() {
    let env = TestEnv::new();
    // Incompressible, so the stored file is as large as it is and spans several packs.
    write(&env.work(), "huge.bin", noise(200 * 1024 * 1024, 7));
    env.ok(&["save"]);
    let packs = files_below(&env.store().join("objects/packs"));
    assert!(packs > 1, "200 MB of noise was stored in {packs} pack(s)");
    let dest = env.root().join("copy");
    env.ok(&["restore", "latest", "--to", dest.to_str().unwrap()]);
    assert_eq!(describe(&env.work()), describe(&dest));
}

fn files_below(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| if p.is_dir() { files_below(&p) } else { 1 })
        .sum()
}

#[test]
fn in_place_restore_undoes_edits_deletions_additions_and_type_changes() {
    let env = TestEnv::new();
    let w = env.work();
    rich_tree(&w);
    write(&w, "becomes-dir", "was a file\n");
    std::fs::create_dir_all(w.join("becomes-file")).unwrap();
    write(&w, "becomes-file/inner", "inner\n");
    write(&w, "becomes-link", "was a file\n");
    symlink("src", w.join("link-becomes-dir")).unwrap();
    write(&w, "dir-becomes-link/inner", "inner\n");
    symlink("exec.sh", w.join("link-becomes-file")).unwrap();
    env.ok(&["save", "--name", "before"]);
    let before = describe(&w);

    write(&w, "src/main.rs", "fn main() { changed() }\n");
    std::fs::remove_file(w.join("src/lib/deep/nested.txt")).unwrap();
    std::fs::remove_dir_all(w.join("empty")).unwrap();
    write(&w, "added/new.txt", "new\n");
    std::fs::set_permissions(w.join("exec.sh"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::remove_file(w.join("becomes-dir")).unwrap();
    write(&w, "becomes-dir/x", "x\n");
    std::fs::remove_dir_all(w.join("becomes-file")).unwrap();
    write(&w, "becomes-file", "now a file\n");
    std::fs::remove_file(w.join("becomes-link")).unwrap();
    symlink("/tmp", w.join("becomes-link")).unwrap();
    std::fs::remove_file(w.join("link-becomes-dir")).unwrap();
    write(&w, "link-becomes-dir/y", "y\n");
    std::fs::remove_dir_all(w.join("dir-becomes-link")).unwrap();
    symlink("src", w.join("dir-becomes-link")).unwrap();
    std::fs::remove_file(w.join("link-becomes-file")).unwrap();
    write(&w, "link-becomes-file", "now a file\n");

    let result = env.json(&["restore", "before", "--preserve-mtime"]);
    assert!(result["safety_snapshot"]["id"].is_string());
    assert_eq!(describe(&w), before);

    // A restore this small leaves the stat cache as the safety snapshot left it: the next save
    // reads again the files it wrote or changed, and nothing else.
    let touched: u64 = result["plan"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["action"] != "remove")
        .map(|entry| bytes_below(&w.join(entry["path"].as_str().unwrap())))
        .sum();
    let next = env.json(&["save"]);
    assert_eq!(next["stats"]["read_bytes"], touched, "{next}");
    assert_eq!(describe(&w), before);
}

/// The bytes of the regular file at `path`, or of every regular file below it (links not
/// followed).
fn bytes_below(path: &Path) -> u64 {
    let meta = std::fs::symlink_metadata(path).unwrap();
    if meta.is_file() {
        return meta.len();
    }
    if !meta.is_dir() {
        return 0;
    }
    std::fs::read_dir(path).unwrap().map(|e| bytes_below(&e.unwrap().path())).sum()
}

#[test]
fn after_an_in_place_restore_of_many_files_the_next_save_reads_nothing() {
    let env = TestEnv::new();
    let w = env.work();
    for i in 0..100 {
        write(&w, &format!("d{}/f{i:03}.txt", i % 3), format!("version one of {i}\n"));
    }
    env.ok(&["save", "--name", "one"]);
    for i in 0..100 {
        write(&w, &format!("d{}/f{i:03}.txt", i % 3), format!("version two of {i}\n"));
    }
    let result = env.json(&["restore", "one"]);
    assert_eq!(result["files_written"], 100, "{result}");
    // The restore recorded the stats of the files it wrote in the stat cache.
    let next = env.json(&["save"]);
    assert_eq!(next["stats"]["read_bytes"], 0, "{next}");
    assert_eq!(std::fs::read_to_string(w.join("d1/f001.txt")).unwrap(), "version one of 1\n");
}

#[test]
fn after_a_restore_into_a_new_directory_its_first_save_reads_nothing_and_sees_an_edit() {
    let env = TestEnv::new();
    let w = env.work();
    for i in 0..100 {
        write(&w, &format!("d{}/f{i:03}.txt", i % 3), format!("version one of {i}\n"));
    }
    let saved = env.json(&["save"]);
    let dest = env.root().join("copy");
    let dest_arg = dest.to_str().unwrap();
    env.ok(&["restore", saved["id"].as_str().unwrap(), "--to", dest_arg]);
    // The restore recorded the stats of the files it wrote, trusted from the moment it returned.
    let first = env.json(&["save", dest_arg]);
    assert_eq!(first["stats"]["files"], 100, "{first}");
    assert_eq!(first["stats"]["read_bytes"], 0, "{first}");
    // An edit of the same size made at once is read again.
    std::fs::write(dest.join("d1/f001.txt"), "version TWO of 1\n").unwrap();
    let second = env.json(&["save", dest_arg]);
    assert_eq!(second["stats"]["read_bytes"], 17, "{second}");
    let out = env.root().join("out");
    env.ok(&["restore", second["id"].as_str().unwrap(), "--to", out.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(out.join("d1/f001.txt")).unwrap(), "version TWO of 1\n");
}

#[test]
fn rewritten_files_get_the_current_time_unless_preserved() {
    let env = TestEnv::new();
    let w = env.work();
    write(&w, "a.txt", "one\n");
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
    std::fs::File::options().write(true).open(w.join("a.txt")).unwrap().set_modified(old).unwrap();
    env.ok(&["save", "--name", "one"]);
    write(&w, "a.txt", "two\n");
    env.ok(&["restore", "one"]);
    let mtime = std::fs::metadata(w.join("a.txt")).unwrap().modified().unwrap();
    assert!(mtime > old + std::time::Duration::from_secs(86400 * 365), "mtime was not refreshed");
    assert_eq!(std::fs::read_to_string(w.join("a.txt")).unwrap(), "one\n");
}

#[test]
fn a_planted_symlink_in_the_destination_is_not_followed() {
    let env = TestEnv::new();
    let w = env.work();
    write(&w, "dir/file.txt", "inside\n");
    env.ok(&["save", "--name", "s"]);
    // Replace the directory by a link to a directory outside the tree.
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::remove_dir_all(w.join("dir")).unwrap();
    symlink(&outside, w.join("dir")).unwrap();
    env.ok(&["restore", "s"]);
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none(), "wrote outside the destination");
    assert!(std::fs::symlink_metadata(w.join("dir")).unwrap().is_dir());
    assert_eq!(std::fs::read_to_string(w.join("dir/file.txt")).unwrap(), "inside\n");
}

#[test]
fn a_planted_symlink_in_place_of_a_file_is_replaced_not_written_through() {
    let env = TestEnv::new();
    let w = env.work();
    write(&w, "file.txt", "inside\n");
    env.ok(&["save", "--name", "s"]);
    let outside = env.root().join("outside.txt");
    write(env.root(), "outside.txt", "outside\n");
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o640)).unwrap();
    let before = std::fs::symlink_metadata(&outside).unwrap();
    std::fs::remove_file(w.join("file.txt")).unwrap();
    symlink(&outside, w.join("file.txt")).unwrap();
    env.ok(&["restore", "s"]);
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside\n", "wrote through the link");
    let after = std::fs::symlink_metadata(&outside).unwrap();
    assert_eq!(after.permissions().mode(), before.permissions().mode());
    assert_eq!(after.modified().unwrap(), before.modified().unwrap());
    assert!(std::fs::symlink_metadata(w.join("file.txt")).unwrap().is_file());
    assert_eq!(std::fs::read_to_string(w.join("file.txt")).unwrap(), "inside\n");
}

#[test]
fn ignored_paths_are_not_captured_and_never_touched() {
    let env = TestEnv::new();
    let w = env.work();
    write(&w, ".gitignore", "target/\n*.log\n");
    write(&w, ".cairnignore", "secrets.env\n");
    write(&w, "src/a.rs", "a\n");
    write(&w, "target/debug/out", "build output\n");
    write(&w, "run.log", "log\n");
    write(&w, "secrets.env", "TOKEN=1\n");
    let saved = env.json(&["save", "--name", "s"]);
    assert_eq!(saved["not_covered"]["ignored"], 3, "{saved}");
    write(&w, "target/debug/out", "newer build output\n");
    write(&w, "src/a.rs", "changed\n");
    env.ok(&["restore", "s"]);
    assert_eq!(std::fs::read_to_string(w.join("target/debug/out")).unwrap(), "newer build output\n");
    assert_eq!(std::fs::read_to_string(w.join("src/a.rs")).unwrap(), "a\n");
    assert!(w.join("secrets.env").exists() && w.join("run.log").exists());

    let all = env.json(&["save", "--no-ignore"]);
    assert_eq!(all["not_covered"]["ignored"], 0);
    assert_eq!(all["stats"]["files"], 6);
}

#[test]
fn special_files_are_skipped_and_listed() {
    let env = TestEnv::new();
    let w = env.work();
    write(&w, "a.txt", "a\n");
    let status = std::process::Command::new("mkfifo").arg(w.join("pipe")).status().unwrap();
    assert!(status.success());
    let saved = env.json(&["save"]);
    assert_eq!(saved["not_covered"]["skipped"][0]["path"], "pipe");
    assert_eq!(saved["not_covered"]["skipped"][0]["reason"], "fifo");
}

#[test]
fn a_restore_that_fails_halfway_puts_the_tree_back() {
    let env = TestEnv::new();
    let w = env.work();
    write(&w, "a.txt", "A\n");
    write(&w, "locked/file.txt", "Z\n");
    env.ok(&["save", "--name", "s"]);
    write(&w, "a.txt", "A2\n");
    write(&w, "locked/file.txt", "Z2\n");
    let before = describe(&w);
    // An immutable directory refuses the rewrite of its file, after a.txt was rewritten.
    let lock = |on: bool| {
        if rustix_is_root() {
            let flag = if on { "+i" } else { "-i" };
            assert!(
                std::process::Command::new("chattr")
                    .arg(flag)
                    .arg(w.join("locked"))
                    .status()
                    .unwrap()
                    .success()
            );
        } else {
            let mode = if on { 0o555 } else { 0o755 };
            std::fs::set_permissions(w.join("locked"), std::fs::Permissions::from_mode(mode)).unwrap();
        }
    };
    lock(true);
    let err = env.fails(&["restore", "s"], 1);
    lock(false);
    assert!(err.contains("the live state was put back from safety snapshot"), "{err}");
    assert_eq!(describe(&w), before);
}

fn rustix_is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

#[test]
fn restore_to_a_non_empty_directory_is_refused() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    env.ok(&["save", "--name", "s"]);
    let dest = env.root().join("full");
    write(&dest, "existing", "x");
    let err = env.fails(&["restore", "s", "--to", dest.to_str().unwrap()], 1);
    insta::assert_snapshot!(env.normalize(&err), @"error: [TMP]/full is not empty; pass a new or empty directory, or leave out --to to restore in place");
    assert_eq!(std::fs::read_to_string(dest.join("existing")).unwrap(), "x");
}

#[test]
fn dry_run_prints_the_plan_and_changes_nothing() {
    let env = TestEnv::new();
    let w = env.work();
    write(&w, "a.txt", "a\n");
    write(&w, "b.txt", "b\n");
    env.ok(&["save", "--name", "s"]);
    write(&w, "a.txt", "changed\n");
    std::fs::remove_file(w.join("b.txt")).unwrap();
    write(&w, "c.txt", "new\n");
    let before = describe(&w);
    let plan = env.json(&["restore", "s", "--dry-run"]);
    assert_eq!(plan["dry_run"], true);
    let actions: Vec<(String, String)> = plan["plan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["path"].as_str().unwrap().to_owned(), e["action"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(
        actions,
        vec![
            ("a.txt".into(), "rewrite".into()),
            ("b.txt".into(), "create".into()),
            ("c.txt".into(), "remove".into())
        ]
    );
    assert_eq!(describe(&w), before);
}

#[test]
fn a_removed_directory_keeps_its_ignored_and_skipped_paths() {
    let env = TestEnv::new();
    let w = env.work();
    write(&w, ".gitignore", "*.o\n");
    write(&w, "src/a.rs", "a\n");
    env.ok(&["save", "--name", "s"]);
    write(&w, "newdir/build.o", "object\n");
    write(&w, "newdir/a.txt", "covered\n");
    write(&w, "newdir/sub/deep.o", "deep object\n");
    write(&w, "newdir/sub/b.txt", "covered too\n");
    write(&w, "newdir/other/c.txt", "only covered\n");
    let fifo = std::process::Command::new("mkfifo").arg(w.join("newdir/pipe")).status().unwrap();
    assert!(fifo.success());
    let plan = env.json(&["restore", "s", "--dry-run"]);
    let removed: Vec<&str> =
        plan["plan"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert_eq!(removed, ["newdir/a.txt", "newdir/other", "newdir/sub/b.txt"], "{plan}");

    let result = env.json(&["restore", "s"]);
    assert!(result["safety_snapshot"]["id"].is_string());
    assert_eq!(std::fs::read_to_string(w.join("newdir/build.o")).unwrap(), "object\n");
    assert_eq!(std::fs::read_to_string(w.join("newdir/sub/deep.o")).unwrap(), "deep object\n");
    assert!(std::fs::symlink_metadata(w.join("newdir/pipe")).is_ok(), "the fifo was removed");
    for gone in ["newdir/a.txt", "newdir/sub/b.txt", "newdir/other"] {
        assert!(std::fs::symlink_metadata(w.join(gone)).is_err(), "{gone} is still there");
    }
    assert_eq!(std::fs::read_to_string(w.join("src/a.rs")).unwrap(), "a\n");
}

#[test]
fn a_type_change_over_a_directory_holding_ignored_files_is_refused_and_changes_nothing() {
    let env = TestEnv::new();
    let w = env.work();
    write(&w, ".gitignore", "*.o\n");
    write(&w, "thing", "a file in the snapshot\n");
    write(&w, "kept.txt", "one\n");
    env.ok(&["save", "--name", "s"]);
    std::fs::remove_file(w.join("thing")).unwrap();
    write(&w, "thing/build.o", "object\n");
    write(&w, "thing/notes.txt", "notes\n");
    write(&w, "kept.txt", "two\n");
    let before = describe(&w);
    let err = env.fails(&["restore", "s"], 1);
    insta::assert_snapshot!(env.normalize(&err), @"error: the snapshot has a file at thing, where the live tree has a directory holding thing/build.o that snapshots leave out (ignored or skipped); move what is left out of thing elsewhere, then restore again");
    assert_eq!(describe(&w), before);
    // A dry run says the same.
    assert_eq!(env.fails(&["restore", "s", "--dry-run"], 1), err);
}

#[test]
fn a_file_of_the_snapshot_over_an_ignored_live_directory_is_refused() {
    let env = TestEnv::new();
    let w = env.work();
    write(&w, "out", "a file in the snapshot\n");
    env.ok(&["save", "--name", "s"]);
    std::fs::remove_file(w.join("out")).unwrap();
    write(&w, "out/cache.bin", "build cache\n");
    write(&w, ".gitignore", "out/\n");
    let before = describe(&w);
    insta::assert_snapshot!(env.normalize(&env.fails(&["restore", "s"], 1)), @"error: the snapshot has a file at out, where the live tree has a directory that snapshots leave out (ignored or skipped); move out elsewhere, then restore again");
    assert_eq!(describe(&w), before);
}

#[test]
fn git_is_captured_even_when_the_ignore_rules_match_it() {
    let env = TestEnv::new();
    let w = env.work();
    write(&w, ".gitignore", ".*\n");
    write(&w, ".git/HEAD", "ref: refs/heads/main\n");
    write(&w, ".git/objects/ab/cd", "object\n");
    write(&w, ".env", "TOKEN=1\n");
    write(&w, "src/a.rs", "a\n");
    let saved = env.json(&["save", "--name", "s"]);
    let ignored: Vec<&str> = saved["not_covered"]["ignored_paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(ignored, [".env", ".gitignore"], "{saved}");
    let dest = env.root().join("copy");
    env.ok(&["restore", "s", "--to", dest.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(dest.join(".git/HEAD")).unwrap(), "ref: refs/heads/main\n");
    assert_eq!(std::fs::read_to_string(dest.join(".git/objects/ab/cd")).unwrap(), "object\n");
    assert!(!dest.join(".env").exists());
}

#[test]
fn a_dry_run_into_a_new_directory_lists_every_entry_it_would_create() {
    let env = TestEnv::new();
    let w = env.work();
    write(&w, "a.txt", "a\n");
    write(&w, "dir/b.txt", "b\n");
    symlink("a.txt", w.join("link")).unwrap();
    env.ok(&["save", "--name", "s"]);
    let dest = env.root().join("copy");
    let plan = env.json(&["restore", "s", "--to", dest.to_str().unwrap(), "--dry-run"]);
    let entries: Vec<(&str, &str, &str)> = plan["plan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["path"].as_str().unwrap(), e["action"].as_str().unwrap(), e["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        entries,
        [
            ("a.txt", "create", "file"),
            ("dir", "create", "dir"),
            ("dir/b.txt", "create", "file"),
            ("link", "create", "symlink")
        ]
    );
    let text = env.ok(&["restore", "s", "--to", dest.to_str().unwrap(), "--dry-run"]);
    insta::assert_snapshot!(env.normalize(&text), @r"
        would restore [ID1] (s) into [TMP]/copy: 4 entries to create
          create   a.txt (file)
          create   dir (dir)
          create   dir/b.txt (file)
          create   link (symlink)
    ");
    assert!(!dest.exists(), "a dry run created the destination");
}

#[test]
fn an_in_place_dry_run_lists_its_changes_as_text() {
    let env = TestEnv::new();
    let w = env.work();
    write(&w, "a.txt", "a\n");
    env.ok(&["save", "--name", "s"]);
    write(&w, "a.txt", "changed\n");
    write(&w, "b.txt", "new\n");
    let text = env.ok(&["restore", "s", "--dry-run"]);
    insta::assert_snapshot!(env.normalize(&text), @r"
        would restore [ID1] (s) into [TMP]/work: 2 changes
          rewrite  a.txt (file)
          remove   b.txt (file)
    ");
    assert_eq!(std::fs::read_to_string(w.join("b.txt")).unwrap(), "new\n");
}

#[test]
fn restoring_a_transcript_snapshot_points_to_transcript_load() {
    let env = TestEnv::new();
    let session = env.root().join("2025-01-10T09-00-00-000Z_0193a1f0.jsonl");
    std::fs::write(
        &session,
        concat!(
            r#"{"type":"session","version":3,"id":"0193a1f0-4b2c-7d10-9e8f-1a2b3c4d5e6f","timestamp":"2025-01-10T09:00:00.000Z","cwd":"/home/a/proj"}"#,
            "\n",
            r#"{"type":"message","id":"a0000001","parentId":null,"timestamp":"2025-01-10T09:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"Hello."}],"timestamp":1736499601000}}"#,
            "\n",
        ),
    )
    .unwrap();
    env.ok(&["transcript", "save", session.to_str().unwrap(), "chat"]);
    insta::assert_snapshot!(env.fails(&["restore", "chat"], 2), @"error: snapshot chat is a transcript, which a restore does not write; run `cairn transcript load chat`");
}
