//! A newcomer's first minutes (issue 39): the README's quick start run verbatim in a fresh HOME,
//! `latest` meaning the directory a command is run in, `import` without `--target`, a `gc`
//! after a `remove` that says what the grace period held and `gc --now` that frees it, and
//! readers that never make a store and say what to run.

mod common;

use std::path::{Path, PathBuf};

use common::{TestEnv, write};

/// The lines between the README's quick-start markers, inside its `sh` block.
fn quick_start_lines() -> Vec<String> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
        .expect("read the README");
    let start = readme.find("<!-- quick-start").expect("the README marks its quick start");
    let end = readme[start..].find("<!-- /quick-start -->").expect("the quick start's end marker") + start;
    let block = &readme[start..end];
    let body = block.split("```sh\n").nth(1).and_then(|b| b.split("```").next()).expect("an sh block");
    body.lines().filter(|l| !l.trim().is_empty()).map(str::to_owned).collect()
}

/// Runs `line` with `sh` in `dir`, as a user's shell would: HOME is the environment's fresh
/// home, `cairn` is the binary under test found on PATH, and no store is named.
fn shell(env: &TestEnv, dir: &Path, line: &str) -> String {
    let bin = assert_cmd::cargo::cargo_bin("cairn");
    let path = format!("{}:{}", bin.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .env_clear()
        .env("HOME", env.home())
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .output()
        .expect("run sh");
    let mut block = format!("$ {line}\nexit: {}\n", out.status.code().unwrap_or(-1));
    for (name, text) in [("stdout", out.stdout), ("stderr", out.stderr)] {
        let text = String::from_utf8_lossy(&text);
        if text.is_empty() {
            block.push_str(&format!("--- {name}: empty\n"));
        } else {
            block.push_str(&format!("--- {name}\n{text}"));
        }
    }
    env.normalize(&(block + "\n"))
}

/// `cairn ARGS` against the environment's store, run in `dir`, rendered as [`TestEnv::transcript`] does.
fn cairn_in(env: &TestEnv, dir: &Path, args: &[&str]) -> String {
    let out = env.command(args).current_dir(dir).output().expect("run cairn");
    let mut block = format!(
        "$ cairn {}  (in {})\nexit: {}\n",
        args.join(" "),
        dir.display(),
        out.status.code().unwrap_or(-1)
    );
    for (name, text) in [("stdout", out.stdout), ("stderr", out.stderr)] {
        let text = String::from_utf8_lossy(&text);
        if text.is_empty() {
            block.push_str(&format!("--- {name}: empty\n"));
        } else {
            block.push_str(&format!("--- {name}\n{text}"));
        }
    }
    env.normalize(&(block + "\n"))
}

fn settings(env: &TestEnv) -> insta::Settings {
    let mut settings = env.filters();
    // Sizes of packs and objects move with the format; the words around them are the contract.
    settings.add_filter(r"\b\d+ B\b", "[N] B");
    // `list` shows ids by their shortest unique prefix (8 hex digits or more), which no earlier
    // output named in full, and pads the column to it.
    settings.add_filter(r"(?m)^ID +NAME", "ID NAME");
    settings.add_filter(r"(?m)^[0-9a-f]{8}(-[0-9a-f]{1,4}){0,4} +", "[SHORT-ID] ");
    settings
}

#[test]
fn the_readme_quick_start_runs_verbatim_in_a_fresh_home() {
    let env = TestEnv::new();
    let project = env.home().join("project");
    write(&project, "notes.txt", "hello\n");
    let lines = quick_start_lines();
    assert_eq!(lines.len(), 5, "the README promises a five-command quick start: {lines:?}");
    let transcript: String = lines.iter().map(|line| shell(&env, &project, line)).collect();
    // The store was made where the README says, by the first save and nothing else.
    assert!(env.home().join(".local/share/cairn").is_dir(), "the default store");
    assert_eq!(std::fs::read_to_string(project.join("notes.txt")).unwrap(), "hello\n", "rewound");
    assert_eq!(std::fs::read_to_string(env.home().join("copy/notes.txt")).unwrap(), "hello\n", "copied");
    settings(&env).bind(|| insta::assert_snapshot!(transcript));
}

/// Two sibling directories, `a` saved before `b`: `latest` in `a` is `a`'s newest, never `b`'s.
fn two_directories(env: &TestEnv) -> (PathBuf, PathBuf) {
    let (a, b) = (env.root().join("a"), env.root().join("b"));
    write(&a, "f.txt", "a1\n");
    env.command(&["save"]).current_dir(&a).output().unwrap();
    write(&a, "f.txt", "a2\n");
    env.command(&["save"]).current_dir(&a).output().unwrap();
    write(&b, "g.txt", "b1\n");
    env.command(&["save", "--name", "bee"]).current_dir(&b).output().unwrap();
    (a, b)
}

#[test]
fn restore_latest_in_a_directory_restores_that_directory_not_a_newer_sibling() {
    let env = TestEnv::new();
    let (a, b) = two_directories(&env);
    write(&a, "f.txt", "changed\n");
    write(&b, "g.txt", "changed\n");
    let root = env.root().to_path_buf();
    let transcript = [
        cairn_in(&env, &a, &["list"]),
        cairn_in(&env, &a, &["show", "latest"]),
        cairn_in(&env, &a, &["restore", "latest"]),
        cairn_in(&env, &a, &["diff", "latest~1", "latest"]),
        cairn_in(&env, &a, &["restore", "latest~2"]),
        // Another directory's snapshot by name: shown, but not written over in place from here.
        cairn_in(&env, &a, &["restore", "bee"]),
        cairn_in(&env, &a, &["restore", "bee", "--target", b.to_str().unwrap()]),
        // Above both, no snapshot is of this directory: `latest` is refused, not guessed.
        cairn_in(&env, &root, &["restore", "latest"]),
    ]
    .concat();
    assert_eq!(std::fs::read_to_string(a.join("f.txt")).unwrap(), "a2\n");
    assert_eq!(std::fs::read_to_string(b.join("g.txt")).unwrap(), "b1\n");
    settings(&env).bind(|| insta::assert_snapshot!(transcript));
}

#[test]
fn import_without_target_is_a_snapshot_of_the_archive_name_here() {
    let env = TestEnv::new();
    write(&env.work(), "proj/x.txt", "x\n");
    let tar = std::process::Command::new("tar")
        .args(["czf", "proj.tar.gz", "-C", "proj", "."])
        .current_dir(env.work())
        .status()
        .expect("tar");
    assert!(tar.success());
    std::fs::remove_dir_all(env.work().join("proj")).unwrap();
    let imported = env.json(&["import", "proj.tar.gz"]);
    let target = env.work().join("proj");
    assert_eq!(imported["target"], target.display().to_string());
    let id = imported["id"].as_str().unwrap().to_owned();
    // Its directory need not exist: restoring the import in place extracts it there.
    env.ok(&["restore", &id]);
    assert_eq!(std::fs::read_to_string(target.join("x.txt")).unwrap(), "x\n");
}

#[test]
fn gc_after_remove_reports_what_the_grace_held_and_gc_now_frees_it() {
    let env = TestEnv::new();
    write(&env.work(), "big.bin", common::noise(200_000, 7));
    env.ok(&["save"]);
    env.ok(&["remove", "latest"]);
    let held = env.json(&["gc"]);
    assert!(held["bytes_held"].as_u64().unwrap() >= 200_000, "{held}");
    assert_eq!(held["bytes_freed"], 0);
    assert!(held["held_until"].is_string());
    let freed = env.json(&["gc", "--now"]);
    assert!(freed["bytes_freed"].as_u64().unwrap() >= 200_000, "{freed}");
    assert!(freed.get("bytes_held").is_none(), "{freed}");
    // The human words, with the sizes left as tokens.
    env.ok(&["save"]);
    let transcript = env.transcript(&[&["remove", "latest"], &["gc"], &["gc", "--now"]]);
    settings(&env).bind(|| insta::assert_snapshot!(transcript));
}

#[test]
fn readers_on_a_missing_store_say_what_to_run_and_make_no_store() {
    let env = TestEnv::new();
    let transcript = env.transcript(&[
        &["list"],
        &["show", "latest"],
        &["diff", "latest"],
        &["session", "list"],
        &["config", "get", "gc.grace"],
        &["rewind"],
        &["gc"],
        &["check"],
    ]);
    assert!(!env.store().exists(), "a reader made the store");
    settings(&env).bind(|| insta::assert_snapshot!(transcript));
}

/// A shared store's other machines take no lock of this one's, so `--now` is refused there
/// with why, and nothing is deleted.
#[test]
fn gc_now_on_a_shared_store_is_refused_with_the_reason() {
    let moto = cairn_test_support::Moto::start();
    moto.create_bucket("team");
    let env = TestEnv::new().with_store("s3://team/cairn").with_var("CAIRN_PASSWORD", "the fleet's password");
    let env = moto.env().into_iter().fold(env, |env, (k, v)| env.with_var(k, v));
    write(&env.work(), "a.txt", "a\n");
    env.ok(&["save"]);
    let transcript = env.transcript(&[&["gc", "--now"]]);
    settings(&env).bind(|| insta::assert_snapshot!(transcript));
}
