//! `cairn debug …` through the real binary, with real Python and C programs under the real
//! debug adapters (debugpy and lldb-dap; see scripts/deps/debug-adapters.sh).

mod common;

use std::path::{Path, PathBuf};

use common::TestEnv;
use serde_json::Value;

const PYTHON: &str = r#"class Inner:
    def __init__(self):
        self.value = 7


class Outer:
    def __init__(self):
        self.inner = Inner()
        self.name = "box"


def work(n):
    box = Outer()
    total = 0
    for i in range(n):
        total += i * 10
        print(total)  # BREAK
    return total


work(3)
"#;

const C: &str = r#"#include <stdio.h>

struct inner { int value; };
struct outer { struct inner inner; int size; };

int main(void) {
    struct outer box = { { 7 }, 2 };
    int total = 0;
    for (int i = 0; i < 3; i++) {
        total += i * 10;
        printf("%d %d\n", total, box.size); // BREAK
    }
    return 0;
}
"#;

/// One isolated run (the shared harness) whose PATH finds the adapters, and a marker variable
/// that every process the command starts inherits, so the test can tell whether any of them is
/// left.
struct Env {
    test: TestEnv,
    marker: String,
}

impl Env {
    fn new() -> Self {
        let test = TestEnv::new();
        let marker = format!("cairn-debug-test-{}", std::process::id())
            + &test.root().to_string_lossy().replace('/', "-");
        // The real interpreter's directory first, so a version-manager shim is not needed.
        let python = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("these tests need python3 with debugpy (scripts/deps/debug-adapters.sh)");
        let python = PathBuf::from(String::from_utf8_lossy(&python.stdout).trim());
        let python_dir = python.parent().map(Path::to_path_buf).unwrap_or_default();
        let path = format!("{}:{}", python_dir.display(), std::env::var("PATH").unwrap_or_default());
        let test = test.with_var("PATH", path).with_var("CAIRN_TEST_MARKER", &marker);
        Self { test, marker }
    }

    fn cmd(&self, args: &[&str]) -> assert_cmd::Command {
        self.test.cairn(args)
    }

    fn json(&self, args: &[&str]) -> Value {
        self.test.json(args)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        self.test.write(name, text)
    }

    fn compile(&self, source: &Path) -> PathBuf {
        let binary = source.with_extension("");
        let out = std::process::Command::new("gcc")
            .args(["-g", "-O0", "-o"])
            .arg(&binary)
            .arg(source)
            .output()
            .expect("these tests need gcc");
        assert!(out.status.success(), "gcc failed: {}", String::from_utf8_lossy(&out.stderr));
        binary
    }

    /// Processes still running that inherited this run's marker.
    /// Processes of this test still alive after a grace period: a debuggee that reported its
    /// exit may take a moment to finish, on a loaded machine, before it is gone.
    fn leftovers(&self) -> Vec<String> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let found = self.live_processes();
            if found.is_empty() || std::time::Instant::now() > deadline {
                return found;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    fn live_processes(&self) -> Vec<String> {
        let needle = format!("CAIRN_TEST_MARKER={}", self.marker);
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let pid = entry.file_name().to_string_lossy().into_owned();
            if !pid.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else { continue };
            let marked = environ.split(|b| *b == 0).any(|var| var == needle.as_bytes());
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next());
            if marked && !matches!(state, Some('Z') | Some('X') | None) {
                found.push(stat);
            }
        }
        found
    }
}

fn line_of(text: &str, marker: &str) -> usize {
    text.lines().position(|l| l.contains(marker)).unwrap() + 1
}

