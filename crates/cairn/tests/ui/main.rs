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

mod diffs;
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

/// The work tree's files and contents.
type Tree = Vec<(PathBuf, String)>;

/// Three turns of an agent, as Claude Code runs its hooks; returns the tree as it was when
/// prompt 2 was submitted, and when prompt 3 was.
fn record_session(env: &TestEnv) -> (Tree, Tree) {
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

    let at_turn_3 = common::contents(&env.work());
    say(env, "user", 5, "Delete main.rs");
    hook(env, "UserPromptSubmit", json!({"prompt": "Delete main.rs"}));
    std::fs::remove_file(env.work().join("src/main.rs")).unwrap();
    hook(env, "PostToolUse", json!({"tool_name": "Bash", "tool_input": {"command": "rm src/main.rs"}}));
    (at_turn_2, at_turn_3)
}

/// `cairn ui` on a free port with a token; returns the process and the URL it printed.
fn start_ui(env: &TestEnv) -> (KillOnDrop, String) {
    start_ui_on(env, "127.0.0.1:0")
}

/// `cairn ui --listen LISTEN` with a token.
fn start_ui_on(env: &TestEnv, listen: &str) -> (KillOnDrop, String) {
    let mut cmd = env.command(&["ui", "--listen", listen, "--token", TOKEN]);
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

    // The favicon browsers ask for on their own is served, not a 404.
    let icon = http::request(&addr, "GET", "/favicon.ico", &[("Authorization", &bearer)], b"");
    assert_eq!((icon.status, icon.header("content-type")), (200, Some("image/svg+xml")));
    assert!(icon.text().starts_with("<svg"));

    // "restore to" a relative path is refused: the server's directory is not the user's.
    let relative = http::request(
        &addr,
        "POST",
        "/api/restore",
        &[("Cookie", &cookie), ("Content-Type", "application/json")],
        json!({"ref": "latest", "to": "restored/here"}).to_string().as_bytes(),
    );
    assert_eq!(relative.status, 400, "{}", relative.text());
    assert!(relative.text().contains("is a relative path"), "{}", relative.text());
    assert!(!env.work().join("restored").exists());

    // Listening beyond loopback needs a token, as for `cairn mcp --http`.
    let refused = env.run(&["ui", "--listen", "0.0.0.0:0"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.stderr.contains("pass --token SECRET"), "{}", refused.stderr);
}

/// `--listen` takes a host name: `localhost` resolves to loopback and the rules stay the same.
#[test]
fn listen_takes_a_host_name_and_localhost_stays_loopback() {
    let env = TestEnv::new();
    env.write("a.txt", "a\n");
    env.ok(&["save", ".", "--name", "first"]);
    let (_ui, url) = start_ui_on(&env, "localhost:0");
    assert!(url.starts_with("http://127.0.0.1:") || url.starts_with("http://[::1]:"), "{url}");
    assert!(timeline_names(&url).contains(&"first".to_owned()));
    let refused = env.run(&["ui", "--listen", "localhost"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.stderr.contains("is not HOST:PORT"), "{}", refused.stderr);
}

/// Skips a browser test where chromium is missing (never on CI); true when it should skip.
fn no_browser() -> bool {
    if webdriver::available() {
        return false;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "chromium and chromedriver are missing on CI; run scripts/deps/chromium.sh"
    );
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "skipped: chromium and chromedriver are not installed (scripts/deps/chromium.sh installs them)"
    );
    true
}

/// Moves the focus with `j`, `k` and the arrows alone to the timeline row whose title holds
/// `title`, from where the page's keys start: the focused row, else the open one, else above
/// the newest.
fn focus_row(browser: &webdriver::Browser, title: &str) {
    let at = browser.js(
        "const rows = [...document.querySelectorAll('#entries .entry:not([hidden])')];
         const a = document.activeElement;
         const cur = (a && a.closest && a.closest('.entry')) || document.querySelector('.entry.open');
         return [rows.indexOf(cur), rows.findIndex(r => r.querySelector('.title').innerText.includes(arguments[0])), rows.length]",
        json!([title]),
    );
    let [from, to, len] = [0, 1, 2].map(|i| at[i].as_i64().unwrap());
    assert!(to >= 0, "no row titled {title}");
    let keys = if from < 0 {
        // The first key lands on the newest row; the arrow and j move alike.
        format!("{}{}", webdriver::DOWN, "j".repeat(to as usize))
    } else if to > from {
        "j".repeat((to - from) as usize)
    } else if to < from {
        "k".repeat((from - to) as usize)
    } else if to + 1 < len {
        "jk".to_owned()
    } else {
        "kj".to_owned()
    };
    browser.press(&keys);
    let focused = browser.text(":focus .title");
    assert!(focused.contains(title), "the focus is on {focused:?}, not {title}");
}

#[test]
fn the_keyboard_alone_rewinds_and_restores_and_the_activity_panel_keeps_what_each_did() {
    use webdriver::{ENTER, ESCAPE};
    if no_browser() {
        return;
    }
    let env = TestEnv::new();
    let (at_turn_2, at_turn_3) = record_session(&env);
    let (_ui, url) = start_ui(&env);
    let browser = webdriver::Browser::start();
    browser.goto(&url);
    browser.wait("the timeline", "return document.querySelectorAll('.entry').length >= 3");
    assert_eq!(
        browser.js("return document.querySelector('link[rel=icon]').getAttribute('href')", json!([])),
        json!("/favicon.svg")
    );

    // ? shows the shortcuts; Escape closes them.
    browser.press("?");
    browser.wait("the shortcut help", "return document.querySelector('#help').open");
    assert!(browser.text("#help").contains("rewind to the row's prompt"), "{}", browser.text("#help"));
    browser.screenshot(&shots().join("shortcuts.png"));
    browser.press(ESCAPE);
    browser.wait("the help to close", "return !document.querySelector('#help').open");

    // Turns first: the prompts are the rows, a turn's tool checkpoints folded under its prompt.
    let visible = "return [...document.querySelectorAll('#entries .entry')].filter(r => r.getClientRects().length).map(r => r.querySelector('.title').innerText.replace(/^.*turn/, 'turn'))";
    assert_eq!(
        browser.js(visible, json!([])),
        json!(["turn 3: Delete main.rs", "turn 2: Add a README", "turn 1: Print a greeting"])
    );
    assert_eq!(browser.text(".entry.prompt:not([hidden]) .tools"), "▸ 1 tool checkpoint: Bash");
    focus_row(&browser, "turn 2: Add");
    browser.press("l");
    assert_eq!(
        browser.js(visible, json!([])),
        json!([
            "turn 3: Delete main.rs",
            "turn 2: Add a README",
            "turn 2 (Bash)",
            "turn 1: Print a greeting"
        ])
    );
    browser.screenshot(&shots().join("turns.png"));
    browser.press("h");
    assert_eq!(browser.js(visible, json!([])).as_array().unwrap().len(), 3);
    // A plain snapshot with no name or description is titled by what changed.
    let plain = browser.js(
        "return [changedTitle({parts: [{kind: 'dir', target: '/w/proj', files_changed: 3}]}), changedTitle({parts: [{kind: 'dir', target: '/w/proj', files_changed: null}]})]",
        json!([]),
    );
    assert_eq!(plain, json!(["3 files changed in proj", "dir proj, first snapshot"]));

    // / searches the rows; Escape leaves the search.
    browser.press("/README");
    browser
        .wait("the search", "return [...document.querySelectorAll('#entries .entry')].filter(r => r.getClientRects().length).length === 1");
    assert!(browser.text("#entries .entry:not([hidden]) .title").contains("turn 2: Add a README"));
    browser.js(
        "const s = document.querySelector('#search'); s.value = ''; s.dispatchEvent(new Event('input'));",
        json!([]),
    );
    browser.press(ESCAPE);

    // Enter opens a row, c compares it with the one before it.
    focus_row(&browser, "turn 2: Add");
    browser.press(ENTER);
    browser.wait("the row opened", "return document.querySelector('#pane #rewind')");
    browser.press("c");
    browser.wait("the diff", "return document.querySelector('#diff-title')");
    assert_eq!(browser.text("#diff-title"), "turn 1: after Edit → turn 2: Add a README");

    // w asks before a rewind, with the plan in words; Escape cancels and nothing changes.
    let before = common::contents(&env.work());
    focus_row(&browser, "turn 2: Add");
    browser.press("w");
    browser.wait("the confirmation", "return document.querySelector('#confirm').open");
    browser.wait("the plan in words", "return document.querySelector('#confirm-body .plan-words')");
    let words = browser.text("#confirm-body .plan-words");
    assert_eq!(words, "1 file put back, 2 removed (not there then)");
    browser.screenshot(&shots().join("rewind-plan.png"));
    browser.press(ESCAPE);
    browser.wait("the confirmation to close", "return !document.querySelector('#confirm').open");
    assert_eq!(common::contents(&env.work()), before);

    // w again and Enter: the rewind, checked on disk.
    focus_row(&browser, "turn 2: Add");
    browser.press("w");
    browser.wait("the confirmation", "return document.querySelector('#confirm').open && document.querySelector('#confirm-body .plan-words')");
    browser.press(ENTER);
    browser.wait(
        "the rewind in the activity panel",
        "return document.querySelector('#activity-list').innerText.includes('rewound to turn 2')",
    );
    assert_eq!(common::contents(&env.work()), at_turn_2);

    // The panel keeps the resume command and the safety snapshot with its undo command.
    let line = |what: &str| {
        browser.text(&format!(
            "#activity-list .activity-item:first-child .activity-line[data-what='{what}'] code"
        ))
    };
    let resume = line("resume");
    assert!(resume.starts_with("claude --resume "), "{resume}");
    let undo = line("undo");
    let safety = browser.text("#activity-list .activity-item:first-child .activity-line[data-what='safety']");
    assert!(
        undo.starts_with("cairn restore ") && safety.ends_with(&undo["cairn restore ".len()..]),
        "{undo} / {safety}"
    );
    let copies = browser.js(
        "return document.querySelectorAll('#activity-list .activity-item:first-child button.copy').length",
        json!([]),
    );
    assert_eq!(copies, json!(2));
    browser.screenshot(&shots().join("activity.png"));

    // The undo command does what it says: the files are back as they were before the rewind.
    let args: Vec<&str> = undo.split_whitespace().skip(1).collect();
    env.ok(&args);
    assert_eq!(common::contents(&env.work()), before);

    // r restores turn 3's prompt in place, behind the same confirmation.
    focus_row(&browser, "turn 3: Delete");
    browser.press("r");
    browser.wait("the confirmation", "return document.querySelector('#confirm').open && document.querySelector('#confirm-body .plan-words')");
    assert_eq!(browser.text("#confirm-body .plan-words"), "1 file put back");
    browser.press(ENTER);
    browser.wait(
        "the restore in the activity panel",
        "return document.querySelector('#activity-list').innerText.includes('restored turn 3')",
    );
    assert_eq!(common::contents(&env.work()), at_turn_3);
    assert!(line("undo").starts_with("cairn restore "), "{}", browser.text("#activity-list"));

    // The activity stays when the page is loaded again.
    browser.goto(&url);
    browser.wait("the timeline", "return document.querySelectorAll('.entry').length >= 3");
    let kept = browser.text("#activity-list");
    assert!(
        kept.contains("rewound to turn 2") && kept.contains("restored turn 3") && kept.contains(&resume),
        "{kept}"
    );

    // The plan's words for what a rewind keeps, merges or cannot merge, and a commit undone.
    let words = browser.js(
        "return planWords([{path: '.git/HEAD', action: 'rewrite', kind: 'file'}, {path: '.git/refs/heads/main', action: 'rewrite', kind: 'file'}, {path: 'a', action: 'create', kind: 'file'}, {path: 'b', action: 'rewrite', kind: 'file'}, {path: 'c', action: 'rewrite', kind: 'file'}, {path: 'd', action: 'rewrite', kind: 'file'}, {path: 'e', action: 'create', kind: 'file'}, {path: 'f', action: 'chmod', kind: 'file'}], [{path: 'b', action: 'keep', kind: 'file'}, {path: 'c', action: 'merge', kind: 'file'}, {path: 'd', action: 'conflict', kind: 'file'}]).map(p => p.textContent)",
        json!([]),
    );
    assert_eq!(
        words,
        json!([
            "3 files put back, 1 kept because you changed it, 1 merged, 1 conflict",
            "2 entries under .git: a commit will be undone"
        ])
    );
}

/// axe-core (scripts/a11y/axe_check.py, installed by scripts/deps/axe.sh) finds no serious or
/// critical violation on any view of the page over a recorded agent session.
#[test]
fn axe_finds_no_serious_or_critical_accessibility_violation_on_any_view() {
    if no_browser() {
        return;
    }
    let has_axe = std::process::Command::new("python3")
        .args(["-c", "import selenium, axe_selenium_python"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_axe {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "selenium and axe-selenium-python are missing on CI; run scripts/deps/axe.sh"
        );
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "skipped: axe-selenium-python is not installed (scripts/deps/axe.sh)"
        );
        return;
    }
    let env = TestEnv::new();
    record_session(&env);
    let (_ui, url) = start_ui(&env);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/a11y/axe_check.py");
    let out = std::process::Command::new("python3").arg(script).arg(&url).output().unwrap();
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{report}");
    for view in
        ["timeline", "shortcut help", "moment", "rewind confirmation", "diff", "unified diff", "store"]
    {
        assert!(report.contains(&format!("{view}: 0 serious or critical")), "{view} not checked: {report}");
    }
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
    let (at_turn_2, _) = record_session(&env);
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
    let rows = browser.js("return [...document.querySelectorAll('table.sbs tbody tr')].map(r => [r.className, ...[...r.cells].map(c => c.innerText)])", json!([]));
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
