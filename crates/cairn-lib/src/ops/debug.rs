//! Debugger captures as snapshots of `debug:<id>` targets: store a paused frame's variables,
//! list, load, diff and delete them; and [`Repository::debug_run`], the breakpoint-to-breakpoint
//! loop of `cairn debug run`.
//!
//! An interactive debug session (the MCP server's) belongs to the front end that holds it;
//! the engine keeps what it captures. Because the captures are in the store, two of them can
//! be compared across debug sessions and days. The result shapes use camelCase keys and
//! `snap-<uuid>` ids: they are the debugger snapshot tools' contract, which agents already
//! know.

mod run;

pub use run::{DebugRunOptions, DebugRunResult, DebugStop, adapter_for};

use cairn_dap::{CaptureDiff, FrameCapture, RefusalCode};
use serde::{Deserialize, Serialize};

use super::document::DocumentSave;
use super::resolve::CallContext;
use crate::Repository;
use crate::error::{Error, ErrorKind, Hint, Operation, Result, echo};
use crate::session::SessionRef;
use crate::snapshot::{NotCovered, SkippedEntry, Snapshot, SnapshotStats};

/// The target kind of debugger captures.
pub const KIND: crate::targets::TargetKind = crate::targets::TargetKind::Debug;

/// The code of a refusal to diff, load or delete a capture that does not exist.
pub const SNAPSHOT_NOT_FOUND: &str = "SNAPSHOT_NOT_FOUND";

/// The code of a refusal to debug a program that does not exist.
pub const PROGRAM_NOT_FOUND: &str = "PROGRAM_NOT_FOUND";

/// The code of a refusal of an argument outside its range.
pub const INVALID_ARGUMENT: &str = "INVALID_ARGUMENT";

/// The prefix of a debug capture's id as the debugger snapshot tools write it
/// (`snap-<uuid>`); the bare snapshot id (or a unique prefix of it) is accepted too.
pub const ID_PREFIX: &str = "snap-";

/// The id of a stored capture as the debug commands and tools show it: `snap-<uuid>`, the
/// snapshot's own id behind the prefix the debugger snapshot tools use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CaptureId(pub crate::id::SnapshotId);

impl std::fmt::Display for CaptureId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{ID_PREFIX}{}", self.0)
    }
}

impl std::str::FromStr for CaptureId {
    type Err = Error;

    /// Reads a whole id, with or without its prefix (prefixes of ids are looked up by
    /// [`Repository::debug_load`], not parsed).
    fn from_str(text: &str) -> Result<Self> {
        let bare = text.strip_prefix(ID_PREFIX).unwrap_or(text);
        bare.parse()
            .map(CaptureId)
            .map_err(|_| Error::invalid(format!("{:?} is not a debug capture id", echo(text))))
    }
}

impl Serialize for CaptureId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CaptureId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

word_schema!(CaptureId);

/// The id of a stored capture as the debug commands and tools show it: `snap-<uuid>`.
pub fn capture_id(snapshot: &Snapshot) -> CaptureId {
    CaptureId(snapshot.id)
}

/// A fresh id for a debug session, used as the `<id>` of its `debug:<id>` target.
pub fn new_debug_session_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Converts a debug adapter failure into an engine error, keeping refusal codes such as
/// `NOT_PAUSED` so front ends can pass them on unchanged.
pub fn dap_error(err: cairn_dap::Error) -> Error {
    match err.refusal_code() {
        Some(code @ (RefusalCode::NotPaused | RefusalCode::SessionEnded)) => {
            Error::new(ErrorKind::Conflict, err.to_string()).with_code(code.as_str())
        }
        Some(code @ RefusalCode::FrameNotFound) => Error::not_found(err.to_string()).with_code(code.as_str()),
        None => Error::new(ErrorKind::External, err.to_string()),
    }
}

/// Where to store a capture.
#[derive(Debug, Clone, Default)]
pub struct DebugSaveOptions {
    /// The debug session's id: the capture becomes a snapshot of `debug:<debug_session>`.
    pub debug_session: String,
    /// A label for people; generated from the function and line when absent.
    pub label: Option<String>,
    /// The cairn session to save into.
    pub session: Option<String>,
}

/// A stored capture, as `snapshot_create` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DebugSnapshot {
    /// The capture's id, `snap-<uuid>` (what `snapshot_diff` and `snapshot_delete` take).
    pub id: CaptureId,
    /// The label given, or the generated one.
    pub label: String,
    /// When the variables were read, RFC 3339 UTC.
    pub timestamp: String,
    /// The thread the frame belongs to.
    pub thread_id: i64,
    /// The frame's position on the stack, 0 = innermost.
    pub frame_index: usize,
    /// The frame's function.
    pub function_name: String,
    /// How many variables were captured (children included).
    pub variable_count: usize,
    /// How many levels of children were expanded.
    pub depth: u32,
}

