//! Stop, start, wait-until-healthy and pause against the real engine.

mod common;

use std::time::Duration;

use common::TestProject;

#[tokio::test]
async fn stop_start_wait_healthy_pause_unpause() {
    let t = TestProject::up("life", true).await;
    let p = t.engine.discover(&t.name).await.expect("discover");
    // depends_on is only recorded by compose v2; either way db and app both come up.
    let ready = t.engine.wait_ready(&p, Duration::from_secs(120)).await.expect("ready");
    let db =
        ready.containers.iter().find(|c| c.name.contains("_db_") || c.name.contains("-db-")).expect("db");
    assert_eq!(db.health.as_deref(), Some("healthy"));

    let stopped = t.engine.stop_project(&p, Duration::from_secs(10)).await.expect("stop");
    assert_eq!(stopped.stopped.len(), 2);
    assert!(stopped.killed.is_empty(), "{:?}", stopped.killed);
    for c in &p.containers {
        assert_eq!(
            t.engine
                .discover(&t.name)
                .await
                .expect("discover")
                .containers
                .iter()
                .find(|x| x.id == c.id)
                .expect("c")
                .state,
            "exited"
        );
    }

    let started = t.engine.start_project(&p).await.expect("start");
    assert_eq!(started.containers.len(), 2);
    let ready = t.engine.wait_ready(&p, Duration::from_secs(120)).await.expect("ready again");
    assert!(ready.containers.iter().all(|c| c.state == "running"));

    let paused = t.engine.pause_project(&p).await.expect("pause");
    assert_eq!(paused.containers.len(), 2);
    let now = t.engine.discover(&t.name).await.expect("discover");
    assert!(now.containers.iter().all(|c| c.state == "paused"));
    // A paused project is not ready: the wait names a container and its state.
    let err = t.engine.wait_ready(&p, Duration::ZERO).await.unwrap_err();
    assert!(err.to_string().contains("paused"), "{err}");
    let unpaused = t.engine.unpause_project(&p).await.expect("unpause");
    assert_eq!(unpaused.containers.len(), 2);
    t.engine.wait_ready(&p, Duration::from_secs(60)).await.expect("ready after unpause");
}

#[tokio::test]
async fn a_container_that_ignores_its_stop_signal_is_reported_killed() {
    let t = TestProject::up("kill", false).await;
    let p = t.engine.discover(&t.name).await.expect("discover");
    // Replace the app with one whose PID 1 ignores SIGTERM (no handler installed).
    let app = &p.containers[0];
    let exec = common::exec(&t.engine, &app.name, &["sh", "-c", "echo ok"]).await;
    assert!(exec.contains("ok"));
    let stubborn = t
        .engine
        .client()
        .create_container(
            None,
            bollard::models::ContainerCreateBody {
                image: Some("cairn-test/busybox:1".into()),
                cmd: Some(vec!["sleep".into(), "3600".into()]),
                labels: Some(std::collections::HashMap::from([
                    ("com.docker.compose.project".to_string(), t.name.clone()),
                    ("com.docker.compose.service".to_string(), "stubborn".to_string()),
                    ("com.docker.compose.container-number".to_string(), "1".to_string()),
                ])),
                ..Default::default()
            },
        )
        .await
        .expect("create");
    t.engine.client().start_container(&stubborn.id, None).await.expect("start");
    let p = t.engine.discover(&t.name).await.expect("discover");
    // The app's shell acts on SIGTERM once its current `sleep 1` ends: the deadline leaves room
    // for that on a loaded machine, where 1 s was sometimes too little and the app was killed.
    let report = t.engine.stop_project(&p, Duration::from_secs(4)).await;
    let _ = t
        .engine
        .client()
        .remove_container(
            &stubborn.id,
            Some(bollard::query_parameters::RemoveContainerOptionsBuilder::default().force(true).build()),
        )
        .await;
    let report = report.expect("stop");
    assert_eq!(report.stopped.len(), 2);
    assert_eq!(report.killed.len(), 1, "{report:?}");
    assert!(!report.killed[0].contains("app"));
}
