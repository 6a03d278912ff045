//! `docker compose ls`-style listing of the projects on the engine.

use std::collections::{BTreeMap, HashMap};

use bollard::query_parameters::ListContainersOptionsBuilder;

use super::labels;
use super::model::{ProjectList, ProjectSummary};
use crate::engine::DockerEngine;
use crate::error::{Result, api};

impl DockerEngine {
    /// Lists every compose project that has containers, running or not.
    pub async fn list_projects(&self) -> Result<ProjectList> {
        let filters = HashMap::from([("label".to_string(), vec![labels::PROJECT.to_string()])]);
        let options = ListContainersOptionsBuilder::default().all(true).filters(&filters).build();
        let containers = self.docker.list_containers(Some(options)).await.map_err(api("list containers"))?;

        let mut by_name: BTreeMap<String, (ProjectSummary, BTreeMap<String, usize>)> = BTreeMap::new();
        for c in containers {
            let labels = c.labels.unwrap_or_default();
            let Some(name) = labels.get(labels::PROJECT) else {
                continue;
            };
            let state = c.state.map(|s| s.to_string()).unwrap_or_else(|| "unknown".into());
            let (summary, states) = by_name.entry(name.clone()).or_insert_with(|| {
                (
                    ProjectSummary {
                        name: name.clone(),
                        status: String::new(),
                        containers: 0,
                        running: 0,
                        config_files: labels::config_files(&labels),
                        working_dir: labels.get(labels::WORKING_DIR).cloned(),
                    },
                    BTreeMap::new(),
                )
            });
            summary.containers += 1;
            if state == "running" {
                summary.running += 1;
            }
            *states.entry(state).or_default() += 1;
        }
        let projects = by_name
            .into_values()
            .map(|(mut summary, states)| {
                summary.status =
                    states.iter().map(|(s, n)| format!("{s}({n})")).collect::<Vec<_>>().join(", ");
                summary
            })
            .collect();
        Ok(ProjectList { projects })
    }
}
