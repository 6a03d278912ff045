//! The `com.docker.compose.*` labels compose puts on what it creates.

use std::collections::HashMap;

pub(crate) const PROJECT: &str = "com.docker.compose.project";
pub(crate) const SERVICE: &str = "com.docker.compose.service";
pub(crate) const NUMBER: &str = "com.docker.compose.container-number";
pub(crate) const ONEOFF: &str = "com.docker.compose.oneoff";
pub(crate) const CONFIG_FILES: &str = "com.docker.compose.project.config_files";
pub(crate) const WORKING_DIR: &str = "com.docker.compose.project.working_dir";
pub(crate) const DEPENDS_ON: &str = "com.docker.compose.depends_on";
pub(crate) const VOLUME: &str = "com.docker.compose.volume";

/// The config files label split on commas (compose joins the `-f` files with them), each made
/// absolute against the project's working directory label: docker-compose v1 records the names
/// as given (`docker-compose.yml`), relative to the directory it ran in, not to ours.
pub(crate) fn config_files(labels: &HashMap<String, String>) -> Vec<String> {
    let dir = labels.get(WORKING_DIR).map(std::path::Path::new);
    labels
        .get(CONFIG_FILES)
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|f| match dir {
                    Some(dir) if std::path::Path::new(f).is_relative() => {
                        dir.join(f).to_string_lossy().into_owned()
                    }
                    _ => f.to_owned(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Service names from compose v2's depends_on label (`svc:condition:restart,...`).
pub(crate) fn depends_on(labels: &HashMap<String, String>) -> Vec<String> {
    labels
        .get(DEPENDS_ON)
        .map(|v| {
            v.split(',')
                .filter_map(|d| d.split(':').next())
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// The filter that selects everything of one project.
pub(crate) fn project_filter(project: &str) -> HashMap<String, Vec<String>> {
    HashMap::from([("label".to_string(), vec![format!("{PROJECT}={project}")])])
}
