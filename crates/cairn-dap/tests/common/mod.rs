//! Helpers shared by the integration tests: real adapters, real programs.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cairn_dap::{AdapterCommand, CapturedVariable, FrameCapture, SessionOptions};

/// Limit for every wait in the tests; generous, since the machine is shared.
pub const WAIT: Duration = Duration::from_secs(30);

/// debugpy, or a failure that says how to install it.
pub fn debugpy() -> AdapterCommand {
    AdapterCommand::debugpy()
        .unwrap_or_else(|e| panic!("these tests need debugpy: {e} (see scripts/deps/debug-adapters.sh)"))
}

/// lldb-dap, or a failure that says how to install it.
pub fn lldb_dap() -> AdapterCommand {
    AdapterCommand::lldb_dap()
        .unwrap_or_else(|e| panic!("these tests need lldb-dap: {e} (see scripts/deps/debug-adapters.sh)"))
}

/// Session limits for tests.
pub fn options() -> SessionOptions {
    SessionOptions { request_timeout: WAIT, start_timeout: WAIT, stop_timeout: Duration::from_secs(10) }
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}

/// The 1-based number of the only line of `text` that contains `marker`.
pub fn line_of(text: &str, marker: &str) -> u32 {
    let lines: Vec<usize> =
        text.lines().enumerate().filter(|(_, l)| l.contains(marker)).map(|(i, _)| i + 1).collect();
    assert_eq!(lines.len(), 1, "marker {marker} must appear exactly once");
    lines[0] as u32
}

/// Compiles the C source at `source` with debug information and no optimisation.
pub fn compile_c(source: &Path) -> PathBuf {
    let binary = source.with_extension("");
    let output = std::process::Command::new("gcc")
        .args(["-g", "-O0", "-o"])
        .arg(&binary)
        .arg(source)
        .output()
        .unwrap_or_else(|e| panic!("these tests need gcc ({e}); see scripts/deps/debug-adapters.sh"));
    assert!(output.status.success(), "gcc failed: {}", String::from_utf8_lossy(&output.stderr));
    binary
}

/// The variable at `path`, or a failure that lists what the capture holds.
pub fn var<'a>(capture: &'a FrameCapture, path: &str) -> &'a CapturedVariable {
    capture
        .variables
        .iter()
        .find(|v| v.path == path)
        .unwrap_or_else(|| panic!("no variable {path} in {:#?}", paths(capture)))
}

/// All paths of a capture.
pub fn paths(capture: &FrameCapture) -> Vec<&str> {
    capture.variables.iter().map(|v| v.path.as_str()).collect()
}

/// Whether process `pid` still exists (a zombie counts as gone: it no longer runs, and
/// in a container nobody may reap it).
pub fn process_alive(pid: i64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // The state follows the parenthesised command name.
            let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next());
            !matches!(state, Some('Z') | Some('X') | None)
        }
        Err(_) => false,
    }
}

/// Waits (bounded) for process `pid` to be gone; returns whether it went.
pub fn wait_gone(pid: i64, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if !process_alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    !process_alive(pid)
}

/// Live (not zombie) child processes of this test process.
pub fn live_children() -> Vec<i64> {
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i64>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let fields: Vec<&str> = stat
                    .rsplit_once(')')
                    .map(|(_, rest)| rest.split_whitespace().collect())
                    .unwrap_or_default();
                fields.get(1) == Some(&me.as_str()) && !matches!(fields.first(), Some(&"Z"))
            })
        })
        .collect()
}
