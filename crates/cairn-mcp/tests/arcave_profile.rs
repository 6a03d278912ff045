//! The arcave profile through an MCP client: every tool and every refusal wording, against a
//! real compose project on the machine's Docker engine.

mod common;

use std::os::unix::process::CommandExt;
use std::process::Command;

use common::Harness;
use serde_json::json;

const COMPOSE: &str = "version: \"3.7\"\nservices:\n  app:\n    image: cairn-test/busybox:1\n    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n    volumes:\n      - data:/data\nvolumes:\n  data:\n";

/// A one-service project, taken down with its volumes on drop.
struct Project {
    name: String,
    dir: tempfile::TempDir,
    v1: bool,
}

fn compose() -> Command {
    let plugin = Command::new("docker").args(["compose", "version"]).output();
    if plugin.is_ok_and(|o| o.status.success()) {
        let mut c = Command::new("docker");
        c.arg("compose");
        c
    } else {
        Command::new("docker-compose")
    }
}

impl Project {
    fn up() -> Self {
        Self::start(format!("cairnarcave{}", std::process::id()), false)
    }

    /// Started by docker-compose v1, which records its config files relative to its directory.
    fn up_v1(name: &str) -> Self {
        Self::start(format!("cairndropin{name}{}", std::process::id()), true)
    }

    fn cli(&self) -> Command {
        if self.v1 { Command::new("docker-compose") } else { compose() }
    }

