//! The timeline of a session: its moments and the snapshots no moment holds, newest first, one
//! page at a time. Reads the catalog once (no lock), filters, then works out the figures that
//! cost a tree walk (files changed since the target's previous snapshot) for the page only, so
//! a page costs the same in a session of ten snapshots or ten thousand.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::moment::AgentTurn;
use super::resolve::CallContext;
use crate::Repository;
use crate::error::{Error, Result};
use crate::id::SnapshotId;
use crate::snapshot::Snapshot;
use crate::store::catalog::SnapshotFilter;
use crate::store::writer::BlobWriter;
use crate::targets::TargetKind;
use crate::tree::diff::{TreeDiff, TreeSource};
use crate::tree::{self, Node, NodeKind};

/// The most entries one page may hold.
const MAX_LIMIT: u64 = 1000;

/// Which part of a session's timeline to read.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct TimelineOptions {
    /// Only entries with a snapshot of this target.
    #[cfg_attr(feature = "clap", arg(long))]
    pub target: Option<String>,
    /// Only entries with a snapshot of this kind (dir, transcript, compose, debug).
    #[cfg_attr(feature = "clap", arg(long))]
    pub kind: Option<String>,
    /// Also list the safety snapshots restores take of the live state.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub include_safety_snapshots: bool,
    /// Leave out the checkpoints agent hooks take.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub no_auto: bool,
    /// How many of the newest matching entries to skip.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0))]
    pub offset: u64,
    /// How many entries to return (at most 1000; 100 when omitted).
    #[cfg_attr(feature = "clap", arg(long))]
    pub limit: Option<u64>,
    /// The session (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// One page of a session's timeline.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TimelinePage {
    /// The session's name.
    pub session: String,
    /// Matching entries in the whole timeline.
    pub total: u64,
    /// Entries skipped before this page.
    pub offset: u64,
    /// The page, newest first.
    pub entries: Vec<TimelineEntry>,
    /// Every target the session holds snapshots of, sorted, for choosing a filter.
    pub targets: Vec<String>,
}

/// A moment, or a snapshot that no moment holds.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TimelineEntry {
    /// The moment's or the snapshot's id.
    pub id: String,
    /// `moment` or `snapshot`.
    pub entry: String,
    /// Creation time, RFC 3339 UTC.
    pub created_at: String,
    /// Its name.
    pub name: Option<String>,
    /// Its description (an agent turn's label).
    pub description: Option<String>,
    /// True for the checkpoints agent hooks take.
    pub auto: bool,
    /// True for a safety snapshot.
    pub safety: bool,
    /// The agent turn an automatic moment was taken at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<AgentTurn>,
    /// One snapshot per target (one for a lone snapshot).
    pub parts: Vec<TimelinePart>,
}

/// One snapshot of a timeline entry, with its figures.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TimelinePart {
    /// The target kind.
    pub kind: TargetKind,
    /// The target.
    pub target: String,
    /// The snapshot.
    pub snapshot: SnapshotId,
    /// Files captured.
    pub files: u64,
    /// Bytes of the captured files.
    pub bytes: u64,
    /// Bytes this capture added to the store, after compression.
    pub stored_bytes: u64,
    /// Files added, removed or changed since the target's previous snapshot (directories only;
    /// absent for the first one).
    pub files_changed: Option<u64>,
    /// How many entries `not_covered` lists (ignored paths counted once each).
    pub not_covered: u64,
}

