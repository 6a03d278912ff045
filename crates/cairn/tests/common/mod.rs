//! A test environment for driving the real `cairn` binary: a temp HOME and store, a cleared
//! environment, and filters that make ids, times and temp paths stable for snapshots.

#![allow(dead_code)]

mod normalize;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
pub use normalize::Normalizer;

/// One isolated run of cairn: its own HOME, store and work directory, and an environment
/// cleared of everything but what the test sets.
pub struct TestEnv {
    _dir: tempfile::TempDir,
    root: PathBuf,
    vars: Vec<(OsString, OsString)>,
    normalizer: Normalizer,
    /// What `--store` names, when not the directory [`TestEnv::store`] (a remote store).
    store_arg: Option<OsString>,
}

/// What one run of the binary printed, and how it ended.
#[must_use = "a run's exit code and output are what the test is about: assert on them"]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Default for TestEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl TestEnv {
    pub fn new() -> Self {
        let dir = tempfile::Builder::new().prefix("cairn-test-").tempdir().expect("temp dir");
        // Canonical, so the paths the binary prints (it canonicalizes targets) are this one.
        let root = dir.path().canonicalize().expect("canonical temp dir");
        std::fs::create_dir_all(root.join("home")).expect("home");
        std::fs::create_dir_all(root.join("work")).expect("work");
        let path = std::env::var_os("PATH").unwrap_or_default();
        let vars = vec![("PATH".into(), path), ("NO_COLOR".into(), "1".into())];
        let normalizer = Normalizer::new(&root);
        Self { _dir: dir, root, vars, normalizer, store_arg: None }
    }

    /// Sets `key` for every command this environment runs (the environment is otherwise
    /// cleared, except `HOME`, `PATH` and `NO_COLOR`).
    pub fn with_var(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        let key = key.into();
        self.vars.retain(|(k, _)| *k != key);
        self.vars.push((key, value.into()));
        self
    }

    /// Passes `store` (an `s3://…` address) as `--store` instead of [`TestEnv::store`].
    pub fn with_store(mut self, store: impl Into<OsString>) -> Self {
        self.store_arg = Some(store.into());
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    pub fn store(&self) -> PathBuf {
        self.root.join("store")
    }

    /// The default work tree captured by the tests, and where every command runs.
    pub fn work(&self) -> PathBuf {
        self.root.join("work")
    }

    /// `cairn --store <store> ARGS` with a cleared environment, run in the work tree.
    pub fn cairn(&self, args: &[&str]) -> Command {
        Command::from_std(self.command(args))
    }

    /// The same command as [`TestEnv::cairn`], as a std process that can be spawned and killed,
    /// with its output discarded.
    pub fn process(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = self.command(args);
        cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
        cmd
    }

    /// The same command as [`TestEnv::cairn`], as a std process with its output inherited.
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = self.without_store_flag(&[]);
        let store = self.store_arg.clone().unwrap_or_else(|| self.store().into_os_string());
        cmd.arg("--store").arg(store).args(args);
        cmd
    }

    /// `cairn ARGS` without `--store`, so the store is found from the environment (by default
    /// `$HOME/.local/share/cairn`).
    pub fn without_store_flag(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("cairn"));
        cmd.env_clear().env("HOME", self.home()).envs(self.vars.iter().map(|(k, v)| (k, v)));
        cmd.current_dir(self.work()).args(args);
        cmd
    }

    /// `cairn ARGS` with `--json` output under `umask`, as a shell sets it for the commands it
    /// runs; it must succeed.
    pub fn json_under_umask(&self, umask: &str, args: &[&str]) -> serde_json::Value {
        let cairn = self.command(args);
        let mut sh = std::process::Command::new("sh");
        sh.arg("-c").arg(format!("umask {umask} && exec \"$0\" \"$@\"")).arg(cairn.get_program());
        sh.args(cairn.get_args()).env_clear().current_dir(self.work());
        for (key, value) in cairn.get_envs() {
            if let Some(value) = value {
                sh.env(key, value);
            }
        }
        let out = sh.output().expect("run cairn under sh");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("json")
    }

    /// Runs cairn and returns what it printed and its exit code, whatever it is.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_in(&self.work(), args)
    }

    /// [`TestEnv::run`] with `dir` as the current directory instead of the work tree.
    pub fn run_in(&self, dir: &Path, args: &[&str]) -> Run {
        let out = self.cairn(args).current_dir(dir).output().expect("run cairn");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Runs each command in turn and renders them all for a snapshot: the command line, the
    /// exit code, stdout and stderr, with temp paths, ids, times and durations replaced by
    /// stable tokens.
    #[must_use = "the exit codes are not checked: snapshot the transcript"]
    pub fn transcript(&self, commands: &[&[&str]]) -> String {
        self.transcript_in(&self.work(), commands)
    }

    /// [`TestEnv::transcript`] of commands run with `dir` as the current directory.
    #[must_use = "the exit codes are not checked: snapshot the transcript"]
    pub fn transcript_in(&self, dir: &Path, commands: &[&[&str]]) -> String {
        let mut out = String::new();
        for args in commands {
            let run = self.run_in(dir, args);
            let mut block = format!("$ cairn {}\nexit: {}\n", args.join(" "), run.code);
            for (name, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
                if text.is_empty() {
                    block.push_str(&format!("--- {name}: empty\n"));
                } else {
                    block.push_str(&format!("--- {name}\n{text}"));
                    if !text.ends_with('\n') {
                        block.push_str("\n[no newline at end]\n");
                    }
                }
            }
            block.push('\n');
            // Run by run, so a short id is matched only against the ids printed before it.
            out.push_str(&self.normalize(&block));
        }
        out
    }

    /// Replaces what differs from run to run with stable tokens (see [`Normalizer`]).
    #[must_use = "normalizing returns the text, it does not change it in place"]
    pub fn normalize(&self, text: &str) -> String {
        self.normalizer.normalize(text)
    }

    /// Runs cairn, expects success, returns stdout.
    ///
    /// Not `#[must_use]`: most callers run a command only for its effect (a save before a
    /// restore), and success is already asserted here.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.cairn(args).output().expect("run cairn");
        assert!(
            out.status.success(),
            "cairn {args:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs cairn with `--json`, expects success, returns the parsed result (not `#[must_use]`,
    /// like [`TestEnv::ok`]).
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let text = self.ok(&all);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }

    /// Runs cairn with `--json` whatever its exit code (a `check` that finds problems exits 1),
    /// returns the parsed result.
    #[must_use = "the exit code is not checked: assert on the result"]
    pub fn json_any(&self, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let run = self.run(&all);
        serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {} (stderr {})", run.stdout, run.stderr))
    }

    /// Runs cairn, expects failure with `code`, returns stderr.
    #[must_use = "a refusal's message is its contract: snapshot it"]
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        let out = self.cairn(args).output().expect("run cairn");
        assert_eq!(
            out.status.code(),
            Some(code),
            "cairn {args:?}: stdout {} stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// insta settings with the same replacements as [`TestEnv::normalize`] for the temp root,
    /// UUIDs, times and durations, for snapshots of text not produced by [`TestEnv::transcript`].
    pub fn filters(&self) -> insta::Settings {
        let mut settings = insta::Settings::clone_current();
        settings.add_filter(&regex::escape(&self.root.display().to_string()), "[TMP]");
        settings.add_filter(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", "[ID]");
        settings.add_filter(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?Z?", "[TIME]");
        settings.add_filter(r"\b\d+(\.\d+)?(ms|s)\b", "[DURATION]");
        settings
    }

    /// Writes `content` to `rel` below the work tree, creating parents; returns its path.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        write(&self.work(), rel, content);
        self.work().join(rel)
    }
}

/// Snapshots the commands' whole outputs (see [`TestEnv::transcript`]) under `name`.
#[macro_export]
macro_rules! assert_cli {
    ($env:expr, $name:expr, [$($args:expr),+ $(,)?]) => {
        insta::with_settings!({omit_expression => true}, {
            insta::assert_snapshot!($name, $env.transcript(&[$(&$args[..]),+]))
        })
    };
}

/// A small deterministic generator (xorshift), so a seed replays the same run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Everything about one entry that a round trip must keep.
#[derive(Debug, PartialEq, Eq)]
pub enum Entry {
    File { mode: u32, mtime_ns: i64, content_hash: String, links: u64 },
    Dir { mode: u32 },
    Symlink { target: PathBuf },
}

/// Line `n` of the main chain of a Claude Code 2.0 session `session` of the work tree: a user
/// message as text, an assistant message as a text block, each the child of line `n - 1`.
pub fn claude_line(env: &TestEnv, session: &str, kind: &str, n: u32, text: &str) -> String {
    use serde_json::json;
    let uuid = format!("00000000-0000-4000-8000-{n:012}");
    let parent = (n > 1).then(|| format!("00000000-0000-4000-8000-{:012}", n - 1));
    let content = if kind == "user" { json!(text) } else { json!([{"type": "text", "text": text}]) };
    let line = json!({"parentUuid": parent, "isSidechain": false, "userType": "external",
        "cwd": env.work().display().to_string(), "sessionId": session, "version": "2.0.14", "type": kind,
        "message": {"role": kind, "content": content}, "uuid": uuid,
        "timestamp": format!("2025-10-01T12:00:{n:02}.000Z")});
    format!("{line}\n")
}

/// The turns `cairn rewind --json` listed, as (number, agent session, prompt).
pub fn turn_rows(listed: &serde_json::Value) -> Vec<(u64, &str, &str)> {
    listed["turns"]
        .as_array()
        .expect("a turn list")
        .iter()
        .map(|t| {
            (
                t["number"].as_u64().unwrap(),
                t["agent_session"].as_str().unwrap(),
                t["prompt"].as_str().unwrap(),
            )
        })
        .collect()
}

/// Each entry's kind, mode and content, without times: what a rewind puts back (a file it
/// rewrites gets the time of the rewind, as any restore gives it).
pub fn contents(root: &Path) -> Vec<(PathBuf, String)> {
    describe(root)
        .into_iter()
        .map(|(path, entry)| {
            let what = match entry {
                Entry::File { mode, content_hash, .. } => format!("file {mode:o} {content_hash}"),
                other => format!("{other:?}"),
            };
            (path, what)
        })
        .collect()
}

/// Describes a tree: relative path → entry, with contents digested.
pub fn describe(root: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Entry>) {
    let mut entries: Vec<_> =
        std::fs::read_dir(dir).expect("read dir").map(|e| e.expect("entry").path()).collect();
    entries.sort();
    for path in entries {
        let meta = std::fs::symlink_metadata(&path).expect("lstat");
        let rel = path.strip_prefix(root).expect("inside").to_path_buf();
        let ft = meta.file_type();
        if ft.is_symlink() {
            out.insert(rel, Entry::Symlink { target: std::fs::read_link(&path).expect("readlink") });
        } else if ft.is_dir() {
            out.insert(rel, Entry::Dir { mode: meta.mode() & 0o7777 });
            walk(root, &path, out);
        } else if ft.is_file() {
            let bytes = std::fs::read(&path).expect("read");
            out.insert(
                rel,
                Entry::File {
                    mode: meta.mode() & 0o7777,
                    mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
                    content_hash: digest(&bytes),
                    links: meta.nlink(),
                },
            );
        }
    }
}

fn digest(bytes: &[u8]) -> String {
    // A cheap stable digest is enough to compare contents.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    format!("{h:016x}-{}", bytes.len())
}

/// Writes `content` to `root/rel`, creating parents.
pub fn write(root: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create parents");
    }
    std::fs::write(&path, content).expect("write");
}

/// `len` bytes of incompressible, deterministic noise.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Every directory and file below `root` (not `root` itself) with its permission bits, for
/// checking that a store keeps everything private.
pub fn permissions_below(root: &Path) -> Vec<(PathBuf, bool, u32)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            let meta = std::fs::symlink_metadata(&path).expect("lstat");
            if meta.is_dir() {
                stack.push(path.clone());
            }
            out.push((path, meta.is_dir(), meta.mode() & 0o7777));
        }
    }
    out.sort();
    out
}