/// One stored capture in a listing (the `cairn://debug/snapshots` resource's entries).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DebugListEntry {
    /// The capture's id, `snap-<uuid>`.
    pub id: CaptureId,
    /// Its label.
    pub label: String,
    /// When the variables were read, RFC 3339 UTC: the capture's `timestamp`.
    pub created_at: String,
    /// The thread the frame belongs to.
    pub thread_id: i64,
    /// The frame's position on the stack.
    pub frame_index: usize,
    /// The frame's function.
    pub function_name: String,
    /// How many variables were captured.
    pub variable_count: usize,
    /// How many levels of children were expanded.
    pub depth: u32,
    /// The `debug:<id>` target: captures of one debug session share it.
    pub target: String,
}

/// The stored captures of a session, oldest first.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DebugList {
    /// The captures.
    pub snapshots: Vec<DebugListEntry>,
}

/// Whose captures to list.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct DebugListOptions {
    /// The session to list (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// Which two captures to compare. The doc comments are the CLI's help; the debug profile maps
/// its contract's arguments into these.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct DebugDiffOptions {
    /// The baseline capture's id.
    #[cfg_attr(feature = "clap", arg(value_name = "A"))]
    pub snapshot_a: String,
    /// The capture to compare with it.
    #[cfg_attr(feature = "clap", arg(value_name = "B"))]
    pub snapshot_b: String,
    /// Compare object addresses and pointer values raw instead of masking them.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub exact: bool,
    /// The session holding both (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// Which capture to delete: one id, or all of them when `snapshot_id` is absent.
#[derive(Debug, Clone, Default)]
pub struct DebugDeleteOptions {
    /// The capture to delete; every capture of the session (or of `debug_session`) when absent.
    pub snapshot_id: Option<String>,
    /// Limits "all" and the remaining count to the captures of this one debug session (the
    /// `<id>` of `debug:<id>`), as the debugger snapshot tools' in-memory store holds only its
    /// own session's captures. Every debug session's captures when absent.
    pub debug_session: Option<String>,
    /// The cairn session to delete from.
    pub session: Option<String>,
}

/// What `snapshot_delete` reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DebugDeleteResult {
    /// The id deleted, or `all`.
    pub deleted: String,
    /// How many captures the session (or the one debug session) still holds.
    pub remaining: usize,
}

impl Repository {
    /// Stores `capture` as a new snapshot of `debug:<options.debug_session>`.
    pub fn debug_save(
        &self,
        options: &DebugSaveOptions,
        capture: &FrameCapture,
        context: &CallContext,
    ) -> Result<DebugSnapshot> {
        if options.debug_session.trim().is_empty() {
            return Err(Error::invalid("the debug session id is empty; start a debug session first"));
        }
        let label = match options.label.as_deref().map(str::trim) {
            Some(label) if !label.is_empty() => label.to_owned(),
            _ => default_label(capture),
        };
        let variable_count = capture.variables.len();
        let details = serde_json::json!({
            "label": label,
            "threadId": capture.thread_id,
            "frameIndex": capture.frame_index,
            "functionName": capture.function_name,
            "variableCount": variable_count,
            "depth": capture.depth,
            "timestamp": capture.captured_at.to_string(),
        });
        let document = serde_json::to_vec(capture)
            .map_err(|e| Error::invalid(format!("the capture could not be encoded ({e}); capture again")))?;
        let save = DocumentSave {
            target: format!("{KIND}:{}", options.debug_session),
            kind: KIND,
            name: None,
            description: Some(label.clone()),
            force: false,
            details,
            stats: SnapshotStats::default(),
            not_covered: not_covered(capture),
            session: self.call_session(options.session.as_deref(), context)?.id,
        };
        let snapshot = self.save_document(&save, &document)?;
        Ok(DebugSnapshot {
            id: capture_id(&snapshot),
            label,
            timestamp: capture.captured_at.to_string(),
            thread_id: capture.thread_id,
            frame_index: capture.frame_index,
            function_name: capture.function_name.clone(),
            variable_count,
            depth: capture.depth,
        })
    }

    /// The stored captures of a session, oldest first.
    pub fn debug_list(&self, options: &DebugListOptions, context: &CallContext) -> Result<DebugList> {
        let session = self.call_session(options.session.as_deref(), context)?;
        let snapshots = self.list_kind(KIND, &session)?.iter().map(list_entry).collect();
        Ok(DebugList { snapshots })
    }

    /// Loads one stored capture by snapshot id (or unique id prefix); `SNAPSHOT_NOT_FOUND`
    /// when the session holds no capture by that id.
    pub fn debug_load(&self, session: &SessionRef, id: &str) -> Result<(Snapshot, FrameCapture)> {
        let snapshot = self.find_debug_snapshot(session, id)?;
        let bytes = self.read_document(&snapshot)?;
        let capture = serde_json::from_slice(&bytes).map_err(|e| {
            Error::corrupt(format!("debug snapshot {} does not hold a capture ({e})", snapshot.id))
                .hint(Hint::Run(Operation::Check))
        })?;
        Ok((snapshot, capture))
    }