fn modified_paths(diff: &Value) -> Vec<(String, String, String)> {
    let mut m: Vec<_> = diff["modified"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["path"].as_str().unwrap().to_owned(),
                e["oldValue"].as_str().unwrap().to_owned(),
                e["newValue"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    m.sort();
    m
}

fn snapshot_ids(run: &Value) -> Vec<String> {
    run["stops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["snapshot"]["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn python_loop_captures_diff_exactly_the_loop_variables_and_persist_across_runs() {
    let env = Env::new();
    let script = env.write("loop.py", PYTHON);
    let brk = format!("loop.py:{}", line_of(PYTHON, "# BREAK"));
    let run = env.json(&["debug", "run", script.to_str().unwrap(), "--break", &brk, "--capture-each-stop"]);
    assert_eq!(run["adapter"], "debugpy");
    assert_eq!(run["stops"].as_array().unwrap().len(), 3, "{run:#}");
    assert_eq!(run["exit_code"], 0);
    let diffs = run["diffs"].as_array().unwrap();
    assert_eq!(diffs.len(), 2);
    let pairs = |a: &str, b: &str, c: &str, d: &str| {
        vec![("i".to_owned(), a.to_owned(), b.to_owned()), ("total".to_owned(), c.to_owned(), d.to_owned())]
    };
    assert_eq!(modified_paths(&diffs[0]), pairs("0", "1", "0", "10"));
    assert_eq!(modified_paths(&diffs[1]), pairs("1", "2", "10", "30"));
    assert_eq!(diffs[0]["summary"]["added"], 0);
    assert_eq!(diffs[0]["summary"]["removed"], 0);
    let left = env.leftovers();
    assert!(left.is_empty(), "processes left: {left:?}");

    // The human output prints the same changes.
    let text = env
        .cmd(&["debug", "run", script.to_str().unwrap(), "--break", &brk, "--capture-each-stop"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&text.get_output().stdout).into_owned();
    assert!(text.contains("~ total: 0 -> 10") && text.contains("~ i: 1 -> 2"), "{text}");

    // The captures are listed, and one from the first run diffs against one from a later run.
    let listed = env.json(&["debug", "list"]);
    let entries = listed["snapshots"].as_array().unwrap();
    assert_eq!(entries.len(), 6);
    assert_eq!(entries[0]["functionName"], "work");
    assert!(entries[0]["variableCount"].as_u64().unwrap() >= 4);
    let first = snapshot_ids(&run);
    let later = env.json(&["debug", "run", script.to_str().unwrap(), "--break", &brk, "--capture-each-stop"]);
    let later = snapshot_ids(&later);
    // Ids are shown as `snap-<uuid>`; the bare uuid names the same capture.
    assert!(first.iter().chain(&later).all(|id| id.starts_with("snap-") && id.len() == 41), "{first:?}");
    let across = env.json(&["debug", "diff", &first[0], &later[2]["snap-".len()..]]);
    assert_eq!(across["snapshotIdA"], first[0].as_str());
    assert_eq!(across["snapshotIdB"], later[2].as_str());
    assert_eq!(modified_paths(&across), pairs("0", "2", "0", "30"));
    // Same stop in two runs: nothing changed once object addresses are masked.
    let same = env.json(&["debug", "diff", &first[0], &later[0]]);
    assert_eq!(same["summary"]["modified"], 0, "{same:#}");

    // Unknown ids are refused with SNAPSHOT_NOT_FOUND.
    let missing = env
        .cmd(&["debug", "diff", &first[0], "0190ffff-0000-7000-8000-000000000000", "--json"])
        .assert()
        .code(1);
    let missing: Value = serde_json::from_slice(&missing.get_output().stdout).unwrap();
    assert_eq!(missing["code"], "SNAPSHOT_NOT_FOUND");

    // Delete one, then the rest.
    let deleted = env.json(&["debug", "delete", &first[0]]);
    assert_eq!(deleted["deleted"], first[0].as_str());
    assert_eq!(deleted["remaining"], 8);
    let all = env.json(&["debug", "delete", "--all"]);
    assert_eq!((all["deleted"].as_str(), all["remaining"].as_u64()), (Some("all"), Some(0)));
    let gone = env.cmd(&["debug", "delete", &first[1], "--json"]).assert().code(1);
    let gone: Value = serde_json::from_slice(&gone.get_output().stdout).unwrap();
    assert_eq!(gone["code"], "SNAPSHOT_NOT_FOUND");
}

#[test]
fn python_depth_two_expands_nested_objects_that_depth_zero_leaves_out() {
    let env = Env::new();
    let script = env.write("loop.py", PYTHON);
    let brk = format!("loop.py:{}", line_of(PYTHON, "# BREAK"));
    let prog = script.to_str().unwrap();
    let shallow =
        env.json(&["debug", "run", prog, "--break", &brk, "--capture-each-stop", "--max-stops", "1"]);
    assert_eq!(shallow["stopped_early"], true, "{shallow:#}");
    let deep = env.json(&[
        "debug",
        "run",
        prog,
        "--break",
        &brk,
        "--capture-each-stop",
        "--depth",
        "2",
        "--max-stops",
        "1",
    ]);
    let (a, b) = (&snapshot_ids(&shallow)[0], &snapshot_ids(&deep)[0]);
    assert_eq!(deep["stops"][0]["snapshot"]["depth"], 2);
    let diff = env.json(&["debug", "diff", a, b]);
    let added: Vec<&str> =
        diff["added"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert!(added.contains(&"box.inner") && added.contains(&"box.inner.value"), "{added:?}");
    assert!(added.contains(&"box.name"), "{added:?}");
    assert_eq!(diff["summary"]["removed"], 0);
    let left = env.leftovers();
    assert!(left.is_empty(), "processes left: {left:?}");
}

#[test]
fn c_loop_under_lldb_diffs_the_loop_variables_and_expands_structs_with_depth() {
    let env = Env::new();
    let source = env.write("loop.c", C);
    let binary = env.compile(&source);
    let brk = format!("loop.c:{}", line_of(C, "// BREAK"));
    let prog = binary.to_str().unwrap();
    let run = env.json(&["debug", "run", prog, "--break", &brk, "--capture-each-stop", "--depth", "2"]);
    assert_eq!(run["adapter"], "lldb-dap");
    assert_eq!(run["stops"].as_array().unwrap().len(), 3, "{run:#}");
    assert_eq!(run["stops"][0]["function_name"], "main");
    let diffs = run["diffs"].as_array().unwrap();
    let expected = vec![
        ("i".to_owned(), "0".to_owned(), "1".to_owned()),
        ("total".to_owned(), "0".to_owned(), "10".to_owned()),
    ];
    assert_eq!(modified_paths(&diffs[0]), expected, "{:#}", diffs[0]);
    let ids = snapshot_ids(&run);
    let shallow =
        env.json(&["debug", "run", prog, "--break", &brk, "--capture-each-stop", "--max-stops", "1"]);
    let diff = env.json(&["debug", "diff", &snapshot_ids(&shallow)[0], &ids[0]]);
    let added: Vec<&str> =
        diff["added"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert!(added.contains(&"box.inner.value") && added.contains(&"box.size"), "{added:?}");
    assert_eq!(diff["summary"]["modified"], 0, "{diff:#}");
    let left = env.leftovers();
    assert!(left.is_empty(), "processes left: {left:?}");
}

#[test]
fn bad_breakpoints_are_refused_before_anything_starts() {
    let env = Env::new();
    let script = env.write("loop.py", PYTHON);
    let out = env.cmd(&["debug", "run", script.to_str().unwrap(), "--break", "loop.py"]).assert().code(2);
    insta::assert_snapshot!(String::from_utf8_lossy(&out.get_output().stderr), @r#"error: --break "loop.py" is not FILE:LINE; write it like `--break loop.py:12`"#);
    env.cmd(&["debug", "delete"]).assert().code(2);
    let left = env.leftovers();
    assert!(left.is_empty(), "processes left: {left:?}");
}

#[test]
fn python_run_list_diff_and_delete_whole_outputs() {
    let env = Env::new();
    env.write("loop.py", PYTHON);
    let brk = format!("loop.py:{}", line_of(PYTHON, "# BREAK"));
    let run = ["debug", "run", "loop.py", "--break", &brk, "--capture-each-stop", "--max-stops", "2"];
    let out = env.test.transcript(&[&run]);
    let ids = snapshot_ids(&env.json(&run));
    let (a, b) = (ids[0].as_str(), ids[1].as_str());
    let rest = env.test.transcript(&[
        &["debug", "list"],
        &["debug", "diff", a, b],
        &["--json", "debug", "diff", a, b],
        &["debug", "delete", a],
        &["--json", "debug", "delete", "--all"],
        &["--json", "debug", "list"],
    ]);
    insta::with_settings!({omit_expression => true}, {
        insta::assert_snapshot!("debug_python_run", out + &rest);
    });
    let left = env.leftovers();
    assert!(left.is_empty(), "processes left: {left:?}");
}