/// The names of the entries of `dir` (empty when it does not exist).
pub fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|it| it.map(|e| e.expect("entry").file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// `docker compose` when the plugin is there, else `docker-compose`.
pub fn compose_cli() -> std::process::Command {
    let plugin = std::process::Command::new("docker").args(["compose", "version"]).output();
    if plugin.is_ok_and(|o| o.status.success()) {
        let mut c = std::process::Command::new("docker");
        c.arg("compose");
        c
    } else {
        std::process::Command::new("docker-compose")
    }
}

/// Polls `check` every 50 ms for up to 60 s (a loaded two-core machine runs the background
/// work it waits for slowly), failing the test with `what` after that.
pub fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !check() {
        assert!(std::time::Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A machine of its own (HOME, work tree, catalog cache) using the store at `address`
/// (`s3://BUCKET/PREFIX`) on `moto`, with the password that unlocks (and on first use makes)
/// the encrypted store.
pub fn machine_on(moto: &cairn_test_support::Moto, address: &str) -> TestEnv {
    let env = TestEnv::new().with_store(address).with_var("CAIRN_PASSWORD", "the fleet's password");
    moto.env().into_iter().fold(env, |env, (k, v)| env.with_var(k, v))
}

/// A Claude Code session in any directory, driven through `cairn hook claude-code` turn by
/// turn as Claude Code does: the prompt's hook, then the transcript growing with the prompt,
/// each edit as a `Write` tool call naming the file's absolute path with its hook and result,
/// the answer, and the turn's end.
pub struct ClaudeSession<'a> {
    pub env: &'a TestEnv,
    pub dir: PathBuf,
    pub session: String,
    pub transcript: PathBuf,
    /// What tells this session's entry ids from another's in the same test.
    tag: u16,
    line: u32,
    parent: Option<String>,
}

impl<'a> ClaudeSession<'a> {
    /// A new session of `dir`, its transcript where Claude Code keeps it under `env`'s HOME.
    pub fn new(env: &'a TestEnv, dir: &Path, session: &str, tag: u16) -> Self {
        let projects = env.home().join(".claude/projects");
        let folder = projects.join(cairn_transcript::claude_dir_name(&dir.display().to_string()));
        std::fs::create_dir_all(&folder).unwrap();
        let transcript = folder.join(format!("{session}.jsonl"));
        Self::resumed(env, dir, session, transcript, tag)
    }

    /// A session whose transcript already exists (a resumed one): it goes on after its last entry.
    pub fn resumed(env: &'a TestEnv, dir: &Path, session: &str, transcript: PathBuf, tag: u16) -> Self {
        let text = std::fs::read_to_string(&transcript).unwrap_or_default();
        let parent = text.lines().rev().find_map(|l| {
            serde_json::from_str::<serde_json::Value>(l).ok()?["uuid"].as_str().map(str::to_owned)
        });
        let dir = dir.to_path_buf();
        Self { env, dir, session: session.to_owned(), transcript, tag, line: 0, parent }
    }

    pub fn hook(&self, name: &str, extra: serde_json::Value) {
        let mut event = serde_json::json!({"session_id": self.session,
            "transcript_path": self.transcript.display().to_string(), "cwd": self.dir.display().to_string(),
            "permission_mode": "default", "hook_event_name": name});
        for (k, v) in extra.as_object().unwrap() {
            event[k] = v.clone();
        }
        let out = self.env.cairn(&["hook", "claude-code"]).write_stdin(event.to_string()).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    /// Appends one entry of `kind` whose message content is `content`.
    pub fn append(&mut self, kind: &str, content: serde_json::Value) {
        use std::io::Write;
        self.line += 1;
        let uuid = format!("00000000-0000-4000-{:04x}-{:012}", 0x8000 | self.tag, self.line);
        let line = serde_json::json!({"parentUuid": self.parent, "isSidechain": false, "userType": "external",
            "cwd": self.dir.display().to_string(), "sessionId": self.session, "version": "2.0.14", "type": kind,
            "message": {"role": kind, "content": content}, "uuid": uuid,
            "timestamp": format!("2025-10-01T12:{:02}:{:02}.000Z", self.tag % 60, self.line % 60)});
        self.parent = Some(uuid);
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&self.transcript).unwrap();
        file.write_all(format!("{line}\n").as_bytes()).unwrap();
    }

    /// One turn that writes each `(relative path, content)`.
    pub fn turn(&mut self, prompt: &str, edits: &[(&str, &str)]) {
        use serde_json::json;
        self.hook("UserPromptSubmit", json!({"prompt": prompt}));
        self.append("user", json!(prompt));
        for (n, (rel, content)) in edits.iter().enumerate() {
            // Files written in the clock tick a scan starts in are read again (the racy rule).
            std::thread::sleep(std::time::Duration::from_millis(30));
            let file = self.dir.join(rel).display().to_string();
            let id = format!("toolu_{}_{n}", self.line);
            self.append(
                "assistant",
                json!([{"type": "tool_use", "id": id, "name": "Write",
                    "input": {"file_path": file, "content": content}}]),
            );
            write(&self.dir, rel, content);
            self.hook("PostToolUse", json!({"tool_name": "Write", "tool_input": {"file_path": file}}));
            self.append(
                "user",
                json!([{"type": "tool_result", "tool_use_id": id,
                    "content": format!("File created successfully at: {file}")}]),
            );
        }
        self.append("assistant", json!([{"type": "text", "text": "done"}]));
        self.hook("Stop", json!({"stop_hook_active": false}));
    }
}
