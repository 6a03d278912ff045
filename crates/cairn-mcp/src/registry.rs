//! The tool registry: every tool is a name, a description, input and output schemas, the four
//! annotations, and an async handler. The server lists and dispatches through it, so a profile
//! adds tools by returning specs, never by touching the server.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::handler::server::tool::{schema_for_input, schema_for_output};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{ServeError, ToolError};
use crate::state::ServerState;

/// What a successful call hands back: the structured result (always a JSON object).
pub type ToolOutput = serde_json::Map<String, serde_json::Value>;

/// The future a handler returns.
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send>>;

type Handler = Arc<dyn Fn(Arc<ServerState>, JsonObject) -> ToolFuture + Send + Sync>;

type Check = Arc<dyn Fn(JsonObject) -> Result<(), ToolError> + Send + Sync>;

/// The four behaviour hints every tool states explicitly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// The tool changes nothing.
    pub read_only: bool,
    /// The tool may overwrite or delete something the user has.
    pub destructive: bool,
    /// Calling it twice with the same arguments has no further effect.
    pub idempotent: bool,
    /// The tool reaches outside the machine's store and the paths it is given.
    pub open_world: bool,
}

impl Hints {
    /// A tool that only reads.
    pub const READ: Hints =
        Hints { read_only: true, destructive: false, idempotent: true, open_world: false };
    /// A tool that adds something and destroys nothing.
    pub const ADD: Hints =
        Hints { read_only: false, destructive: false, idempotent: false, open_world: false };
    /// A tool that may overwrite or delete.
    pub const DESTROY: Hints =
        Hints { read_only: false, destructive: true, idempotent: false, open_world: false };
}

/// One tool: what it is, and how to run it.
#[derive(Clone)]
pub struct ToolSpec {
    /// The tool as `tools/list` describes it.
    pub tool: Tool,
    /// True when a successful call may add, change or remove snapshots (so the server sends
    /// resource notifications after it).
    pub changes_snapshots: bool,
    handler: Handler,
    check: Check,
}

impl std::fmt::Debug for ToolSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSpec").field("name", &self.tool.name).finish()
    }
}

impl ToolSpec {
    /// A tool whose arguments are `I` and whose result is `O`; `run` is blocking engine work
    /// and is run on the blocking pool.
    pub fn blocking<I, O, F>(
        name: &'static str,
        description: &'static str,
        hints: Hints,
        run: F,
    ) -> Result<Self, ServeError>
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        F: Fn(&ServerState, I) -> Result<O, ToolError> + Send + Sync + Copy + 'static,
    {
        let input = schema_for_input::<I>().map_err(|reason| ServeError::Schema { tool: name, reason })?;
        let annotations = ToolAnnotations::new()
            .read_only(hints.read_only)
            .destructive(hints.destructive)
            .idempotent(hints.idempotent)
            .open_world(hints.open_world);
        let tool = Tool::new(name, description, input)
            .with_raw_output_schema(schema_for_output::<O>())
            .with_annotations(annotations);
        let handler: Handler = Arc::new(move |state: Arc<ServerState>, arguments: JsonObject| {
            Box::pin(async move {
                let args: I = parse_arguments(arguments)?;
                let joined = tokio::task::spawn_blocking(move || {
                    let out = run(&state, args)?;
                    to_object(&out)
                })
                .await;
                joined.map_err(|e| {
                    crate::error::internal(format!("the call stopped unexpectedly ({e}); retry it"))
                })?
            }) as ToolFuture
        });
        let check: Check = Arc::new(|arguments: JsonObject| parse_arguments::<I>(arguments).map(drop));
        Ok(Self { tool, changes_snapshots: !hints.read_only, handler, check })
    }

    /// Marks whether a successful call changes snapshots (defaults to "not read-only").
    pub fn changing_snapshots(mut self, changes: bool) -> Self {
        self.changes_snapshots = changes;
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.tool.name
    }

    /// Decodes arguments as a call would, without running anything (the fuzz target of the
    /// tools' arguments drives this).
    pub fn check_arguments(&self, arguments: JsonObject) -> Result<(), ToolError> {
        (self.check)(arguments)
    }

    /// Runs the tool.
    pub fn call(&self, state: Arc<ServerState>, arguments: JsonObject) -> ToolFuture {
        (self.handler)(state, arguments)
    }
}

/// Decodes tool arguments, naming the offending field in one sentence on failure.
fn parse_arguments<I: DeserializeOwned>(arguments: JsonObject) -> Result<I, ToolError> {
    serde_json::from_value(serde_json::Value::Object(arguments)).map_err(|e| {
        ToolError::invalid(format!("invalid arguments: {e}; check them against the tool's input schema"))
    })
}

/// Serialises a result; results are structs, so anything else is a bug reported as one.
fn to_object<O: Serialize>(out: &O) -> Result<ToolOutput, ToolError> {
    match serde_json::to_value(out) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(other) => Err(crate::error::internal(format!(
            "the result was not an object ({other}); report this as a cairn bug"
        ))),
        Err(e) => Err(crate::error::internal(format!(
            "could not encode the result ({e}); report this as a cairn bug"
        ))),
    }
}
