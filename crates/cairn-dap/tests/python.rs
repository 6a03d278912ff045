//! debugpy, the real adapter: launch with breakpoints, capture, diff, refusals, attach over
//! TCP, and a clean stop.

mod common;

use std::time::Duration;

use cairn_dap::{DebugSession, LaunchOptions, RefusalCode, SourceBreakpoints, diff_captures};
use common::*;

const PROGRAM: &str = r#"import time


class Customer:
    def __init__(self, city):
        self.city = city


class Order:
    def __init__(self):
        self.customer = Customer("Oslo")
        self.items = [10, 20]


def tick():
    pass


def run(n):
    order = Order()
    total = 0
    for i in range(n):
        total += i + 1
        tick()  # BREAK
    return total


run(5)
for _ in range(600):
    time.sleep(0.1)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loop_capture_diff_depth_refusal_and_stop() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = write(dir.path(), "loop.py", PROGRAM);
    let line = line_of(PROGRAM, "# BREAK");
    let launch = LaunchOptions {
        program: script.clone(),
        cwd: Some(dir.path().to_owned()),
        ..LaunchOptions::default()
    };
    let breakpoints = [SourceBreakpoints { path: script.clone(), lines: vec![line] }];
    let session = DebugSession::launch(&debugpy(), &launch, &breakpoints, options())
        .await
        .expect("launch under debugpy");
    let adapter_pid = i64::from(session.adapter_pid().expect("adapter pid"));

    let state = session.wait_until_stopped(WAIT).await.expect("first stop");
    assert_eq!(state.reason.as_deref(), Some("breakpoint"));
    let frames = session.stack(None, None).await.expect("stack");
    assert_eq!(frames[0].name, "run");
    assert_eq!(frames[0].line, line);

    let first = session.capture_frame(None, 0, 0, WAIT).await.expect("first capture");
    assert_eq!(first.function_name, "run");
    assert_eq!(first.frame_index, 0);
    assert_eq!(first.depth, 0);
    assert_eq!(var(&first, "i").value, "0");
    assert_eq!(var(&first, "total").value, "1");
    assert_eq!(var(&first, "i").type_name, "int");
    assert_eq!(var(&first, "n").value, "5");
    assert!(var(&first, "order").expandable);
    assert!(first.variables.iter().all(|v| v.level == 0), "depth 0 must not expand: {:?}", paths(&first));
    assert!(!paths(&first).iter().any(|p| p.contains("special variables")));

    // Depth 2 reaches the nested object's fields, within the same stop.
    let deep = session.capture_frame(None, 0, 2, WAIT).await.expect("deep capture");
    assert_eq!(var(&deep, "order.customer.city").value, "'Oslo'");
    assert_eq!(var(&deep, "order.items[1]").value, "20");
    assert_eq!(var(&deep, "order.customer").level, 1);
    assert!(
        !deep.variables.iter().any(|v| v.path.starts_with("order.customer.city.")),
        "depth 2 must stop at the second level: {:?}",
        paths(&deep)
    );
    assert!(!paths(&deep).iter().any(|p| p.contains("function variables") || p.contains("len()")));

    // The caller's frame is reachable too.
    let outer = session.capture_frame(None, 1, 0, WAIT).await.expect("outer frame");
    assert_eq!(outer.function_name, "<module>");

    session.resume(None).await.expect("continue");
    session.wait_until_stopped(WAIT).await.expect("second stop");
    let second = session.capture_frame(None, 0, 0, WAIT).await.expect("second capture");

    let diff = diff_captures(&first, &second, false);
    let mut modified: Vec<_> =
        diff.modified.iter().map(|m| (m.path.as_str(), m.old_value.as_str(), m.new_value.as_str())).collect();
    // Adapters list variables in their own order (lldb puts block-scoped ones last).
    modified.sort();
    assert_eq!(modified, [("i", "0", "1"), ("total", "1", "3")]);
    assert!(diff.added.is_empty() && diff.removed.is_empty(), "{diff:#?}");
    assert_eq!(diff.summary.unchanged, first.variables.len() - 2);
    assert!(!diff.thread_mismatch);

    // Clear the breakpoint and let the program run: captures are refused while it runs.
    session.set_breakpoints(&script, &[]).await.expect("clear breakpoints");
    session.resume(None).await.expect("continue to the end");
    let refused =
        session.capture_frame(None, 0, 0, WAIT).await.expect_err("a running program cannot be captured");
    assert_eq!(refused.refusal_code(), Some(RefusalCode::NotPaused), "{refused}");
    assert!(!session.state().paused);

    let debuggee = session.state().debuggee_pid.expect("debugpy reports the debuggee pid");
    session.stop().await.expect("stop");
    session.stop().await.expect("a second stop does nothing");
    assert!(!process_alive(adapter_pid), "the adapter {adapter_pid} outlived stop");
    assert!(wait_gone(debuggee, Duration::from_secs(10)), "the debuggee {debuggee} outlived stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attaches_to_a_waiting_debugpy_over_tcp() {
    // Fails with a clear message when debugpy is missing rather than skipping.
    let _ = debugpy();
    let dir = tempfile::tempdir().expect("temp dir");
    let script = write(dir.path(), "loop.py", PROGRAM);
    let line = line_of(PROGRAM, "# BREAK");
    let port =
        std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    let mut debuggee = tokio::process::Command::new("python3")
        .args(["-m", "debugpy", "--listen", &format!("127.0.0.1:{port}"), "--wait-for-client"])
        .arg(&script)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start python3 -m debugpy");

    let breakpoints = [SourceBreakpoints { path: script.clone(), lines: vec![line] }];
    // The server needs a moment to listen; retry the connection within a bound.
    let deadline = tokio::time::Instant::now() + WAIT;
    let session = loop {
        match DebugSession::attach_debugpy("127.0.0.1", port, &breakpoints, options()).await {
            Ok(session) => break session,
            Err(cairn_dap::Error::Connect { .. }) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("attach failed: {e}"),
        }
    };
    assert_eq!(session.adapter_pid(), None);

    session.wait_until_stopped(WAIT).await.expect("stop at the breakpoint");
    let capture = session.capture_frame(None, 0, 1, WAIT).await.expect("capture");
    assert_eq!(capture.function_name, "run");
    assert_eq!(var(&capture, "i").value, "0");
    assert_eq!(var(&capture, "order.customer").level, 1);

    session.stop().await.expect("stop");
    let exited = tokio::time::timeout(WAIT, debuggee.wait()).await;
    assert!(matches!(exited, Ok(Ok(_))), "the debuggee did not exit after stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_a_stop_reports_a_program_that_ended() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = write(dir.path(), "quick.py", "import sys\nsys.exit(3)\n");
    let launch = LaunchOptions { program: script, ..LaunchOptions::default() };
    let session =
        DebugSession::launch(&debugpy(), &launch, &[], options()).await.expect("launch under debugpy");
    let ended = session.wait_until_stopped(WAIT).await.expect_err("the program ends without stopping");
    assert_eq!(ended.refusal_code(), Some(RefusalCode::SessionEnded), "{ended}");
    assert!(session.state().terminated);
    session.stop().await.expect("stop");
    assert_eq!(live_children(), Vec::<i64>::new(), "stop left processes behind");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_session_without_stop_leaks_no_process() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = write(dir.path(), "loop.py", PROGRAM);
    let line = line_of(PROGRAM, "# BREAK");
    let launch = LaunchOptions { program: script.clone(), ..LaunchOptions::default() };
    let breakpoints = [SourceBreakpoints { path: script, lines: vec![line] }];
    let session = DebugSession::launch(&debugpy(), &launch, &breakpoints, options())
        .await
        .expect("launch under debugpy");
    session.wait_until_stopped(WAIT).await.expect("stop");
    let adapter = i64::from(session.adapter_pid().expect("adapter pid"));
    let debuggee = session.state().debuggee_pid.expect("debuggee pid");
    drop(session);
    assert!(wait_gone(adapter, WAIT), "the adapter {adapter} outlived its session");
    assert!(wait_gone(debuggee, WAIT), "the debuggee {debuggee} outlived its session");
}

const METHOD_PROGRAM: &str = r#"class Account:
    def __init__(self, owner):
        self.owner = owner
        self.balance = 100

    def deposit(self, amount):
        self.balance += amount
        return self.balance  # BREAK


Account("ada").deposit(25)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_method_capture_holds_self_and_its_fields_with_their_scope() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = write(dir.path(), "account.py", METHOD_PROGRAM);
    let line = line_of(METHOD_PROGRAM, "# BREAK");
    let launch = LaunchOptions { program: script.clone(), ..LaunchOptions::default() };
    let breakpoints = [SourceBreakpoints { path: script, lines: vec![line] }];
    let session = DebugSession::launch(&debugpy(), &launch, &breakpoints, options())
        .await
        .expect("launch under debugpy");
    session.wait_until_stopped(WAIT).await.expect("stop in the method");

    let capture = session.capture_frame(None, 0, 1, WAIT).await.expect("capture");
    assert_eq!(capture.function_name, "deposit");
    let this = var(&capture, "self");
    assert!(this.expandable && this.level == 0, "{this:?}");
    assert!(this.value.contains("Account"), "{this:?}");
    assert_eq!(var(&capture, "self.balance").value, "125");
    assert_eq!(var(&capture, "self.balance").level, 1);
    assert_eq!(var(&capture, "self.owner").value, "'ada'");
    assert_eq!(var(&capture, "amount").value, "25");
    // Every variable names the scope it was read from, children included.
    for v in &capture.variables {
        assert_eq!(v.scope, "Locals", "{v:?}");
    }
    session.stop().await.expect("stop");
}
