//! Retention rules: which snapshots `remove --retain-*` and the store's keep policy select.

use std::time::Duration;

use crate::Repository;
use crate::error::Result;
use crate::id::SnapshotId;
use crate::session::SessionRef;
use crate::snapshot::Snapshot;
use crate::store::catalog::SnapshotFilter;

/// Retention rules; a snapshot is selected for removal when every given rule selects it.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// Keep this many newest snapshots (per target).
    pub retain_recent: Option<u64>,
    /// Keep snapshots younger than this.
    pub retain_for: Option<Duration>,
    /// Remove only snapshots created strictly before this time.
    pub before: Option<jiff::Timestamp>,
    /// Keep the newest snapshots holding at most this many bytes (per target).
    pub max_bytes: Option<u64>,
}

impl Rules {
    /// True when no rule is set.
    pub fn is_empty(&self) -> bool {
        self.retain_recent.is_none()
            && self.retain_for.is_none()
            && self.before.is_none()
            && self.max_bytes.is_none()
    }

    /// Selects from `snapshots` (of one target, oldest first) the ones these rules remove.
    pub fn select(&self, snapshots: &[Snapshot], now: jiff::Timestamp) -> Result<Vec<Snapshot>> {
        let n = snapshots.len();
        let mut kept_bytes = 0u64;
        let mut within_bytes = vec![false; n];
        for (i, s) in snapshots.iter().enumerate().rev() {
            kept_bytes = kept_bytes.saturating_add(s.stats.bytes);
            within_bytes[i] = self.max_bytes.is_some_and(|max| kept_bytes <= max);
        }
        let mut out = Vec::new();
        for (i, s) in snapshots.iter().enumerate() {
            let created = crate::time::parse_record_time(&s.created_at)?;
            let newest_rank = (n - 1 - i) as u64;
            let by_recent = self.retain_recent.map(|k| newest_rank >= k);
            let by_age = self.retain_for.map(|d| {
                let cutoff = now - jiff::SignedDuration::try_from(d).unwrap_or(jiff::SignedDuration::MAX);
                created <= cutoff
            });
            let by_date = self.before.map(|b| created < b);
            let by_bytes = self.max_bytes.map(|_| !within_bytes[i]);
            let rules = [by_recent, by_age, by_date, by_bytes];
            if rules.iter().any(Option::is_some) && rules.iter().flatten().all(|r| *r) {
                out.push(s.clone());
            }
        }
        Ok(out)
    }
}

impl Repository {
    /// Applies the store's keep policy (`keep.recent`, `keep.within`, `keep.max_bytes`) to one
    /// target after a save; returns what it removed.
    ///
    /// `made`, the snapshot the save just made, is never removed: a policy such as
    /// `keep.recent 0` or a `keep.max_bytes` smaller than one snapshot would otherwise delete
    /// the save's own result.
    pub(crate) fn apply_keep_policy(
        &self,
        session: &SessionRef,
        target: &str,
        made: SnapshotId,
    ) -> Result<Vec<Snapshot>> {
        let cfg = self.config();
        let rules = Rules {
            retain_recent: cfg.keep_recent(),
            retain_for: cfg.keep_within(),
            before: None,
            max_bytes: cfg.keep_max_bytes(),
        };
        if rules.is_empty() {
            return Ok(Vec::new());
        }
        let filter = SnapshotFilter { target: Some(target.to_owned()), include_safety: false };
        let all = self.catalog().list_snapshots(session.id, &filter)?;
        let selected = select_sparing(&rules, &all, made)?;
        for s in &selected {
            self.drop_membership(session.id, s.id)?;
        }
        Ok(selected)
    }

    /// Expires one target's safety snapshots after a restore. Each of `safety.keep_recent` and
    /// `safety.keep_within` removes on its own (a safety snapshot goes when either selects it),
    /// unlike `keep.*`, whose rules must all agree. `taken`, the safety snapshot the restore
    /// just took and reported, is always kept.
    pub(crate) fn expire_safety(&self, session: &SessionRef, target: &str, taken: SnapshotId) -> Result<()> {
        let cfg = self.config();
        let safety = self.catalog().list_safety_snapshots(session.id, target)?;
        let mut removed = std::collections::HashSet::new();
        for rules in [
            Rules { retain_recent: Some(cfg.safety_keep_recent()), ..Rules::default() },
            Rules { retain_for: Some(cfg.safety_keep_within()), ..Rules::default() },
        ] {
            for s in select_sparing(&rules, &safety, taken)? {
                if removed.insert(s.id) {
                    self.drop_membership(session.id, s.id)?;
                }
            }
        }
        Ok(())
    }

