//! Names, targets, descriptions and errors that hold control characters reach a terminal
//! escaped (`\033`, `\a`, `\n`, as `ls -b` and git write them), so an archive or a file name
//! cannot clear the screen, ring the bell or print a fake line; `--json` keeps them exact.
//!
//! The snapshots show the escape character as `<ESC>` and the bell as `<BEL>` wherever the
//! raw byte appears (only in the command lines, which the test itself types): an `<ESC>` in an
//! output would be a byte that reached the terminal raw.

mod common;

use std::path::Path;

use common::{TestEnv, write};

/// A name that, printed raw, clears the screen, homes the cursor, prints a fake line and
/// rings the bell.
const HOSTILE: &str = "\x1b[2J\x1b[Himport OK\x07";

/// Snapshots the transcript of `commands` under `name`, with the two raw bytes made visible.
fn check(env: &TestEnv, name: &str, commands: &[&[&str]]) {
    let text = env.transcript(commands).replace('\x1b', "<ESC>").replace('\x07', "<BEL>");
    insta::with_settings!({ omit_expression => true }, { insta::assert_snapshot!(name, text) });
}

/// One raw tar member whose mode field is `mode` as written (not a number when it is bad).
fn member(out: &mut Vec<u8>, name: &[u8], mode: &[u8], data: &[u8]) {
    let mut header = tar::Header::new_ustar();
    header.as_old_mut().name[..name.len()].copy_from_slice(name);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(0);
    header.set_size(data.len() as u64);
    header.set_entry_type(tar::EntryType::Regular);
    header.as_old_mut().mode = [0; 8];
    header.as_old_mut().mode[..mode.len()].copy_from_slice(mode);
    header.set_cksum();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512, 0);
}

fn archive(path: &Path, members: &[(&[u8], &[u8], &[u8])]) {
    let mut out = Vec::new();
    for (name, mode, data) in members {
        member(&mut out, name, mode, data);
    }
    out.extend_from_slice(&[0; 1024]);
    std::fs::write(path, out).unwrap();
}

#[test]
fn an_import_error_quoting_an_archive_name_is_escaped() {
    let env = TestEnv::new();
    let bad_mode = env.root().join("bad-mode.tar");
    // The tar reader's own message about the mode field quotes the member's name.
    archive(&bad_mode, &[(HOSTILE.as_bytes(), b"\x1bx", b"")]);
    let climbing = env.root().join("climbing.tar");
    archive(&climbing, &[(format!("../{HOSTILE}").as_bytes(), b"0000644", b"x")]);
    let (bad_mode, climbing) = (bad_mode.to_str().unwrap(), climbing.to_str().unwrap());
    check(
        &env,
        "import_error",
        &[&["import", bad_mode, "--target", "t"], &["import", climbing, "--target", "t"]],
    );
    // `--json` keeps the bytes exact (JSON escapes them itself).
    let out = env.cairn(&["--json", "import", bad_mode, "--target", "t"]).output().unwrap();
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The error is JSON's own escape of the hostile name, byte for byte.
    insta::assert_snapshot!(env.normalize(&value["error"].to_string()), @r#""[TMP]/bad-mode.tar is not a readable tar archive (numeric field was not a number: \u001bx when getting mode for \u001b[2J\u001b[Himport OK\u0007); pass a .tar, .tar.gz or .tar.zst""#);
}

#[test]
fn list_and_show_escape_a_hostile_target_and_description() {
    let env = TestEnv::new();
    let dir = env.root().join(format!("dir{HOSTILE}"));
    write(&dir, "a.txt", "a\n");
    let dir = dir.to_str().unwrap();
    let description = format!("line one\nline two{HOSTILE}");
    env.ok(&["save", dir, "--name", "s", "--description", &description]);
    // `show` first: the transcript knows an id in full before `list` shortens it.
    check(&env, "list_show", &[&["show", "s"], &["list"]]);
    let shown = env.json(&["show", "s"]);
    assert_eq!((shown["target"].as_str(), shown["description"].as_str()), (Some(dir), Some(&*description)));
}

#[test]
fn diff_names_stats_and_patch_headers_are_escaped() {
    let env = TestEnv::new();
    let name = format!("{HOSTILE}.txt");
    env.write(&name, "one\n");
    env.write("back\\slash\nnewline.txt", "x\n");
    env.ok(&["save", "--name", "a"]);
    env.write(&name, format!("one\ntwo {HOSTILE}\n"));
    std::fs::remove_file(env.work().join("back\\slash\nnewline.txt")).unwrap();
    env.ok(&["save", "--name", "b"]);
    check(
        &env,
        "diff",
        &[&["diff", "a", "b"], &["diff", "a", "b", "--stat"], &["diff", "a", "b", "--patch"]],
    );
    let json = env.json(&["diff", "a", "b"]);
    assert!(json["entries"].as_array().unwrap().iter().any(|e| e["path"] == name), "{json}");
}

#[test]
fn a_restore_dry_run_escapes_paths_and_its_destination() {
    let env = TestEnv::new();
    let dir = env.root().join(format!("dest{HOSTILE}"));
    write(&dir, &format!("{HOSTILE}.txt"), "before\n");
    let dir = dir.to_str().unwrap();
    env.ok(&["save", dir, "--name", "s"]);
    write(Path::new(dir), &format!("{HOSTILE}.txt"), "after\n");
    write(Path::new(dir), "new\tfile", "new\n");
    let fresh = env.root().join("fresh");
    let fresh = fresh.to_str().unwrap();
    check(
        &env,
        "restore_dry_run",
        &[&["restore", "s", "--dry-run"], &["restore", "s", "--dry-run", "--to", fresh]],
    );
}

#[test]
fn an_archive_named_with_control_characters_is_escaped_wherever_it_is_printed() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    env.ok(&["save", "--name", "s"]);
    let file = env.root().join(format!("{HOSTILE}.tar"));
    let file = file.to_str().unwrap();
    // Imported without `--target`: the target is the archive's name, in the work tree.
    check(
        &env,
        "archive_name",
        &[&["export", "s", "--to", file], &["import", file, "--name", "back"], &["show", "back"]],
    );
}
