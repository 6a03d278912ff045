//! A test environment for driving the real `cairn` binary: a temp HOME and store, a cleared
//! environment, and filters that make ids, times and temp paths stable for snapshots.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// One isolated run of cairn: its own HOME, store and work directory.
pub struct TestEnv {
    pub dir: tempfile::TempDir,
}

impl TestEnv {
    pub fn new() -> Self {
        let dir = tempfile::Builder::new().prefix("cairn-test-").tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("home")).expect("home");
        std::fs::create_dir_all(dir.path().join("work")).expect("work");
        Self { dir }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn home(&self) -> PathBuf {
        self.root().join("home")
    }

    pub fn store(&self) -> PathBuf {
        self.root().join("store")
    }

    /// The default work tree captured by the tests.
    pub fn work(&self) -> PathBuf {
        self.root().join("work")
    }

    /// `cairn --store <store> ARGS` with a cleared environment, run in the work tree.
    pub fn cairn(&self, args: &[&str]) -> Command {
        let mut cmd = Command::cargo_bin("cairn").expect("the cairn binary");
        cmd.env_clear()
            .env("HOME", self.home())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("NO_COLOR", "1")
            .current_dir(self.work())
            .arg("--store")
            .arg(self.store())
            .args(args);
        cmd
    }

    /// The same command as [`TestEnv::cairn`], as a std process that can be spawned and killed.
    pub fn process(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("cairn"));
        cmd.env_clear()
            .env("HOME", self.home())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(self.work())
            .arg("--store")
            .arg(self.store())
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        cmd
    }

    /// Runs cairn, expects success, returns stdout.
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

    /// Runs cairn with `--json`, expects success, returns the parsed result.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let text = self.ok(&all);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }

    /// Runs cairn, expects failure with `code`, returns stderr.
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

    /// insta settings that replace temp paths, UUIDs and times with stable tokens.
    pub fn filters(&self) -> insta::Settings {
        let mut settings = insta::Settings::clone_current();
        settings.add_filter(&regex_escape(&self.root().display().to_string()), "[TMP]");
        settings.add_filter(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", "[ID]");
        settings.add_filter(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?Z?", "[TIME]");
        settings.add_filter(r"\b\d+(\.\d+)?(ms|s)\b", "[DURATION]");
        settings
    }
}

fn regex_escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Everything about one entry that a round trip must keep.
#[derive(Debug, PartialEq, Eq)]
pub enum Entry {
    File { mode: u32, mtime_ns: i64, content_hash: String, links: u64 },
    Dir { mode: u32 },
    Symlink { target: PathBuf },
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
