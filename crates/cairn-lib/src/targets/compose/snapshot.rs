//! Taking one compose snapshot: the live part first (images, compose files), then the project
//! is held still by the caller, then volumes, bind mounts and layers, then the commit.

use std::time::Instant;

use cairn_docker::Project;

use super::capture::{self, PendingCache};
use super::docker::Docker;
use super::mounts;
use super::record::{ComposeDetails, ComposeNotCovered, ComposeRoot};
use crate::error::Result;
use crate::id::{SessionId, SnapshotId};
use crate::snapshot::{NotCovered, Snapshot};
use crate::store::Store;
use crate::store::pack::BlobKind;
use crate::store::writer::BlobWriter;

/// What the snapshot is and how it is taken.
pub(crate) struct Take<'a> {
    pub key: &'a str,
    pub session: SessionId,
    pub name: Option<String>,
    pub description: Option<String>,
    pub force_name: bool,
    pub safety: bool,
    /// `stop`, `pause` or `none`: recorded with the snapshot.
    pub consistency: super::record::Consistency,
    pub store_images: bool,
}

/// A committed compose snapshot and the root it holds.
pub(crate) struct Taken {
    pub snapshot: Snapshot,
    pub root: ComposeRoot,
}

/// Captures `project` and commits the snapshot. `hold` stops or pauses the project (or does
/// nothing) and returns the containers killed at the stop deadline; it runs after the live
/// part, so the services are held only while volumes and layers are read.
pub(crate) fn take(
    store: &Store,
    docker: &Docker,
    project: &Project,
    take: &Take<'_>,
    hold: impl FnOnce() -> Result<Vec<String>>,
) -> Result<Taken> {
    let started = Instant::now();
    let writer = BlobWriter::new(store);
    let (image_data, images, unresolvable) =
        capture::images(store, docker, &writer, project, take.store_images)?;
    let (spec_files, spec, unread_config) = capture::spec(&writer, project)?;
    let (planned, skipped_mounts) = mounts::plan(store, project);

    let killed = hold()?;
    // The services are down from here: the writable layers (mostly waiting on the engine's
    // diff of each container) are read while the volumes are walked, not after.
    let (m, layers) = std::thread::scope(|scope| {
        let layers = scope.spawn(|| capture::layers(store, docker, &writer, project));
        let m = capture::mounts(store, &writer, take.key, &planned);
        let layers = layers.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (m, layers)
    });
    let (m, (layer_data, writable_layers, layer_bytes)) = (m?, layers?);

    let mut not_covered = ComposeNotCovered {
        skipped_mounts,
        killed_at_stop_deadline: killed,
        unresolvable_images: unresolvable,
        skipped_entries: m.skipped.clone(),
        config_files: unread_config,
        ..ComposeNotCovered::default()
    };
    capture::gaps(project, &planned, &mut not_covered);
    let root = ComposeRoot {
        version: 1,
        project: project.clone(),
        mounts: m.data,
        layers: layer_data,
        images: image_data,
        spec_files,
    };
    let encoded = serde_json::to_vec(&root).map_err(|e| super::blobs::encode_error("the savepoint", e))?;
    let root_id = writer.write(BlobKind::Tree, &encoded)?;
    writer.finish()?;

    let mut stats = m.totals;
    let (new_bytes, stored_bytes) = writer.totals();
    stats.read_bytes += layer_bytes;
    stats.new_bytes = new_bytes;
    stats.stored_bytes = stored_bytes;
    stats.duration_ms = started.elapsed().as_millis() as u64;
    let details = ComposeDetails {
        project: project.name.clone(),
        consistency: take.consistency,
        stats: m.stats,
        writable_layers: writable_layers.into_iter().filter(|l| l.changes > 0).collect(),
        images,
        spec,
        not_covered: not_covered.clone(),
    };
    let snapshot = Snapshot {
        id: SnapshotId::new(),
        name: if take.safety { None } else { take.name.clone() },
        description: take.description.clone(),
        target: take.key.to_owned(),
        kind: crate::targets::TargetKind::Compose,
        session: take.session,
        created_at: crate::time::now_rfc3339(),
        safety: take.safety,
        stats,
        not_covered: NotCovered { skipped: not_covered.flatten(), ..NotCovered::default() },
        details: serde_json::to_value(&details)
            .map_err(|e| super::blobs::encode_error("the savepoint", e))?,
        root: Some(root_id),
    };
    store.commit_snapshot(&snapshot, take.force_name)?;
    store_caches(store, m.caches)?;
    Ok(Taken { snapshot, root })
}

/// Stores the stat caches of a committed capture, so the next one reads only what changed.
fn store_caches(store: &Store, caches: Vec<PendingCache>) -> Result<()> {
    for (key, cache) in caches {
        cache.store(store, &key)?;
    }
    Ok(())
}
