//! The debug profile through the rmcp client, with real Python programs under the real
//! debugpy adapter: the tool list against the debugger snapshot spec, a loop captured at two
//! stops, diffed and deleted (with the resource notifications those send), `NOT_PAUSED` while
//! the program runs, a `timeout_ms` that bounds the wait for a busy session, attach, steps
//! and breakpoints, and a stop that detaches from an attached program or leaves no process.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cairn_mcp::CairnServer;
use common::text;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
    ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

/// A client that counts `notifications/resources/list_changed`, on the 2025-11-25 protocol
/// revision (where servers send them unsolicited), whatever the SDK's newest revision is.
#[derive(Clone, Default)]
struct Counting {
    list_changed: Arc<AtomicUsize>,
}

impl ClientHandler for Counting {
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("cairn-debug-test", "1.0.0"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }
}

/// A debug-profile server on a fresh store, and a counting client connected to it.
struct Debug {
    dir: tempfile::TempDir,
    client: RunningService<RoleClient, Counting>,
    list_changed: Arc<AtomicUsize>,
}

impl Debug {
    async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut options = common::options(&dir);
        options.profile = "debug".into();
        options.allow = vec!["remove".to_owned()];
        let server = CairnServer::from_options(&options).unwrap();
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let handler = Counting::default();
        let list_changed = handler.list_changed.clone();
        let client = handler.serve(client_io).await.unwrap();
        let negotiated = client.peer_info().map(|info| info.protocol_version.clone());
        assert_eq!(negotiated, Some(ProtocolVersion::V_2025_11_25));
        Self { dir, client, list_changed }
    }

    fn write(&self, name: &str, text: &str) -> std::path::PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Writes the loop program and launches it to its `# BREAK` line; the script's path and the
    /// launch result (paused at the breakpoint).
    async fn launch_loop(&self) -> (std::path::PathBuf, Value) {
        let script = self.write("loop.py", LOOP);
        let line = line_of(LOOP, "# BREAK");
        let launched = self
            .ok(
                "debug_launch",
                json!({ "program": script, "breakpoints": [{ "file": script, "line": line }], "wait_ms": 30000 }),
            )
            .await;
        assert_eq!(launched["paused"], true, "{launched}");
        (script, launched)
    }

    async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let Value::Object(map) = args else { panic!("arguments must be an object") };
        self.client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(map)).await.unwrap()
    }

    /// Calls a tool that must succeed; its structured content, checked against its text.
    async fn ok(&self, tool: &str, args: Value) -> Value {
        let result = self.call(tool, args).await;
        assert_eq!(result.is_error, Some(false), "{tool} failed: {:?}", text(&result));
        let structured = result.structured_content.clone().expect("structuredContent");
        assert_eq!(serde_json::from_str::<Value>(&text(&result)).unwrap(), structured);
        structured
    }

    /// Calls a tool that must fail; its message.
    async fn err(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args).await;
        assert_eq!(result.is_error, Some(true), "{tool} succeeded: {:?}", result.structured_content);
        text(&result)
    }

    /// Waits (bounded) until `want` list-changed notifications have arrived; the count.
    async fn list_changed(&self, want: usize) -> usize {
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.list_changed.load(Ordering::SeqCst) < want && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // A moment more, so that a surplus notification would be counted too.
        tokio::time::sleep(Duration::from_millis(100)).await;
        self.list_changed.load(Ordering::SeqCst)
    }

    async fn snapshots_resource(&self) -> Value {
        self.resource("cairn://debug/snapshots").await
    }

    async fn resource(&self, uri: &str) -> Value {
        let result = self.client.read_resource(ReadResourceRequestParams::new(uri)).await.unwrap();
        match &result.contents[0] {
            ResourceContents::TextResourceContents { text, .. } => serde_json::from_str(text).unwrap(),
            other => panic!("expected text, got {other:?}"),
        }
    }
}

fn line_of(text: &str, marker: &str) -> usize {
    text.lines().position(|l| l.contains(marker)).unwrap() + 1
}

