//! The timeline of a session: its moments and the snapshots no moment holds, newest first, one
//! page at a time. Reads the catalog once (no lock), filters, then works out the figures that
//! cost a tree walk (files changed since the target's previous snapshot) for the page only, so
//! a page costs the same in a session of ten snapshots or ten thousand.
//!
//! A snapshot a moment holds is listed under that moment, except one the moment reused: an
//! agent's checkpoint of an unchanged directory takes the directory's last snapshot as its
//! part, and when that snapshot was saved on its own (a name or description the moment does
//! not carry), it keeps its own row, which says which moments reuse it.

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
    /// For a snapshot saved on its own that moments later took as a part: those moments,
    /// oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reused_by: Vec<ReusedBy>,
}

/// A moment that took an earlier snapshot as one of its parts.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ReusedBy {
    /// The moment's id.
    pub moment: String,
    /// The agent turn's number, for an agent's checkpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
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
    /// The snapshot's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// True when the moment reused a snapshot saved before it, which has its own row.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reused: bool,
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
        // Moments oldest first: the first to hold a snapshot is the one that could have taken it.
        let mut in_moment = HashSet::new();
        let mut reused: HashMap<SnapshotId, Vec<ReusedBy>> = HashMap::new();
        for moment in self.catalog().list_moments(session.id)? {
            let parts: Vec<&Snapshot> =
                moment.parts.iter().filter_map(|p| by_id.get(&p.snapshot).copied()).collect();
            for s in &parts {
                let by = || ReusedBy {
                    moment: moment.id.to_string(),
                    turn: moment.turn.as_ref().map(|t| t.number),
                };
                if let Some(list) = reused.get_mut(&s.id) {
                    list.push(by());
                } else if in_moment.insert(s.id)
                    && (s.name != moment.name || s.description != moment.description)
                {
                    reused.insert(s.id, vec![by()]);
                }
            }
            if parts.is_empty() || !parts.iter().any(|s| wanted(s)) || (options.no_auto && moment.auto) {
                continue;
            }
            entries.push((moment.id.to_string(), Draft::Moment(Box::new(moment), parts)));
        }
        for s in &snapshots {
            let own_row = !in_moment.contains(&s.id) || reused.contains_key(&s.id);
            if !own_row || !wanted(s) || (s.safety && !options.include_safety_snapshots) {
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
                        reused_by: Vec::new(),
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
                        reused_by: reused.get(&s.id).cloned().unwrap_or_default(),
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
                    name: s.name.clone(),
                    reused: entry.entry == "moment" && reused.contains_key(&s.id),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::moment::{AgentTurn, PartPlan, TakeOptions};
    use crate::ops::save::SaveOptions;

    fn turn(workspace: &str, number: u64) -> TakeOptions {
        TakeOptions {
            description: Some(format!("turn {number}")),
            auto: true,
            turn: Some(AgentTurn {
                agent: "claude-code".into(),
                agent_session: "s1".into(),
                workspace: workspace.into(),
                number,
                trigger: "prompt".into(),
                prompt: Some(format!("prompt {number}")),
                start: None,
                exact: true,
                forked_from: None,
            }),
            ..TakeOptions::default()
        }
    }

    #[test]
    fn a_named_snapshot_a_turn_reuses_keeps_its_row_and_the_turn_says_so() {
        let root = tempfile::tempdir().unwrap();
        let ws = root.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("a.txt"), "one\n").unwrap();
        let store = Repository::open(&root.path().join("store")).unwrap();
        let context = CallContext::default();
        let target = ws.display().to_string();
        let save = SaveOptions {
            target: target.clone(),
            name: Some("before-refactor".into()),
            ..SaveOptions::default()
        };
        let named = store.save(&save, &context).unwrap().snapshot;
        let session = store.call_session(None, &context).unwrap();
        let plans = [PartPlan { target: target.clone(), reuse_unchanged: true }];
        let take = |n| store.take_moment(&session, &plans, &turn(&target, n)).unwrap().unwrap().moment;
        // Turn 1 finds the directory unchanged and reuses the named snapshot; turn 2 saves a
        // new one, which turn 3 (unchanged again) reuses: that one is turn 2's own part.
        let m1 = take(1);
        std::fs::write(ws.join("a.txt"), "two\n").unwrap();
        let m2 = take(2);
        let m3 = take(3);
        assert_eq!(m1.parts[0].snapshot, named.id);
        assert_eq!(m3.parts[0].snapshot, m2.parts[0].snapshot);

        let page = store.timeline(&TimelineOptions::default(), &context).unwrap();
        let ids: Vec<&str> = page.entries.iter().map(|e| e.id.as_str()).collect();
        let (m1, m2, m3, named) =
            (m1.id.to_string(), m2.id.to_string(), m3.id.to_string(), named.id.to_string());
        assert_eq!(ids, [&m3, &m2, &m1, &named]);
        let own = &page.entries[3];
        assert_eq!((own.entry.as_str(), own.name.as_deref()), ("snapshot", Some("before-refactor")));
        let by: Vec<(&str, Option<u64>)> =
            own.reused_by.iter().map(|r| (r.moment.as_str(), r.turn)).collect();
        assert_eq!(by, [(m1.as_str(), Some(1))]);
        let part = &page.entries[2].parts[0];
        assert!(part.reused);
        assert_eq!(part.name.as_deref(), Some("before-refactor"));
        assert!(!page.entries[0].parts[0].reused, "turn 3 reuses turn 2's own part, listed under turn 2");
        assert!(page.entries[..3].iter().all(|e| e.reused_by.is_empty()));

        // Without the agents' checkpoints, the named snapshot is still there.
        let manual = TimelineOptions { no_auto: true, ..TimelineOptions::default() };
        let page = store.timeline(&manual, &context).unwrap();
        assert_eq!(page.entries.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), [&named]);
    }
}
