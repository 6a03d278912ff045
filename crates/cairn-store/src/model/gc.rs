//! What a garbage collection did, as `cairn gc` reports it.

use serde::Serialize;

/// What gc did.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct GcResult {
    /// Packs deleted because nothing in them was referenced.
    pub packs_removed: u64,
    /// Packs rewritten to drop their unreferenced blobs.
    pub packs_rewritten: u64,
    /// Blobs dropped.
    pub blobs_removed: u64,
    /// Bytes of pack files freed.
    pub bytes_freed: u64,
    /// Bytes of pack files the store holds afterwards.
    pub bytes_kept: u64,
    /// Record objects deleted: of removed snapshots, or orphans pruned.
    #[serde(skip_serializing_if = "is_zero")]
    pub records_removed: u64,
    /// Stat caches dropped because their directory no longer exists (a restore's destination
    /// deleted since): the blobs they named were kept alive by them alone.
    #[serde(skip_serializing_if = "is_zero")]
    pub stat_caches_dropped: u64,
    /// Bytes of unreferenced data gc left alone because their packs are younger than
    /// `gc.grace`: freed by a gc after `held_until`, or at once by a gc with `now`.
    #[serde(skip_serializing_if = "is_zero")]
    pub bytes_held: u64,
    /// The packs holding `bytes_held`.
    #[serde(skip_serializing_if = "is_zero")]
    pub packs_held: u64,
    /// When the last held pack is past `gc.grace` (RFC 3339), so a gc then frees `bytes_held`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_until: Option<String>,
    /// What gc kept because it could not prove it unreferenced, one sentence each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
    /// Wall time, in milliseconds.
    pub duration_ms: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
