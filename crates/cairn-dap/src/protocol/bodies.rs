//! Typed arguments and bodies of the DAP requests, responses and events this client uses.
//! Field names follow the protocol's camelCase; see the module docs of `protocol` for the
//! leniency rules.

use serde::{Deserialize, Serialize};

/// Arguments of `initialize`: who we are and which optional behaviours we want.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeArguments {
    #[serde(rename = "clientID")]
    pub client_id: &'static str,
    pub client_name: &'static str,
    #[serde(rename = "adapterID")]
    pub adapter_id: &'static str,
    pub lines_start_at1: bool,
    pub columns_start_at1: bool,
    pub path_format: &'static str,
    pub supports_variable_type: bool,
    pub supports_variable_paging: bool,
    // We cannot open terminals or child sessions; saying so up front makes well-behaved
    // adapters avoid those reverse requests altogether.
    pub supports_run_in_terminal_request: bool,
    pub supports_start_debugging_request: bool,
}

/// The adapter's capabilities, of which only the ones that change our behaviour are read.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Capabilities {
    pub supports_configuration_done_request: bool,
    pub supports_terminate_request: bool,
}

/// A source file, named by path.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Source {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// One requested breakpoint in `setBreakpoints`.
#[derive(Debug, Serialize)]
pub(crate) struct SourceBreakpoint {
    pub line: u32,
}

/// Arguments of `setBreakpoints`: the full set of line breakpoints for one file.
#[derive(Debug, Serialize)]
pub(crate) struct SetBreakpointsArguments {
    pub source: Source,
    pub breakpoints: Vec<SourceBreakpoint>,
}

/// A breakpoint as the adapter reports it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Breakpoint {
    pub verified: bool,
    pub line: Option<u32>,
    pub message: Option<String>,
}

/// Body of the `setBreakpoints` response.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SetBreakpointsResponse {
    pub breakpoints: Vec<Breakpoint>,
}

/// Body of the `stopped` event.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct StoppedEvent {
    pub reason: String,
    pub description: Option<String>,
    pub thread_id: Option<i64>,
    pub all_threads_stopped: Option<bool>,
}

/// Body of the `exited` event.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ExitedEvent {
    pub exit_code: Option<i64>,
}

/// Body of the `process` event: tells us the debuggee's pid.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ProcessEvent {
    pub system_process_id: Option<i64>,
}

/// Body of the `thread` event: a thread started or exited.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ThreadEvent {
    pub reason: String,
    pub thread_id: i64,
}

/// A thread in the `threads` response.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Thread {
    pub id: i64,
    pub name: String,
}

/// Body of the `threads` response.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ThreadsResponse {
    pub threads: Vec<Thread>,
}

/// Arguments of `stackTrace`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StackTraceArguments {
    pub thread_id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_frame: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub levels: Option<u32>,
}

/// A stack frame in the `stackTrace` response.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct StackFrame {
    pub id: i64,
    pub name: String,
    pub source: Option<Source>,
    pub line: u32,
    pub column: u32,
}

/// Body of the `stackTrace` response.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct StackTraceResponse {
    pub stack_frames: Vec<StackFrame>,
}

/// Arguments of `scopes`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ScopesArguments {
    pub frame_id: i64,
}

/// A scope (locals, arguments, globals, registers...) of a frame.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Scope {
    pub name: String,
    pub presentation_hint: Option<String>,
    pub variables_reference: i64,
}

/// Body of the `scopes` response.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ScopesResponse {
    pub scopes: Vec<Scope>,
}

/// Arguments of `variables`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VariablesArguments {
    pub variables_reference: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
}

/// How the adapter suggests showing a variable; used to recognise synthetic entries.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VariablePresentationHint {
    pub kind: Option<String>,
}

/// A variable in the `variables` response.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Variable {
    pub name: String,
    pub value: String,
    #[serde(rename = "type")]
    pub type_name: Option<String>,
    pub evaluate_name: Option<String>,
    pub variables_reference: i64,
    pub presentation_hint: Option<VariablePresentationHint>,
}

/// Body of the `variables` response.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VariablesResponse {
    pub variables: Vec<Variable>,
}

/// Arguments of the requests that act on one thread: `continue`, `next`, `stepIn`,
/// `stepOut`, `pause`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadArguments {
    pub thread_id: i64,
}

/// Body of the `continue` response.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ContinueResponse {
    pub all_threads_continued: Option<bool>,
}

/// Arguments of `disconnect`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DisconnectArguments {
    pub terminate_debuggee: bool,
}

/// A body whose content we do not need; decodes from any object.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Ignored {}
