//! `cairn remove`: delete snapshots by reference, or by retention rules. Data is reclaimed by gc.
//!
//! A snapshot no session holds any more is dropped from the catalog, and then, in a store of
//! this machine's own, its record object is deleted at once: the catalog's commit (which also
//! keeps the record's key in `synced`) is the proof gc needs, and a record deleted right after
//! cannot come back through a `repair` of a lost catalog. A remove killed between the two
//! leaves the record, which gc deletes on that proof. A shared store keeps the record for the
//! other machines' syncs; its gc deletes it on the same proof.

use serde::{Deserialize, Serialize};

use super::resolve::CallContext;
use super::retention::Rules;
use crate::Repository;
use crate::error::{Error, Hint, Result};
use crate::snapshot::Snapshot;
use crate::store::catalog::SnapshotFilter;

/// What to remove: references, or retention rules — not both, and not neither. The CLI's help
/// is the doc comment of each field; the MCP description, written for an agent, is the
/// `schemars` one.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct RemoveOptions {
    /// Snapshots to remove: ids, unique id prefixes, names or `latest`.
    #[schemars(
        description = "Snapshots to delete: ids, names or \"latest\". Cannot be combined with the retention fields."
    )]
    #[serde(default)]
    pub refs: Vec<String>,
    /// Keep this many newest snapshots of each target and remove the rest.
    #[schemars(description = "Keep this many newest snapshots per target and delete the rest.")]
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub retain_recent: Option<u64>,
    /// Keep snapshots younger than this (e.g. 24h, 7d) and remove the rest.
    #[schemars(
        description = "Keep snapshots younger than this unit-bearing duration, e.g. 24h or 7d; a bare number is refused."
    )]
    #[cfg_attr(feature = "clap", arg(long, value_name = "DURATION"))]
    pub retain_for: Option<String>,
    /// Remove snapshots created before this time (RFC 3339, e.g. 2026-06-01T00:00:00Z).
    #[schemars(
        description = "Delete snapshots created before this RFC 3339 time, e.g. 2026-06-01T00:00:00Z."
    )]
    #[cfg_attr(feature = "clap", arg(long, value_name = "TIME"))]
    pub before_date: Option<String>,
    /// Only snapshots of this target.
    // Refs and rules alike; rules apply to every target otherwise.
    #[schemars(description = "Only snapshots of this target.")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub target: Option<String>,
    /// Print what would be removed, and remove nothing.
    #[schemars(
        description = "Only report what would be deleted; delete nothing (allowed without the remove permission)."
    )]
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub dry_run: bool,
    /// The session (name or id).
    #[schemars(description = "The session to work in, for this call only (name or id).")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// What was (or would be) removed.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RemoveResult {
    /// True when nothing was removed because `dry_run` was set.
    pub dry_run: bool,
    /// The snapshots removed (or that would be).
    pub removed: Vec<Snapshot>,
}

