//! The resources a profile serves: cairn's `cairn://snapshots` (every snapshot of the session the
//! server works in) with the template `cairn://snapshots/{id}` (one snapshot's record), or the
//! debug profile's `debugger://snapshots` (the stored debugger captures, at the URI the debugger
//! snapshot tools' contract names), also served as `cairn://debug/snapshots`.

use cairn_lib::ops::list::ListOptions;
use cairn_lib::{NotCovered, Snapshot, SnapshotStats};
use rmcp::model::{Resource, ResourceContents, ResourceTemplate};
use serde::Serialize;

use crate::error::ToolError;
use crate::state::ServerState;

/// Which resources a profile serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceSet {
    /// No resources.
    None,
    /// `cairn://snapshots` and `cairn://snapshots/{id}`.
    Snapshots,
    /// `debugger://snapshots`, also as `cairn://debug/snapshots`.
    DebugSnapshots,
}

/// The URI of the list of stored debugger captures, as the debugger snapshot tools name it.
pub const DEBUG_SNAPSHOTS_URI: &str = "debugger://snapshots";
/// The same list under cairn's own scheme.
pub const CAIRN_DEBUG_SNAPSHOTS_URI: &str = "cairn://debug/snapshots";

impl ResourceSet {
    /// True when the profile serves any resource (and so announces changes).
    pub fn any(self) -> bool {
        self != ResourceSet::None
    }

    /// The fixed resources.
    pub fn list(self) -> Vec<Resource> {
        match self {
            ResourceSet::None => Vec::new(),
            ResourceSet::Snapshots => list(),
            ResourceSet::DebugSnapshots => [DEBUG_SNAPSHOTS_URI, CAIRN_DEBUG_SNAPSHOTS_URI]
                .into_iter()
                .map(|uri| {
                    Resource::new(uri, "debug snapshots")
                        .with_title("Debugger captures")
                        .with_description("Every stored capture of a paused program's frame: id, label, createdAt (the capture's timestamp), threadId, frameIndex, functionName, variableCount, and target (debug:<debug session id>).")
                        .with_mime_type("application/json")
                })
                .collect(),
        }
    }

    /// The resource templates.
    pub fn templates(self) -> Vec<ResourceTemplate> {
        match self {
            ResourceSet::Snapshots => templates(),
            _ => Vec::new(),
        }
    }

    /// Whether `uri` is one this set serves.
    pub fn serves(self, uri: &str) -> bool {
        match self {
            ResourceSet::None => false,
            ResourceSet::Snapshots => serves(uri),
            ResourceSet::DebugSnapshots => [DEBUG_SNAPSHOTS_URI, CAIRN_DEBUG_SNAPSHOTS_URI].contains(&uri),
        }
    }

    /// Reads `uri` (blocking: it queries the catalog).
    pub fn read(self, state: &ServerState, uri: &str) -> Result<ResourceContents, ToolError> {
        if self != ResourceSet::DebugSnapshots {
            return read(state, uri);
        }
        let list = state.store.debug_list(&Default::default(), &state.context())?;
        let json = serde_json::to_string_pretty(&list).map_err(|e| {
            crate::error::internal(format!("could not encode {uri} ({e}); report this as a cairn bug"))
        })?;
        Ok(ResourceContents::text(json, uri).with_mime_type("application/json"))
    }

    /// The URI named in refusals.
    pub fn describe(self) -> &'static str {
        match self {
            ResourceSet::None => "no resources",
            ResourceSet::Snapshots => "cairn://snapshots and cairn://snapshots/{id}",
            ResourceSet::DebugSnapshots => "debugger://snapshots and cairn://debug/snapshots",
        }
    }
}

/// The URI of the list of snapshots.
pub const SNAPSHOTS_URI: &str = "cairn://snapshots";
/// The prefix of one snapshot's URI.
const ONE_PREFIX: &str = "cairn://snapshots/";

/// One snapshot in the list resource.
#[derive(Debug, Serialize)]
struct Entry {
    id: String,
    name: Option<String>,
    target: String,
    created_at: String,
    kind: String,
    stats: SnapshotStats,
}

/// One snapshot's resource: its record, `not_covered` named on its own so it is not missed.
#[derive(Debug, Serialize)]
struct One {
    snapshot: Snapshot,
    not_covered: NotCovered,
}

/// The fixed resources.
fn list() -> Vec<Resource> {
    vec![
        Resource::new(SNAPSHOTS_URI, "snapshots")
            .with_title("Snapshots of the current session")
            .with_description("Every snapshot of the session this server works in (the pinned session, else the current one): id, name, target, created_at, kind and stats.")
            .with_mime_type("application/json"),
    ]
}

/// The resource templates.
fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new("cairn://snapshots/{id}", "snapshot")
            .with_title("One snapshot")
            .with_description("One snapshot's record, with not_covered: what it does not hold.")
            .with_mime_type("application/json"),
    ]
}

/// Whether `uri` is one this server serves (so a read of anything else is a protocol error).
fn serves(uri: &str) -> bool {
    uri == SNAPSHOTS_URI || uri.strip_prefix(ONE_PREFIX).is_some_and(|id| !id.is_empty())
}

/// Reads `uri` (blocking: it queries the catalog).
fn read(state: &ServerState, uri: &str) -> Result<ResourceContents, ToolError> {
    let json = if uri == SNAPSHOTS_URI {
        let list = state.store.list(&ListOptions::default(), &state.context())?;
        let snapshots: Vec<Entry> = list
            .snapshots
            .into_iter()
            .map(|s| Entry {
                id: s.id.to_string(),
                name: s.name,
                target: s.target,
                created_at: s.created_at,
                kind: s.kind.to_string(),
                stats: s.stats,
            })
            .collect();
        serde_json::to_string_pretty(&serde_json::json!({ "snapshots": snapshots }))
    } else {
        let id = uri.strip_prefix(ONE_PREFIX).unwrap_or(uri);
        let snapshot = state.store.show(
            &cairn_lib::ops::list::ShowOptions { reference: id.to_owned(), ..Default::default() },
            &state.context(),
        )?;
        let not_covered = snapshot.not_covered.clone();
        serde_json::to_string_pretty(&One { snapshot, not_covered })
    }
    .map_err(|e| {
        crate::error::internal(format!("could not encode {uri} ({e}); report this as a cairn bug"))
    })?;
    Ok(ResourceContents::text(json, uri).with_mime_type("application/json"))
}
