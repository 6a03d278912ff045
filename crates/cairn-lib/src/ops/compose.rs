//! `cairn compose save|rollback|list`: savepoints of a running Docker Compose project.
//!
//! Save: lock the project → discover it → capture images and compose files while it runs →
//! stop (or pause) it → capture volumes, bind mounts and writable layers incrementally →
//! commit → start it again and wait until it is ready. Rollback: stop → safety snapshot of the
//! live state → put every volume, bind mount and layer back in place (only what differs is
//! written) → start → wait; if any of that fails, the safety snapshot is put back and both
//! failures are reported. A project with no containers is recreated from the savepoint.

use std::time::Duration;

use cairn_docker::Project;
use serde::{Deserialize, Serialize};

use super::resolve::CallContext;
use crate::Repository;
use crate::error::{Error, ErrorKind, Hint, Operation, Result, echo};
use crate::name::validate_name;
use crate::snapshot::Snapshot;
use crate::store::catalog::SnapshotFilter;
use crate::targets::compose::docker::{Docker, project_wait_bound};
use crate::targets::compose::recreate::{Leftover, recreate};
use crate::targets::compose::snapshot::{Take, take};
use crate::targets::compose::{apply, read_root};

pub use crate::targets::compose::apply::{RestoredLayer, RestoredMount};
pub use crate::targets::compose::record::{
    ComposeNotCovered, ComposeSavepoint, Consistency, ImageRecord, LayerRecord, MountStats, ReplicaGap,
    SkippedMount, SpecFile, SpecRecord,
};

/// How long a container gets to exit after its stop signal (compose's own default).
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// What to capture. The doc comments are the CLI's help; the arcave profile maps its own
/// contract's arguments into these.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ComposeSaveOptions {
    /// The compose project, as `docker compose ls` names it.
    pub project: String,
    /// A name to refer to the savepoint by.
    // Unique per session and project.
    #[cfg_attr(feature = "clap", arg(long, short))]
    pub name: Option<String>,
    /// What this savepoint is being taken before.
    #[cfg_attr(feature = "clap", arg(long, short))]
    pub description: Option<String>,
    /// Move an existing name to the new savepoint.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long, short))]
    pub force: bool,
    /// How long to wait for the services to be ready again, e.g. 2m or 90s (default: the
    /// project's own bound, from its healthchecks).
    #[cfg_attr(feature = "clap", arg(long, value_name = "DURATION"))]
    pub wait_timeout: Option<String>,
    /// stop (default), pause (freeze without a restart; crash-consistent) or none (live copy).
    // `pause` is the cgroup freezer.
    #[cfg_attr(feature = "clap", arg(long, value_name = "MODE"))]
    pub consistency: Option<String>,
    /// Also store the images, so a rollback works after they are deleted.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub with_images: bool,
    /// The session to save into (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// A new compose savepoint.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ComposeSaveResult {
    /// The savepoint record.
    #[serde(flatten)]
    pub savepoint: ComposeSavepoint,
    /// Savepoints the store's keep policy removed after this one.
    pub removed_by_policy: Vec<ComposeSavepoint>,
    /// The catalog record, for callers that list snapshots of every kind.
    #[serde(skip)]
    pub snapshot: Snapshot,
    /// The same removals as catalog records.
    #[serde(skip)]
    pub removed_snapshots: Vec<Snapshot>,
}