    /// Compares two stored captures; masks run-to-run noise unless `exact`.
    pub fn debug_diff(&self, options: &DebugDiffOptions, context: &CallContext) -> Result<CaptureDiff> {
        let session = self.call_session(options.session.as_deref(), context)?;
        let (a, capture_a) = self.debug_load(&session, &options.snapshot_a)?;
        let (b, capture_b) = self.debug_load(&session, &options.snapshot_b)?;
        Ok(cairn_dap::diff_captures(&capture_a, &capture_b, options.exact)
            .with_snapshot_ids(capture_id(&a).to_string(), capture_id(&b).to_string()))
    }

    /// Deletes one capture, or all captures of the session (of one debug session, when
    /// `debug_session` is set); their data is reclaimed by gc.
    pub fn debug_delete(
        &self,
        options: &DebugDeleteOptions,
        context: &CallContext,
    ) -> Result<DebugDeleteResult> {
        let resolved = self.call_session(options.session.as_deref(), context)?;
        let scope = options.debug_session.as_ref().map(|id| format!("{KIND}:{id}"));
        let in_scope = |list: Vec<Snapshot>| -> Vec<Snapshot> {
            list.into_iter().filter(|s| scope.as_ref().is_none_or(|t| &s.target == t)).collect()
        };
        let (chosen, deleted) = match &options.snapshot_id {
            Some(id) => {
                let snapshot = self.find_debug_snapshot(&resolved, id)?;
                let deleted = capture_id(&snapshot).to_string();
                (vec![snapshot], deleted)
            }
            None => (in_scope(self.list_kind(KIND, &resolved)?), "all".to_owned()),
        };
        for snapshot in &chosen {
            let _lock = self.lock_target(&snapshot.target, "a debug delete")?;
            self.catalog().remove_membership(resolved.id, snapshot.id)?;
            self.forget_target_if_empty(&snapshot.target)?;
        }
        let remaining = in_scope(self.list_kind(KIND, &resolved)?).len();
        Ok(DebugDeleteResult { deleted, remaining })
    }

    fn find_debug_snapshot(&self, resolved: &SessionRef, id: &str) -> Result<Snapshot> {
        // Ids are shown as `snap-<uuid>`; the bare id and unique prefixes work too.
        let reference = id.trim().strip_prefix(ID_PREFIX).unwrap_or(id.trim());
        let missing = || {
            Error::not_found(format!("no debug snapshot {:?} in session {:?}", echo(id), resolved.name))
                .hint(Hint::Run(Operation::ListDebugCaptures))
                .with_code(SNAPSHOT_NOT_FOUND)
        };
        if reference.is_empty() || matches!(reference, "latest") {
            return Err(missing());
        }
        match self.resolve_snapshot(resolved, reference, None) {
            Ok(snapshot) if snapshot.kind == KIND => Ok(snapshot),
            Ok(_) => Err(missing()),
            Err(e) if e.kind() == ErrorKind::NotFound => Err(missing()),
            Err(e) => Err(e),
        }
    }
}

fn default_label(capture: &FrameCapture) -> String {
    format!("{}:{}", capture.function_name, capture.line)
}

/// Containers whose children were cut short by the capture's size limits.
fn not_covered(capture: &FrameCapture) -> NotCovered {
    let mut not_covered = NotCovered::default();
    for path in &capture.truncated {
        not_covered.skipped.push(SkippedEntry { path: path.clone(), reason: "truncated".to_owned() });
    }
    not_covered
}

fn list_entry(snapshot: &Snapshot) -> DebugListEntry {
    let d = &snapshot.details;
    let text = |key: &str| d.get(key).and_then(|v| v.as_str()).unwrap_or_default().to_owned();
    let number = |key: &str| d.get(key).and_then(serde_json::Value::as_u64).unwrap_or_default();
    // createdAt is when the variables were read, the capture's own timestamp; records stored
    // before it was kept fall back to when the snapshot was stored.
    let created_at = d.get("timestamp").and_then(|v| v.as_str()).unwrap_or(&snapshot.created_at);
    DebugListEntry {
        id: capture_id(snapshot),
        label: text("label"),
        created_at: created_at.to_owned(),
        thread_id: d.get("threadId").and_then(serde_json::Value::as_i64).unwrap_or_default(),
        frame_index: usize::try_from(number("frameIndex")).unwrap_or_default(),
        function_name: text("functionName"),
        variable_count: usize::try_from(number("variableCount")).unwrap_or_default(),
        depth: u32::try_from(number("depth")).unwrap_or_default(),
        target: snapshot.target.clone(),
    }
}
