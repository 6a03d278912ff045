//! Discovery of a compose project against the real engine.

mod common;

use cairn_docker::{DockerError, MountKind};
use common::TestProject;

#[tokio::test]
async fn discovery_finds_services_volumes_binds_images_and_setup() {
    let t = TestProject::up("disc", true).await;
    let p = t.engine.discover(&t.name).await.expect("discover");

    let services: Vec<&str> = p.services.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(services.len(), 2, "{services:?}");
    assert!(services.contains(&"app") && services.contains(&"db"));
    assert!(p.services.iter().all(|s| s.replicas == 1 && s.container_numbers == [1]));
    assert_eq!(p.containers.len(), 2);

    let names: Vec<&str> = p.volumes.iter().map(|v| v.name.as_str()).collect();
    let appdata = format!("{}_appdata", t.name);
    let pgdata = format!("{}_pgdata", t.name);
    assert!(names.contains(&appdata.as_str()), "{names:?}");
    assert!(names.contains(&pgdata.as_str()), "{names:?}");
    for v in &p.volumes {
        assert_eq!(v.kind, MountKind::Named);
        assert!(v.owned_by_project);
        assert!(std::path::Path::new(&v.mountpoint).is_dir(), "{}", v.mountpoint);
    }

    let bind = p.bind_mounts.iter().find(|b| b.container_path == "/bind").expect("bind mount");
    assert!(bind.read_only);
    assert_eq!(
        std::fs::canonicalize(&bind.host_path).expect("host path"),
        std::fs::canonicalize(t.dir.path().join("bind")).expect("bind dir")
    );

    let tags: Vec<&str> = p.images.iter().flat_map(|i| i.tags.iter().map(String::as_str)).collect();
    assert!(tags.contains(&"cairn-test/busybox:1") && tags.contains(&"cairn-test/postgres:1"));
    assert!(p.images.iter().all(|i| i.id.starts_with("sha256:")));
    assert!(!p.networks.is_empty());
    assert_eq!(p.config_files.len(), 1);
    assert_eq!(
        std::fs::canonicalize(&p.config_files[0]).expect("config file"),
        std::fs::canonicalize(&t.file).expect("compose file")
    );
    assert!(p.working_dir.is_some());
    let app = p.containers.iter().find(|c| c.service == "app").expect("app");
    assert!(app.spec.config.as_ref().and_then(|c| c.cmd.clone()).is_some());

    // The serde shape round-trips (the engine's own config keeps maps, whose order varies).
    let json = serde_json::to_string(&p).expect("serialise");
    let back: cairn_docker::Project = serde_json::from_str(&json).expect("deserialise");
    assert_eq!(back.containers.len(), p.containers.len());
    assert_eq!(back.volumes, p.volumes);
    assert_eq!(back.bind_mounts, p.bind_mounts);

    let list = t.engine.list_projects().await.expect("list");
    let mine = list.projects.iter().find(|s| s.name == t.name).expect("listed");
    assert_eq!(mine.containers, 2);
}

#[tokio::test]
async fn an_unknown_project_is_a_clear_error() {
    let engine = cairn_docker::DockerEngine::connect()
        .await
        .unwrap_or_else(|e| panic!("these tests need a running Docker engine: {e}"));
    let err = engine.discover("cairntest-no-such-project").await.unwrap_err();
    assert!(matches!(err, DockerError::ProjectNotFound { .. }), "{err}");
    assert!(err.to_string().contains("cairntest-no-such-project"));
}