impl Repository {
    /// Removes snapshots from a session.
    pub fn remove(&self, options: &RemoveOptions, context: &CallContext) -> Result<RemoveResult> {
        let has_rules =
            options.retain_recent.is_some() || options.retain_for.is_some() || options.before_date.is_some();
        if !options.refs.is_empty() && has_rules {
            return Err(Error::invalid(
                "cannot combine snapshot references with retention rules; give one or the other",
            ));
        }
        if options.refs.is_empty() && !has_rules {
            return Err(Error::invalid("name the snapshots to remove").or_hint(Hint::GiveOneOf(&[
                "retain_recent",
                "retain_for",
                "before_date",
            ])));
        }
        let rules = Rules {
            retain_recent: options.retain_recent,
            retain_for: options
                .retain_for
                .as_deref()
                .map(|d| crate::duration::parse_duration("retain_for", d))
                .transpose()?,
            before: options
                .before_date
                .as_deref()
                .map(|d| crate::time::parse_timestamp("before_date", d))
                .transpose()?,
            max_bytes: None,
        };
        let session = self.call_session(options.session.as_deref(), context)?;
        let target_key =
            options.target.as_deref().map(crate::targets::Target::parse).transpose()?.map(|t| t.key());
        let mut chosen: Vec<Snapshot> = Vec::new();
        if has_rules {
            let filter = SnapshotFilter { target: target_key.clone(), include_safety: false };
            let mut targets: Vec<String> =
                self.catalog().list_snapshots(session.id, &filter)?.into_iter().map(|s| s.target).collect();
            targets.sort();
            targets.dedup();
            // Every lock first, so a target held elsewhere refuses the whole call before
            // anything is removed: all or nothing, not one target trimmed and then an error.
            let _locks = if options.dry_run { Vec::new() } else { self.lock_targets(&targets, "a remove")? };
            for t in targets {
                chosen.extend(self.remove_by_rules(&session, &t, &rules, options.dry_run)?);
                self.forget_target_if_empty(&t)?;
            }
            return Ok(RemoveResult { dry_run: options.dry_run, removed: chosen });
        }
        for r in &options.refs {
            let s = self.resolve_snapshot(&session, r, target_key.as_deref())?;
            if !chosen.iter().any(|c| c.id == s.id) {
                chosen.push(s);
            }
        }
        if !options.dry_run {
            let targets: Vec<String> = chosen.iter().map(|s| s.target.clone()).collect();
            let _locks = self.lock_targets(&targets, "a remove")?;
            for s in &chosen {
                self.drop_membership(session.id, s.id)?;
                self.forget_target_if_empty(&s.target)?;
            }
        }
        Ok(RemoveResult { dry_run: options.dry_run, removed: chosen })
    }

    /// Takes snapshot `id` out of `session`; once no session holds it, deletes its record object
    /// too (in a store of this machine's own; see the module documentation).
    pub(crate) fn drop_membership(
        &self,
        session: crate::id::SessionId,
        id: crate::id::SnapshotId,
    ) -> Result<()> {
        if self.catalog().remove_membership(session, id)? && !self.is_shared() {
            self.backend().delete(&format!("records/{id}.json"))?;
        }
        Ok(())
    }

    /// Drops a target's stat cache once no session holds a snapshot of it, so gc can reclaim
    /// the data the cache pointed at.
    pub(crate) fn forget_target_if_empty(&self, target: &str) -> Result<()> {
        if !self.catalog().target_has_snapshots(target)? {
            self.catalog().drop_stat_cache(target)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::ops::save::SaveOptions;

    #[test]
    fn a_multi_target_retain_recent_that_meets_a_lock_removes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Repository::open(&dir.path().join("store")).unwrap();
        let mut keys = Vec::new();
        for name in ["a", "b"] {
            let path = dir.path().join(name);
            std::fs::create_dir_all(&path).unwrap();
            for round in 0..3 {
                std::fs::write(path.join("f"), format!("{name} {round}")).unwrap();
                store
                    .save(
                        &SaveOptions { target: path.display().to_string(), ..Default::default() },
                        &Default::default(),
                    )
                    .unwrap();
            }
            keys.push(crate::targets::Target::parse(path.to_str().unwrap()).unwrap().key());
        }
        let count = || store.list(&Default::default(), &Default::default()).unwrap().snapshots.len();
        assert_eq!(count(), 6);
        // "b" sorts after "a": without taking every lock first, "a" was trimmed before the refusal.
        let held = store.lock_target(&keys[1], "cairn save").unwrap();
        let err = store
            .remove(&RemoveOptions { retain_recent: Some(1), ..Default::default() }, &Default::default())
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Locked);
        assert_eq!(count(), 6, "a refused remove removed snapshots");
        drop(held);
        let removed = store
            .remove(&RemoveOptions { retain_recent: Some(1), ..Default::default() }, &Default::default())
            .unwrap();
        assert_eq!((removed.removed.len(), count()), (4, 2));
    }
}
