//! Readable diffs in the page, over a real agent turn: a Rust file split and unified (the
//! choice kept), its changed word marked, its tokens coloured, its unchanged lines folded and
//! opened; an image old beside new through the guarded raw endpoint; and the named snapshot
//! the turn's checkpoint reused, still on the timeline. Screenshots as in `main.rs`.

use serde_json::json;

use super::common::TestEnv;
use super::{TOKEN, hook, http, no_browser, say, settle, shots, start_ui, webdriver};

/// 24×16 PNGs, red and blue.
const RED: [u8; 83] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00,
    0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x10, 0x08, 0x02, 0x00, 0x00, 0x00, 0x83, 0x46, 0x28, 0xc2, 0x00,
    0x00, 0x00, 0x1a, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x38, 0xa1, 0xa1, 0x41, 0x15, 0xc4, 0x30,
    0x6a, 0xd0, 0xa8, 0x41, 0xa3, 0x06, 0x8d, 0x1a, 0x44, 0x19, 0x02, 0x00, 0x4c, 0xc1, 0xa4, 0x10, 0xe1,
    0x28, 0xcc, 0x00, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];
const BLUE: [u8; 83] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00,
    0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x10, 0x08, 0x02, 0x00, 0x00, 0x00, 0x83, 0x46, 0x28, 0xc2, 0x00,
    0x00, 0x00, 0x1a, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xd0, 0x88, 0x3a, 0x41, 0x15, 0xc4, 0x30,
    0x6a, 0xd0, 0xa8, 0x41, 0xa3, 0x06, 0x8d, 0x1a, 0x44, 0x19, 0x02, 0x00, 0x8e, 0xa8, 0xef, 0x10, 0x64,
    0xaa, 0x3c, 0xdb, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A Rust file of 22 lines whose line 11 sets `v10` to `ten`.
fn lib_rs(ten: u32) -> String {
    let body: String =
        (1..=20).map(|i| format!("    let v{i} = {};\n", if i == 10 { ten } else { i })).collect();
    format!("pub fn values() {{\n{body}}}\n")
}

/// A named snapshot, then one agent turn: the prompt's checkpoint finds nothing changed and
/// reuses the named snapshot; the edit changes one number of lib.rs and the logo's colour.
fn record(env: &TestEnv) {
    env.write("src/lib.rs", lib_rs(10));
    env.write("logo.png", RED);
    env.ok(&["save", ".", "--name", "before-refactor"]);
    settle();
    say(env, "user", 1, "Make v10 eleven");
    hook(env, "UserPromptSubmit", json!({"prompt": "Make v10 eleven"}));
    env.write("src/lib.rs", lib_rs(11));
    env.write("logo.png", BLUE);
    settle();
    hook(env, "PostToolUse", json!({"tool_name": "Edit", "tool_input": {"file_path": "src/lib.rs"}}));
}

const ROWS: &str = "return [...document.querySelectorAll(arguments[0])].map(r => [r.className, r.innerText.replace(/\\s+$/, '')])";

