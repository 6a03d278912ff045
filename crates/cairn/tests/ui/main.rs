//! `cairn ui` driven in headless Chromium against a real store: a Claude Code session recorded
//! through `cairn hook claude-code`, its timeline, a diff down to a file's lines, a rewind from
//! the page checked against `cairn rewind`, and the access rules (token, Host, same origin).
//! Screenshots of the main views go to target/ui-screenshots/, or with
//! `CAIRN_UI_SCREENSHOTS=docs` to docs/ui/, which docs/ui.md shows.
//!
//! Needs `chromium` and `chromedriver` (scripts/deps/chromium.sh). Without them the test says
//! so and passes, except on CI (`CI=true`), where it must run.

#[path = "../common/mod.rs"]
mod common;

mod http;
mod webdriver;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use common::TestEnv;
use serde_json::{Value, json};

const SESSION: &str = "5b2e6c1d-8f3a-4d7e-9a1b-2c3d4e5f6a7b";
const TOKEN: &str = "test-secret-7f3a";

fn claude_file(env: &TestEnv) -> PathBuf {
    let dir = env
        .home()
        .join(".claude/projects")
        .join(cairn_transcript::claude_dir_name(&env.work().display().to_string()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{SESSION}.jsonl"))
}

/// Appends Claude Code line `n` to the session file.
fn say(env: &TestEnv, kind: &str, n: u32, text: &str) {
    let line = common::claude_line(env, SESSION, kind, n, text);
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(claude_file(env)).unwrap();
    write!(file, "{line}").unwrap();
}

fn hook(env: &TestEnv, name: &str, extra: Value) {
    let mut event = json!({"session_id": SESSION, "transcript_path": claude_file(env).display().to_string(),
        "cwd": env.work().display().to_string(), "permission_mode": "default", "hook_event_name": name});
    for (k, v) in extra.as_object().unwrap() {
        event[k] = v.clone();
    }
    let out = env.cairn(&["hook", "claude-code"]).write_stdin(event.to_string()).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(30));
}

/// Three turns of an agent, as Claude Code runs its hooks; returns the tree as it was when
/// prompt 2 was submitted.
fn record_session(env: &TestEnv) -> Vec<(PathBuf, String)> {
    env.write("src/main.rs", "fn main() {}\n");
    env.write("logo.png", [0x89u8, b'P', b'N', b'G', 0, 0, 1, 2, 3]);
    settle();
    say(env, "user", 1, "Print a greeting");
    hook(env, "UserPromptSubmit", json!({"prompt": "Print a greeting"}));
    env.write("src/main.rs", "fn main() {\n    println!(\"hello from cairn\");\n}\n");
    env.write("logo.png", [0x89u8, b'P', b'N', b'G', 0, 0, 9, 9, 9, 9]);
    settle();
    hook(env, "PostToolUse", json!({"tool_name": "Edit", "tool_input": {"file_path": "src/main.rs"}}));
    say(env, "assistant", 2, "Done: main prints a greeting.");
    hook(env, "Stop", json!({"stop_hook_active": false}));
    let at_turn_2 = common::contents(&env.work());

    say(env, "user", 3, "Add a README\nand a Makefile");
    hook(env, "UserPromptSubmit", json!({"prompt": "Add a README\nand a Makefile"}));
    env.write("README.md", "# demo\n");
    env.write("Makefile", "all:\n\tcargo build\n");
    settle();
    hook(
        env,
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "touch README.md Makefile"}}),
    );
    say(env, "assistant", 4, "Added both.");

    say(env, "user", 5, "Delete main.rs");
    hook(env, "UserPromptSubmit", json!({"prompt": "Delete main.rs"}));
    std::fs::remove_file(env.work().join("src/main.rs")).unwrap();
    hook(env, "PostToolUse", json!({"tool_name": "Bash", "tool_input": {"command": "rm src/main.rs"}}));
    at_turn_2
}

