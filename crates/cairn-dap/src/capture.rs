//! Capturing the variables of one stack frame while the program is paused.
//!
//! Everything is read within one stop: DAP variable references are only valid until the
//! program resumes, so a capture that straddles a resume would mix two moments. The capture
//! checks the stop counter at the end and fails rather than return such a mixture.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, RefusalCode, Result};
use crate::paths::child_path;
use crate::protocol::bodies::{
    Scope, ScopesArguments, ScopesResponse, Variable, VariablesArguments, VariablesResponse,
};
use crate::session::DebugSession;

/// Most children read from one container; the rest are listed in `truncated`, so a huge
/// list cannot make a capture unbounded.
const MAX_CHILDREN: usize = 1000;
/// Most variables in one capture, for the same reason.
const MAX_VARIABLES: usize = 20_000;

/// The variables of one stack frame at one stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameCapture {
    /// The frame's function, as the adapter names it.
    pub function_name: String,
    /// The thread the frame belongs to.
    pub thread_id: i64,
    /// Position of the frame on the stack, 0 = innermost.
    pub frame_index: usize,
    /// How many levels of children were expanded (0 = top-level variables only).
    pub depth: u32,
    /// When the capture was taken.
    pub captured_at: jiff::Timestamp,
    /// The frame's source file, when known.
    pub source_path: Option<PathBuf>,
    /// The frame's current line.
    pub line: u32,
    /// Arguments, locals and `this`/`self`, each followed by its expanded children.
    pub variables: Vec<CapturedVariable>,
    /// Paths whose children were cut short by the capture's size limits.
    pub truncated: Vec<String>,
}

/// One variable of a capture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapturedVariable {
    /// The name the adapter shows (`total`, `x`, `[0]`, `'key'`).
    pub name: String,
    /// Where it sits: dot-separated names from a top-level variable, list elements and
    /// other non-identifier keys in brackets (`order.items[0].price`, `d['key']`).
    pub path: String,
    /// Its type as the adapter names it; empty when the adapter gives none.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Its value as the adapter renders it.
    pub value: String,
    /// The scope it came from (`Locals`, `Arguments`, ...).
    pub scope: String,
    /// Nesting level: 0 for a top-level variable.
    pub level: u32,
    /// It has children (expanded only up to the capture's depth).
    pub expandable: bool,
}

impl DebugSession {
    /// Captures the arguments, locals and `this`/`self` of frame `frame_index` of `thread_id`
    /// (default: the thread that stopped), expanding children `depth` levels deep. The
    /// whole capture is bounded by `timeout`. Refused with `NOT_PAUSED` while the program
    /// runs.
    pub async fn capture_frame(
        &self,
        thread_id: Option<i64>,
        frame_index: usize,
        depth: u32,
        timeout: Duration,
    ) -> Result<FrameCapture> {
        let thread_id = self.paused_thread(thread_id, "capture variables")?;
        let stops_before = self.conn.state().stops;
        let capture = tokio::time::timeout(timeout, self.capture_inner(thread_id, frame_index, depth))
            .await
            .map_err(|_| Error::Timeout { what: "the variable capture".to_owned(), after: timeout })??;
        let state = self.conn.state();
        if !state.paused || state.stops != stops_before {
            return Err(Error::refused(
                RefusalCode::NotPaused,
                "the program resumed during the capture; capture again once it is paused",
            ));
        }
        Ok(capture)
    }

    async fn capture_inner(&self, thread_id: i64, frame_index: usize, depth: u32) -> Result<FrameCapture> {
        let levels = u32::try_from(frame_index + 1).unwrap_or(u32::MAX);
        let stack = self.raw_stack(thread_id, Some(levels)).await?;
        let count = stack.stack_frames.len();
        let frame = stack
            .stack_frames
            .into_iter()
            .nth(frame_index)
            .ok_or_else(|| {
                Error::refused(
                    RefusalCode::FrameNotFound,
                    format!(
                        "thread {thread_id} has no frame {frame_index} (it has {count}); pick a frame from the stack"
                    ),
                )
            })?;
        let scopes: ScopesResponse =
            self.conn.request("scopes", Some(ScopesArguments { frame_id: frame.id })).await?;
        let mut walk = Walk { variables: Vec::new(), truncated: Vec::new(), depth };
        for scope in frame_scopes(scopes.scopes) {
            if scope.variables_reference <= 0 {
                continue;
            }
            self.expand(&mut walk, &scope.name, scope.variables_reference, None, 0).await?;
        }
        Ok(FrameCapture {
            function_name: frame.name,
            thread_id,
            frame_index,
            depth,
            captured_at: jiff::Timestamp::now(),
            source_path: frame.source.and_then(|s| s.path).map(PathBuf::from),
            line: frame.line,
            variables: walk.variables,
            truncated: walk.truncated,
        })
    }

