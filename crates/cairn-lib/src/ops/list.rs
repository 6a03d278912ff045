//! `cairn list` and `cairn show`: read the catalog. Reads take no lock.

use serde::{Deserialize, Serialize};

use super::resolve::CallContext;
use crate::Repository;
use crate::error::{Error, Result};
use crate::snapshot::Snapshot;
use crate::store::catalog::SnapshotFilter;

/// What to list. The CLI's help is the doc comment of each field; the MCP description, written
/// for an agent, is the `schemars` one.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ListOptions {
    /// Only snapshots of this target.
    #[schemars(
        description = "Only snapshots of this target: a directory path, compose:PROJECT or transcript:FILE, as snapshot_save took it."
    )]
    pub target: Option<String>,
    /// Also list the safety snapshots restores take of the live state.
    #[schemars(
        description = "Also list the safety snapshots cairn takes of the live state before a restore."
    )]
    #[serde(default)]
    // The command line lists `--sort` first, as it always has.
    #[cfg_attr(feature = "clap", arg(long, display_order = 1))]
    pub include_safety_snapshots: bool,
    /// `desc` (newest first) or `asc`.
    #[schemars(description = "\"desc\" (newest first, the default) or \"asc\" (oldest first).")]
    #[cfg_attr(feature = "clap", arg(long, default_value = "desc", display_order = 0))]
    pub sort: Option<String>,
    /// The session to list (name or id).
    #[schemars(description = "The session to list, for this call only (name or id).")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// Which snapshot to show. The CLI's help is the doc comment of each field; the MCP
/// description, written for an agent, is the `schemars` one.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ShowOptions {
    /// The snapshot: an id, a unique id prefix, a name, or `latest`.
    #[serde(rename = "ref")]
    #[schemars(description = "The snapshot: its id, a unique id prefix, its name, or \"latest\".")]
    pub reference: String,
    /// The target the reference is resolved among.
    #[schemars(
        description = "The target the reference is looked up among (needed for names and \"latest\" when the session has several targets)."
    )]
    #[cfg_attr(feature = "clap", arg(long))]
    pub target: Option<String>,
    /// The session (name or id).
    #[schemars(description = "The session to look in, for this call only (name or id).")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// A list of snapshots, wrapped in an object (never a bare array, never null).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SnapshotList {
    /// The snapshots, in the order asked for.
    pub snapshots: Vec<Snapshot>,
}

/// The order of a listing. The options take it as a word, so that a word outside the two is
/// refused in the engine's own sentence on every front.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortOrder {
    /// Newest first, the default.
    #[default]
    Desc,
    /// Oldest first.
    Asc,
}

impl SortOrder {
    /// Reads a sort option: `desc` (the default) or `asc`; anything else is refused.
    pub fn parse(sort: Option<&str>) -> Result<Self> {
        match sort.unwrap_or("desc") {
            "desc" => Ok(SortOrder::Desc),
            "asc" => Ok(SortOrder::Asc),
            other => Err(Error::invalid(format!(
                "invalid sort {other:?}: use desc (newest first) or asc (oldest first)"
            ))),
        }
    }

    /// Puts `items`, read oldest first, in this order.
    pub fn apply<T>(self, items: &mut [T]) {
        if self == SortOrder::Desc {
            items.reverse();
        }
    }
}

impl Repository {
    /// Lists the snapshots of a session; with a scope ([`Repository::set_scope`]) and no
    /// target, those of the scope's directory first.
    pub fn list(&self, options: &ListOptions, context: &CallContext) -> Result<SnapshotList> {
        let order = SortOrder::parse(options.sort.as_deref())?;
        let session = self.call_session(options.session.as_deref(), context)?;
        let target = options.target.as_deref().map(list_target_key).transpose()?;
        let filter = SnapshotFilter { target, include_safety: options.include_safety_snapshots };
        let scoped = filter.target.is_none();
        let mut snapshots = self.catalog().list_snapshots(session.id, &filter)?;
        order.apply(&mut snapshots);
        // The directory the caller stands in comes first (a stable sort keeps the order asked
        // for within each group), so `latest` is the first row of what the user looks at.
        if scoped
            && let Some(scope) = self.scope()
            && let Some(key) =
                super::resolve::scope_target(snapshots.iter().map(|s| (s.target.as_str(), s.kind)), scope)
        {
            snapshots.sort_by_key(|s| s.target != key);
        }
        Ok(SnapshotList { snapshots })
    }

    /// One snapshot by reference.
    pub fn show(&self, options: &ShowOptions, context: &CallContext) -> Result<Snapshot> {
        let session = self.call_session(options.session.as_deref(), context)?;
        let target = options.target.as_deref().map(list_target_key).transpose()?;
        let snapshot = self.resolve_snapshot(&session, &options.reference, target.as_deref())?;
        if let Some(found) = self.interrupted_restore(&snapshot.target)? {
            self.notice(&format!("{}; the live tree is not any snapshot", found.sentence()));
        }
        Ok(snapshot)
    }
}

/// The key of a target named in a read-only command: a directory that no longer exists is
/// still a valid filter, by its absolute path.
pub(crate) fn list_target_key(text: &str) -> Result<String> {
    match crate::targets::Target::parse(text) {
        Ok(t) => Ok(t.key()),
        Err(e) if e.kind() == crate::error::ErrorKind::NotFound => {
            let path =
                std::path::absolute(text).map_err(|e| Error::io("resolve", std::path::Path::new(text), e))?;
            Ok(path.to_string_lossy().into_owned())
        }
        Err(e) => Err(e),
    }
}
