//! Discovery of one compose project from the labels compose puts on its containers.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use bollard::models::{ContainerInspectResponse, MountType};
use bollard::query_parameters::ListContainersOptionsBuilder;

use super::labels;
use super::model::{
    BindMount, ContainerInfo, ContainerSpec, ImageRef, MountInfo, MountKind, Project, Service, VolumeInfo,
};
use super::order::start_order;
use crate::engine::DockerEngine;
use crate::error::{DockerError, Result, api};

impl DockerEngine {
    /// Describes the compose project `name`: services, containers, volumes, bind
    /// mounts, images, networks and compose setup. Fails when no container carries
    /// the project's label.
    pub async fn discover(&self, name: &str) -> Result<Project> {
        let filters = labels::project_filter(name);
        let options = ListContainersOptionsBuilder::default().all(true).filters(&filters).build();
        let summaries = self
            .docker
            .list_containers(Some(options))
            .await
            .map_err(api(format!("list the containers of project {name}")))?;
        if summaries.is_empty() {
            return Err(DockerError::ProjectNotFound { project: name.to_string() });
        }

        let mut containers = Vec::with_capacity(summaries.len());
        let mut config_files = Vec::new();
        let mut working_dir = None;
        let mut depends: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for summary in summaries {
            let Some(id) = summary.id else { continue };
            let inspect = self
                .docker
                .inspect_container(&id, None)
                .await
                .map_err(api(format!("inspect container {id}")))?;
            let labels = inspect.config.as_ref().and_then(|c| c.labels.clone()).unwrap_or_default();
            if config_files.is_empty() {
                config_files = labels::config_files(&labels);
            }
            if working_dir.is_none() {
                working_dir = labels.get(labels::WORKING_DIR).cloned();
            }
            let info = container_info(id, inspect, &labels);
            depends.entry(info.service.clone()).or_default().extend(labels::depends_on(&labels));
            containers.push(info);
        }

        let services = services(&containers, &depends);
        let order: Vec<String> = start_order(&services);
        let rank: HashMap<&str, usize> = order.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
        containers.sort_by_key(|c| {
            (rank.get(c.service.as_str()).copied().unwrap_or(usize::MAX), c.number, c.name.clone())
        });
        let mut services = services;
        services.sort_by_key(|s| rank.get(s.name.as_str()).copied().unwrap_or(usize::MAX));

        let volumes = self.volumes(name, &containers).await?;
        Ok(Project {
            name: name.to_string(),
            working_dir,
            config_files,
            bind_mounts: bind_mounts(&containers),
            images: images(&containers),
            networks: containers
                .iter()
                .flat_map(|c| c.spec.networks.keys().cloned())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
            services,
            containers,
            volumes,
        })
    }

    /// Inspects every volume the containers mount, to learn its host directory
    /// and whether compose made it for this project.
    async fn volumes(&self, project: &str, containers: &[ContainerInfo]) -> Result<Vec<VolumeInfo>> {
        let mut by_name: BTreeMap<String, VolumeInfo> = BTreeMap::new();
        for c in containers {
            for m in &c.mounts {
                if !matches!(m.kind, MountKind::Named | MountKind::Anonymous) {
                    continue;
                }
                if !by_name.contains_key(&m.source) {
                    let v = self
                        .docker
                        .inspect_volume(&m.source)
                        .await
                        .map_err(api(format!("inspect volume {}", m.source)))?;
                    let compose_named = v.labels.contains_key(labels::VOLUME);
                    let kind = if compose_named || !is_anonymous_name(&v.name) {
                        MountKind::Named
                    } else {
                        MountKind::Anonymous
                    };
                    let owned = v.labels.get(labels::PROJECT).map(String::as_str) == Some(project);
                    by_name.insert(
                        m.source.clone(),
                        VolumeInfo {
                            name: v.name,
                            kind,
                            mountpoint: v.mountpoint,
                            driver: v.driver,
                            owned_by_project: owned,
                            used_by: Vec::new(),
                            subpaths: Vec::new(),
                        },
                    );
                }
                if let Some(v) = by_name.get_mut(&m.source) {
                    if !v.used_by.contains(&c.name) {
                        v.used_by.push(c.name.clone());
                    }
                    if let Some(sub) = &m.subpath
                        && !v.subpaths.contains(sub)
                    {
                        v.subpaths.push(sub.clone());
                    }
                }
            }
        }
        // The mount list only knew "volume"; the volume's own labels decide the kind.
        Ok(by_name.into_values().collect())
    }
}