/// Every process below this test process, from the parent links in `/proc`.
fn descendants() -> BTreeSet<i32> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let fields: Vec<&str> =
            stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
        // A zombie no longer runs, and in a container nobody may reap it.
        if fields.first() == Some(&"Z") {
            continue;
        }
        if let Some(parent) = fields.get(1).and_then(|p| p.parse::<i32>().ok()) {
            parents.push((pid, parent));
        }
    }
    let mut found = BTreeSet::new();
    let mut frontier = vec![i32::try_from(std::process::id()).unwrap()];
    while let Some(parent) = frontier.pop() {
        for &(pid, _) in parents.iter().filter(|(_, p)| *p == parent) {
            if found.insert(pid) {
                frontier.push(pid);
            }
        }
    }
    found
}

fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !s.rsplit_once(')').is_some_and(|(_, r)| r.trim_start().starts_with(['Z', 'X'])))
}

/// A tool's argument names, and the required ones among them.
type Signature = (BTreeSet<String>, BTreeSet<String>);

/// The argument names and required arguments of a tool, as the server lists them.
fn argument_names(tool: &rmcp::model::Tool) -> Signature {
    let schema = &tool.input_schema;
    let properties = schema.get("properties").and_then(Value::as_object).map(|p| p.keys().cloned().collect());
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect());
    (properties.unwrap_or_default(), required.unwrap_or_default())
}

#[tokio::test]
async fn the_tools_and_their_arguments_match_the_debugger_snapshot_spec() {
    let d = Debug::start().await;
    let tools = d.client.list_all_tools().await.unwrap();
    let listed: Vec<(&str, Signature)> = tools.iter().map(|t| (t.name.as_ref(), argument_names(t))).collect();
    let set = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<BTreeSet<String>>();
    let expected = [
        // cairn's session tools, which the snapshot tools need.
        (
            "debug_launch",
            set(&["program", "args", "cwd", "breakpoints", "stop_on_entry", "wait_ms"]),
            set(&["program"]),
        ),
        ("debug_attach", set(&["host", "port", "pid", "breakpoints", "wait_ms"]), set(&[])),
        ("debug_set_breakpoints", set(&["file", "lines"]), set(&["file", "lines"])),
        ("debug_continue", set(&["thread_id", "wait_ms"]), set(&[])),
        ("debug_step", set(&["kind", "thread_id", "wait_ms"]), set(&[])),
        ("debug_stack", set(&["thread_id", "levels"]), set(&[])),
        ("debug_stop", set(&["detach"]), set(&[])),
        // The spec's tools, with exactly its parameters and required ones.
        ("snapshot_create", set(&["label", "thread_id", "frame_index", "depth", "timeout_ms"]), set(&[])),
        ("snapshot_diff", set(&["snapshot_id_1", "snapshot_id_2"]), set(&["snapshot_id_1", "snapshot_id_2"])),
        ("snapshot_delete", set(&["snapshot_id"]), set(&[])),
    ];
    let expected: Vec<(&str, Signature)> =
        expected.into_iter().map(|(name, properties, required)| (name, (properties, required))).collect();
    assert_eq!(listed, expected);
    // The spec has no snapshot_list tool: the list is a resource.
    let resources = d.client.list_all_resources().await.unwrap();
    assert!(resources.iter().any(|r| r.uri == "cairn://debug/snapshots"), "{resources:?}");
    // An argument the tool does not take is refused, not ignored.
    let refused = d.err("debug_continue", json!({ "kind": "in" })).await;
    assert!(refused.contains("kind"), "{refused}");
}

const LOOP: &str = r#"import time


def work(n):
    total = 0
    for i in range(n):
        total += i * 10
        print(total)  # BREAK
    return total