/// `cairn ui` on a free port with a token; returns the process and the URL it printed.
fn start_ui(env: &TestEnv) -> (KillOnDrop, String) {
    let mut cmd = env.command(&["ui", "--listen", "127.0.0.1:0", "--token", TOKEN]);
    cmd.stdout(Stdio::piped()).stderr(Stdio::inherit());
    let mut child = KillOnDrop(cmd.spawn().expect("start cairn ui"));
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("cairn ui: ")
        .unwrap_or_else(|| panic!("no URL printed: {line:?}"))
        .to_owned();
    (child, url)
}

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Where the screenshots go: docs/ui/ when `CAIRN_UI_SCREENSHOTS=docs` asks to retake the
/// docs' pictures, else a folder of the build's (so a test run leaves the checkout clean).
fn shots() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = match std::env::var("CAIRN_UI_SCREENSHOTS").as_deref() {
        Ok("docs") => root.join("docs/ui"),
        _ => root.join("target/ui-screenshots"),
    };
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn requests_without_the_token_or_with_a_foreign_host_or_from_another_origin_are_refused() {
    let env = TestEnv::new();
    env.write("a.txt", "a\n");
    env.ok(&["save", "."]);
    let (_ui, url) = start_ui(&env);
    let addr = url.trim_start_matches("http://").split('/').next().unwrap().to_owned();
    let bearer = format!("Bearer {TOKEN}");
    let get = |path: &str, headers: &[(&str, &str)]| http::request(&addr, "GET", path, headers, b"").status;

    assert_eq!(get("/api/timeline", &[]), 401);
    assert_eq!(get("/", &[]), 401);
    assert_eq!(get("/api/timeline", &[("Authorization", "Bearer wrong")]), 401);
    assert_eq!(get("/api/timeline", &[("Authorization", &bearer), ("Host", "evil.example")]), 403);
    assert_eq!(
        get(&format!("/?token={TOKEN}"), &[("Host", &format!("rebound.example:{}", &addr[10..]))]),
        403
    );
    assert_eq!(get("/api/timeline", &[("Authorization", &bearer)]), 200);
    assert_eq!(get("/api/timeline", &[("Authorization", &bearer), ("Host", "localhost")]), 200);

    // The printed URL sets the cookie and sends the token out of the address bar.
    let first = http::request(&addr, "GET", &format!("/?token={TOKEN}"), &[], b"");
    assert_eq!((first.status, first.header("location")), (303, Some("/")));
    let cookie = first.header("set-cookie").unwrap().split(';').next().unwrap().to_owned();
    assert_eq!(get("/api/timeline", &[("Cookie", &cookie)]), 200);

    // Changes only as JSON, and only from the page's own origin.
    let post = |headers: &[(&str, &str)]| http::request(&addr, "POST", "/api/remove", headers, b"{}").status;
    assert_eq!(post(&[("Cookie", &cookie), ("Content-Type", "text/plain")]), 403);
    let evil = [
        ("Cookie", cookie.as_str()),
        ("Content-Type", "application/json"),
        ("Origin", "http://evil.example"),
    ];
    assert_eq!(post(&evil), 403);
    assert_eq!(post(&[("Cookie", &cookie), ("Content-Type", "application/json")]), 200);

    // Listening beyond loopback needs a token, as for `cairn mcp --http`.
    let refused = env.run(&["ui", "--listen", "0.0.0.0:0"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.stderr.contains("pass --token SECRET"), "{}", refused.stderr);
}

#[test]
fn the_page_lists_the_turns_diffs_a_file_line_by_line_and_rewinds_as_the_cli_does() {
    if !webdriver::available() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "chromium and chromedriver are missing on CI; run scripts/deps/chromium.sh"
        );
        // The one line a skipped test leaves, on the test's stderr.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "skipped: chromium and chromedriver are not installed (scripts/deps/chromium.sh installs them)"
        );
        return;
    }
    let env = TestEnv::new();
    let at_turn_2 = record_session(&env);
    let moments = env.json(&["moment", "list"])["moments"].as_array().unwrap().len();
    let (_ui, url) = start_ui(&env);
    let browser = webdriver::Browser::start();
    browser.goto(&url);

    // The timeline: every moment of the hook session, newest first, prompts shown.
    let shown = browser.wait("the timeline", &format!("return document.querySelectorAll('.entry').length >= {moments} && document.querySelectorAll('.entry').length"));
    assert_eq!(shown, json!(moments));
    let titles =
        browser.js("return [...document.querySelectorAll('.entry .title')].map(e => e.innerText)", json!([]));
    let titles: Vec<&str> = titles.as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    for prompt in ["turn 1: Print a greeting", "turn 2: Add a README", "turn 3: Delete main.rs"] {
        assert!(titles.iter().any(|t| t.contains(prompt)), "{prompt} not in {titles:?}");
    }
    assert!(browser.text("#timeline-count").starts_with(&format!("{moments} entries")));
    browser.screenshot(&shots().join("timeline.png"));

    // A diff from turn 1's prompt to turn 2's: the edited file, side by side, line by line.
    let id_of = |prompt: &str| {
        browser.js("return [...document.querySelectorAll('.entry')].find(e => e.querySelector('.title').innerText.includes(arguments[0])).dataset.id", json!([prompt]))
            .as_str().unwrap().to_owned()
    };
    let (turn1, turn2) = (id_of("turn 1: Print"), id_of("turn 2: Add"));
    browser.click(&format!(".entry[data-id='{turn1}'] button[data-mark='A']"));
    browser.click(&format!(".entry[data-id='{turn2}'] button[data-mark='B']"));
    browser.click("#compare");
    browser.wait("the file tree", "return document.querySelector(\".tree .file[data-path='src/main.rs']\")");
    let tree = browser.text(".split .tree");
    assert!(tree.contains("main.rs") && tree.contains("logo.png") && tree.contains("modified"), "{tree}");
    browser.click(".tree .file[data-path='src/main.rs']");
    browser.wait("the side-by-side rows", "return document.querySelector('table.sbs')");
    let rows = browser.js("return [...document.querySelectorAll('table.sbs tr')].map(r => [r.className, ...[...r.cells].map(c => c.innerText)])", json!([]));
    assert_eq!(
        rows,
        json!([
            ["replace", "1", "fn main() {}", "1", "fn main() {"],
            ["insert", "", "", "2", "    println!(\"hello from cairn\");"],
            ["insert", "", "", "3", "}"]
        ])
    );
    let talk = browser.js("return document.querySelectorAll('.part')[1].innerText", json!([]));
    let talk = talk.as_str().unwrap();
    assert!(talk.contains("Done: main prints a greeting.") && talk.contains("Add a README"), "{talk}");
    browser.screenshot(&shots().join("diff.png"));
    browser.click(".tree .file[data-path='logo.png']");
    browser.wait("the binary note", "return document.querySelector('.file-view .binary')");
    assert_eq!(browser.text(".file-view .binary"), "binary, 9 → 10 bytes");

    // Store figures.
    browser.click("#show-stats");
    browser.wait("the store figures", "return document.querySelector('#store-figures')");
    assert!(browser.text("#store-figures").contains("dedup ratio"));
    browser.wait("the chart", "return document.querySelector('svg.chart path.stored')");
    browser.screenshot(&shots().join("store.png"));

    // Rewind to turn 2 from the page, behind its confirmation.
    browser.click(&format!(".entry[data-id='{turn2}']"));
    browser.wait("the rewind button", "return document.querySelector('#rewind')");
    browser.screenshot(&shots().join("moment.png"));
    browser.click("#rewind");
    browser.wait("the confirmation", "return document.querySelector('#confirm').open");
    let plan = browser.text("#confirm-body");
    assert!(plan.contains("README.md") && plan.contains("src/main.rs"), "{plan}");
    browser.screenshot(&shots().join("rewind.png"));
    browser.click("#confirm-ok");
    browser.wait(
        "the rewind to finish",
        "return document.querySelector('#toast').innerText.includes('rewound')",
    );

    // The files are as they were at prompt 2, and `cairn rewind` to it changes nothing more.
    assert_eq!(common::contents(&env.work()), at_turn_2);
    env.ok(&["rewind", "2", "--code"]);
    assert_eq!(common::contents(&env.work()), at_turn_2);
    // The conversation was forked before prompt 2, beside the original.
    let dir = claude_file(&env).parent().unwrap().to_owned();
    let forked: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| *p != claude_file(&env))
        .collect();
    assert_eq!(forked.len(), 1, "{forked:?}");
    let texts: Vec<String> = cairn_transcript::Transcript::read(&forked[0])
        .unwrap()
        .active_path()
        .entries
        .into_iter()
        .map(|e| e.text)
        .collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
}

