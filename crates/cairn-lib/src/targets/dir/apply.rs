//! Plan application and replay: a plan (the Merkle difference of two trees) applied under a
//! directory with the written files recorded in the stat cache (unless they are few), and the
//! safety snapshot put back after a failed apply. Shared by restore, the resolution of an
//! interrupted restore, and the compose target's volumes.

use std::path::Path;

use super::Progress;
use super::capture::{self, Uncovered};
use super::fsops::DirHandle;
use super::materialize::Materializer;
use super::restore::{Plan, PlanEntry, later_links};
use super::statcache::{StatCache, settling};
use crate::error::Result;
use crate::store::Store;
use crate::store::writer::BlobWriter;
use crate::tree::{self, DirRoot};

/// Applies the plan from `live` to `want` under `path`, and records what it wrote in the
/// stat cache so the next save reads nothing (but after a restore of a few small files,
/// which the next save reads again: see [`StatCache::amend`]).
pub(crate) fn apply_plan(
    store: &Store,
    path: &Path,
    key: &str,
    live: &DirRoot,
    want: &DirRoot,
    preserve_mtime: bool,
) -> Result<(Vec<PlanEntry>, u64, u64)> {
    // `live` is a stored capture, not a scan of now: what it left out is not known here.
    let plan = Plan::between(store, live, want, preserve_mtime, &Uncovered::default())?;
    apply_planned(store, &plan, path, key, want, preserve_mtime, &Progress::default())
}

/// Applies `plan` (towards `want`) under `path`, as [`apply_plan`] does. The stat
/// cache of `key` must be the live state's: only the rows of the directories the plan
/// touched are rewritten.
pub(crate) fn apply_planned(
    store: &Store,
    plan: &Plan,
    path: &Path,
    key: &str,
    want: &DirRoot,
    preserve_mtime: bool,
    progress: &Progress,
) -> Result<(Vec<PlanEntry>, u64, u64)> {
    let handle = DirHandle::open_root(path)?;
    let m = Materializer::new(store, preserve_mtime, later_links(want)).observed(progress);
    plan.apply(&m, &handle, want)?;
    let files = m.files_written.load(std::sync::atomic::Ordering::Relaxed);
    let bytes = m.bytes_written.load(std::sync::atomic::Ordering::Relaxed);
    let written = m.into_written();
    let changed: Vec<Vec<u8>> = plan.changes.iter().map(|c| c.path.clone()).collect();
    // The journal's place is from before the writes, whose events mark every directory they
    // touched: the next save looks at those and trusts the rest. The rows to amend are read
    // while the clock ticks past the writes.
    let settling = settling(&written);
    StatCache::amend(
        store,
        key,
        &changed,
        written.into_entries(),
        settling,
        &plan.settled_trees,
        &plan.alike,
    )?;
    Ok((plan.entries(), files, bytes))
}

/// Puts the safety snapshot back after a failed apply. The tree is now partly changed, so
/// the live state is scanned again rather than trusted.
/// Returns what it did: paths changed, files written, bytes written.
pub(crate) fn replay(
    store: &Store,
    path: &Path,
    key: &str,
    safety: &DirRoot,
    no_ignore: bool,
) -> Result<(u64, u64, u64)> {
    store.catalog().drop_stat_cache(key)?;
    let writer = BlobWriter::dry(store);
    let live = capture::capture(
        &writer,
        path,
        &StatCache::default(),
        capture::Filter { no_ignore, include_secrets: false },
    )?;
    let live_root = read_dry_root(&writer, &live.root)?;
    let plan = Plan::between(&writer, &live_root, safety, true, &live.uncovered)?;
    let handle = DirHandle::open_root(path)?;
    let m = Materializer::new(store, true, later_links(safety));
    plan.apply(&m, &handle, safety)?;
    let files = m.files_written.load(std::sync::atomic::Ordering::Relaxed);
    let bytes = m.bytes_written.load(std::sync::atomic::Ordering::Relaxed);
    Ok((plan.changes.len() as u64, files, bytes))
}

/// Reads a root document a dry writer holds in memory.
pub(crate) fn read_dry_root(writer: &BlobWriter<'_>, id: &crate::id::ObjectId) -> Result<DirRoot> {
    tree::decode(id, &writer.read_object(id)?)
}