work(2)
time.sleep(120)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launch_capture_continue_capture_diff_delete_notify_and_not_paused_while_running() {
    let d = Debug::start().await;

    // No session yet: nothing to capture.
    let refused = d.err("snapshot_create", json!({})).await;
    assert!(refused.starts_with("NOT_PAUSED"), "{refused}");

    let (_, launched) = d.launch_loop().await;
    assert_eq!(launched["reason"], "breakpoint");
    let stack = d.ok("debug_stack", json!({})).await;
    assert_eq!(stack["frames"][0]["name"], "work");
    // Session tools change no snapshot, so they announce nothing.
    assert_eq!(d.list_changed(0).await, 0);

    let first = d.ok("snapshot_create", json!({ "label": "first", "timeout_ms": 30000 })).await;
    assert_eq!(first["success"], true);
    let snap = &first["snapshot"];
    assert_eq!((snap["label"].as_str(), snap["functionName"].as_str()), (Some("first"), Some("work")));
    assert_eq!((snap["frameIndex"].as_u64(), snap["depth"].as_u64()), (Some(0), Some(0)));
    assert!(
        snap["variableCount"].as_u64().unwrap() >= 3
            && snap["threadId"].is_i64()
            && snap["timestamp"].is_string()
    );
    assert_eq!(d.list_changed(1).await, 1, "snapshot_create announces the new capture");

    let resumed = d.ok("debug_continue", json!({ "wait_ms": 30000 })).await;
    assert_eq!(resumed["paused"], true, "{resumed}");
    let second = d.ok("snapshot_create", json!({})).await;
    assert_eq!(d.list_changed(2).await, 2);

    // Ids have the spec's shape, `snap-<uuid>`; the bare uuid is accepted too.
    let (a, b) = (first["snapshot"]["id"].as_str().unwrap(), second["snapshot"]["id"].as_str().unwrap());
    for id in [a, b] {
        let uuid = id.strip_prefix("snap-").unwrap_or_else(|| panic!("{id} lacks the snap- prefix"));
        assert_eq!(uuid.len(), 36, "{id}");
    }
    let diffed = d.ok("snapshot_diff", json!({ "snapshot_id_1": a, "snapshot_id_2": &b[5..] })).await;
    let diff = &diffed["diff"];
    assert_eq!(diff["snapshotIdA"], a);
    assert_eq!(diff["snapshotIdB"], b);
    assert_eq!(diff["threadMismatch"], false);
    assert!(diff["timeDelta"].as_str().unwrap().starts_with("00:00:"));
    assert_eq!(diff["summary"]["modified"], 2, "{diff}");
    assert_eq!(diff["summary"]["added"], 0);
    let mut modified: Vec<(String, String, String)> = diff["modified"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let s = |k: &str| m[k].as_str().unwrap().to_owned();
            (s("path"), s("oldValue"), s("newValue"))
        })
        .collect();
    modified.sort();
    assert_eq!(
        modified,
        vec![("i".into(), "0".into(), "1".into()), ("total".into(), "0".into(), "10".into())]
    );

    // The loop is done and the program sleeps: running, so captures are refused.
    let running = d.ok("debug_continue", json!({ "wait_ms": 0 })).await;
    assert_eq!(running["paused"], false, "{running}");
    let refused = d.err("snapshot_create", json!({ "timeout_ms": 1000 })).await;
    assert!(refused.starts_with("NOT_PAUSED"), "{refused}");
    let missing = d.err("snapshot_diff", json!({ "snapshot_id_1": a, "snapshot_id_2": "snap-nope" })).await;
    assert!(missing.starts_with("SNAPSHOT_NOT_FOUND"), "{missing}");
    // Refusals change nothing and announce nothing.
    assert_eq!(d.list_changed(2).await, 2);

    let stopped = d.ok("debug_stop", json!({})).await;
    assert_eq!((stopped["paused"].as_bool(), stopped["terminated"].as_bool()), (Some(false), Some(true)));
    assert_eq!(stopped["detached"], false, "a launched program is terminated: {stopped}");

    // Captures outlive the session, and the resource lists them with the same ids.
    let listed = d.snapshots_resource().await;
    let entries = listed["snapshots"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{listed}");
    assert_eq!(entries[0]["id"].as_str(), Some(a));
    for key in ["label", "createdAt", "threadId", "frameIndex", "functionName", "variableCount"] {
        assert!(!entries[0][key].is_null(), "{key} missing in {}", entries[0]);
    }
    assert_eq!(entries[0]["functionName"], "work");

    let one = d.ok("snapshot_delete", json!({ "snapshot_id": a })).await;
    assert_eq!(one, json!({ "success": true, "deleted": a, "remaining": 1 }));
    assert_eq!(d.list_changed(3).await, 3, "snapshot_delete announces the removal");
    let all = d.ok("snapshot_delete", json!({})).await;
    assert_eq!(all, json!({ "success": true, "deleted": "all", "remaining": 0 }));
    assert_eq!(d.list_changed(4).await, 4);
    let gone = d.err("snapshot_delete", json!({ "snapshot_id": b })).await;
    assert!(gone.starts_with("SNAPSHOT_NOT_FOUND"), "{gone}");
    assert_eq!(d.list_changed(4).await, 4, "a refused delete announces nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_create_timeout_covers_the_wait_for_a_busy_session() {
    let d = Arc::new(Debug::start().await);
    let (script, _) = d.launch_loop().await;
    d.ok("debug_set_breakpoints", json!({ "file": script, "lines": [] })).await;

    // The program runs on and sleeps, so this continue holds the session for its whole wait.
    let busy = {
        let d = Arc::clone(&d);
        tokio::spawn(async move {
            let started = Instant::now();
            let result = d.ok("debug_continue", json!({ "wait_ms": 8000 })).await;
            (result, started.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = Instant::now();
    let timed_out = d.err("snapshot_create", json!({ "timeout_ms": 500 })).await;
    let took = started.elapsed();
    assert!(timed_out.contains("timed out after 500ms"), "{timed_out}");
    assert!(took < Duration::from_secs(4), "a 500 ms snapshot_create took {took:?}");

    let (resumed, held) = busy.await.unwrap();
    assert_eq!(resumed["paused"], false, "{resumed}");
    assert!(held >= Duration::from_secs(7), "the continue did not hold the session ({held:?})");
    d.ok("debug_stop", json!({})).await;
}

const FOREVER: &str = r#"import time


def work(n):
    total = 0
    for i in range(n):
        total += i  # BREAK
        time.sleep(0.01)  # NEXT
    return total


while True:
    work(3)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_steps_breakpoints_and_stop_detaches_leaving_the_program_running() {
    let d = Debug::start().await;
    let script = d.write("forever.py", FOREVER);
    let (line, next) = (line_of(FOREVER, "# BREAK"), line_of(FOREVER, "# NEXT"));
    let port =
        std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    let mut program = tokio::process::Command::new("python3")
        .args(["-m", "debugpy", "--listen", &format!("127.0.0.1:{port}"), "--wait-for-client"])
        .arg(&script)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("these tests need python3 with debugpy (scripts/deps/debug-adapters.sh)");

    // The server needs a moment to listen; retry the attach within a bound.
    let args = json!({ "port": port, "breakpoints": [{ "file": script, "line": line }], "wait_ms": 30000 });
    let deadline = Instant::now() + Duration::from_secs(30);
    let attached = loop {
        let result = d.call("debug_attach", args.clone()).await;
        if result.is_error == Some(false) {
            break result.structured_content.unwrap();
        }
        assert!(Instant::now() < deadline, "attach kept failing: {}", text(&result));
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!((attached["paused"].as_bool(), attached["reason"].as_str()), (Some(true), Some("breakpoint")));
    let top = d.ok("debug_stack", json!({ "levels": 1 })).await;
    assert_eq!(top["frames"][0]["line"], line, "{top}");

    let cleared = d.ok("debug_set_breakpoints", json!({ "file": script, "lines": [] })).await;
    assert_eq!(cleared["breakpoints"], json!([]), "{cleared}");
    let stepped = d.ok("debug_step", json!({ "kind": "over", "wait_ms": 30000 })).await;
    assert_eq!((stepped["paused"].as_bool(), stepped["reason"].as_str()), (Some(true), Some("step")));
    let top = d.ok("debug_stack", json!({ "levels": 1 })).await;
    assert_eq!(top["frames"][0]["line"], next, "{top}");
    let bad = d.err("debug_step", json!({ "kind": "sideways" })).await;
    assert!(bad.contains("sideways"), "{bad}");

    // Back to the breakpoint line: set it again and continue.
    let placed = d.ok("debug_set_breakpoints", json!({ "file": script, "lines": [line] })).await;
    assert_eq!(placed["breakpoints"][0]["verified"], true, "{placed}");
    let again = d.ok("debug_continue", json!({ "wait_ms": 30000 })).await;
    assert_eq!(again["reason"], "breakpoint", "{again}");

    // An attached program is detached from by default: it keeps running.
    let stopped = d.ok("debug_stop", json!({})).await;
    assert_eq!(stopped["detached"], true, "{stopped}");
    assert_eq!(stopped["terminated"], true);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(program.try_wait().unwrap().is_none(), "the attached program died on debug_stop");
    program.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_stop_leaves_no_adapter_or_program_behind() {
    let d = Debug::start().await;
    let before = descendants();
    d.launch_loop().await;
    let started: BTreeSet<i32> = descendants().difference(&before).copied().collect();
    // The adapter, its launcher and the program.
    assert!(started.len() >= 2, "expected the adapter and the program, found {started:?}");

    let stopped = d.ok("debug_stop", json!({})).await;
    assert_eq!(stopped["detached"], false, "{stopped}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut left: Vec<i32> = started.iter().copied().filter(|p| running(*p)).collect();
    while !left.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        left.retain(|p| running(*p));
    }
    assert!(left.is_empty(), "debug_stop left processes behind: {left:?}");
    // With no session, stop is a no-op that says so.
    let again = d.ok("debug_stop", json!({})).await;
    assert_eq!((again["terminated"].as_bool(), again.get("detached")), (Some(true), None));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_the_debugger_snapshots_resource_is_served_and_created_at_is_the_capture_timestamp() {
    let d = Debug::start().await;
    let resources = d.client.list_all_resources().await.unwrap();
    assert!(resources.iter().any(|r| r.uri == "debugger://snapshots"), "{resources:?}");
    d.launch_loop().await;
    let created = d.ok("snapshot_create", json!({ "label": "here" })).await;
    d.ok("debug_stop", json!({})).await;
    let listed = d.resource("debugger://snapshots").await;
    assert_eq!(listed, d.snapshots_resource().await, "both URIs list the same captures");
    let entry = &listed["snapshots"][0];
    assert_eq!(entry["id"], created["snapshot"]["id"]);
    assert_eq!(entry["createdAt"], created["snapshot"]["timestamp"], "{entry}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_snapshot_delete_with_no_id_clears_only_this_debug_sessions_captures() {
    let d = Debug::start().await;
    // Nothing of this server's own yet: clearing deletes nothing.
    assert_eq!(
        d.ok("snapshot_delete", json!({})).await,
        json!({"success": true, "deleted": "all", "remaining": 0})
    );
    d.launch_loop().await;
    let earlier = d.ok("snapshot_create", json!({ "label": "earlier" })).await;
    d.ok("debug_stop", json!({})).await;
    d.launch_loop().await;
    d.ok("snapshot_create", json!({ "label": "now-1" })).await;
    d.ok("debug_continue", json!({ "wait_ms": 30000 })).await;
    d.ok("snapshot_create", json!({ "label": "now-2" })).await;
    let cleared = d.ok("snapshot_delete", json!({})).await;
    assert_eq!(cleared, json!({"success": true, "deleted": "all", "remaining": 0}));
    let left = d.resource("debugger://snapshots").await;
    let labels: Vec<&str> =
        left["snapshots"].as_array().unwrap().iter().map(|s| s["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["earlier"], "{left}");
    // After the session ends, "all" still means that session's captures; older ones go by id.
    d.ok("debug_stop", json!({})).await;
    assert_eq!(d.ok("snapshot_delete", json!({})).await["remaining"], 0);
    let id = earlier["snapshot"]["id"].as_str().unwrap();
    d.ok("snapshot_delete", json!({ "snapshot_id": id })).await;
    assert_eq!(d.resource("debugger://snapshots").await, json!({"snapshots": []}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_edge_cases_unknown_thread_missing_program_and_zero_timeout_get_coded_sentences() {
    let d = Debug::start().await;
    let missing = d.dir.path().join("nowhere.py");
    let refused = d.err("debug_launch", json!({ "program": missing })).await;
    assert_eq!(
        refused,
        format!(
            "PROGRAM_NOT_FOUND: the program {} does not exist or is not a file; pass the path of a Python script or an executable built with debug information",
            missing.display()
        )
    );
    d.launch_loop().await;
    let thread = d.err("snapshot_create", json!({ "thread_id": 987654 })).await;
    assert!(
        thread.starts_with("FRAME_NOT_FOUND: the program has no thread 987654; its threads are "),
        "{thread}"
    );
    assert!(
        thread.ends_with(": pass one of them, or leave the thread out for the one that stopped"),
        "{thread}"
    );
    let zero = d.err("snapshot_create", json!({ "timeout_ms": 0 })).await;
    assert_eq!(
        zero,
        "INVALID_ARGUMENT: timeout_ms is 0, which leaves no time to read a single variable; pass a limit in milliseconds, or leave it out for 30000"
    );
    // None of them broke the session.
    assert_eq!(d.ok("snapshot_create", json!({})).await["success"], true);
    d.ok("debug_stop", json!({})).await;
}