/// What to roll back to.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ComposeRollbackOptions {
    /// The compose project.
    pub project: String,
    /// The savepoint: an id, a unique id prefix, a name, or `latest`.
    pub reference: String,
    /// How long to wait for the services to be ready, e.g. 2m or 90s.
    #[cfg_attr(feature = "clap", arg(long, value_name = "DURATION"))]
    pub wait_timeout: Option<String>,
    /// The session (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// Which savepoints to list.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ComposeListOptions {
    /// The compose project.
    pub project: String,
    /// Also list the safety snapshots rollbacks took.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub include_safety_snapshots: bool,
    /// desc (newest first, the default) or asc.
    #[cfg_attr(feature = "clap", arg(long))]
    pub sort: Option<String>,
    /// The session (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// What a rollback did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ComposeRollbackResult {
    /// The savepoint the project now holds.
    pub rolled_back_to: ComposeSavepoint,
    /// Each volume and bind mount written.
    pub restored: Vec<RestoredMount>,
    /// Each container layer put back; omitted when the savepoint held none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub writable_layers: Vec<RestoredLayer>,
    /// The snapshot of the live state taken first (absent when the project was recreated).
    pub safety_snapshot: Option<String>,
    /// True when the project had no containers and was created again from the savepoint.
    pub recreated: bool,
    /// What else was done (images loaded, tags moved back, compose files written back).
    pub notes: Vec<String>,
}

/// Compose savepoints, wrapped in an object.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ComposeSavepointList {
    /// Newest first unless asked otherwise.
    pub savepoints: Vec<ComposeSavepoint>,
}

/// Refuses what compose itself would refuse as a project name.
fn project_key(project: &str) -> Result<String> {
    let ok = project.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && project.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !ok {
        return Err(Error::invalid(format!(
            "invalid compose project name {:?}: use lowercase letters, digits, '-' and '_', starting with a letter or digit, as `docker compose ls` shows it",
            echo(project)
        )));
    }
    Ok(format!("compose:{project}"))
}

fn wait_timeout(text: Option<&str>) -> Result<Option<Duration>> {
    text.map(|t| crate::duration::parse_duration("wait_timeout", t)).transpose()
}

/// The project with only the containers named in `names`.
fn only(project: &Project, names: &[String]) -> Project {
    let mut p = project.clone();
    p.containers.retain(|c| names.contains(&c.name));
    p
}

impl Repository {
    /// Captures a compose project as a new savepoint.
    pub fn compose_save(&self, o: &ComposeSaveOptions, context: &CallContext) -> Result<ComposeSaveResult> {
        let key = project_key(&o.project)?;
        let consistency = Consistency::parse(o.consistency.as_deref())?;
        if let Some(name) = &o.name {
            validate_name("savepoint", name)?;
        }
        let wait = wait_timeout(o.wait_timeout.as_deref())?;
        let session = self.call_session(o.session.as_deref(), context)?;
        if let (Some(name), false) = (&o.name, o.force)
            && self.resolve_snapshot(&session, name, Some(&key)).is_ok()
        {
            return Err(Error::conflict(format!(
                "a savepoint named {name:?} already exists for project {}; pick another name",
                o.project
            ))
            .or_hint(Hint::SetOption("force"))
            .purpose("to move the name"));
        }
        let _lock = self.lock_target(&key, "a compose save")?;
        let docker = Docker::connect()?;
        let project = docker.run(docker.engine.discover(&o.project))?;
        let wait = wait.unwrap_or_else(|| project_wait_bound(&project));
        let mut held: Vec<String> = Vec::new();
        let spec = Take {
            key: &key,
            session: session.id,
            name: o.name.clone(),
            description: o.description.clone(),
            force_name: o.force,
            safety: false,
            consistency,
            store_images: o.with_images,
        };
        let taken = take(self, &docker, &project, &spec, || match consistency {
            Consistency::Stop => {
                let report = docker.run(docker.engine.stop_project(&project, STOP_TIMEOUT))?;
                held = report.stopped;
                Ok(report.killed)
            }
            Consistency::Pause => {
                held = docker.run(docker.engine.pause_project(&project))?.containers;
                Ok(Vec::new())
            }
            Consistency::None => Ok(Vec::new()),
        });
        let resumed = resume(&docker, &only(&project, &held), consistency, wait);
        let taken = match (taken, resumed) {
            (Err(e), Ok(())) => return Err(e),
            (Err(e), Err(r)) => {
                return Err(e.context(format!("the services failed to start again too ({r})")));
            }
            (Ok(t), Err(r)) => {
                return Err(Error::new(
                    r.kind(),
                    format!("savepoint {} committed; services failed to start: {r}", t.snapshot.id),
                ));
            }
            (Ok(t), Ok(())) => t,
        };
        let removed = self.apply_keep_policy(&session, &key, taken.snapshot.id)?;
        Ok(ComposeSaveResult {
            savepoint: ComposeSavepoint::from_snapshot(&taken.snapshot),
            removed_by_policy: removed.iter().map(ComposeSavepoint::from_snapshot).collect(),
            snapshot: taken.snapshot,
            removed_snapshots: removed,
        })
    }

