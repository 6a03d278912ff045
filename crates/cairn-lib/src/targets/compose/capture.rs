//! Capturing a compose project: what can be read while it runs (images, compose files), and
//! what needs it held still (volumes and bind mounts through the directory engine with one
//! stat cache each, and the containers' writable layers).

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use cairn_docker::Project;

use super::blobs::{rewind, scratch_file, store_stream};
use super::docker::Docker;
use super::mounts::PlannedMount;
use super::record::{
    ComposeNotCovered, ImageData, ImageRecord, LayerData, LayerRecord, MountContent, MountData, MountStats,
    ReplicaGap, SpecFile, SpecFileData, SpecRecord,
};
use crate::error::{IoContext, Result};
use crate::snapshot::{SkippedEntry, SnapshotStats};
use crate::store::Store;
use crate::store::pack::BlobKind;
use crate::store::writer::BlobWriter;
use crate::targets::dir::capture;
use crate::targets::dir::statcache::StatCache;

/// A stat cache to store once the snapshot is committed: key, and the rows the capture changed.
pub(crate) type PendingCache = (String, crate::targets::dir::statcache_write::FreshCache);

/// The stat-cache key of one volume or bind mount of a project.
pub(crate) fn cache_key(project_key: &str, object_id: &str) -> String {
    format!("{project_key}#{object_id}")
}

/// Images by id; with `store_images`, their `docker save` archives too. Runs while the
/// project is up: images are immutable.
pub(crate) fn images(
    store: &Store,
    docker: &Docker,
    writer: &BlobWriter<'_>,
    project: &Project,
    store_images: bool,
) -> Result<(Vec<ImageData>, Vec<ImageRecord>, Vec<String>)> {
    let (mut data, mut records, mut unresolvable) = (Vec::new(), Vec::new(), Vec::new());
    for image in &project.images {
        let exists = docker.run(docker.engine.inspect_image(&image.id))?.is_some();
        if !exists {
            unresolvable.push(image.id.clone());
        }
        let (mut tar, mut stored_bytes) = (Vec::new(), 0);
        if exists && store_images {
            let file = scratch_file(store, "image")?;
            let file = rewind(docker.run(docker.engine.save_image(&image.id, file))?, store)?;
            (tar, stored_bytes) = store_stream(writer, file, Path::new(&image.id))?;
        }
        records.push(ImageRecord {
            id: image.id.clone(),
            tags: image.tags.clone(),
            containers: image.containers.clone(),
            stored: !tar.is_empty(),
            stored_bytes,
        });
        data.push(ImageData { id: image.id.clone(), tags: image.tags.clone(), tar });
    }
    Ok((data, records, unresolvable))
}

/// The compose files and setup the project was started from, and the files that could not be
/// read (for `not_covered`).
pub(crate) fn spec(
    writer: &BlobWriter<'_>,
    project: &Project,
) -> Result<(Vec<SpecFileData>, SpecRecord, Vec<SkippedEntry>)> {
    let mut data = Vec::new();
    let mut files = Vec::new();
    let mut unread = Vec::new();
    for path in &project.config_files {
        // A compose file that moved or is unreadable is reported, not fatal: the containers'
        // own configs are recorded too. A relative name (from a label without a working
        // directory) means nothing here, and is never read against our own directory.
        let read = if Path::new(path).is_absolute() {
            std::fs::read(path)
        } else {
            Err(std::io::Error::new(std::io::ErrorKind::NotFound, "relative path"))
        };
        let content = match read {
            Ok(content) => Some(content),
            Err(e) => {
                let reason = if e.kind() == std::io::ErrorKind::NotFound { "missing" } else { "unreadable" };
                unread.push(SkippedEntry { path: path.clone(), reason: reason.to_owned() });
                None
            }
        };
        let id = content.as_ref().map(|c| writer.write(BlobKind::Data, c)).transpose()?;
        files.push(SpecFile {
            path: path.clone(),
            bytes: content.as_ref().map_or(0, |c| c.len() as u64),
            captured: id.is_some(),
        });
        data.push(SpecFileData { path: path.clone(), content: id });
    }
    let record = SpecRecord {
        format: "compose-yaml".into(),
        working_dir: project.working_dir.clone(),
        config_files: files,
        services: project.services.iter().map(|s| s.name.clone()).collect(),
        networks: project.networks.clone(),
    };
    Ok((data, record, unread))
}

/// What capturing the mounts produced.
pub(crate) struct MountsCaptured {
    pub data: Vec<MountData>,
    pub stats: Vec<MountStats>,
    pub totals: SnapshotStats,
    pub skipped: Vec<SkippedEntry>,
    pub caches: Vec<PendingCache>,
}