impl Repository {
    /// One page of a session's timeline, newest first.
    pub fn timeline(&self, options: &TimelineOptions, context: &CallContext) -> Result<TimelinePage> {
        let limit = options.limit.unwrap_or(100);
        if limit == 0 || limit > MAX_LIMIT {
            return Err(Error::invalid_value("limit", &limit.to_string(), "a page holds 1 to 1000 entries"));
        }
        let kind = options.kind.as_deref().map(parse_kind).transpose()?;
        let session = self.call_session(options.session.as_deref(), context)?;
        let target = options.target.as_deref().map(super::list::list_target_key).transpose()?;
        let filter = SnapshotFilter { target: None, include_safety: true };
        let snapshots = self.catalog().list_snapshots(session.id, &filter)?;
        let mut targets: Vec<String> =
            snapshots.iter().map(|s| s.target.clone()).collect::<HashSet<_>>().into_iter().collect();
        targets.sort();
        let by_id: HashMap<SnapshotId, &Snapshot> = snapshots.iter().map(|s| (s.id, s)).collect();
        let wanted =
            |s: &Snapshot| target.as_ref().is_none_or(|t| &s.target == t) && kind.is_none_or(|k| s.kind == k);

        // Newest first: entries are keyed by their UUIDv7 id's text, which sorts by time.
        let mut entries: Vec<(String, Draft<'_>)> = Vec::new();
        let mut in_moment = HashSet::new();
        for moment in self.catalog().list_moments(session.id)? {
            let parts: Vec<&Snapshot> =
                moment.parts.iter().filter_map(|p| by_id.get(&p.snapshot).copied()).collect();
            in_moment.extend(parts.iter().map(|s| s.id));
            if parts.is_empty() || !parts.iter().any(|s| wanted(s)) || (options.no_auto && moment.auto) {
                continue;
            }
            entries.push((moment.id.to_string(), Draft::Moment(Box::new(moment), parts)));
        }
        for s in &snapshots {
            if in_moment.contains(&s.id) || !wanted(s) || (s.safety && !options.include_safety_snapshots) {
                continue;
            }
            entries.push((s.id.to_string(), Draft::Snapshot(s)));
        }
        entries.sort_by(|a, b| b.0.cmp(&a.0));
        let total = entries.len() as u64;

        // The previous snapshot of each target, for "files changed since".
        let mut line: HashMap<&str, Vec<&Snapshot>> = HashMap::new();
        for s in snapshots.iter().filter(|s| !s.safety) {
            line.entry(&s.target).or_default().push(s);
        }
        let previous = |s: &Snapshot| -> Option<&Snapshot> {
            let list = line.get(s.target.as_str())?;
            let i = list.partition_point(|x| x.id < s.id);
            i.checked_sub(1).map(|i| list[i])
        };
        let mut page = Vec::new();
        for (id, draft) in entries.into_iter().skip(options.offset as usize).take(limit as usize) {
            let (entry, parts) = match draft {
                Draft::Moment(m, parts) => (
                    TimelineEntry {
                        id,
                        entry: "moment".into(),
                        created_at: m.created_at,
                        name: m.name,
                        description: m.description,
                        auto: m.auto,
                        safety: false,
                        turn: m.turn,
                        parts: Vec::new(),
                    },
                    parts,
                ),
                Draft::Snapshot(s) => (
                    TimelineEntry {
                        id,
                        entry: "snapshot".into(),
                        created_at: s.created_at.clone(),
                        name: s.name.clone(),
                        description: s.description.clone(),
                        auto: false,
                        safety: s.safety,
                        turn: None,
                        parts: Vec::new(),
                    },
                    vec![s],
                ),
            };
            let mut entry = entry;
            for s in parts {
                let files_changed = match (s.kind, previous(s)) {
                    (TargetKind::Dir, Some(prev)) => Some(self.files_changed(prev, s)?),
                    _ => None,
                };
                entry.parts.push(TimelinePart {
                    kind: s.kind,
                    target: s.target.clone(),
                    snapshot: s.id,
                    files: s.stats.files,
                    bytes: s.stats.bytes,
                    stored_bytes: s.stats.stored_bytes,
                    files_changed,
                    not_covered: s.not_covered.ignored
                        + (s.not_covered.skipped.len() + s.not_covered.secrets.len()) as u64,
                });
            }
            page.push(entry);
        }
        Ok(TimelinePage { session: session.name, total, offset: options.offset, entries: page, targets })
    }

    /// Files and links that differ between two snapshots of one directory: the Merkle diff
    /// of their roots, as `diff` counts it, without resolving either reference again (a
    /// lookup by reference reads the session's whole list, once per side).
    fn files_changed(&self, from: &Snapshot, to: &Snapshot) -> Result<u64> {
        let (Some(a), Some(b)) = (from.root, to.root) else { return Ok(0) };
        if a == b {
            return Ok(0);
        }
        let writer = BlobWriter::dry(self);
        let (a, b) = (tree::read_root(self, &a)?, tree::read_root(self, &b)?);
        let mut changes = Vec::new();
        if let (NodeKind::Dir { tree: a }, NodeKind::Dir { tree: b }) = (&a.top.kind, &b.top.kind) {
            TreeDiff::new(&writer as &dyn TreeSource, true).trees(b"", a, b, &mut changes)?;
        }
        let is_dir = |n: Option<&Node>| n.is_some_and(|n| matches!(n.kind, NodeKind::Dir { .. }));
        Ok(changes.iter().filter(|c| !is_dir(c.new.as_ref().or(c.old.as_ref()))).count() as u64)
    }
}

/// An entry before its page is known: only the page's entries are filled in.
enum Draft<'a> {
    Moment(Box<super::moment::Moment>, Vec<&'a Snapshot>),
    Snapshot(&'a Snapshot),
}

fn parse_kind(word: &str) -> Result<TargetKind> {
    match word {
        "dir" => Ok(TargetKind::Dir),
        "transcript" => Ok(TargetKind::Transcript),
        "compose" => Ok(TargetKind::Compose),
        "debug" => Ok(TargetKind::Debug),
        other => Err(Error::invalid_value("kind", other, "the kinds are dir, transcript, compose and debug")),
    }
}
