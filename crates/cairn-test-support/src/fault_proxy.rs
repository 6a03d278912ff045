//! `scripts/s3-fault-proxy` in front of a [`Moto`] server: it passes requests on, counts them
//! and their bytes, and fails, drops, delays or holds the ones its rules name. Tests of remote
//! stores use it to count what a command costs and to break uploads on purpose.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::Moto;

/// A running fault proxy; killed when dropped.
pub struct FaultProxy {
    child: Child,
    /// The loopback port it answers on (point `AWS_ENDPOINT_URL` here).
    pub port: u16,
}

impl FaultProxy {
    /// Starts the proxy in front of `moto`, waiting until it answers.
    pub fn start(moto: &Moto) -> Self {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/s3-fault-proxy");
        let dir = tempfile::tempdir().unwrap();
        let port_file = dir.path().join("port");
        let child = Command::new("python3")
            .arg(&script)
            .args(["--upstream", &format!("http://127.0.0.1:{}", moto.port), "--port-file"])
            .arg(&port_file)
            .stdout(Stdio::null())
            .spawn()
            .expect("python3 runs the proxy");
        let deadline = Instant::now() + Duration::from_secs(20);
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                break text.trim().parse().unwrap();
            }
            assert!(Instant::now() < deadline, "the proxy did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        Self { child, port }
    }

    /// One request to the proxy's own control API (`/__proxy/WHAT`), its JSON answer.
    pub fn call(&self, method: &str, what: &str, body: &str) -> Value {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("the proxy answers");
        let request = format!(
            "{method} /__proxy/{what} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let body = answer.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
        serde_json::from_str(body).unwrap_or_else(|e| panic!("the proxy answered {answer:?}: {e}"))
    }

    /// Replaces the proxy's fault rules.
    pub fn faults(&self, rules: Value) {
        self.call("POST", "faults", &json!({ "rules": rules }).to_string());
    }

    /// The requests it has seen, their bytes, and those held in flight.
    pub fn stats(&self) -> Value {
        self.call("GET", "stats", "")
    }

    /// Counts the requests whose line contains `what` (a rule that delays nothing), from now.
    pub fn count_matching(&self, what: &str) {
        self.call("POST", "reset", "");
        self.faults(json!([{"match": what, "action": "delay", "ms": 0, "count": -1}]));
    }

    /// Waits until a request whose line contains `what` is in flight (held by a rule).
    pub fn wait_in_flight(&self, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let stats = self.stats();
            let flying = stats["in_flight"].as_array().unwrap();
            if flying.iter().any(|r| r.as_str().unwrap().contains(what)) {
                return;
            }
            assert!(Instant::now() < deadline, "no {what} request came: {stats}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Lets every held request go on, and clears the rules.
    pub fn release(&self) {
        self.call("POST", "release", "");
        self.faults(json!([]));
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