    fn run(&self, args: &[&str]) {
        let out =
            self.cli().args(["-p", &self.name]).args(args).current_dir(self.dir.path()).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn start(name: String, v1: bool) -> Self {
        let docker = Command::new("docker").arg("version").output();
        assert!(
            docker.is_ok_and(|o| o.status.success()),
            "these tests need a running Docker engine, and none answers"
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("docker-compose.yml"), COMPOSE).unwrap();
        let project = Self { name, dir, v1 };
        project.run(&["up", "-d"]);
        project
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = self
            .cli()
            .args(["-p", &self.name, "down", "-v", "-t", "1"])
            .current_dir(self.dir.path())
            .output();
    }
}

async fn arcave(pinned: Option<&str>) -> Harness {
    arcave_allowing(pinned, &["save", "restore", "remove"]).await
}

async fn arcave_allowing(pinned: Option<&str>, allow: &[&str]) -> Harness {
    Harness::start_with(|o| {
        o.profile = "arcave".into();
        o.pinned_session = pinned.map(str::to_owned);
        o.allow = allow.iter().map(|s| s.to_string()).collect();
    })
    .await
}

#[tokio::test]
async fn every_arcave_tool_works_with_its_shapes_and_refusals() {
    let p = Project::up();
    let h = arcave(None).await;
    let tools = h.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "savepoint_create",
            "savepoint_list",
            "savepoint_remove",
            "rollback",
            "session_list",
            "session_create",
            "session_delete",
            "session_current",
            "session_set",
            "session_unset"
        ]
    );

    let bare = h.err("savepoint_create", json!({"project": p.name, "wait_timeout": "120"})).await;
    assert!(bare.contains("wait_timeout \"120\": want a unit-bearing value like 2m, 90s or 1h30m"), "{bare}");

    let sp = h.ok("savepoint_create", json!({"project": p.name, "name": "sp1", "wait_timeout": "1m"})).await;
    for key in ["id", "name", "created_at", "stats", "writable_layers", "images", "spec", "not_covered"] {
        assert!(sp.get(key).is_some(), "{key} missing from {sp}");
    }
    assert_eq!(sp["spec"]["format"], "compose-yaml");
    let id = sp["id"].as_str().unwrap().to_owned();

    let list = h.ok("savepoint_list", json!({"project": p.name})).await;
    assert_eq!(list["savepoints"][0]["id"], id.as_str());
    let bad_sort = h.err("savepoint_list", json!({"project": p.name, "sort": "up"})).await;
    assert!(bad_sort.contains("invalid sort"), "{bad_sort}");

    let back = h.ok("rollback", json!({"project": p.name, "ref": "sp1"})).await;
    assert_eq!(back["rolled_back_to"]["id"], id.as_str());
    assert_eq!(back["restored"][0]["object_id"], format!("volume-named-{}_data", p.name));

    let both = h.err("savepoint_remove", json!({"project": p.name, "ids": [id], "retain_recent": 1})).await;
    assert!(
        both.contains("cannot combine savepoint ids with retain-recent/retain-for/before-date"),
        "{both}"
    );
    let neither = h.err("savepoint_remove", json!({"project": p.name})).await;
    assert!(
        neither
            .contains("specify savepoint ids, or at least one of retain-recent, retain-for or before-date")
    );
    // A bare date is midnight UTC; words are not a date.
    let bad_date = h.err("savepoint_remove", json!({"project": p.name, "before_date": "June 1st"})).await;
    assert!(bad_date.contains("invalid --before-date \"June 1st\""), "{bad_date}");
    let dry = h.ok("savepoint_remove", json!({"project": p.name, "ids": [id], "dry_run": true})).await;
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["removed"][0]["id"], id.as_str());

    // Sessions: a fork holds the savepoint, the pointer moves, and delete reports what it freed.
    let fork = h.ok("session_create", json!({"name": "agent-work", "from": "baseline"})).await;
    assert_eq!(fork["from"]["session"], "00000000-0000-0000-0000-000000000001");
    h.ok("session_set", json!({"session": "agent-work"})).await;
    assert_eq!(h.ok("session_current", json!({})).await["name"], "agent-work");
    let in_fork = h.ok("savepoint_list", json!({"project": p.name})).await;
    assert_eq!(in_fork["savepoints"][0]["id"], id.as_str());
    let sessions = h.ok("session_list", json!({})).await;
    let work =
        sessions["sessions"].as_array().unwrap().iter().find(|s| s["name"] == "agent-work").unwrap().clone();
    assert_eq!(work["current"], true);
    assert_eq!(work["savepoint_count"], 1);
    assert_eq!(work["compose_projects"], json!([p.name]));
    assert_eq!(h.ok("session_unset", json!({})).await["name"], "baseline");
    let deleted = h.ok("session_delete", json!({"session": "agent-work"})).await;
    assert_eq!(deleted["deleted"], true);
    assert!(deleted["freed_bytes"].is_u64(), "{deleted}");
    let removed = h.ok("savepoint_remove", json!({"project": p.name, "retain_recent": 0})).await;
    assert_eq!(removed["removed"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_pinned_server_refuses_to_move_the_current_session_in_arcave_words() {
    let h = arcave(Some("baseline")).await;
    for tool in ["session_set", "session_unset"] {
        let args = if tool == "session_set" { json!({"session": "baseline"}) } else { json!({}) };
        let err = h.err(tool, args).await;
        assert!(
            err.contains("this server is pinned to session \"00000000-0000-0000-0000-000000000001\" by --session or ARCAVE_SESSION, which outranks the current session: pass session on each call, or restart the server without the pin"),
            "{err}"
        );
    }
}

/// Runs `sh -c SCRIPT` in the project's one container.
fn exec(project: &str, script: &str) {
    let ps = Command::new("docker")
        .args(["ps", "-q", "--filter", &format!("label=com.docker.compose.project={project}")])
        .output()
        .unwrap();
    let id = String::from_utf8_lossy(&ps.stdout).trim().to_owned();
    let out = Command::new("docker").args(["exec", &id, "sh", "-c", script]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test]
async fn arcave_reads_v1_relative_config_files_from_the_project_dir() {
    let p = Project::up_v1("cfg");
    exec(&p.name, "echo kept > /data/file");
    // The server's working directory is this crate's, which has no compose file.
    let cwd = std::env::current_dir().unwrap();
    assert!(!cwd.join("docker-compose.yml").exists());
    let h = arcave(None).await;
    let sp = h.ok("savepoint_create", json!({"project": p.name, "name": "v1"})).await;
    let config = p.dir.path().join("docker-compose.yml").to_string_lossy().into_owned();
    assert_eq!(
        sp["spec"]["config_files"],
        json!([{"path": config, "bytes": COMPOSE.len(), "captured": true}]),
        "{sp}"
    );
    assert_eq!(sp["not_covered"]["config_files"], json!([]));

    // Item 2: a rollback of a project with no containers reports what it wrote.
    p.run(&["down", "-v", "-t", "1"]);
    let back = h.ok("rollback", json!({"project": p.name, "ref": "v1"})).await;
    let restored = &back["restored"][0];
    assert_eq!(restored["object_id"], format!("volume-named-{}_data", p.name));
    assert!(
        restored["files_written"].as_u64() >= Some(1) && restored["changes"].as_u64() >= Some(1),
        "{back}"
    );
    assert!(
        !cwd.join("docker-compose.yml").exists(),
        "a compose file was written into the server's directory"
    );
    exec(&p.name, "test \"$(cat /data/file)\" = kept");

    // A config file that cannot be read is listed, never captured as empty.
    std::fs::remove_file(p.dir.path().join("docker-compose.yml")).unwrap();
    let sp = h.ok("savepoint_create", json!({"project": p.name})).await;
    assert_eq!(sp["spec"]["config_files"][0]["captured"], false, "{sp}");
    assert_eq!(sp["not_covered"]["config_files"], json!([{"path": config, "reason": "missing"}]));
    std::fs::write(p.dir.path().join("docker-compose.yml"), COMPOSE).unwrap();
}

#[tokio::test]
async fn arcave_savepoint_remove_validates_first_and_dry_runs_without_permission() {
    let h = arcave_allowing(None, &[]).await;
    let project = "cairndropinnoproject";
    let neither = h.err("savepoint_remove", json!({"project": project})).await;
    assert!(
        neither
            .contains("specify savepoint ids, or at least one of retain-recent, retain-for or before-date"),
        "{neither}"
    );
    let both = h.err("savepoint_remove", json!({"project": project, "ids": ["x"], "retain_recent": 1})).await;
    assert!(
        both.contains("cannot combine savepoint ids with retain-recent/retain-for/before-date"),
        "{both}"
    );
    let dry =
        h.ok("savepoint_remove", json!({"project": project, "retain_recent": 0, "dry_run": true})).await;
    assert_eq!(dry, json!({"dry_run": true, "removed": []}));
    // arcave lets agents remove without asking; a user's `cairn agent deny remove` still holds.
    let removed = h.ok("savepoint_remove", json!({"project": project, "retain_recent": 0})).await;
    assert_eq!(removed, json!({"dry_run": false, "removed": []}));
    let mut store = cairn_lib::Repository::open(&h.dir.path().join("store")).unwrap();
    store.agent_deny(&[cairn_lib::ops::permissions::Capability::Remove]).unwrap();
    let refused = h.err("savepoint_remove", json!({"project": project, "retain_recent": 0})).await;
    assert!(refused.contains("allow remove"), "{refused}");
}

/// Issue 40: an agent written for arcave rolls back and removes savepoints with no prior
/// `cairn agent allow`, a taken name is refused without advice to pass an argument arcave's
/// tool lacks, and a server started with `--deny` refuses what it denies.
#[tokio::test]
async fn an_arcave_agent_rolls_back_and_removes_with_no_prior_allow() {
    let p = Project::up();
    let h = arcave_allowing(None, &[]).await;
    let sp = h.ok("savepoint_create", json!({"project": p.name, "name": "sp1"})).await;
    let taken = h.err("savepoint_create", json!({"project": p.name, "name": "sp1"})).await;
    assert_eq!(
        taken,
        format!("a savepoint named \"sp1\" already exists for project {}; pick another name", p.name)
    );
    let back = h.ok("rollback", json!({"project": p.name, "ref": "sp1"})).await;
    assert_eq!(back["rolled_back_to"]["id"], sp["id"]);
    let removed = h.ok("savepoint_remove", json!({"project": p.name, "ids": [sp["id"]]})).await;
    assert_eq!(removed["removed"][0]["id"], sp["id"]);

    let denied = Harness::start_with(|o| {
        o.profile = "arcave".into();
        o.deny = vec!["restore".into()];
    })
    .await;
    let refused = denied.err("rollback", json!({"project": p.name, "ref": "latest"})).await;
    assert_eq!(
        refused,
        "restoring snapshots is denied to agents on this server (the user started it denying restore); ask the user to restart it without denying that"
    );
}

#[tokio::test]
async fn arcave_lock_refusal_uses_the_contract_sentence() {
    let p = Project::up_v1("lock");
    let h = arcave(None).await;
    h.ok("savepoint_create", json!({"project": p.name})).await;
    // Hold every target lock of the store, as another run would.
    let locks: Vec<std::path::PathBuf> = std::fs::read_dir(h.dir.path().join("store/locks"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n != "store.lock"))
        .collect();
    assert!(!locks.is_empty());
    let mut holders: Vec<std::process::Child> = locks
        .iter()
        .map(|l| {
            let mut c = Command::new("flock");
            // Its own process group, so the sleep under it is ended with it.
            c.arg("-x").arg(l).args(["sleep", "120"]).process_group(0);
            c.spawn().unwrap()
        })
        .collect();
    // flock takes the lock before it runs sleep; wait until it does.
    for l in &locks {
        while Command::new("flock").arg("-n").arg(l).arg("true").status().unwrap().success() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    let refused = h.err("savepoint_create", json!({"project": p.name})).await;
    for c in &mut holders {
        let _ = Command::new("kill").args(["--", &format!("-{}", c.id())]).status();
        let _ = c.wait();
    }
    assert_eq!(
        refused,
        "another arcave command is already running in this project: a session fork holds the lock for its whole copy, as does a savepoint or rollback for its run; retry when it finishes"
    );
}