/// The names of the snapshots `/api/timeline` lists, as the UI at `url` serves them.
fn timeline_names(url: &str) -> Vec<String> {
    let addr = url.trim_start_matches("http://").split('/').next().unwrap().to_owned();
    let bearer = format!("Bearer {TOKEN}");
    let reply = http::request(&addr, "GET", "/api/timeline", &[("Authorization", &bearer)], b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let mut names = Vec::new();
    collect_names(&serde_json::from_slice(&reply.body).unwrap(), &mut names);
    names
}

fn collect_names(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(name)) = map.get("name") {
                out.push(name.clone());
            }
            map.values().for_each(|v| collect_names(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_names(v, out)),
        _ => {}
    }
}

/// Regression: `cairn ui` opened the store without the password `cairn list` and `cairn mcp`
/// took from `CAIRN_PASSWORD`, and refused every encrypted store.
#[test]
fn the_ui_opens_an_encrypted_local_store_with_the_password_of_the_environment() {
    let env = TestEnv::new().with_var("CAIRN_PASSWORD", "local");
    env.ok(&["init", "--encrypt"]);
    env.write("a.txt", "a\n");
    env.ok(&["save", ".", "--name", "locked"]);
    let (_ui, url) = start_ui(&env);
    assert!(timeline_names(&url).contains(&"locked".to_owned()));
}

