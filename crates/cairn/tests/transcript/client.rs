//! A minimal MCP client for the tests: `cairn mcp` runs as a child process over stdio and this
//! module speaks JSON-RPC to it line by line. The server's stderr goes to a file, so tests can
//! read the warnings it printed.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, ExitStatus, Stdio};

use serde_json::{Value, json};

use crate::TestEnv;

/// A running `cairn mcp` child and the pipes to it.
pub(crate) struct Client {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    stderr: PathBuf,
    next_id: u64,
}

impl Client {
    /// Starts `cairn ARGS` in the project with the test's HOME and initializes the session.
    pub(crate) fn start(env: &TestEnv, args: &[&str]) -> Self {
        let mut client = Self::spawn(env, args);
        let init = client.initialize().expect("the server closed stdout before answering initialize");
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        client
    }

    /// Starts `cairn ARGS` with `vars` set too, and initializes the session.
    pub(crate) fn start_with(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> Self {
        let mut client = Self::spawn_with(env, args, vars);
        let init = client.initialize().expect("the server closed stdout before answering initialize");
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        client
    }

    /// Starts `cairn ARGS` without speaking to it yet.
    pub(crate) fn spawn(env: &TestEnv, args: &[&str]) -> Self {
        Self::spawn_with(env, args, &[])
    }

    fn spawn_with(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> Self {
        // Beside HOME, inside the test's temporary root, so it goes when the test ends.
        let (stderr_file, stderr) = tempfile::Builder::new()
            .prefix("mcp-stderr-")
            .tempfile_in(env.home().parent().unwrap())
            .unwrap()
            .keep()
            .unwrap();
        let mut child = env
            .command(args)
            .envs(vars.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr_file)
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Self { child, input, output, stderr, next_id: 1 }
    }

    /// Sends `initialize` and `notifications/initialized`; `None` when the server exited first.
    pub(crate) fn initialize(&mut self) -> Option<Value> {
        let init = self.try_request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "cairn-tests", "version": "0"}
            }),
        )?;
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        Some(init)
    }

    fn send(&mut self, message: &Value) {
        // A server that already exited shows up as a closed stdout on the next read.
        let _ = writeln!(self.input, "{message}").and_then(|()| self.input.flush());
    }

    /// Sends a request and returns its response, skipping notifications on the way.
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        self.try_request(method, params).expect("the server closed stdout")
    }

    fn try_request(&mut self, method: &str, params: Value) -> Option<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            if self.output.read_line(&mut line).unwrap() == 0 {
                return None;
            }
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return Some(message);
            }
        }
    }

    /// Calls a tool; returns (isError, structured result or the error text).
    pub(crate) fn call(&mut self, tool: &str, arguments: Value) -> (bool, Value) {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = &response["result"];
        assert!(result.is_object(), "{response}");
        let is_error = result["isError"].as_bool().unwrap_or(false);
        if is_error {
            (true, result["content"][0]["text"].clone())
        } else {
            (false, result["structuredContent"].clone())
        }
    }

    /// What the server wrote to stderr so far.
    pub(crate) fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap()
    }

    /// Waits for a server that closed its stdout to exit, and returns how it exited.
    pub(crate) fn wait(&mut self) -> ExitStatus {
        self.child.wait().unwrap()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text of a JSON string, or "" for anything else.
pub(crate) fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}
