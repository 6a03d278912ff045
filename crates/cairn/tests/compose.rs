//! Compose savepoints and rollback, against the machine's real Docker engine and compose CLI.
//! The images come from `scripts/deps/docker-images.sh` (no registry is needed).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use common::{TestEnv, compose_cli};

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A compose project started from a fixture in a temp dir, taken down (volumes too) on drop.
struct Project {
    name: String,
    dir: tempfile::TempDir,
    file: PathBuf,
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compose").join(name)
}

fn require_docker() {
    let out = Command::new("docker").args(["version", "--format", "{{.Server.Version}}"]).output();
    match out {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!(
            "these tests need a running Docker engine, and none answers: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => panic!("these tests need a running Docker engine, and the docker CLI cannot run: {e}"),
    }
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("the command runs");
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl Project {
    fn up(tag: &str, fixture_name: &str) -> Self {
        require_docker();
        let name =
            format!("cairncompose{tag}{}x{}", std::process::id(), COUNTER.fetch_add(1, Ordering::SeqCst));
        let dir = tempfile::Builder::new().prefix("cairn-compose-").tempdir().expect("temp dir");
        let file = dir.path().join("docker-compose.yml");
        std::fs::copy(fixture(fixture_name), &file).expect("fixture");
        std::fs::create_dir_all(dir.path().join("bind/sub")).expect("bind dir");
        std::fs::write(dir.path().join("bind/a.txt"), "alpha\n").expect("bind file");
        std::fs::write(dir.path().join("bind/sub/b.txt"), "beta\n").expect("bind file");
        let project = Self { name, dir, file };
        project.compose(&["up", "-d"]);
        project
    }

    fn compose(&self, args: &[&str]) {
        run(compose_cli()
            .args(["-p", &self.name, "-f"])
            .arg(&self.file)
            .args(args)
            .current_dir(self.dir.path()));
    }

    fn bind(&self) -> PathBuf {
        self.dir.path().join("bind")
    }

    /// The id of the service's container.
    fn container(&self, service: &str) -> String {
        let out = run(Command::new("docker").args([
            "ps",
            "-aq",
            "--filter",
            &format!("label=com.docker.compose.project={}", self.name),
            "--filter",
            &format!("label=com.docker.compose.service={service}"),
        ]));
        out.lines().next().unwrap_or_else(|| panic!("no {service} container in {}", self.name)).to_owned()
    }

    fn exec(&self, service: &str, script: &str) -> String {
        run(Command::new("docker").args(["exec", &self.container(service), "sh", "-c", script]))
    }

    fn health(&self, service: &str) -> String {
        let out = Command::new("docker")
            .args(["inspect", "-f", "{{.State.Health.Status}}", &self.container(service)])
            .output()
            .expect("docker inspect");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Waits (bounded) until the service's healthcheck passes.
    fn wait_healthy(&self, service: &str) {
        for _ in 0..600 {
            if self.health(service) == "healthy" {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        panic!("{service} of {} never became healthy", self.name);
    }

    fn sql(&self, statement: &str) -> String {
        run(Command::new("docker").args([
            "exec",
            &self.container("db"),
            "psql",
            "-U",
            "postgres",
            "-tAc",
            statement,
        ]))
        .trim()
        .to_owned()
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = compose_cli()
            .args(["-p", &self.name, "-f"])
            .arg(&self.file)
            .args(["down", "-v", "-t", "1"])
            .current_dir(self.dir.path())
            .output();
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn rollback_puts_rows_files_and_container_files_back_exactly() {
    let env = TestEnv::new();
    let p = Project::up("full", "full.yml");
    p.wait_healthy("db");
    p.sql("CREATE TABLE t(n int); INSERT INTO t VALUES (1), (2);");
    p.exec("app", "mkdir -p /srv && echo one > /srv/state.txt");

    let saved = env.json(&["compose", "save", &p.name, "--name", "before", "--wait-timeout", "2m"]);
    let id = saved["id"].as_str().expect("id").to_owned();
    let kinds: Vec<&str> =
        saved["stats"].as_array().expect("stats").iter().filter_map(|s| s["type"].as_str()).collect();
    assert!(kinds.contains(&"named") && kinds.contains(&"bind"), "{saved}");
    let layers = saved["writable_layers"].as_array().expect("layers");
    assert!(layers.iter().any(|l| l["service"] == "app"), "{saved}");
    assert_eq!(saved["spec"]["format"], "compose-yaml");
    assert!(
        saved["images"]
            .as_array()
            .expect("images")
            .iter()
            .all(|i| i["id"].as_str().is_some_and(|i| i.starts_with("sha256:")))
    );
    assert_eq!(saved["not_covered"]["services_without_volumes"], serde_json::json!([]), "{saved}");

    // Change everything the savepoint holds.
    p.sql("INSERT INTO t VALUES (3), (4); DELETE FROM t WHERE n = 1;");
    std::fs::remove_file(p.bind().join("a.txt")).expect("delete");
    std::fs::write(p.bind().join("sub/b.txt"), "changed\n").expect("write");
    std::fs::write(p.bind().join("new.txt"), "new\n").expect("write");
    p.exec("app", "echo two > /srv/state.txt; echo extra > /srv/extra.txt");

    let back = env.json(&["compose", "rollback", &p.name, "before", "--wait-timeout", "2m"]);
    assert_eq!(back["rolled_back_to"]["id"], id.as_str());
    assert!(back["safety_snapshot"].as_str().is_some(), "{back}");
    assert_eq!(back["recreated"], false);
    let restored: Vec<&str> = back["restored"]
        .as_array()
        .expect("restored")
        .iter()
        .filter_map(|r| r["object_id"].as_str())
        .collect();
    assert!(restored.iter().any(|r| r.starts_with("volume-named-")), "{back}");

    p.wait_healthy("db");
    assert_eq!(p.sql("SELECT string_agg(n::text, ',' ORDER BY n) FROM t"), "1,2");
    assert_eq!(read(&p.bind().join("a.txt")), "alpha\n");
    assert_eq!(read(&p.bind().join("sub/b.txt")), "beta\n");
    assert!(!p.bind().join("new.txt").exists());
    assert_eq!(p.exec("app", "cat /srv/state.txt; test -e /srv/extra.txt && echo EXTRA || true"), "one\n");

    // The generic verbs see compose targets: list (with the safety snapshot), save, remove.
    let target = format!("compose:{}", p.name);
    let listed = env.json(&["list", &target]);
    assert_eq!(listed["snapshots"].as_array().expect("list").len(), 1, "{listed}");
    let with_safety = env.json(&["list", &target, "--include-safety-snapshots"]);
    assert_eq!(with_safety["snapshots"].as_array().expect("list").len(), 2, "{with_safety}");
    let second = env.json(&["save", &target]);
    // Only what changed since the first savepoint is read again.
    assert!(second["stats"]["read_bytes"].as_u64() < second["stats"]["bytes"].as_u64(), "{second}");
    let removed = env.json(&["remove", "--target", &target, "--retain-recent", "1"]);
    let removed_ids: Vec<&str> =
        removed["removed"].as_array().expect("removed").iter().filter_map(|r| r["id"].as_str()).collect();
    assert_eq!(removed_ids, [id.as_str()]);
    let left = env.json(&["compose", "list", &p.name]);
    assert_eq!(left["savepoints"].as_array().expect("savepoints").len(), 1);
}

#[test]
fn rollback_after_down_recreates_the_project_and_its_data() {
    let env = TestEnv::new();
    let p = Project::up("down", "full.yml");
    p.wait_healthy("db");
    p.sql("CREATE TABLE t(n int); INSERT INTO t VALUES (7);");
    p.exec("app", "echo kept > /root/layer.txt");
    env.json(&["compose", "save", &p.name, "--name", "sp"]);
    p.sql("INSERT INTO t VALUES (8);");
    std::fs::write(p.bind().join("a.txt"), "after\n").expect("write");
    p.compose(&["down", "-t", "1"]);

    env.ok(&["config", "set", "rollback.leftover_volumes", "refuse"]);
    let refused = env.fails(&["compose", "rollback", &p.name, "sp"], 1);
    assert!(refused.contains("rollback.leftover_volumes is refuse"), "{refused}");

    env.ok(&["config", "set", "rollback.leftover_volumes", "replace"]);
    let back = env.json(&["compose", "rollback", &p.name, "latest"]);
    assert_eq!(back["recreated"], true, "{back}");
    assert!(back["safety_snapshot"].is_null(), "{back}");
    p.wait_healthy("db");
    assert_eq!(p.sql("SELECT string_agg(n::text, ',' ORDER BY n) FROM t"), "7");
    assert_eq!(read(&p.bind().join("a.txt")), "alpha\n");
    assert_eq!(p.exec("app", "cat /root/layer.txt"), "kept\n");
}

#[test]
fn a_rollback_whose_start_fails_leaves_the_live_state_as_it_was() {
    let env = TestEnv::new();
    let p = Project::up("health", "health.yml");
    // Without /data/ok the service never becomes healthy: the savepoint is committed, the
    // restart is reported as failed.
    let err = env.fails(&["compose", "save", &p.name, "--name", "unhealthy", "--wait-timeout", "3s"], 1);
    assert!(err.contains("committed; services failed to start:"), "{err}");
    let listed = env.json(&["compose", "list", &p.name]);
    let id = listed["savepoints"][0]["id"].as_str().expect("the savepoint exists").to_owned();
    assert!(err.contains(&format!("savepoint {id} committed")), "{err}");

    p.exec("app", "touch /data/ok; echo live > /data/v.txt; echo live > /root/layer.txt");
    p.wait_healthy("app");
    let err = env.fails(&["compose", "rollback", &p.name, "unhealthy", "--wait-timeout", "3s"], 1);
    assert!(err.contains("the live state was put back from safety snapshot"), "{err}");

    p.wait_healthy("app");
    assert_eq!(
        p.exec("app", "cat /data/v.txt /root/layer.txt; test -f /data/ok && echo OK"),
        "live\nlive\nOK\n"
    );
}

#[test]
fn a_second_command_on_the_same_project_is_refused() {
    let env = TestEnv::new();
    let p = Project::up("lock", "health.yml");
    // This save holds the project lock while it waits for a health check that cannot pass.
    let mut first =
        env.process(&["compose", "save", &p.name, "--wait-timeout", "8s"]).spawn().expect("spawn");
    std::thread::sleep(std::time::Duration::from_secs(2));
    let second = env.cairn(&["compose", "save", &p.name]).output().expect("run");
    let _ = first.wait();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success());
    assert!(stderr.contains("another cairn command is already running in this project: "), "{stderr}");
    assert!(stderr.contains("; retry when it finishes"), "{stderr}");
}

#[test]
fn a_bare_number_wait_timeout_is_refused_with_an_example() {
    let env = TestEnv::new();
    let err = env.fails(&["compose", "save", "anything", "--wait-timeout", "120"], 2);
    insta::assert_snapshot!(err, @r#"error: invalid --wait-timeout "120": want a unit-bearing value like 2m, 90s or 1h30m"#);
}

#[test]
fn save_list_and_rollback_whole_outputs() {
    let env = TestEnv::new();
    let p = Project::up("outputs", "plain.yml");
    p.exec("app", "echo one > /data/state.txt");
    let before = env.transcript(&[
        &["compose", "save", &p.name, "--name", "before", "--wait-timeout", "2m"],
        &["compose", "save", &p.name, "--name", "before"],
    ]);
    p.exec("app", "echo two > /data/state.txt");
    let json = env.transcript(&[
        &["--json", "compose", "save", &p.name, "--name", "after", "--consistency", "pause"],
        &["compose", "list", &p.name],
        &["--json", "compose", "list", &p.name],
        &["compose", "rollback", &p.name, "before", "--wait-timeout", "2m"],
        &["compose", "rollback", &p.name, "nope"],
        &["compose", "list", &p.name, "--include-safety-snapshots"],
    ]);
    assert_eq!(p.exec("app", "cat /data/state.txt"), "one\n");
    // The project's name and folder are made unique per run, and the stored records hold
    // them, so what a save reads and stores varies in size too.
    let text = (before + &json)
        .replace(&p.name, "[PROJECT]")
        .replace(&p.dir.path().canonicalize().unwrap().display().to_string(), "[PROJECT-DIR]");
    let text =
        regex::Regex::new(r#"("(read|new|stored)_bytes": )\d+"#).unwrap().replace_all(&text, "${1}[BYTES]");
    let text = regex::Regex::new(r"read [\d.]+ \w+, stored [\d.]+ \w+ new")
        .unwrap()
        .replace_all(&text, "read [BYTES], stored [BYTES] new");
    insta::with_settings!({omit_expression => true}, {
        insta::assert_snapshot!("compose_save_list_rollback", text);
    });
    // The list's short ids are accepted back.
    let human = env.ok(&["compose", "list", &p.name]);
    let short = human.lines().nth(1).and_then(|l| l.split_whitespace().next()).expect("a row").to_owned();
    assert!(short.len() < 36, "{human}");
    let back = env.json(&["compose", "rollback", &p.name, &short, "--wait-timeout", "2m"]);
    assert_eq!(back["rolled_back_to"]["name"], "after", "{back}");
}
