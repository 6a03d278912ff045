//! Store figures: how much the store holds on disk, how much it would hold without
//! deduplication, and how it grew, save by save. Catalog reads only, no lock.
//!
//! Growth is the running sum of what each snapshot record says its capture added (its
//! `stored_bytes`), so it shows what saves cost over time; gc reclaims space later, which the
//! on-disk total (`stored_bytes` of the result) reflects and the curve does not.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::resolve::CallContext;
use crate::Repository;
use crate::error::{Error, Result};
use crate::store::catalog::SnapshotFilter;

/// What to report.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct StoreStatsOptions {
    /// How many points the growth curve has at most (2 to 1000; 60 when omitted).
    #[cfg_attr(feature = "clap", arg(long))]
    pub points: Option<u64>,
}

/// The store's figures.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct StoreStats {
    /// Bytes of the store's packs: what it holds on disk (or in the bucket).
    pub stored_bytes: u64,
    /// Bytes the snapshot records hold, each counted whole: what copies would cost.
    pub logical_bytes: u64,
    /// `logical_bytes / stored_bytes` (0 when the store holds nothing).
    pub dedup_ratio: f64,
    /// Snapshot records, in every session, safety snapshots included.
    pub snapshots: u64,
    /// Sessions.
    pub sessions: u64,
    /// The running totals after each save, thinned to at most `points` points, oldest first.
    pub growth: Vec<GrowthPoint>,
}

/// The store after the saves up to a time.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct GrowthPoint {
    /// RFC 3339 UTC.
    pub time: String,
    /// Bytes the saves up to then added to the store, after compression.
    pub stored_bytes: u64,
    /// Bytes the snapshots up to then hold, each counted whole.
    pub logical_bytes: u64,
    /// Snapshots up to then.
    pub snapshots: u64,
}

impl Repository {
    /// The store's size, deduplication ratio and growth over time.
    pub fn store_stats(&self, options: &StoreStatsOptions, _context: &CallContext) -> Result<StoreStats> {
        let points = options.points.unwrap_or(60);
        if !(2..=1000).contains(&points) {
            return Err(Error::invalid_value("points", &points.to_string(), "a curve has 2 to 1000 points"));
        }
        let sessions = self.catalog().list_sessions()?;
        let filter = SnapshotFilter { target: None, include_safety: true };
        let mut seen = HashSet::new();
        let mut records = Vec::new();
        for session in &sessions {
            for s in self.catalog().list_snapshots(session.id, &filter)? {
                if seen.insert(s.id) {
                    records.push((s.id, s.created_at, s.stats.bytes, s.stats.stored_bytes));
                }
            }
        }
        records.sort_by_key(|r| r.0);
        let mut curve = Vec::with_capacity(records.len());
        let (mut stored, mut logical) = (0u64, 0u64);
        for (i, (_, time, bytes, added)) in records.iter().enumerate() {
            stored += added;
            logical += bytes;
            curve.push(GrowthPoint {
                time: time.clone(),
                stored_bytes: stored,
                logical_bytes: logical,
                snapshots: i as u64 + 1,
            });
        }
        let growth = thin(curve, points as usize);
        let stored_bytes = self.catalog().stored_bytes()?;
        Ok(StoreStats {
            stored_bytes,
            logical_bytes: logical,
            dedup_ratio: if stored_bytes == 0 { 0.0 } else { logical as f64 / stored_bytes as f64 },
            snapshots: records.len() as u64,
            sessions: sessions.len() as u64,
            growth,
        })
    }
}

/// Keeps at most `points` of `curve`, evenly spread, always the last.
fn thin(curve: Vec<GrowthPoint>, points: usize) -> Vec<GrowthPoint> {
    if curve.len() <= points {
        return curve;
    }
    let last = curve.len() - 1;
    let step = last as f64 / (points - 1) as f64;
    let keep: HashSet<usize> = (0..points).map(|i| ((i as f64 * step).round() as usize).min(last)).collect();
    curve.into_iter().enumerate().filter(|(i, _)| keep.contains(i)).map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_keeps_the_ends_and_at_most_the_points_asked() {
        let curve: Vec<GrowthPoint> = (0..1000)
            .map(|i| GrowthPoint { time: i.to_string(), stored_bytes: i, logical_bytes: i, snapshots: i })
            .collect();
        let thin = thin(curve, 60);
        assert_eq!(thin.len(), 60);
        assert_eq!((thin[0].snapshots, thin[59].snapshots), (0, 999));
    }
}
