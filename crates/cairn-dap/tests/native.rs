//! lldb-dap, the real adapter, on a C program compiled here: launch with breakpoints,
//! capture, diff, nested structs, refusals, attach by pid, and a clean stop.

mod common;

use std::time::Duration;

use cairn_dap::{DebugSession, LaunchOptions, RefusalCode, SourceBreakpoints, StepKind, diff_captures};
use common::*;

const PROGRAM: &str = r#"#include <stdio.h>
#include <unistd.h>

struct customer {
    const char *city;
    int zip;
};

struct order {
    struct customer customer;
    int items[3];
};

static void tick(void) {}

static int run(int n) {
    struct order order = { { "Oslo", 150 }, { 10, 20, 30 } };
    int total = 0;
    for (int i = 0; i < n; i++) {
        total += i + 1;
        tick(); /* BREAK */
    }
    return total + order.customer.zip;
}

int main(void) {
    int result = run(5);
    printf("ready\n");
    fflush(stdout);
    for (int k = 0; k < 600; k++) {
        usleep(100000); /* IDLE */
    }
    return result > 0 ? 0 : 1;
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loop_capture_diff_depth_refusal_and_stop() {
    let adapter = lldb_dap();
    let dir = tempfile::tempdir().expect("temp dir");
    let source = write(dir.path(), "loop.c", PROGRAM);
    let binary = compile_c(&source);
    let line = line_of(PROGRAM, "/* BREAK */");
    let launch =
        LaunchOptions { program: binary, cwd: Some(dir.path().to_owned()), ..LaunchOptions::default() };
    let breakpoints = [SourceBreakpoints { path: source.clone(), lines: vec![line] }];
    let session = DebugSession::launch(&adapter, &launch, &breakpoints, options())
        .await
        .expect("launch under lldb-dap");
    let adapter_pid = i64::from(session.adapter_pid().expect("adapter pid"));

    let state = session.wait_until_stopped(WAIT).await.expect("first stop");
    assert_eq!(state.reason.as_deref(), Some("breakpoint"));
    let threads = session.threads().await.expect("threads");
    assert!(threads.iter().any(|t| Some(t.id) == state.thread_id), "{threads:?}");

    let first = session.capture_frame(None, 0, 0, WAIT).await.expect("first capture");
    assert_eq!(first.function_name, "run");
    assert_eq!(var(&first, "i").value, "0");
    assert_eq!(var(&first, "total").value, "1");
    assert_eq!(var(&first, "n").value, "5");
    assert_eq!(var(&first, "i").type_name, "int");
    assert!(var(&first, "order").expandable);
    assert!(first.variables.iter().all(|v| v.level == 0), "{:?}", paths(&first));
    // lldb-dap reads arguments and locals from one "Locals" scope; each variable names it.
    let scopes: std::collections::BTreeSet<&str> = first.variables.iter().map(|v| v.scope.as_str()).collect();
    assert_eq!(scopes.into_iter().collect::<Vec<_>>(), ["Locals"], "{first:#?}");

    let deep = session.capture_frame(None, 0, 2, WAIT).await.expect("deep capture");
    assert_eq!(var(&deep, "order.customer.zip").value, "150");
    assert!(var(&deep, "order.customer.city").value.contains("\"Oslo\""));
    assert_eq!(var(&deep, "order.items[2]").value, "30");
    assert_eq!(var(&deep, "order.customer").level, 1);
    assert_eq!(var(&deep, "order.customer.zip").scope, "Locals");
    assert!(deep.variables.iter().all(|v| v.level <= 2), "{:?}", paths(&deep));

    session.resume(None).await.expect("continue");
    session.wait_until_stopped(WAIT).await.expect("second stop");
    let second = session.capture_frame(None, 0, 0, WAIT).await.expect("second capture");
    let diff = diff_captures(&first, &second, false);
    let mut modified: Vec<_> =
        diff.modified.iter().map(|m| (m.path.as_str(), m.old_value.as_str(), m.new_value.as_str())).collect();
    // Adapters list variables in their own order (lldb puts block-scoped ones last).
    modified.sort();
    assert_eq!(modified, [("i", "0", "1"), ("total", "1", "3")], "{diff:#?}");
    assert!(diff.added.is_empty() && diff.removed.is_empty(), "{diff:#?}");

    // Step into tick(): the innermost frame changes, the caller's is one down.
    session.step(StepKind::In, None).await.expect("step in");
    session.wait_until_stopped(WAIT).await.expect("stop after the step");
    let frames = session.stack(None, None).await.expect("stack");
    assert_eq!(frames[0].name, "tick");
    assert_eq!(frames[1].name, "run");
    session.step(StepKind::Out, None).await.expect("step out");
    session.wait_until_stopped(WAIT).await.expect("stop after stepping out");
    assert_eq!(session.stack(None, Some(1)).await.expect("stack")[0].name, "run");

    session.set_breakpoints(&source, &[]).await.expect("clear breakpoints");
    session.resume(None).await.expect("continue to the idle loop");
    let refused =
        session.capture_frame(None, 0, 0, WAIT).await.expect_err("a running program cannot be captured");
    assert_eq!(refused.refusal_code(), Some(RefusalCode::NotPaused), "{refused}");

    let debuggee = session.state().debuggee_pid.expect("lldb-dap reports the debuggee pid");
    session.stop().await.expect("stop");
    assert!(!process_alive(adapter_pid), "the adapter {adapter_pid} outlived stop");
    assert!(wait_gone(debuggee, Duration::from_secs(10)), "the debuggee {debuggee} outlived stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attaches_by_pid_and_pauses() {
    let adapter = lldb_dap();
    let dir = tempfile::tempdir().expect("temp dir");
    let source = write(dir.path(), "loop.c", PROGRAM);
    let binary = compile_c(&source);
    let mut program = tokio::process::Command::new(&binary)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the C program");
    let pid = program.id().expect("pid");
    // Attach once the program is in its idle loop, not while the loader still runs.
    let stdout = program.stdout.take().expect("stdout");
    let mut ready = String::new();
    let mut stdout = tokio::io::BufReader::new(stdout);
    let read = tokio::io::AsyncBufReadExt::read_line(&mut stdout, &mut ready);
    tokio::time::timeout(WAIT, read).await.expect("program ready in time").expect("read");
    assert_eq!(ready.trim(), "ready");

    let session = DebugSession::attach_pid(&adapter, pid, &[], options()).await.expect("attach by pid");
    // The attach leaves the program paused.
    session.wait_until_stopped(WAIT).await.expect("paused after attach");
    let frames = session.stack(None, None).await.expect("stack");
    let main = frames.iter().find(|f| f.name == "main").unwrap_or_else(|| panic!("no main in {frames:?}"));
    let capture = session.capture_frame(None, main.index, 0, WAIT).await.expect("capture main");
    assert_eq!(capture.function_name, "main");
    assert_eq!(var(&capture, "result").value, "165");

    // The program runs on after a resume and can be paused again.
    session.resume(None).await.expect("resume");
    assert!(!session.state().paused);
    session.pause(None).await.expect("pause");
    session.wait_until_stopped(WAIT).await.expect("paused again");

    session.detach().await.expect("detach");
    assert!(process_alive(i64::from(pid)), "detach must leave the program running");
    program.kill().await.expect("kill the program");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_launch_reports_the_adapter_error_and_leaks_nothing() {
    let adapter = lldb_dap();
    let dir = tempfile::tempdir().expect("temp dir");
    let launch = LaunchOptions { program: dir.path().join("missing-program"), ..LaunchOptions::default() };
    let error = DebugSession::launch(&adapter, &launch, &[], options())
        .await
        .err()
        .expect("launching a missing program fails");
    assert!(
        matches!(error, cairn_dap::Error::RequestFailed { ref command, .. } if command == "launch"),
        "{error}"
    );
    assert_eq!(live_children(), Vec::<i64>::new(), "a failed launch left processes behind");
}
