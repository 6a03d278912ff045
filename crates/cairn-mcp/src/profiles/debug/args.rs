//! The debug profile's tool arguments. The snapshot tools' arguments are the debugger
//! snapshot tools' (names, types and wording); the session tools' are cairn's own.

use std::path::PathBuf;

use cairn_dap::StepKind;
use serde::Deserialize;

/// A line breakpoint.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Breakpoint {
    /// The source file (absolute, or relative to the server's working directory).
    pub file: PathBuf,
    /// The 1-based line.
    pub line: u32,
}

/// Arguments of `debug_launch`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchArgs {
    /// The program: a Python script (run under debugpy) or an executable built with debug information (run under lldb-dap).
    pub program: PathBuf,
    /// The program's arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Its working directory (default: the server's).
    pub cwd: Option<PathBuf>,
    /// Breakpoints set before the program starts.
    #[serde(default)]
    pub breakpoints: Vec<Breakpoint>,
    /// Stop at the program's first line or entry point.
    #[serde(default)]
    pub stop_on_entry: bool,
    /// How long to wait for the program to stop before returning, in milliseconds (default 10000; 0 returns at once).
    pub wait_ms: Option<u64>,
}

/// Arguments of `debug_attach`: a debugpy server (`host`/`port`) or a process id (lldb-dap).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachArgs {
    /// Host of a program started with `python3 -m debugpy --listen HOST:PORT` (default 127.0.0.1).
    pub host: Option<String>,
    /// Its port.
    pub port: Option<u16>,
    /// A native process to attach lldb-dap to.
    pub pid: Option<u32>,
    /// Breakpoints to set.
    #[serde(default)]
    pub breakpoints: Vec<Breakpoint>,
    /// How long to wait for the program to stop before returning, in milliseconds (default 0).
    pub wait_ms: Option<u64>,
}

/// Arguments of `debug_set_breakpoints`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BreakpointsArgs {
    /// The source file.
    pub file: PathBuf,
    /// Its breakpoint lines; replaces the file's earlier ones (empty clears them).
    pub lines: Vec<u32>,
}

/// Arguments of `debug_continue`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContinueArgs {
    /// The thread (default: the one that stopped).
    pub thread_id: Option<i64>,
    /// How long to wait for the next stop before returning, in milliseconds (default 10000; 0 returns at once).
    pub wait_ms: Option<u64>,
}

/// Arguments of `debug_step`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepArgs {
    /// `over` (default: the next line of this function), `in` (enter the call) or `out` (run until this function returns).
    #[schemars(with = "Option<String>")]
    pub kind: Option<StepKind>,
    /// The thread (default: the one that stopped).
    pub thread_id: Option<i64>,
    /// How long to wait for the stop after the step before returning, in milliseconds (default 10000; 0 returns at once).
    pub wait_ms: Option<u64>,
}

/// Arguments of `debug_stack`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StackArgs {
    /// The thread (default: the one that stopped).
    pub thread_id: Option<i64>,
    /// At most this many frames.
    pub levels: Option<u32>,
}

/// Arguments of `debug_stop`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StopArgs {
    /// Leave the program running and only end the debug session (default: true for a program that was attached to, false for one that was launched, which is terminated).
    pub detach: Option<bool>,
}

/// Arguments of `snapshot_create`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    /// Human-readable label for the snapshot (auto-generated if omitted).
    pub label: Option<String>,
    /// Thread to capture variables from (default: active thread).
    pub thread_id: Option<i64>,
    /// Stack frame index, 0 = top of stack (default: 0).
    pub frame_index: Option<usize>,
    /// Expansion depth for nested objects, 0 = top-level only (default: 0).
    pub depth: Option<u32>,
    /// Maximum time to wait for the snapshot to be created, in milliseconds (default: 30000); covers waiting for another debug tool call to finish and reading the variables.
    pub timeout_ms: Option<u64>,
}

/// Arguments of `snapshot_diff`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffArgs {
    /// First snapshot ID (baseline).
    pub snapshot_id_1: String,
    /// Second snapshot ID (comparison).
    pub snapshot_id_2: String,
}

/// Arguments of `snapshot_delete`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    /// Snapshot ID to delete. If omitted, deletes all snapshots.
    pub snapshot_id: Option<String>,
}