    /// Removes (or, with `dry_run`, lists) the regular snapshots of `target` the rules select.
    pub(crate) fn remove_by_rules(
        &self,
        session: &SessionRef,
        target: &str,
        rules: &Rules,
        dry_run: bool,
    ) -> Result<Vec<Snapshot>> {
        if rules.is_empty() {
            return Ok(Vec::new());
        }
        let filter = SnapshotFilter { target: Some(target.to_owned()), include_safety: false };
        let all = self.catalog().list_snapshots(session.id, &filter)?;
        let selected = rules.select(&all, jiff::Timestamp::now())?;
        if !dry_run {
            for s in &selected {
                self.drop_membership(session.id, s.id)?;
            }
        }
        Ok(selected)
    }
}

/// What `rules` select from `snapshots` (oldest first), never `spared`: the policies run right
/// after a save or restore made it, and must not undo that command's work.
fn select_sparing(rules: &Rules, snapshots: &[Snapshot], spared: SnapshotId) -> Result<Vec<Snapshot>> {
    if rules.is_empty() {
        return Ok(Vec::new());
    }
    let mut selected = rules.select(snapshots, jiff::Timestamp::now())?;
    selected.retain(|s| s.id != spared);
    Ok(selected)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::SessionId;
    use crate::snapshot::{NotCovered, SnapshotStats};

    fn at(secs: i64) -> Snapshot {
        Snapshot {
            id: SnapshotId::new(),
            name: None,
            description: None,
            target: "/t".into(),
            kind: crate::targets::TargetKind::Dir,
            session: SessionId::BASELINE,
            created_at: jiff::Timestamp::from_second(secs).unwrap().to_string(),
            safety: false,
            stats: SnapshotStats { bytes: 10, ..SnapshotStats::default() },
            not_covered: NotCovered::default(),
            details: serde_json::Value::Null,
            root: None,
        }
    }

    fn ages(selected: &[Snapshot]) -> Vec<String> {
        selected.iter().map(|s| s.created_at.clone()).collect()
    }

    #[test]
    fn retain_recent_keeps_exactly_n() {
        let all: Vec<Snapshot> = (0..5).map(|i| at(1_000 + i)).collect();
        let now = jiff::Timestamp::from_second(2_000).unwrap();
        let rules = Rules { retain_recent: Some(3), ..Rules::default() };
        assert_eq!(ages(&rules.select(&all, now).unwrap()), ages(&all[..2]));
        let rules = Rules { retain_recent: Some(5), ..Rules::default() };
        assert!(rules.select(&all, now).unwrap().is_empty());
        let rules = Rules { retain_recent: Some(0), ..Rules::default() };
        assert_eq!(rules.select(&all, now).unwrap().len(), 5);
    }

    #[test]
    fn retain_for_removes_from_exactly_the_cut_off() {
        let all = vec![at(1_000), at(1_001), at(1_002)];
        let now = jiff::Timestamp::from_second(1_100).unwrap();
        // Age 100s at the cut-off: not younger than 99s… removed; exactly 99s old: removed too.
        let rules = Rules { retain_for: Some(Duration::from_secs(99)), ..Rules::default() };
        assert_eq!(ages(&rules.select(&all, now).unwrap()), ages(&all[..2]));
    }

    #[test]
    fn before_date_is_strict_and_rules_combine_as_and() {
        let all = vec![at(1_000), at(1_001), at(1_002)];
        let now = jiff::Timestamp::from_second(5_000).unwrap();
        let before = Some(jiff::Timestamp::from_second(1_001).unwrap());
        let rules = Rules { before, ..Rules::default() };
        assert_eq!(ages(&rules.select(&all, now).unwrap()), ages(&all[..1]));
        let rules = Rules { before, retain_recent: Some(3), ..Rules::default() };
        assert!(rules.select(&all, now).unwrap().is_empty());
    }

    #[test]
    fn the_policies_never_select_the_spared_snapshot() {
        let all: Vec<Snapshot> = (0..3).map(|i| at(1_000 + i)).collect();
        for rules in [
            Rules { retain_recent: Some(0), ..Rules::default() },
            Rules { max_bytes: Some(1), ..Rules::default() },
            Rules { retain_for: Some(Duration::ZERO), ..Rules::default() },
        ] {
            assert_eq!(rules.select(&all, jiff::Timestamp::now()).unwrap().len(), 3, "{rules:?}");
            assert_eq!(ages(&select_sparing(&rules, &all, all[2].id).unwrap()), ages(&all[..2]), "{rules:?}");
        }
    }

    #[test]
    fn max_bytes_keeps_the_newest_that_fit() {
        let all: Vec<Snapshot> = (0..4).map(|i| at(1_000 + i)).collect();
        let now = jiff::Timestamp::from_second(5_000).unwrap();
        let rules = Rules { max_bytes: Some(25), ..Rules::default() };
        assert_eq!(ages(&rules.select(&all, now).unwrap()), ages(&all[..2]));
    }
}
