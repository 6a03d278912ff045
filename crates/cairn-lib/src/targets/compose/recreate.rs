//! Rolling back a project that has no containers (after `docker compose down`): its data is
//! put in place first, then compose creates it again from the recorded setup, then the
//! containers' writable layers and anonymous volumes are filled in.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cairn_docker::{ComposeCli, MountKind};

use super::apply::{self, Applied, RestoredMount};
use super::blobs::spill;
use super::docker::Docker;
use super::record::ComposeRoot;
use crate::error::{Error, IoContext, Result};
use crate::store::Store;

/// What `rollback.leftover_volumes` says to do with named volumes the project still owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leftover {
    /// Keep them as they are.
    Reuse,
    /// Make them hold the savepoint's data (only what differs is written).
    Replace,
    /// Refuse the rollback.
    Refuse,
}

impl Leftover {
    pub(crate) fn from_setting(value: &str) -> Self {
        match value {
            "reuse" => Self::Reuse,
            "refuse" => Self::Refuse,
            _ => Self::Replace,
        }
    }
}

/// Recreates `project` from `want`; returns what was written and notes for the caller.
pub(crate) fn recreate(
    store: &Store,
    docker: &Docker,
    key: &str,
    want: &ComposeRoot,
    leftover: Leftover,
) -> Result<(Applied, Vec<String>)> {
    let name = want.project.name.as_str();
    let mut notes = Vec::new();
    let mut existing: HashMap<&str, PathBuf> = HashMap::new();
    for m in want.mounts.iter().filter(|m| m.kind == MountKind::Named) {
        if let Ok(v) = docker.api("inspect a volume", docker.engine.client().inspect_volume(&m.source)) {
            existing.insert(m.source.as_str(), PathBuf::from(v.mountpoint));
        }
    }
    if leftover == Leftover::Refuse && !existing.is_empty() {
        let mut names: Vec<&str> = existing.keys().copied().collect();
        names.sort_unstable();
        return Err(Error::conflict(format!(
            "project {name} has no containers but its volumes {} still exist, and rollback.leftover_volumes is refuse; remove them with `docker volume rm`, or set rollback.leftover_volumes to replace or reuse",
            names.join(", ")
        )));
    }
    ensure_images(store, docker, want, &mut notes)?;
    restore_spec_files(store, want, &mut notes)?;

    let mut applied = Applied::default();
    for m in &want.mounts {
        let path = match m.kind {
            MountKind::Bind => PathBuf::from(&m.source),
            MountKind::Named => match existing.get(m.source.as_str()) {
                Some(_) if leftover == Leftover::Reuse => {
                    applied.mounts.push(RestoredMount {
                        object_id: m.object_id.clone(),
                        kind: m.kind,
                        source: m.source.clone(),
                        changes: 0,
                        files_written: 0,
                        bytes_written: 0,
                        action: "kept".into(),
                    });
                    continue;
                }
                Some(p) => p.clone(),
                None => create_volume(docker, name, &m.source)?,
            },
            // Anonymous volumes get new names when compose creates the containers; nothing
            // else is ever captured.
            MountKind::Anonymous | MountKind::Tmpfs | MountKind::Other => continue,
        };
        applied.mounts.push(apply::put_mount(store, key, m, &path, None)?);
    }

    let cli = docker.run(ComposeCli::detect())?;
    docker.run(cli.up(name, &want.project.config_files, want.project.working_dir.as_deref()))?;
    let live = docker.run(docker.engine.discover(name))?;
    // Layers and anonymous volumes need the new containers, held still.
    let renamed = rename_anonymous(want, &live);
    if !renamed.layers.is_empty() || !renamed.mounts.is_empty() {
        docker.run(docker.engine.stop_project(&live, std::time::Duration::from_secs(10)))?;
        let rest = apply::apply(store, docker, key, &live, &renamed, None)?;
        applied.mounts.extend(rest.mounts);
        applied.layers.extend(rest.layers);
        docker.run(docker.engine.start_project(&live))?;
    }
    Ok((applied, notes))
}