/// The same through an encrypted S3 store (encrypted by default) on a loopback S3 server.
#[test]
fn the_ui_opens_an_encrypted_s3_store_with_the_password_of_the_environment() {
    let moto = cairn_test_support::Moto::start();
    moto.create_bucket("ui-encrypted");
    let env = TestEnv::new()
        .with_store("s3://ui-encrypted/store")
        .with_var("CAIRN_PASSWORD", "remote")
        .with_var("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{}", moto.port))
        .with_var("AWS_ALLOW_HTTP", "true")
        .with_var("AWS_ACCESS_KEY_ID", "test")
        .with_var("AWS_SECRET_ACCESS_KEY", "test")
        .with_var("AWS_REGION", "us-east-1");
    env.write("a.txt", "a\n");
    env.ok(&["save", ".", "--name", "shared"]);
    let (_ui, url) = start_ui(&env);
    assert!(timeline_names(&url).contains(&"shared".to_owned()));
}

/// The page's restore goes through the engine's one restore entry point: a moment's name puts
/// every part back, a snapshot id puts that snapshot back.
#[test]
fn the_page_restores_a_moment_by_name_and_a_snapshot_by_id() {
    let env = TestEnv::new();
    env.write("a/one.txt", "one\n");
    env.write("b/two.txt", "two\n");
    env.ok(&["save", "a", "b", "--name", "both"]);
    let single = env.json(&["save", "a"]);
    env.write("a/one.txt", "changed\n");
    env.write("b/two.txt", "changed\n");
    let (_ui, url) = start_ui(&env);
    let addr = url.trim_start_matches("http://").split('/').next().unwrap().to_owned();
    let bearer = format!("Bearer {TOKEN}");
    let restore = |body: Value| {
        let headers = [("Authorization", bearer.as_str()), ("Content-Type", "application/json")];
        let reply = http::request(&addr, "POST", "/api/restore", &headers, body.to_string().as_bytes());
        assert_eq!(reply.status, 200, "{}", reply.text());
    };
    restore(json!({"ref": "both"}));
    assert_eq!(std::fs::read_to_string(env.work().join("b/two.txt")).unwrap(), "two\n");
    env.write("a/one.txt", "changed again\n");
    restore(json!({"ref": single["id"]}));
    assert_eq!(std::fs::read_to_string(env.work().join("a/one.txt")).unwrap(), "one\n");
}
