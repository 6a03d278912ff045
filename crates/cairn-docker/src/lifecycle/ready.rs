//! Waiting until a project is up: healthchecked containers healthy, others running.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::engine::DockerEngine;
use crate::error::{DockerError, Result, api};
use crate::project::model::Project;

/// How often the engine is asked again; short enough not to add noticeable delay.
const POLL: Duration = Duration::from_millis(250);

/// The state one container was found in when the project became ready.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerReadiness {
    /// The container's name.
    pub name: String,
    /// Its state word: running, or exited for a one-shot container that ended with 0.
    pub state: String,
    /// Its health status when it has a healthcheck.
    pub health: Option<String>,
}

/// Every container of a project that is ready.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadyReport {
    /// The containers, in start order.
    pub containers: Vec<ContainerReadiness>,
}

enum Verdict {
    Ready(ContainerReadiness),
    Waiting(String),
}

impl DockerEngine {
    /// Waits until every container with a healthcheck is healthy and every other one
    /// is running, for at most `timeout`. A container that exits with a non-zero code
    /// fails the wait at once; one that exits with 0 counts as done (a one-shot job).
    pub async fn wait_ready(&self, project: &Project, timeout: Duration) -> Result<ReadyReport> {
        let started = Instant::now();
        loop {
            let mut ready = Vec::with_capacity(project.containers.len());
            let mut waiting = None;
            for c in &project.containers {
                match self.verdict(&c.id, &c.name).await? {
                    Verdict::Ready(r) => ready.push(r),
                    Verdict::Waiting(state) => {
                        waiting.get_or_insert((c.name.clone(), state));
                    }
                }
            }
            let Some((container, state)) = waiting else {
                return Ok(ReadyReport { containers: ready });
            };
            if started.elapsed() >= timeout {
                return Err(DockerError::NotReady {
                    container,
                    state,
                    waited_secs: started.elapsed().as_secs(),
                });
            }
            tokio::time::sleep(POLL).await;
        }
    }

    async fn verdict(&self, id: &str, name: &str) -> Result<Verdict> {
        let inspect = self
            .docker
            .inspect_container(id, None)
            .await
            .map_err(api(format!("inspect container {name}")))?;
        let state = inspect.state.unwrap_or_default();
        let status = state.status.map(|s| s.to_string()).unwrap_or_else(|| "unknown".into());
        let health = state
            .health
            .and_then(|h| h.status)
            .map(|s| s.to_string())
            .filter(|s| !s.is_empty() && s != "none");
        let readiness = |state: &str| ContainerReadiness {
            name: name.to_string(),
            state: state.to_string(),
            health: health.clone(),
        };
        Ok(match (status.as_str(), health.as_deref()) {
            ("running", None | Some("healthy")) => Verdict::Ready(readiness("running")),
            ("running", Some(h)) => Verdict::Waiting(format!("running, health {h}")),
            ("exited" | "dead", _) => match state.exit_code.unwrap_or(0) {
                0 => Verdict::Ready(readiness("exited")),
                code => {
                    return Err(DockerError::Exited { container: name.to_string(), code });
                }
            },
            (other, _) => Verdict::Waiting(other.to_string()),
        })
    }
}
