//! Headless Chromium through chromedriver (Debian's `chromium` and `chromium-driver`,
//! installed by scripts/deps/chromium.sh), spoken to over the W3C WebDriver protocol.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::http;

/// The Enter key, for [`Browser::press`].
pub const ENTER: &str = "\u{E007}";
/// The Escape key.
pub const ESCAPE: &str = "\u{E00C}";
/// The down arrow.
pub const DOWN: &str = "\u{E015}";

/// A running chromedriver with one browser session; both end when it is dropped.
pub struct Browser {
    driver: Child,
    addr: String,
    session: String,
    /// The browser's own process, ended too in case the session could not be deleted.
    browser_pid: Option<u64>,
    _profile: tempfile::TempDir,
}

/// Whether chromium and chromedriver are on PATH.
pub fn available() -> bool {
    let found = |name: &str| {
        Command::new(name).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok()
    };
    found("chromedriver") && (found("chromium") || found("chromium-browser"))
}

impl Browser {
    pub fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let addr = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&addr).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not listen on {addr}");
            std::thread::sleep(Duration::from_millis(50));
        }
        let profile = tempfile::tempdir().unwrap();
        let mut caps = json!({"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,900", "--force-prefers-reduced-motion", "--hide-scrollbars",
                     format!("--user-data-dir={}", profile.path().display())]}}}});
        if Path::new("/usr/bin/chromium").exists() {
            caps["capabilities"]["alwaysMatch"]["goog:chromeOptions"]["binary"] = json!("/usr/bin/chromium");
        }
        let mut browser =
            Browser { driver, addr, session: String::new(), browser_pid: None, _profile: profile };
        let created = browser.call("POST", "/session", Some(caps));
        browser.session = created["sessionId"].as_str().expect("a WebDriver session").to_owned();
        browser.browser_pid = created["capabilities"]["goog:processID"].as_u64();
        browser
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let headers = [("Content-Type", "application/json")];
        let res = http::request(&self.addr, method, path, &headers, body.as_bytes());
        let value: Value =
            serde_json::from_slice(&res.body).unwrap_or_else(|_| panic!("WebDriver {path}: {}", res.text()));
        assert!(res.status < 300, "WebDriver {method} {path}: {}", value);
        value["value"].clone()
    }

    fn session_path(&self, rest: &str) -> String {
        format!("/session/{}{rest}", self.session)
    }

    pub fn goto(&self, url: &str) {
        self.call("POST", &self.session_path("/url"), Some(json!({"url": url})));
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page and returns its value.
    pub fn js(&self, script: &str, args: Value) -> Value {
        self.call("POST", &self.session_path("/execute/sync"), Some(json!({"script": script, "args": args})))
    }

    /// Waits until `script` returns something truthy (up to 15 s) and returns it.
    pub fn wait(&self, what: &str, script: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let v = self.js(script, json!([]));
            if !(v.is_null() || v == json!(false) || v == json!(0) || v == json!("")) {
                return v;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; page text: {}",
                self.text("body")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Clicks the first element `css` selects, as a user would.
    pub fn click(&self, css: &str) {
        let found = self.call(
            "POST",
            &self.session_path("/element"),
            Some(json!({"using": "css selector", "value": css})),
        );
        let id = found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .expect("an element")
            .to_owned();
        self.call("POST", &self.session_path(&format!("/element/{id}/click")), Some(json!({})));
    }

    /// Types `keys` into whatever has the focus, one key at a time, as a keyboard would:
    /// characters as they are, and WebDriver's codes for the others ([`ENTER`], [`ESCAPE`],
    /// [`DOWN`]).
    pub fn press(&self, keys: &str) {
        let actions: Vec<Value> = keys
            .chars()
            .flat_map(|c| {
                [
                    json!({"type": "keyDown", "value": c.to_string()}),
                    json!({"type": "keyUp", "value": c.to_string()}),
                ]
            })
            .collect();
        let body = json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]});
        self.call("POST", &self.session_path("/actions"), Some(body));
    }

    /// The visible text of the first element `css` selects.
    pub fn text(&self, css: &str) -> String {
        self.js("const e = document.querySelector(arguments[0]); return e ? e.innerText : '';", json!([css]))
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// A PNG of the window.
    pub fn screenshot(&self, path: &std::path::Path) {
        let data = self.call("GET", &self.session_path("/screenshot"), None);
        std::fs::write(path, base64_decode(data.as_str().expect("base64 PNG"))).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = http::request(&self.addr, "DELETE", &self.session_path(""), &[], b"");
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        if let Some(pid) = self.browser_pid {
            let _ = Command::new("kill").arg(pid.to_string()).stderr(Stdio::null()).status();
        }
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> =
        text.bytes().filter(|c| !c.is_ascii_whitespace() && *c != b'=').map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, d)| acc | (u32::from(*d) << (18 - 6 * i)));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}