/// Loads images the engine lost from the savepoint, and points moved tags back at the
/// recorded ids, so compose creates the containers from the images the savepoint ran.
fn ensure_images(store: &Store, docker: &Docker, want: &ComposeRoot, notes: &mut Vec<String>) -> Result<()> {
    for image in &want.images {
        if docker.run(docker.engine.inspect_image(&image.id))?.is_none() {
            if image.tar.is_empty() {
                return Err(Error::not_found(format!(
                    "image {} is no longer on this Docker engine and the savepoint does not hold it; rebuild or pull it (savepoints taken with images hold them)",
                    image.id
                )));
            }
            docker.run(docker.engine.load_image(spill(store, &image.tar, "image")?))?;
            notes.push(format!("loaded image {} from the savepoint", image.id));
        }
        for tag in &image.tags {
            let current = docker.run(docker.engine.inspect_image(tag))?;
            if current.is_some_and(|c| c.id == image.id) || tag.starts_with("sha256:") {
                continue;
            }
            let (repo, version) = split_tag(tag);
            let options =
                bollard::query_parameters::TagImageOptionsBuilder::default().repo(repo).tag(version).build();
            docker.api("tag an image", docker.engine.client().tag_image(&image.id, Some(options)))?;
            notes.push(format!("pointed {tag} back at {}", image.id));
        }
    }
    Ok(())
}

/// `registry:5000/a/b:1` → (`registry:5000/a/b`, `1`); no tag means `latest`.
fn split_tag(tag: &str) -> (&str, &str) {
    match tag.rsplit_once(':') {
        Some((repo, version)) if !version.contains('/') => (repo, version),
        _ => (tag, "latest"),
    }
}

/// Writes back compose files that are gone, so compose can read the recorded setup.
fn restore_spec_files(store: &Store, want: &ComposeRoot, notes: &mut Vec<String>) -> Result<()> {
    for f in &want.spec_files {
        // Savepoints taken before config files were resolved may hold docker-compose v1's
        // relative names: they belong in the project's directory, never in ours.
        let path = match &want.project.working_dir {
            Some(dir) if Path::new(&f.path).is_relative() => Path::new(dir).join(&f.path),
            _ => PathBuf::from(&f.path),
        };
        let path = path.as_path();
        if path.is_relative() {
            notes.push(format!(
                "left out the compose file {}: the savepoint has no project directory to put it in",
                f.path
            ));
            continue;
        }
        if let (false, Some(id)) = (path.exists(), f.content) {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).at("create", parent)?;
            }
            std::fs::write(path, super::blobs::read_all(store, &[id])?).at("write", path)?;
            notes.push(format!("wrote back the compose file {}", path.display()));
        }
    }
    Ok(())
}

/// Creates a named volume with compose's labels, so compose adopts it; returns its directory.
fn create_volume(docker: &Docker, project: &str, volume: &str) -> Result<PathBuf> {
    let short = volume.strip_prefix(&format!("{project}_")).unwrap_or(volume);
    let labels = HashMap::from([
        ("com.docker.compose.project".to_owned(), project.to_owned()),
        ("com.docker.compose.volume".to_owned(), short.to_owned()),
    ]);
    let request = bollard::models::VolumeCreateRequest {
        name: Some(volume.to_owned()),
        labels: Some(labels),
        ..Default::default()
    };
    let v = docker.api("create a volume", docker.engine.client().create_volume(request))?;
    Ok(PathBuf::from(v.mountpoint))
}

/// The part of `want` that goes into the new containers: layers, and anonymous volumes under
/// the names the new containers gave them (matched by container and mount point).
fn rename_anonymous(want: &ComposeRoot, live: &cairn_docker::Project) -> ComposeRoot {
    let mut out = want.clone();
    out.mounts.clear();
    out.layers.retain(|l| !l.changes.changes.is_empty());
    for m in want.mounts.iter().filter(|m| m.kind == MountKind::Anonymous) {
        let mount_of = |p: &cairn_docker::Project| {
            p.containers.iter().find_map(|c| {
                c.mounts
                    .iter()
                    .find(|x| x.source == m.source)
                    .map(|x| (c.name.clone(), x.destination.clone()))
            })
        };
        let Some((container, destination)) = mount_of(&want.project) else { continue };
        let new = live
            .containers
            .iter()
            .filter(|c| c.name == container)
            .flat_map(|c| c.mounts.iter())
            .find(|x| x.destination == destination);
        if let Some(new) = new {
            let mut m = m.clone();
            m.source = new.source.clone();
            m.object_id = super::mounts::object_id(MountKind::Anonymous, &new.source);
            out.mounts.push(m);
        }
    }
    out
}