    /// Reads the children of `reference` into `walk`, each followed by its own children
    /// while `level` is below the requested depth. Boxed because it recurses.
    fn expand<'a>(
        &'a self,
        walk: &'a mut Walk,
        scope: &'a str,
        reference: i64,
        parent: Option<&'a str>,
        level: u32,
    ) -> Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>> {
        Box::pin(async move {
            let arguments = VariablesArguments { variables_reference: reference, count: None };
            let response: VariablesResponse = self.conn.request("variables", Some(arguments)).await?;
            let children: Vec<Variable> = response.variables.into_iter().filter(|v| !is_noise(v)).collect();
            let room = MAX_CHILDREN.min(MAX_VARIABLES.saturating_sub(walk.variables.len()));
            if children.len() > room {
                walk.truncated.push(parent.map_or_else(|| scope.to_owned(), str::to_owned));
            }
            for child in children.into_iter().take(room) {
                let path = match parent {
                    Some(parent) => child_path(parent, &child.name),
                    None => child.name.clone(),
                };
                let expandable = child.variables_reference > 0;
                walk.variables.push(CapturedVariable {
                    name: child.name,
                    path: path.clone(),
                    type_name: child.type_name.unwrap_or_default(),
                    value: child.value,
                    scope: scope.to_owned(),
                    level,
                    expandable,
                });
                if expandable && level < walk.depth {
                    self.expand(walk, scope, child.variables_reference, Some(&path), level + 1).await?;
                }
            }
            Ok(())
        })
    }
}

struct Walk {
    variables: Vec<CapturedVariable>,
    truncated: Vec<String>,
    depth: u32,
}

/// The scopes that hold a frame's own state: arguments and locals (where adapters also put
/// `this`/`self`). Globals and registers are left out: they belong to the whole program
/// or the machine, are large, and would drown the frame's changes in a diff.
fn frame_scopes(scopes: Vec<Scope>) -> Vec<Scope> {
    let is_frame_scope = |s: &Scope| {
        let hint = s.presentation_hint.as_deref().unwrap_or_default();
        let name = s.name.to_ascii_lowercase();
        matches!(hint, "arguments" | "locals")
            || matches!(name.as_str(), "locals" | "local" | "arguments" | "args" | "this" | "self")
    };
    if scopes.iter().any(is_frame_scope) {
        return scopes.into_iter().filter(is_frame_scope).collect();
    }
    // An adapter that names its scopes differently: take the first one, which by
    // convention is the innermost.
    scopes.into_iter().take(1).collect()
}

/// Entries that are not variables of the program. debugpy groups dunder attributes,
/// methods and class attributes under synthetic "special variables", "function variables"
/// and "class variables" nodes, and adds a "len()" entry to containers: they describe the
/// type rather than this frame's state (or repeat it), change with the interpreter version,
/// and would be captured and diffed as noise.
fn is_noise(variable: &Variable) -> bool {
    matches!(variable.name.as_str(), "special variables" | "function variables" | "class variables" | "len()")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(name: &str, hint: Option<&str>) -> Scope {
        Scope { name: name.to_owned(), presentation_hint: hint.map(str::to_owned), variables_reference: 1 }
    }

    #[test]
    fn keeps_locals_and_arguments_and_drops_globals_and_registers() {
        let picked = frame_scopes(vec![
            scope("Locals", Some("locals")),
            scope("Globals", None),
            scope("Registers", Some("registers")),
            scope("Arguments", Some("arguments")),
        ]);
        let names: Vec<_> = picked.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Locals", "Arguments"]);
        let fallback = frame_scopes(vec![scope("Frame", None), scope("Module", None)]);
        assert_eq!(fallback.len(), 1);
        assert_eq!(fallback[0].name, "Frame");
    }
}
