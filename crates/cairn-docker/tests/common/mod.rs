//! Shared set-up for the tests: a compose project in a temp dir, torn down on drop.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use bollard::exec::{CreateExecOptions, StartExecResults};
use cairn_docker::{ComposeCli, DockerEngine};
use futures_util::StreamExt;

pub const APP_COMMAND: &str = "echo layer > /etc/app-marker; mkdir -p /srv/new; echo a > /srv/new/a; \
echo data > /data/v.txt; rm -f /bin/zcat; touch /tmp/ready; trap 'exit 0' TERM; while true; do sleep 1; done";

/// A busybox service with a named volume, a read-only bind mount and files of its own.
pub fn app_service(depends_on_db: bool) -> String {
    let depends = if depends_on_db { "    depends_on: [db]\n" } else { "" };
    format!(
        "  app:\n    image: cairn-test/busybox:1\n{depends}    command: [\"sh\", \"-c\", \"{APP_COMMAND}\"]\n    volumes:\n      - appdata:/data\n      - ./bind:/bind:ro\n"
    )
}

pub const DB_SERVICE: &str = "  db:\n    image: cairn-test/postgres:1\n    volumes:\n      - pgdata:/var/lib/postgresql/data\n    healthcheck:\n      test: [\"CMD\", \"pg_isready\", \"-h\", \"127.0.0.1\", \"-U\", \"postgres\"]\n      interval: 1s\n      timeout: 5s\n      retries: 60\n";

pub struct TestProject {
    pub name: String,
    pub dir: tempfile::TempDir,
    pub file: PathBuf,
    pub cli: ComposeCli,
    pub engine: DockerEngine,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

impl TestProject {
    /// Writes a compose file with the app service (and the db service when asked) and runs `up -d`.
    pub async fn up(tag: &str, with_db: bool) -> TestProject {
        let engine = DockerEngine::connect()
            .await
            .unwrap_or_else(|e| panic!("these tests need a running Docker engine: {e}"));
        let cli = ComposeCli::detect().await.expect("a compose CLI is installed");
        let name =
            format!("cairntest-{tag}-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::SeqCst));
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join("bind")).expect("bind dir");
        std::fs::write(dir.path().join("bind/host.txt"), "from host").expect("bind file");
        let mut yaml = String::from("version: \"3.7\"\nservices:\n");
        yaml.push_str(&app_service(with_db));
        let mut volumes = "volumes:\n  appdata:\n".to_string();
        if with_db {
            yaml.push_str(DB_SERVICE);
            volumes.push_str("  pgdata:\n");
        }
        yaml.push_str(&volumes);
        let file = dir.path().join("docker-compose.yml");
        std::fs::write(&file, yaml).expect("compose file");
        let project = TestProject { name, file, cli, engine, dir };
        project
            .cli
            .up(
                &project.name,
                &[project.file.display().to_string()],
                Some(&project.dir.path().display().to_string()),
            )
            .await
            .expect("compose up");
        project
    }

    pub fn compose(&self, args: &[&str]) {
        let mut cmd = match self.cli {
            ComposeCli::Plugin => {
                let mut c = Command::new("docker");
                c.arg("compose");
                c
            }
            ComposeCli::Standalone => Command::new("docker-compose"),
        };
        let status =
            cmd.args(["-p", &self.name, "-f"]).arg(&self.file).args(args).output().expect("compose runs");
        assert!(status.status.success(), "compose {args:?}: {}", String::from_utf8_lossy(&status.stderr));
    }

    /// The app container's name, once its startup script has written everything.
    pub async fn app_ready(&self) -> String {
        let project = self.engine.discover(&self.name).await.expect("discover");
        let app = project.containers.iter().find(|c| c.service == "app").expect("app container").name.clone();
        for _ in 0..600 {
            let changes = self.engine.layer_changes(&app).await.expect("changes");
            if changes.changes.iter().any(|c| c.path == "/tmp/ready") {
                return app;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the app container never finished its startup script");
    }
}

impl Drop for TestProject {
    fn drop(&mut self) {
        let mut cmd = match self.cli {
            ComposeCli::Plugin => {
                let mut c = Command::new("docker");
                c.arg("compose");
                c
            }
            ComposeCli::Standalone => Command::new("docker-compose"),
        };
        let _ = cmd.args(["-p", &self.name, "-f"]).arg(&self.file).args(["down", "-v", "-t", "1"]).output();
    }
}

/// Runs a command in a running container and returns its stdout and stderr.
pub async fn exec(engine: &DockerEngine, container: &str, cmd: &[&str]) -> String {
    let exec = engine
        .client()
        .create_exec(
            container,
            CreateExecOptions {
                cmd: Some(cmd.iter().map(|s| s.to_string()).collect()),
                attach_stdout: Some(true),
                attach_stderr: Some(true),
                ..Default::default()
            },
        )
        .await
        .expect("create exec");
    let mut text = String::new();
    if let StartExecResults::Attached { mut output, .. } =
        engine.client().start_exec(&exec.id, None).await.expect("start exec")
    {
        while let Some(Ok(chunk)) = output.next().await {
            text.push_str(&chunk.to_string());
        }
    }
    text
}