#[test]
fn a_file_diff_is_split_or_unified_word_marked_coloured_folded_and_an_image_shown_old_beside_new() {
    if no_browser() {
        return;
    }
    let env = TestEnv::new();
    record(&env);
    let (_ui, url) = start_ui(&env);
    let browser = webdriver::Browser::start();
    browser.goto(&url);
    browser.wait("the timeline", "return document.querySelectorAll('.entry').length >= 3");

    // The named snapshot turn 1 reused has its own row, which says so; the turn's row names it.
    let named = browser.js(
        "const r = [...document.querySelectorAll('.entry')].find(r => r.querySelector('.title').innerText === 'before-refactor'); return r && [r.dataset.id, r.innerText]",
        json!([]),
    );
    let (named_id, named_text) = (named[0].as_str().unwrap().to_owned(), named[1].as_str().unwrap());
    assert!(named_text.contains("part of turn 1"), "{named_text}");
    assert!(
        browser.text(".entry.prompt").contains("reuses before-refactor"),
        "{}",
        browser.text(".entry.prompt")
    );
    browser.click(&format!(".entry[data-id='{named_id}']"));
    browser.wait("the snapshot", "return document.querySelector('#pane input[data-name-for]')");
    assert_eq!(
        browser.js("return document.querySelector('#pane input[data-name-for]').value", json!([])),
        json!("before-refactor")
    );

    // The edit's checkpoint, unfolded from its prompt, diffed with the prompt's.
    browser.click(".entry.prompt .tools button.fold");
    browser.click(".entry.tool");
    browser.wait("the diff button", "return document.querySelector('#diff-previous')");
    browser.click("#diff-previous");
    browser.wait("the file tree", "return document.querySelector(\".tree .file[data-path='src/lib.rs']\")");
    browser.click(".tree .file[data-path='src/lib.rs']");
    browser.wait("the split rows", "return document.querySelector('table.sbs')");

    // Split: unchanged lines folded around three of context, the number marked, Rust coloured.
    let rows = browser.js(ROWS, json!(["table.sbs tbody tr"]));
    let shape: Vec<&str> = rows.as_array().unwrap().iter().map(|r| r[0].as_str().unwrap()).collect();
    assert_eq!(shape, ["fold", "equal", "equal", "equal", "replace", "equal", "equal", "equal", "fold"]);
    assert_eq!(rows[0][1], json!("⋯ 7 unchanged lines"));
    assert_eq!(rows[8][1], json!("⋯ 8 unchanged lines"));
    assert_eq!(browser.text("table.sbs mark.w-del"), "10");
    assert_eq!(browser.text("table.sbs mark.w-add"), "11");
    assert_eq!(browser.text("table.sbs tr.replace td.new .hl-k"), "let");
    assert!(browser.text("#file-title + .muted").contains("Rust"));
    browser.screenshot(&shots().join("diff-split.png"));

    // A fold opens in place.
    browser.click("table.sbs tr.fold button");
    let rows = browser.js(ROWS, json!(["table.sbs tbody tr"]));
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 9 - 1 + 7);
    assert_eq!(
        rows[0][1].as_str().unwrap().split_whitespace().collect::<Vec<_>>(),
        ["1", "pub", "fn", "values()", "{", "1", "pub", "fn", "values()", "{"]
    );

    // Unified, by the switch: the old line above the new one; the choice is kept.
    browser.click(".diff-view-switch .view-unified");
    browser.wait("the unified rows", "return document.querySelector('table.uni')");
    let changed = browser.js(ROWS, json!(["table.uni tr.del, table.uni tr.add"]));
    assert_eq!(
        changed,
        json!([["del", "11\t\t−\t    let v10 = 10;"], ["add", "\t11\t+\t    let v10 = 11;"]])
    );
    assert_eq!(browser.text("table.uni tr.add mark.w-add"), "11");
    assert_eq!(browser.js("return localStorage.getItem('cairn-ui-diff-view')", json!([])), json!("unified"));
    browser.screenshot(&shots().join("diff-unified.png"));
    browser.press("u");
    browser.wait("split again", "return document.querySelector('table.sbs')");
    browser.press("u");
    browser.wait("unified again", "return document.querySelector('table.uni')");

    // The image: the old and the new one side by side, each loaded from the raw endpoint.
    browser.click(".tree .file[data-path='logo.png']");
    let sizes = browser.wait(
        "two images",
        "const i = [...document.querySelectorAll('.image-pair img')]; return i.length === 2 && i.every(x => x.complete && x.naturalWidth) && i.map(x => [x.naturalWidth, x.alt])",
    );
    assert_eq!(sizes, json!([[24, "logo.png, before"], [24, "logo.png, after"]]));
    browser.screenshot(&shots().join("diff-image.png"));

    // The raw endpoint sends images only, typed by their name and sandboxed, to the token only.
    let src = browser.js("return document.querySelector('.image-pair img').getAttribute('src')", json!([]));
    let src = src.as_str().unwrap();
    let addr = url.trim_start_matches("http://").split('/').next().unwrap().to_owned();
    let bearer = format!("Bearer {TOKEN}");
    let image = http::request(&addr, "GET", src, &[("Authorization", &bearer)], b"");
    assert_eq!((image.status, image.body.as_slice()), (200, RED.as_slice()));
    assert_eq!(image.header("content-type"), Some("image/png"));
    assert_eq!(image.header("x-content-type-options"), Some("nosniff"));
    assert!(image.header("content-security-policy").is_some_and(|c| c.contains("sandbox")));
    let source = http::request(
        &addr,
        "GET",
        &src.replace("logo.png", "src/lib.rs"),
        &[("Authorization", &bearer)],
        b"",
    );
    assert_eq!(source.status, 400, "{}", source.text());
    assert_eq!(http::request(&addr, "GET", src, &[], b"").status, 401);
}

/// The timeline can be hidden and resized from the keyboard, and the position slider jumps.
#[test]
fn the_timeline_hides_resizes_and_its_slider_jumps_to_the_oldest_entry() {
    if no_browser() {
        return;
    }
    let env = TestEnv::new();
    record(&env);
    let (_ui, url) = start_ui(&env);
    let browser = webdriver::Browser::start();
    browser.goto(&url);
    browser.wait("the timeline", "return document.querySelectorAll('.entry').length >= 3");
    let width = "return Math.round(document.querySelector('#timeline').getBoundingClientRect().width)";
    let before = browser.js(width, json!([])).as_i64().unwrap();
    browser.js("document.querySelector('#splitter').focus()", json!([]));
    browser.press("\u{E014}\u{E014}"); // right arrow twice: 10% wider
    let after = browser.js(width, json!([])).as_i64().unwrap();
    assert!(after > before + 100, "{before} → {after}");
    browser.js("document.body.focus(); document.activeElement.blur()", json!([]));
    browser.press("t");
    browser.wait("the timeline hidden", "return document.querySelector('#timeline').hidden");
    assert_eq!(
        browser
            .js("return document.querySelector('#timeline-toggle').getAttribute('aria-expanded')", json!([])),
        json!("false")
    );
    browser.press("t");
    browser.wait("the timeline shown", "return !document.querySelector('#timeline').hidden");

    // G jumps to the oldest entry: the named snapshot, focused.
    browser.press("G");
    browser.wait("the oldest row focused", "return document.activeElement.classList.contains('entry') && document.activeElement.innerText.includes('before-refactor')");
    assert!(browser.text("#scrubber-at").starts_with("entry 3 of 3"), "{}", browser.text("#scrubber-at"));
    // g back to the newest: a tool checkpoint, folded, so its turn's row takes the focus.
    browser.press("g");
    browser.wait("the newest turn focused", "return document.activeElement.classList.contains('entry') && document.activeElement.querySelector('.title').innerText.includes('turn 1: Make v10 eleven')");
    assert_eq!(
        browser.js("return document.querySelector('label[for=scrubber]').innerText", json!([])),
        json!("position")
    );
}