/// Anonymous volumes are named by a random 64-character hex id.
fn is_anonymous_name(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

fn container_info(
    id: String,
    inspect: ContainerInspectResponse,
    labels: &HashMap<String, String>,
) -> ContainerInfo {
    let state = inspect.state.as_ref();
    let subpaths: HashMap<String, String> = inspect
        .host_config
        .as_ref()
        .and_then(|h| h.mounts.as_ref())
        .map(|mounts| {
            mounts
                .iter()
                .filter(|m| m.typ == Some(MountType::VOLUME))
                .filter_map(|m| {
                    let sub = m.volume_options.as_ref()?.subpath.clone()?;
                    Some((m.target.clone()?, sub))
                })
                .collect()
        })
        .unwrap_or_default();
    let mounts = inspect
        .mounts
        .unwrap_or_default()
        .into_iter()
        .map(|m| {
            let typ = m.typ.map(|t| t.to_string()).unwrap_or_default();
            let destination = m.destination.unwrap_or_default();
            let kind = match typ.as_str() {
                "volume" => match &m.name {
                    Some(n) if is_anonymous_name(n) => MountKind::Anonymous,
                    _ => MountKind::Named,
                },
                "bind" => MountKind::Bind,
                "tmpfs" => MountKind::Tmpfs,
                _ => MountKind::Other,
            };
            let source = match kind {
                MountKind::Named | MountKind::Anonymous => m.name.unwrap_or_default(),
                _ => m.source.unwrap_or_default(),
            };
            MountInfo {
                kind,
                source,
                read_only: !m.rw.unwrap_or(true),
                subpath: subpaths.get(&destination).cloned(),
                destination,
            }
        })
        .collect();
    ContainerInfo {
        name: inspect.name.as_deref().unwrap_or(&id).trim_start_matches('/').to_string(),
        service: labels.get(labels::SERVICE).cloned().unwrap_or_default(),
        number: labels.get(labels::NUMBER).and_then(|n| n.parse().ok()).unwrap_or(0),
        oneoff: labels.get(labels::ONEOFF).is_some_and(|v| v.eq_ignore_ascii_case("true")),
        state: state.and_then(|s| s.status).map(|s| s.to_string()).unwrap_or_else(|| "unknown".into()),
        health: state
            .and_then(|s| s.health.as_ref())
            .and_then(|h| h.status)
            .map(|s| s.to_string())
            .filter(|s| !s.is_empty() && s != "none"),
        image_id: inspect.image.clone().unwrap_or_default(),
        image_tag: inspect.config.as_ref().and_then(|c| c.image.clone()).unwrap_or_default(),
        mounts,
        spec: ContainerSpec {
            config: inspect.config,
            host_config: inspect.host_config,
            networks: inspect
                .network_settings
                .and_then(|n| n.networks)
                .unwrap_or_default()
                .into_iter()
                .collect(),
        },
        id,
    }
}

fn services(containers: &[ContainerInfo], depends: &BTreeMap<String, BTreeSet<String>>) -> Vec<Service> {
    let mut numbers: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for c in containers {
        numbers.entry(c.service.as_str()).or_default().push(c.number);
    }
    numbers
        .into_iter()
        .map(|(name, mut nums)| {
            nums.sort_unstable();
            Service {
                name: name.to_string(),
                replicas: nums.len(),
                container_numbers: nums,
                depends_on: depends.get(name).map(|d| d.iter().cloned().collect()).unwrap_or_default(),
            }
        })
        .collect()
}

fn bind_mounts(containers: &[ContainerInfo]) -> Vec<BindMount> {
    containers
        .iter()
        .flat_map(|c| {
            c.mounts.iter().filter(|m| m.kind == MountKind::Bind).map(|m| BindMount {
                container: c.name.clone(),
                host_path: m.source.clone(),
                container_path: m.destination.clone(),
                read_only: m.read_only,
            })
        })
        .collect()
}

fn images(containers: &[ContainerInfo]) -> Vec<ImageRef> {
    let mut by_id: BTreeMap<&str, ImageRef> = BTreeMap::new();
    for c in containers {
        let image = by_id.entry(c.image_id.as_str()).or_insert_with(|| ImageRef {
            id: c.image_id.clone(),
            tags: Vec::new(),
            containers: Vec::new(),
        });
        if !c.image_tag.is_empty() && !image.tags.contains(&c.image_tag) {
            image.tags.push(c.image_tag.clone());
        }
        image.containers.push(c.name.clone());
    }
    by_id.into_values().collect()
}
