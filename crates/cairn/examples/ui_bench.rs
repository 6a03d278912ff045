//! How fast `cairn ui` answers on a large store: the timeline of a 10,000-snapshot session and
//! the diff of two 50,000-file snapshots, through the JSON API and, when chromium and
//! chromedriver are installed, rendered in headless Chromium: the first rows drawn, the
//! oldest entry reached (the position slider's End key, and G), a file diff drawn. Prints a
//! table with the machine's load; asserts nothing.
//!
//! `cargo run -p cairn --example ui_bench [-- SNAPSHOTS FILES CHANGED]` (defaults 10000 50000 1000).

// The test modules it borrows have parts only the tests use.
#![allow(clippy::print_stdout, dead_code)]

#[path = "../tests/ui/http.rs"]
mod http;
#[path = "../tests/ui/webdriver.rs"]
mod webdriver;

use std::path::Path;
use std::time::{Duration, Instant};

use cairn_lib::ops::resolve::CallContext;
use cairn_lib::ops::save::SaveOptions;
use cairn_lib::ops::transcript::AgentPlaces;
use cairn_lib::{Repository, StoreAddress};
use serde_json::{Value, json};

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let (snapshots, files, changed) = (
        args.first().copied().unwrap_or(10_000),
        args.get(1).copied().unwrap_or(50_000),
        args.get(2).copied().unwrap_or(1_000),
    );
    let root = tempfile::tempdir().unwrap();
    let store_dir = root.path().join("store");
    let store = Repository::open(&store_dir).unwrap();
    let context = CallContext::default();
    let save = |target: &Path| {
        store
            .save(&SaveOptions { target: target.display().to_string(), ..SaveOptions::default() }, &context)
            .unwrap()
            .snapshot
    };

    // A session of many small saves, one file changed each time.
    let small = root.path().join("small");
    std::fs::create_dir_all(small.join("src")).unwrap();
    for i in 0..20 {
        std::fs::write(small.join(format!("src/f{i}.rs")), format!("// file {i}\n")).unwrap();
    }
    let started = Instant::now();
    for i in 0..snapshots {
        std::fs::write(small.join(format!("src/f{}.rs", i % 20)), format!("// file, version {i}\n")).unwrap();
        save(&small);
    }
    let saving = started.elapsed();

    // Two snapshots of a 50,000-file tree shaped like source code, `changed` files apart.
    let big = root.path().join("big");
    for i in 0..files {
        let dir = big.join(format!("pkg{:03}/mod{:02}", i % 500, (i / 500) % 10));
        if i < 5000 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::write(dir.join(format!("file{i}.rs")), source(i, 0)).unwrap();
    }
    let a = save(&big);
    for i in (0..files).step_by((files / changed.max(1)).max(1) as usize).take(changed as usize) {
        let dir = big.join(format!("pkg{:03}/mod{:02}", i % 500, (i / 500) % 10));
        std::fs::write(dir.join(format!("file{i}.rs")), source(i, 1)).unwrap();
    }
    std::thread::sleep(Duration::from_millis(20));
    let b = save(&big);
    drop(store);

    // The server, in this process.
    let (tx, rx) = std::sync::mpsc::channel();
    let options = cairn_ui::UiOptions {
        store: StoreAddress::Dir(store_dir),
        unlock: Default::default(),
        addr: "127.0.0.1:0".parse().unwrap(),
        token: None,
        allowed_hosts: Vec::new(),
        pinned_session: None,
        places: AgentPlaces::from_home(root.path(), root.path().display().to_string()),
    };
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(cairn_ui::serve(options, |url| tx.send(url.to_owned()).unwrap())).unwrap();
    });
    let url = rx.recv().unwrap();
    let addr = url.trim_start_matches("http://").trim_end_matches('/').to_owned();
    let get = |path: &str| {
        let t = Instant::now();
        let res = http::request(&addr, "GET", path, &[], b"");
        assert_eq!(res.status, 200, "{path}: {}", res.text());
        (t.elapsed(), res.body.len())
    };
    let median = |path: &str| {
        let mut runs: Vec<(Duration, usize)> = (0..5).map(|_| get(path)).collect();
        runs.sort();
        runs[2]
    };

    println!(
        "store: {snapshots} snapshots of a 20-file tree saved in {:.1} s; two snapshots of {files} files, {changed} changed",
        saving.as_secs_f64()
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average (1, 5, 15 min) before timing: {}",
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    println!("{:<58} {:>9} {:>10}", "request", "time", "bytes");
    let row = |what: &str, (t, n): (Duration, usize)| {
        println!("{what:<58} {:>7.0}ms {n:>10}", t.as_secs_f64() * 1000.0)
    };
    row("timeline, first page (100 entries)", median("/api/timeline?limit=100"));
    row(
        &format!("timeline, last page (offset {})", snapshots.saturating_sub(100)),
        median(&format!("/api/timeline?limit=100&offset={}", snapshots.saturating_sub(100))),
    );
    row("timeline, whole session in one response (for comparison)", median("/api/timeline?limit=1000"));
    row(
        &format!("diff of the two {files}-file snapshots, computed"),
        get(&format!("/api/diff?from={}&to={}", a.id, b.id)),
    );
    row(
        "the same diff again (cached), first 500 entries",
        median(&format!("/api/diff?from={}&to={}", a.id, b.id)),
    );
    row(
        "a further page of 500 entries",
        median(&format!("/api/diff/entries?from={}&to={}&part=0&offset=500", a.id, b.id)),
    );
    row(
        "one file side by side",
        median(&format!("/api/file-diff?from={}&to={}&path=pkg000/mod00/file0.rs", a.id, b.id)),
    );
    row("store figures", median("/api/stats"));

    if !webdriver::available() {
        println!(
            "chromium or chromedriver missing: no render times (scripts/deps/chromium.sh installs them)"
        );
        return;
    }
    let browser = webdriver::Browser::start();
    let total = snapshots + 2;
    let timed = |what: &str, t: Instant| println!("{what:<58} {:>7.0}ms", t.elapsed().as_secs_f64() * 1000.0);
    let t = Instant::now();
    browser.goto(&url);
    browser.wait("a row", "return document.querySelector('.entry')");
    timed("browser: page load to the first timeline row drawn", t);
    let rows = total.min(100);
    browser.wait("rows", &format!("return document.querySelectorAll('.entry').length >= {rows}"));
    timed(&format!("browser: page load to {rows} timeline rows drawn"), t);
    // The oldest entry, from the newest: the slider's End key, then (page loaded again) G.
    let oldest = format!(
        "const r = [...document.querySelectorAll('#entries .entry')].find(r => r.index === {}); return r && r.getBoundingClientRect().height > 0",
        total - 1
    );
    browser.js("document.getElementById('scrubber').focus()", json!([]));
    let t = Instant::now();
    browser.press("\u{E010}");
    browser.wait("the oldest row", &oldest);
    timed(&format!("browser: slider End to the oldest of {total} entries drawn"), t);
    browser.goto(&url);
    browser.wait("rows", &format!("return document.querySelectorAll('.entry').length >= {rows}"));
    let t = Instant::now();
    browser.press("G");
    browser.wait(
        "the oldest row focused",
        &format!("return document.activeElement && document.activeElement.index === {}", total - 1),
    );
    timed(&format!("browser: G to the oldest of {total} entries focused"), t);
    let t = Instant::now();
    browser.press("g");
    browser.wait(
        "the newest row focused",
        "return document.activeElement && document.activeElement.index === 0",
    );
    timed("browser: g back to the newest entry focused", t);
    browser.goto(&url);
    browser.wait("rows", "return document.querySelectorAll('.entry').length >= 2");
    browser.js(
        &format!(
            "state.marks = {{A: {:?}, B: {:?}}}; document.getElementById('compare').disabled = false;",
            a.id.to_string(),
            b.id.to_string()
        ),
        json!([]),
    );
    let t = Instant::now();
    browser.click("#compare");
    let shown: Value = browser.wait("the tree", "return document.querySelectorAll('.tree .file').length");
    println!(
        "{:<58} {:>7.0}ms",
        format!("browser: compare clicked to the file tree drawn ({shown} files)"),
        t.elapsed().as_secs_f64() * 1000.0
    );
    let t = Instant::now();
    browser.click(".tree .file");
    browser.wait("rows", "return document.querySelector('table.sbs')");
    println!(
        "{:<58} {:>7.0}ms",
        "browser: a file clicked to its side-by-side rows",
        t.elapsed().as_secs_f64() * 1000.0
    );
}

/// A small source file; `version` changes one line.
fn source(i: u64, version: u64) -> String {
    format!(
        "// module {i}\nuse std::fmt;\n\npub fn value() -> u64 {{\n    {}\n}}\n\npub fn name() -> &'static str {{\n    \"file{i}\"\n}}\n",
        i * 7 + version
    )
}
