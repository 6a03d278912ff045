//! Resuming a moment that holds a Compose project whose compose file and bind-mounted data
//! live in the old project root, on the machine's real Docker engine (images from
//! `scripts/deps/docker-images.sh`) and a real S3 server (`moto_server`). Machine A's project
//! is taken down and its directory removed before B resumes (B's engine has never run it): B's
//! project must come up from B's directory, its bind mount there, its data the savepoint's,
//! and nothing may be written where A's project was.

mod common;

use std::path::Path;
use std::process::Command;

use cairn_test_support::Moto;
use common::{compose_cli, machine_on};

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("the command runs");
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const COMPOSE: &str = r#"# One busybox service whose data is a directory of the project, bind-mounted.
services:
  app:
    image: cairn-test/busybox:1
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    volumes:
      - ./data:/data
"#;

/// Takes project `.0` down from its directory `.1` (when that still exists) when the test ends.
struct Down(String, std::path::PathBuf);

impl Drop for Down {
    fn drop(&mut self) {
        let _ = compose_cli()
            .args(["-p", &self.0, "-f", "docker-compose.yml", "down", "-v", "-t", "1"])
            .current_dir(&self.1)
            .output();
    }
}

/// The one container of project `name`.
fn container(name: &str) -> String {
    let id = run(Command::new("docker").args([
        "ps",
        "-q",
        "--filter",
        &format!("label=com.docker.compose.project={name}"),
    ]));
    assert_eq!(id.lines().count(), 1, "{id}");
    id.trim().to_owned()
}

#[test]
fn a_compose_project_resumed_on_another_machine_comes_up_from_the_new_directory() {
    let docker = Command::new("docker").args(["version", "--format", "{{.Server.Version}}"]).output();
    assert!(docker.is_ok_and(|o| o.status.success()), "this test needs a running Docker engine");
    let moto = Moto::start();
    moto.create_bucket("team");
    let a = machine_on(&moto, "s3://team/cairn");
    let b = machine_on(&moto, "s3://team/cairn");
    let name = format!("cairnresume{}", std::process::id());
    let proj = a.root().join("a/proj");
    let work = b.root().join("b/work");
    // A's project, until its directory is removed; then B's.
    let _down_b = Down(name.clone(), work.clone());
    let _down_a = Down(name.clone(), proj.clone());

    common::write(&proj, "docker-compose.yml", COMPOSE);
    common::write(&proj, "app.py", "v1\n");
    std::fs::create_dir_all(proj.join("data")).unwrap();
    run(compose_cli().args(["-p", &name, "up", "-d"]).current_dir(&proj));
    run(Command::new("docker").args(["exec", &container(&name), "sh", "-c", "echo one > /data/state.txt"]));
    let save = a.run_in(&proj, &["--json", "save", ".", &format!("compose:{name}")]);
    assert_eq!(save.code, 0, "{}", save.stderr);
    let saved: serde_json::Value = serde_json::from_str(&save.stdout).unwrap();
    let moment = saved["moment"]["id"].as_str().unwrap_or_else(|| panic!("{saved}")).to_owned();
    // A's engine and directory are gone: B's engine has never run the project.
    run(compose_cli().args(["-p", &name, "down", "-v", "-t", "1"]).current_dir(&proj));
    std::fs::remove_dir_all(&proj).unwrap();

    let out = b.json(&["resume", &moment, "--to", work.to_str().unwrap()]);
    assert_eq!(out["compose"], serde_json::json!([name]), "{out}");
    assert!(!proj.exists(), "something was written where A's project was: {out}");
    assert_eq!(std::fs::read_to_string(work.join("app.py")).unwrap(), "v1\n");
    assert_eq!(std::fs::read_to_string(work.join("data/state.txt")).unwrap(), "one\n");

    // The project runs from B's directory: its compose file, its working directory and its
    // bind mount are B's, and the container sees the savepoint's data.
    let id = container(&name);
    let labels = run(Command::new("docker").args([
        "inspect",
        "-f",
        "{{ index .Config.Labels \"com.docker.compose.project.working_dir\" }}|{{ index .Config.Labels \"com.docker.compose.project.config_files\" }}|{{ range .Mounts }}{{ .Source }}{{ end }}",
        &id,
    ]));
    let work_dir = work.display().to_string();
    assert_eq!(labels.trim(), format!("{work_dir}|{work_dir}/docker-compose.yml|{work_dir}/data"), "{out}");
    assert_eq!(run(Command::new("docker").args(["exec", &id, "cat", "/data/state.txt"])), "one\n");
    assert!(Path::new(&work_dir).join("docker-compose.yml").is_file());
}
