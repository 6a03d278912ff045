//! Recreating a project after `compose down`, against the real engine.

mod common;

use std::time::Duration;

use cairn_docker::DockerError;
use common::TestProject;

#[tokio::test]
async fn a_project_is_recreated_from_its_recorded_setup_after_down() {
    let t = TestProject::up("recr", false).await;
    let before = t.engine.discover(&t.name).await.expect("discover");
    t.compose(&["down", "-t", "1"]);
    let err = t.engine.discover(&t.name).await.unwrap_err();
    assert!(matches!(err, DockerError::ProjectNotFound { .. }), "{err}");

    t.cli.up(&t.name, &before.config_files, before.working_dir.as_deref()).await.expect("recreate");
    let after = t.engine.discover(&t.name).await.expect("discover after");
    assert_eq!(after.services.len(), before.services.len());
    assert_ne!(after.containers[0].id, before.containers[0].id);
    // The named volume survived `down` and is mounted again, data included.
    assert_eq!(after.volumes[0].name, before.volumes[0].name);
    t.engine.wait_ready(&after, Duration::from_secs(60)).await.expect("ready");
    let app = t.app_ready().await;
    let out = common::exec(&t.engine, &app, &["cat", "/data/v.txt", "/bind/host.txt"]).await;
    assert!(out.contains("data") && out.contains("from host"), "{out}");
}