/// Captures every planned mount through the directory engine (a stat cache per mount, so
/// only what changed since the last savepoint is read). The project must be held still.
pub(crate) fn mounts(
    store: &Store,
    writer: &BlobWriter<'_>,
    project_key: &str,
    planned: &[PlannedMount],
) -> Result<MountsCaptured> {
    let mut out = MountsCaptured {
        data: Vec::new(),
        stats: Vec::new(),
        totals: SnapshotStats::default(),
        skipped: Vec::new(),
        caches: Vec::new(),
    };
    for m in planned {
        let mut stats = MountStats {
            object_id: m.object_id.clone(),
            kind: m.kind,
            source: m.source.clone(),
            used_by: m.used_by.clone(),
            files: 0,
            dirs: 0,
            bytes: 0,
            read_bytes: 0,
        };
        let content = if m.is_file {
            let meta = std::fs::metadata(&m.path).at("read", &m.path)?;
            let file = std::fs::File::open(&m.path).at("open", &m.path)?;
            let (content, len) = store_stream(writer, file, &m.path)?;
            (stats.files, stats.bytes, stats.read_bytes) = (1, len, len);
            MountContent::File { content, mode: meta.mode() & 0o7777 }
        } else {
            let key = cache_key(project_key, &m.object_id);
            let cache = StatCache::load(store, &key)?;
            // Everything in a volume is data: ignore files are not honoured here.
            let c = capture::capture(writer, &m.path, &cache, capture::Filter::ALL)?;
            (stats.files, stats.dirs, stats.bytes, stats.read_bytes) =
                (c.stats.files, c.stats.dirs, c.stats.bytes, c.stats.read_bytes);
            out.totals.symlinks += c.stats.symlinks;
            out.skipped.extend(
                c.not_covered
                    .skipped
                    .into_iter()
                    .map(|s| SkippedEntry { path: format!("{}/{}", m.object_id, s.path), reason: s.reason }),
            );
            out.caches.push((key, c.cache));
            MountContent::Dir { root: c.root }
        };
        out.totals.files += stats.files;
        out.totals.dirs += stats.dirs;
        out.totals.bytes += stats.bytes;
        out.totals.read_bytes += stats.read_bytes;
        out.data.push(MountData {
            object_id: m.object_id.clone(),
            kind: m.kind,
            source: m.source.clone(),
            owned_by_project: m.owned_by_project,
            content,
        });
        out.stats.push(stats);
    }
    Ok(out)
}

/// Exports each container's writable layer (stopped or paused) and stores the tar as chunks.
pub(crate) fn layers(
    store: &Store,
    docker: &Docker,
    writer: &BlobWriter<'_>,
    project: &Project,
) -> Result<(Vec<LayerData>, Vec<LayerRecord>, u64)> {
    let (mut data, mut records, mut read) = (Vec::new(), Vec::new(), 0);
    for c in &project.containers {
        let changes = docker.run(docker.engine.layer_changes(&c.name))?;
        let file = scratch_file(store, "layer")?;
        let (file, export) = docker.run(docker.engine.export_layer(&changes, file))?;
        let (tar, len) = store_stream(writer, rewind(file, store)?, Path::new(&c.name))?;
        read += len;
        records.push(LayerRecord {
            service: c.service.clone(),
            replica: c.number,
            container_name: c.name.clone(),
            image_id: c.image_id.clone(),
            changes: changes.changes.len() as u64,
            bytes: export.bytes,
            deleted: export.deleted,
        });
        data.push(LayerData { changes, tar });
    }
    Ok((data, records, read))
}

/// Services with no captured mount, and replica numbers missing below a service's highest.
pub(crate) fn gaps(project: &Project, planned: &[PlannedMount], not_covered: &mut ComposeNotCovered) {
    let covered: BTreeSet<&str> = planned.iter().flat_map(|m| m.used_by.iter().map(String::as_str)).collect();
    for s in &project.services {
        let has = project.containers.iter().any(|c| c.service == s.name && covered.contains(c.name.as_str()));
        if !has {
            not_covered.services_without_volumes.push(s.name.clone());
        }
        let max = s.container_numbers.iter().copied().max().unwrap_or(0);
        let missing: Vec<u32> = (1..max).filter(|n| !s.container_numbers.contains(n)).collect();
        if !missing.is_empty() {
            not_covered.replica_gaps.push(ReplicaGap { service: s.name.clone(), missing });
        }
    }
}