    /// Lists a project's savepoints (`sort`: `desc`, the default, or `asc`).
    pub fn compose_list(
        &self,
        o: &ComposeListOptions,
        context: &CallContext,
    ) -> Result<ComposeSavepointList> {
        let key = project_key(&o.project)?;
        let order = super::list::SortOrder::parse(o.sort.as_deref())?;
        let session = self.call_session(o.session.as_deref(), context)?;
        let filter = SnapshotFilter { target: Some(key), include_safety: o.include_safety_snapshots };
        let mut all = self.catalog().list_snapshots(session.id, &filter)?;
        order.apply(&mut all);
        Ok(ComposeSavepointList { savepoints: all.iter().map(ComposeSavepoint::from_snapshot).collect() })
    }

    /// Returns a compose project to a savepoint.
    pub fn compose_rollback(
        &self,
        o: &ComposeRollbackOptions,
        context: &CallContext,
    ) -> Result<ComposeRollbackResult> {
        self.compose_rollback_moved(o, context, None)
    }

    /// [`Repository::compose_rollback`] of a project whose directory moved from `moved.0` to
    /// `moved.1` (a resume on another machine): when the project is not on this engine, it is
    /// created from the new directory, every path of its setup that names the old one (the
    /// working directory, compose files, bind mounts) moved there, so neither its files nor
    /// its data are written where the project was.
    pub(crate) fn compose_rollback_moved(
        &self,
        o: &ComposeRollbackOptions,
        context: &CallContext,
        moved: Option<(&str, &str)>,
    ) -> Result<ComposeRollbackResult> {
        let key = project_key(&o.project)?;
        let wait = wait_timeout(o.wait_timeout.as_deref())?;
        let session = self.call_session(o.session.as_deref(), context)?;
        let snapshot = self.resolve_snapshot(&session, &o.reference, Some(&key))?;
        if snapshot.kind != crate::targets::TargetKind::Compose || snapshot.target != key {
            return Err(Error::invalid(format!(
                "snapshot {} is not a savepoint of compose project {}",
                snapshot.id, o.project
            ))
            .hint(Hint::Run(Operation::ListSavepoints { project: o.project.clone() })));
        }
        let root_id =
            snapshot.root.ok_or_else(|| Error::corrupt(format!("savepoint {} has no root", snapshot.id)))?;
        let _lock = self.lock_target(&key, "a compose rollback")?;
        let want = read_root(self, &root_id)?;
        let docker = Docker::connect()?;
        let mut result = ComposeRollbackResult {
            rolled_back_to: ComposeSavepoint::from_snapshot(&snapshot),
            restored: Vec::new(),
            writable_layers: Vec::new(),
            safety_snapshot: None,
            recreated: false,
            notes: Vec::new(),
        };
        let live = match docker.run(docker.engine.discover(&o.project)) {
            Ok(live) => live,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                let want = match moved {
                    Some((old, new)) => moved_root(want, old, new)?,
                    None => want,
                };
                let leftover = Leftover::from_setting(self.config().rollback_leftover_volumes().word());
                let (applied, notes) = recreate(self, &docker, &key, &want, leftover)?;
                let live = docker.run(docker.engine.discover(&o.project))?;
                let wait = wait.unwrap_or_else(|| project_wait_bound(&live));
                docker.run(docker.engine.wait_ready(&live, wait)).map_err(|e| {
                    Error::new(
                        e.kind(),
                        format!("project {} was recreated from savepoint {} but its services failed to start: {e}", o.project, snapshot.id),
                    )
                })?;
                (result.restored, result.writable_layers, result.notes) =
                    (applied.mounts, applied.layers, notes);
                result.recreated = true;
                return Ok(result);
            }
            Err(e) => return Err(e),
        };
        let wait = wait.unwrap_or_else(|| project_wait_bound(&live));
        let stop = docker.run(docker.engine.stop_project(&live, STOP_TIMEOUT))?;
        let spec = Take {
            key: &key,
            session: session.id,
            name: None,
            description: Some(format!("live state before rolling back to {}", snapshot.id)),
            force_name: false,
            safety: true,
            consistency: Consistency::Stop,
            store_images: false,
        };
        let startable = only(
            &live,
            &live.containers.iter().filter(|c| !c.oneoff).map(|c| c.name.clone()).collect::<Vec<_>>(),
        );
        let safety = match take(self, &docker, &live, &spec, || Ok(stop.killed.clone())) {
            Ok(s) => s,
            Err(e) => {
                let restarted = resume(&docker, &only(&live, &stop.stopped), Consistency::Stop, wait);
                return Err(match restarted {
                    Ok(()) => e.context("the safety snapshot failed, nothing was changed"),
                    Err(r) => e.context(format!("the safety snapshot failed, nothing was changed, and the services failed to start again ({r})")),
                });
            }
        };
        result.safety_snapshot = Some(safety.snapshot.id.to_string());
        let attempt = apply::apply(self, &docker, &key, &live, &want, Some(&safety.root))
            .and_then(|a| resume(&docker, &startable, Consistency::Stop, wait).map(|()| a));
        match attempt {
            Ok(applied) => {
                (result.restored, result.writable_layers) = (applied.mounts, applied.layers);
                self.expire_safety(&session, &key, safety.snapshot.id)?;
                Ok(result)
            }
            Err(first) => {
                let replay = docker
                    .run(docker.engine.stop_project(&live, STOP_TIMEOUT))
                    .and_then(|_| apply::apply(self, &docker, &key, &live, &safety.root, None))
                    // The state being put back ran before: give it the project's own bound.
                    .and_then(|_| {
                        let patient = wait.max(project_wait_bound(&live));
                        resume(&docker, &only(&live, &stop.stopped), Consistency::Stop, patient)
                    });
                let id = &safety.snapshot.id;
                Err(match replay {
                    Ok(()) => Error::new(
                        first.kind(),
                        format!(
                            "the rollback to {} failed ({first}); the live state was put back from safety snapshot {id}",
                            snapshot.id
                        ),
                    ),
                    Err(second) => Error::new(
                        first.kind(),
                        format!(
                            "the rollback to {} failed ({first}), and putting back safety snapshot {id} failed too ({second})",
                            snapshot.id
                        ),
                    )
                    .hint(Hint::Run(Operation::Rollback { project: o.project.clone(), snapshot: id.to_string() })),
                })
            }
        }
    }
}

/// Starts (or thaws) the containers a capture held, then waits until they are ready.
fn resume(docker: &Docker, held: &Project, consistency: Consistency, wait: Duration) -> Result<()> {
    match consistency {
        Consistency::Stop => {
            docker.run(docker.engine.start_project(held))?;
            docker.run(docker.engine.wait_ready(held, wait))?;
        }
        Consistency::Pause => {
            docker.run(docker.engine.unpause_project(held))?;
        }
        Consistency::None => {}
    }
    Ok(())
}

/// `want` with every string naming `old` as a whole path (see
/// [`cairn_transcript::remap_root_line`]) naming `new` instead.
fn moved_root(
    want: crate::targets::compose::record::ComposeRoot,
    old: &str,
    new: &str,
) -> Result<crate::targets::compose::record::ComposeRoot> {
    let text = serde_json::to_string(&want)
        .map_err(|e| Error::corrupt(format!("a compose savepoint's setup does not encode: {e}")))?;
    match cairn_transcript::remap_root_line(&text, old, new) {
        Some(moved) => serde_json::from_str(&moved)
            .map_err(|e| Error::corrupt(format!("a compose savepoint's moved setup does not decode: {e}"))),
        None => Ok(want),
    }
}
