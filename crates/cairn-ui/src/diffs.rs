//! The cross-layer diff of two timeline points, and the cache that pages it.
//!
//! A point is a moment or a lone snapshot; its parts are paired by target and each pair is
//! compared by the library operation of its kind (`diff` for directories and conversations,
//! `debug_diff` for debugger captures, `compose_snapshot_diff` for Compose projects). A directory diff of 50,000 files is computed once,
//! kept here (the last few), and sent a page of entries at a time. One file of such a diff
//! is drawn by `file` (syntax colour in `syntax`, changed words in `words`, unchanged regions
//! folded by `fold`).

pub(crate) mod file;
mod fold;
mod syntax;
mod words;

pub(crate) use syntax::stylesheet;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use cairn_lib::ops::debug::DebugDiffOptions;
use cairn_lib::ops::diff::{DiffEntry, DiffOptions, DiffSummary};
use cairn_lib::ops::list::ShowOptions;
use cairn_lib::ops::moment::{ComposeDiff, MomentShowOptions};
use cairn_lib::ops::resolve::CallContext;
use cairn_lib::{Repository, Snapshot, TargetKind};
use serde::Serialize;

/// How many computed diffs are kept.
const KEPT: usize = 4;

/// One end of a comparison, as the page shows it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Point {
    pub id: String,
    pub entry: &'static str,
    pub label: String,
    pub created_at: String,
}

/// One target compared.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PartDiff {
    pub kind: TargetKind,
    pub target: String,
    /// `changed`, `unchanged`, `added` (only the newer point has it), `removed`.
    pub change: &'static str,
    pub from: Option<Snapshot>,
    pub to: Option<Snapshot>,
    /// Directories: counts, and how many entries there are to page through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<DiffSummary>,
    pub entries_total: u64,
    /// Conversations: the entries added and dropped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript: Option<serde_json::Value>,
    /// Debugger captures: the variables changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub debug: Option<serde_json::Value>,
    /// Compose projects: volumes with the files that differ, layers, images, compose files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compose: Option<ComposeDiff>,
    #[serde(skip)]
    pub entries: Vec<DiffEntry>,
}

/// Two points compared across every layer.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CrossDiff {
    pub from: Point,
    pub to: Point,
    pub parts: Vec<PartDiff>,
}

/// The last few diffs computed, by (session, from, to).
#[derive(Default)]
pub(crate) struct DiffCache {
    kept: Mutex<VecDeque<(String, Arc<CrossDiff>)>>,
}

impl DiffCache {
    /// The diff of `from` and `to` in `session`, computed now or taken from the cache.
    pub fn get(
        &self,
        store: &Repository,
        context: &CallContext,
        session: Option<&str>,
        from: &str,
        to: &str,
    ) -> cairn_lib::Result<Arc<CrossDiff>> {
        let session_id = store.call_session(session, context)?.id.to_string();
        let key = format!("{session_id}\0{from}\0{to}");
        if let Some((_, hit)) = self.lock().iter().find(|(k, _)| *k == key) {
            return Ok(hit.clone());
        }
        let diff = Arc::new(cross_diff(store, &session_id, from, to)?);
        let mut kept = self.lock();
        kept.push_front((key, diff.clone()));
        kept.truncate(KEPT);
        Ok(diff)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(String, Arc<CrossDiff>)>> {
        self.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A point's parts: a moment's snapshots, or the one snapshot.
fn point(store: &Repository, session: &str, reference: &str) -> cairn_lib::Result<(Point, Vec<Snapshot>)> {
    let context = CallContext::default();
    let shown = store.moment_show(
        &MomentShowOptions { reference: reference.to_owned(), session: Some(session.to_owned()) },
        &context,
    );
    if let Ok(view) = shown {
        let m = view.moment;
        let label = m.name.clone().or(m.description.clone()).unwrap_or_else(|| m.id.to_string());
        let p = Point { id: m.id.to_string(), entry: "moment", label, created_at: m.created_at };
        return Ok((p, view.snapshots));
    }
    let s = store.show(
        &ShowOptions { reference: reference.to_owned(), target: None, session: Some(session.to_owned()) },
        &context,
    )?;
    let label = s.name.clone().or(s.description.clone()).unwrap_or_else(|| s.id.to_string());
    let p = Point { id: s.id.to_string(), entry: "snapshot", label, created_at: s.created_at.clone() };
    Ok((p, vec![s]))
}

fn cross_diff(store: &Repository, session: &str, from: &str, to: &str) -> cairn_lib::Result<CrossDiff> {
    let (from_point, a) = point(store, session, from)?;
    let (to_point, b) = point(store, session, to)?;
    let mut parts = Vec::new();
    for x in &a {
        let y = b.iter().find(|y| y.target == x.target);
        parts.push(pair(store, session, Some(x), y)?);
    }
    for y in b.iter().filter(|y| !a.iter().any(|x| x.target == y.target)) {
        parts.push(pair(store, session, None, Some(y))?);
    }
    Ok(CrossDiff { from: from_point, to: to_point, parts })
}

fn pair(
    store: &Repository,
    session: &str,
    x: Option<&Snapshot>,
    y: Option<&Snapshot>,
) -> cairn_lib::Result<PartDiff> {
    let any = x.or(y).expect("one side is present");
    let mut out = PartDiff {
        kind: any.kind,
        target: any.target.clone(),
        change: if x.is_none() { "added" } else { "removed" },
        from: x.cloned(),
        to: y.cloned(),
        summary: None,
        entries_total: 0,
        transcript: None,
        debug: None,
        compose: None,
        entries: Vec::new(),
    };
    let (Some(x), Some(y)) = (x, y) else { return Ok(out) };
    let context = CallContext::default();
    if x.id == y.id {
        out.change = "unchanged";
        return Ok(out);
    }
    match x.kind {
        TargetKind::Dir | TargetKind::Transcript => {
            let diff = store.diff(
                &DiffOptions {
                    from: x.id.to_string(),
                    to: Some(y.id.to_string()),
                    session: Some(session.to_owned()),
                    ..DiffOptions::default()
                },
                &context,
            )?;
            let s = &diff.summary;
            let talk = diff.transcript.as_ref().is_some_and(|t| !t.added.is_empty() || !t.removed.is_empty());
            let changed = s.added + s.removed + s.modified > 0 || talk;
            let transcript_changed = diff.transcript.as_ref().and_then(|t| serde_json::to_value(t).ok());
            out.change = if changed { "changed" } else { "unchanged" };
            out.entries_total = diff.entries.len() as u64;
            out.summary = Some(diff.summary);
            out.entries = diff.entries;
            out.transcript = transcript_changed;
        }
        TargetKind::Debug => {
            let diff = store.debug_diff(
                &DebugDiffOptions {
                    snapshot_a: x.id.to_string(),
                    snapshot_b: y.id.to_string(),
                    exact: false,
                    session: Some(session.to_owned()),
                },
                &context,
            )?;
            let value = serde_json::to_value(&diff).unwrap_or_default();
            out.change = "changed";
            out.debug = Some(value);
        }
        TargetKind::Compose => {
            let diff = store.compose_snapshot_diff(x, y)?;
            out.change = if diff.is_empty() { "unchanged" } else { "changed" };
            out.compose = Some(diff);
        }
    }
    Ok(out)
}
