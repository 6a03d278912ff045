//! Transcript snapshots driven through the real binary, with session files written to the real
//! Pi and Claude Code formats and placed where the agents keep them, in a temporary HOME:
//! the `cairn transcript` commands (`cli`, `save_args`, `places`), the agent permissions of
//! the pi profile (`agent`), the pi profile of `cairn mcp` (`mcp`) and `transcript:` targets in
//! cairn's own MCP tools (`targets`), the last two through a stdio client (`client`).

#[path = "../common/mod.rs"]
mod common;

mod agent;
mod cli;
mod client;
mod drop_in;
mod mcp;
mod outputs;
mod pi_contract;
mod places;
mod save_args;
mod targets;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use cairn_transcript::{ActivePath, Transcript};
use serde_json::Value;

pub(crate) use common::TestEnv;

/// The format crate's fixtures: a branched Pi v3 tree with a branch summary and a compaction,
/// a Pi v1 linear file with a compaction, a Pi v2 file, a Claude Code file with sidechains,
/// and damaged files.
pub(crate) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cairn-transcript/tests/fixtures").join(name)
}

/// What the transcript tests add to the shared harness: where the agents keep a project's
/// session files, and placing fixtures there.
pub(crate) trait Agents {
    fn cwd(&self) -> String;
    fn pi_dir(&self) -> PathBuf;
    fn claude_dir(&self) -> PathBuf;
    fn place(&self, fixture_name: &str, file_name: &str) -> PathBuf;
    fn listed(&self) -> Vec<Value>;
}

impl Agents for TestEnv {
    /// The project directory the commands run in.
    fn cwd(&self) -> String {
        self.work().to_string_lossy().into_owned()
    }

    fn pi_dir(&self) -> PathBuf {
        self.home().join(".pi/agent/sessions").join(cairn_transcript::pi_dir_name(&self.cwd()))
    }

    fn claude_dir(&self) -> PathBuf {
        self.home().join(".claude/projects").join(cairn_transcript::claude_dir_name(&self.cwd()))
    }

    /// Copies a fixture into the agent's directory for the project, as the agent would keep it.
    fn place(&self, fixture_name: &str, file_name: &str) -> PathBuf {
        let dir = if fixture_name.starts_with("claude") { self.claude_dir() } else { self.pi_dir() };
        std::fs::create_dir_all(&dir).unwrap();
        let dest = dir.join(file_name);
        std::fs::copy(fixture(fixture_name), &dest).unwrap();
        dest
    }

    fn listed(&self) -> Vec<Value> {
        self.json(&["transcript", "list"])["snapshots"].as_array().unwrap().clone()
    }
}

pub(crate) fn active(file: &Path) -> ActivePath {
    Transcript::read(file).unwrap().active_path()
}

pub(crate) fn ids(path: &ActivePath) -> Vec<Option<String>> {
    path.entries.iter().map(|e| e.id.clone()).collect()
}

pub(crate) fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() { found.extend(files_under(&path)) } else { found.push(path) }
    }
    found
}

pub(crate) fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The parent links of a path, walked from the leaf back to the root.
pub(crate) fn leaf_to_root(path: &ActivePath) -> Vec<(String, Option<String>)> {
    path.entries.iter().rev().filter_map(|e| Some((e.id.clone()?, e.parent_id.clone()))).collect()
}
