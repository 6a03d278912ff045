//! Writable layers: listing, exporting and putting back, against the real engine.

mod common;

use std::time::Duration;

use cairn_docker::ChangeKind;
use common::{TestProject, exec};

async fn round_trip(running_on_import: bool) {
    let t = TestProject::up(if running_on_import { "layrun" } else { "laystop" }, false).await;
    let app = t.app_ready().await;
    let engine = &t.engine;
    let p = engine.discover(&t.name).await.expect("discover");

    let changes = engine.layer_changes(&app).await.expect("changes");
    let find = |path: &str| changes.changes.iter().find(|c| c.path == path).map(|c| c.kind);
    assert_eq!(find("/etc/app-marker"), Some(ChangeKind::Added));
    assert_eq!(find("/srv/new/a"), Some(ChangeKind::Added));
    assert_eq!(find("/bin/zcat"), Some(ChangeKind::Deleted));
    // Volume contents are not part of the layer.
    assert!(find("/data/v.txt").is_none());

    engine.stop_project(&p, Duration::from_secs(10)).await.expect("stop");
    let (tar, export) = engine.export_layer(&changes, Vec::new()).await.expect("export");
    assert_eq!(export.deleted, ["/bin/zcat"]);
    let mut names = Vec::new();
    let mut archive = tar::Archive::new(tar.as_slice());
    for e in archive.entries().expect("entries") {
        names.push(e.expect("entry").path().expect("path").display().to_string());
    }
    assert!(names.iter().any(|n| n == "etc/app-marker"), "{names:?}");
    assert!(names.iter().any(|n| n == "srv/new/a"), "{names:?}");

    // Change the live layer: the marker rewritten, a new file, a stray file in the
    // new directory, the deleted applet back, an image file deleted and one modified.
    engine.start_project(&p).await.expect("start");
    engine.wait_ready(&p, Duration::from_secs(60)).await.expect("ready");
    exec(engine, &app, &["sh", "-c", "echo changed > /etc/app-marker; echo x > /etc/extra; echo s > /srv/new/stray; ln -s busybox /bin/zcat; rm /bin/zcat2 2>/dev/null; rm /bin/yes; echo root2 >> /etc/passwd"]).await;
    if !running_on_import {
        engine.stop_project(&p, Duration::from_secs(10)).await.expect("stop");
    }
    let import = engine.import_layer(&changes, std::io::Cursor::new(tar)).await.expect("import");
    assert!(import.deleted.contains(&"/etc/extra".to_string()), "{import:?}");
    assert!(import.reverted.contains(&"/bin/yes".to_string()), "{import:?}");
    assert!(import.reverted.contains(&"/etc/passwd".to_string()), "{import:?}");
    if !running_on_import {
        engine.start_project(&p).await.expect("start");
    }
    engine.wait_ready(&p, Duration::from_secs(60)).await.expect("ready");

    let out = exec(engine, &app, &["sh", "-c", "cat /etc/app-marker; ls /srv/new; test -e /etc/extra && echo EXTRA; test -e /bin/zcat && echo ZCAT; test -e /bin/yes && echo YES; grep -c root2 /etc/passwd"]).await;
    let lines: Vec<&str> = out.lines().collect();
    // The container's own command runs again on start and rewrites the marker,
    // so check before that matters: marker content comes from the saved layer or the script, both "layer".
    assert_eq!(lines.first().copied(), Some("layer"), "{out}");
    assert!(lines.contains(&"a") && !lines.contains(&"stray"), "{out}");
    assert!(!lines.contains(&"EXTRA") && !lines.contains(&"ZCAT"), "{out}");
    assert!(lines.contains(&"YES"), "{out}");
    assert_eq!(lines.last().copied(), Some("0"), "{out}");
}

#[tokio::test]
async fn layer_round_trip_into_a_stopped_container() {
    round_trip(false).await;
}

#[tokio::test]
async fn layer_round_trip_into_a_running_container() {
    round_trip(true).await;
}
