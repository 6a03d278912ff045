//! Stopping, starting, pausing and waiting for a project's containers.

mod ready;

use std::time::Duration;

use bollard::query_parameters::StopContainerOptionsBuilder;
use futures_util::future::try_join_all;
use serde::{Deserialize, Serialize};

pub use ready::{ContainerReadiness, ReadyReport};

use crate::engine::DockerEngine;
use crate::error::{Result, api};
use crate::project::model::Project;

/// What stopping a project did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopReport {
    /// Containers that were running and are now stopped, by name.
    pub stopped: Vec<String>,
    /// Containers that ignored the stop signal and were killed at the deadline.
    pub killed: Vec<String>,
}

/// What starting, pausing or unpausing a project did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedContainers {
    /// Containers whose state was changed, by name, in the order it was done.
    pub containers: Vec<String>,
}

/// Exit code of a process ended by SIGKILL (128 + 9).
const KILLED_EXIT_CODE: i64 = 137;

impl DockerEngine {
    /// Stops every running or paused container of the project at once, giving each
    /// `timeout` to exit after its stop signal before the engine kills it.
    pub async fn stop_project(&self, project: &Project, timeout: Duration) -> Result<StopReport> {
        let secs = i32::try_from(timeout.as_secs()).unwrap_or(i32::MAX);
        let mut targets = Vec::new();
        for c in project.containers.iter().rev() {
            let state = self.container_state(&c.id).await?;
            if matches!(state.as_str(), "running" | "paused" | "restarting") {
                targets.push(c);
            }
        }
        let stops = targets.iter().map(|c| async move {
            let options = StopContainerOptionsBuilder::default().t(secs).build();
            self.docker
                .stop_container(&c.id, Some(options))
                .await
                .map_err(api(format!("stop container {}", c.name)))?;
            let inspect = self
                .docker
                .inspect_container(&c.id, None)
                .await
                .map_err(api(format!("inspect container {}", c.name)))?;
            let exit = inspect.state.and_then(|s| s.exit_code);
            let stop_signal = inspect.config.and_then(|c| c.stop_signal).unwrap_or_default();
            // A container whose own stop signal is KILL was not "killed at the deadline".
            let killed =
                exit == Some(KILLED_EXIT_CODE) && !matches!(stop_signal.as_str(), "SIGKILL" | "KILL" | "9");
            Ok::<_, crate::DockerError>((c.name.clone(), killed))
        });
        let results = try_join_all(stops).await?;
        Ok(StopReport {
            stopped: results.iter().map(|(n, _)| n.clone()).collect(),
            killed: results.into_iter().filter(|(_, k)| *k).map(|(n, _)| n).collect(),
        })
    }

    /// Starts the project's stopped containers one at a time in start order
    /// (dependencies first when known, then by replica number); paused ones are unpaused.
    pub async fn start_project(&self, project: &Project) -> Result<ChangedContainers> {
        let mut changed = Vec::new();
        for c in &project.containers {
            match self.container_state(&c.id).await?.as_str() {
                "running" | "restarting" => continue,
                "paused" => self
                    .docker
                    .unpause_container(&c.id)
                    .await
                    .map_err(api(format!("unpause container {}", c.name)))?,
                _ => self
                    .docker
                    .start_container(&c.id, None)
                    .await
                    .map_err(api(format!("start container {}", c.name)))?,
            }
            changed.push(c.name.clone());
        }
        Ok(ChangedContainers { containers: changed })
    }

    /// Freezes every running container of the project (cgroup freezer), so its
    /// files stop changing without its processes being stopped.
    pub async fn pause_project(&self, project: &Project) -> Result<ChangedContainers> {
        let mut changed = Vec::new();
        for c in &project.containers {
            if self.container_state(&c.id).await? == "running" {
                self.docker
                    .pause_container(&c.id)
                    .await
                    .map_err(api(format!("pause container {}", c.name)))?;
                changed.push(c.name.clone());
            }
        }
        Ok(ChangedContainers { containers: changed })
    }

    /// Thaws every paused container of the project.
    pub async fn unpause_project(&self, project: &Project) -> Result<ChangedContainers> {
        let mut changed = Vec::new();
        for c in &project.containers {
            if self.container_state(&c.id).await? == "paused" {
                self.docker
                    .unpause_container(&c.id)
                    .await
                    .map_err(api(format!("unpause container {}", c.name)))?;
                changed.push(c.name.clone());
            }
        }
        Ok(ChangedContainers { containers: changed })
    }

    /// The engine's current state word for a container (running, exited, ...).
    pub(crate) async fn container_state(&self, id: &str) -> Result<String> {
        let inspect =
            self.docker.inspect_container(id, None).await.map_err(api(format!("inspect container {id}")))?;
        Ok(inspect.state.and_then(|s| s.status).map(|s| s.to_string()).unwrap_or_else(|| "unknown".into()))
    }
}
