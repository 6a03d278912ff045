//! Where each agent keeps its session files, and finding the newest one for a directory.
//!
//! Pi: `<pi sessions>/--<cwd>--/<timestamp>_<uuid>.jsonl`, where `<cwd>` loses its leading
//! `/` and has every `/`, `\` and `:` replaced by `-` (`/home/a/proj` → `--home-a-proj--`).
//!
//! Claude Code: `<claude projects>/<cwd>/<sessionId>.jsonl`, where every character of the cwd
//! that is not an ASCII letter or digit becomes `-` (`/home/a/my_proj.v2` →
//! `-home-a-my-proj-v2`). Claude Code does this per UTF-16 unit, so a character outside the
//! Basic Multilingual Plane becomes two dashes; that is matched here.
//!
//! A name longer than 200 characters is cut to 200 and followed by `-` and a base-36 hash of
//! the unsanitised path (Claude Code 2.1.88). The hash depends on the runtime Claude Code runs
//! under: its Node build (npm `cli.js`, the Agent SDK) uses a 32-bit ×31 string hash, which is
//! what [`claude_dir_name`] computes; its native (Bun) build uses `Bun.hash`, which cairn does
//! not reproduce. Claude Code itself therefore looks such a project up by the 200-character
//! prefix followed by `-`, and so does cairn: a session is written into the one existing
//! directory with that prefix, else into the Node-build name, and sessions are read from every
//! directory with that prefix.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::error::{Result, TranscriptError};
use crate::model::Format;

/// Length past which Claude Code shortens a project directory name.
const CLAUDE_NAME_LIMIT: usize = 200;

/// The directories the agents keep their sessions in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentDirs {
    /// Pi's sessions directory (by default `~/.pi/agent/sessions`).
    pub pi_sessions: PathBuf,
    /// Claude Code's projects directory (by default `~/.claude/projects`).
    pub claude_projects: PathBuf,
    /// Gemini CLI's user directory (by default `~/.gemini`), which holds each project's
    /// `tmp/<project>/chats/`; `None` leaves Gemini CLI's sessions out.
    #[serde(default)]
    pub gemini: Option<PathBuf>,
    /// Codex CLI's home (`CODEX_HOME`, by default `~/.codex`), which holds its rollouts in
    /// `sessions/YYYY/MM/DD/`; `None` leaves Codex CLI's sessions out.
    #[serde(default)]
    pub codex: Option<PathBuf>,
}

impl AgentDirs {
    /// The agents' default directories under a home directory.
    pub fn from_home(home: &Path) -> AgentDirs {
        AgentDirs {
            pi_sessions: home.join(".pi").join("agent").join("sessions"),
            claude_projects: home.join(".claude").join("projects"),
            gemini: Some(home.join(".gemini")),
            codex: Some(home.join(".codex")),
        }
    }

    /// The directory Pi keeps the sessions of `cwd` in.
    pub fn pi_dir_for(&self, cwd: &str) -> PathBuf {
        self.pi_sessions.join(pi_dir_name(cwd))
    }

    /// The directory a new Claude Code transcript of `cwd` goes in, where Claude Code looks
    /// for it: for a name Claude Code shortens, the one existing directory that starts with
    /// the shortened prefix and `-` (whichever runtime's hash made it), else
    /// [`claude_dir_name`]'s name.
    pub fn claude_dir_for(&self, cwd: &str) -> PathBuf {
        // A directory that cannot be listed holds no match; writing into it reports the error.
        match long_claude_dirs(&self.claude_projects, cwd).unwrap_or_default().as_slice() {
            [only] => only.clone(),
            _ => self.claude_projects.join(claude_dir_name(cwd)),
        }
    }

    /// Claude Code's config directory (`CLAUDE_CONFIG_DIR`, by default `~/.claude`): the
    /// parent of its projects directory, as Claude Code keeps `projects/` in it. It also
    /// holds `file-history/`, the backups of the files a session edited.
    pub fn claude_config_dir(&self) -> Option<&Path> {
        self.claude_projects.parent().filter(|p| !p.as_os_str().is_empty())
    }
}

/// Pi's directory name for a working directory (`/home/a/proj` → `--home-a-proj--`).
pub fn pi_dir_name(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix('/').or_else(|| cwd.strip_prefix('\\')).unwrap_or(cwd);
    let body: String = trimmed.chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect();
    format!("--{body}--")
}

/// Claude Code's directory name for a working directory (`/home/a/proj` → `-home-a-proj`).
///
/// Past 200 characters the name is its first 200 characters, `-` and the hash Claude Code's
/// Node build appends (see the module's documentation).
pub fn claude_dir_name(cwd: &str) -> String {
    let mut name = sanitized(cwd);
    if name.len() > CLAUDE_NAME_LIMIT {
        // Only ASCII letters, digits and `-` are left, so bytes are UTF-16 units too.
        name.truncate(CLAUDE_NAME_LIMIT);
        name.push('-');
        name.push_str(&node_path_hash(cwd));
    }
    name
}

/// Every character that is not an ASCII letter or digit becomes `-`, once per UTF-16 unit.
fn sanitized(cwd: &str) -> String {
    let mut name = String::with_capacity(cwd.len());
    for c in cwd.chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c);
        } else {
            name.extend(std::iter::repeat_n('-', c.len_utf16()));
        }
    }
    name
}

/// The hash Claude Code's Node build gives a long path: `h = h * 31 + unit` over the UTF-16
/// units, wrapping at 32 bits (signed), then the absolute value in base 36.
fn node_path_hash(cwd: &str) -> String {
    let mut hash: i32 = 0;
    for unit in cwd.encode_utf16() {
        hash = hash.wrapping_shl(5).wrapping_sub(hash).wrapping_add(i32::from(unit));
    }
    // `unsigned_abs` keeps i32::MIN whole, as JavaScript's `Math.abs` does on a double.
    let mut value = hash.unsigned_abs();
    let mut digits = Vec::new();
    loop {
        digits.push(char::from_digit(value % 36, 36).unwrap_or('0'));
        value /= 36;
        if value == 0 {
            break;
        }
    }
    digits.iter().rev().collect()
}

/// A session file found on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionFile {
    /// Where it is.
    pub path: PathBuf,
    /// Which agent it belongs to (told by the directory it is in).
    pub format: Format,
    /// Its modification time, RFC 3339 UTC.
    pub modified: String,
    #[serde(skip)]
    modified_at: Option<SystemTime>,
}

/// Every `.jsonl` session file of the agents for `cwd`, newest first.
///
/// A missing agent directory simply contributes nothing. Subdirectories (Claude Code keeps
/// subagent transcripts in them) are not searched.
pub fn list_sessions(dirs: &AgentDirs, cwd: &str) -> Result<Vec<SessionFile>> {
    let mut found = Vec::new();
    collect(&dirs.pi_dir_for(cwd), Format::Pi, &mut found)?;
    let claude_dirs = match long_claude_dirs(&dirs.claude_projects, cwd)? {
        long if long.is_empty() => vec![dirs.claude_projects.join(claude_dir_name(cwd))],
        long => long,
    };
    let mut claude = Vec::new();
    for dir in &claude_dirs {
        collect(dir, Format::Claude, &mut claude)?;
    }
    if claude_dirs.len() > 1 {
        // Two long paths that agree on their first 200 characters share the prefix: keep the
        // transcripts that say they ran in `cwd` (or say nothing).
        claude.retain(|file| recorded_cwd(&file.path).is_none_or(|recorded| recorded == cwd));
    }
    found.extend(claude);
    if let Some(gemini) = &dirs.gemini {
        collect(&crate::gemini_write::gemini_chats_dir(gemini, cwd), Format::Gemini, &mut found)?;
    }
    if let Some(codex) = &dirs.codex {
        collect_codex(codex, cwd, &mut found)?;
    }
    // Newest first; equal times fall back to the path so the order is stable.
    found.sort_by(|a, b| b.modified_at.cmp(&a.modified_at).then_with(|| a.path.cmp(&b.path)));
    Ok(found)
}

/// The most recently modified session file of either agent for `cwd`, if any.
///
/// Files that are not a session of their own are passed over, as the agents pass them over
/// when they pick the session to continue: a Pi file whose first line is not a session header
/// (Pi's own check), and a Claude Code file holding only a subagent's sidechain
/// (`agent-*.jsonl`, which Claude Code 2.0 keeps beside the sessions) or only summary lines.
pub fn newest_session(dirs: &AgentDirs, cwd: &str) -> Result<Option<SessionFile>> {
    for found in list_sessions(dirs, cwd)? {
        let text = match std::fs::read_to_string(&found.path) {
            Ok(text) => text,
            // Vanished or unreadable since it was listed: not the session to pick.
            Err(_) => continue,
        };
        let is_session = match found.format {
            Format::Pi => crate::pi::starts_with_header(&text),
            Format::Claude => crate::claude::has_main_chain(&text),
            // A Gemini CLI session file is a session of its own.
            Format::Gemini => true,
            // Codex CLI lists a rollout only once it holds a prompt.
            Format::Codex => crate::codex::has_prompt(&text),
        };
        if is_session {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

fn collect(dir: &Path, format: Format, found: &mut Vec<SessionFile>) -> Result<()> {
    let read = match std::fs::read_dir(dir) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(TranscriptError::io("list", dir, e)),
    };
    for item in read {
        let item = item.map_err(|e| TranscriptError::io("list", dir, e))?;
        let path = item.path();
        if path.extension().is_none_or(|ext| ext != "jsonl") {
            continue;
        }
        let meta = item.metadata().map_err(|e| TranscriptError::io("inspect", &path, e))?;
        if !meta.is_file() {
            continue;
        }
        let modified_at = meta.modified().ok();
        found.push(SessionFile {
            modified: modified_at.map(rfc3339).unwrap_or_default(),
            path,
            format,
            modified_at,
        });
    }
    Ok(())
}

/// Codex CLI's rollouts of `cwd`: Codex keeps every session in a directory of the day it began
/// (`sessions/YYYY/MM/DD/rollout-*.jsonl`) and records its directory in the first line, the
/// `session_meta`, so each rollout's first line is read.
fn collect_codex(codex_home: &Path, cwd: &str, found: &mut Vec<SessionFile>) -> Result<()> {
    let mut days = vec![codex_home.join("sessions")];
    for _ in 0..3 {
        let mut next = Vec::new();
        for dir in &days {
            next.extend(subdirs(dir)?);
        }
        days = next;
    }
    let mut rollouts = Vec::new();
    for day in &days {
        collect(day, Format::Codex, &mut rollouts)?;
    }
    rollouts.retain(|file| {
        let named = file.path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("rollout-"));
        named && rollout_cwd(&file.path).is_some_and(|recorded| recorded == cwd)
    });
    found.extend(rollouts);
    Ok(())
}

fn subdirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let read = match std::fs::read_dir(dir) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(TranscriptError::io("list", dir, e)),
    };
    Ok(read.filter_map(|item| item.ok().map(|i| i.path())).filter(|p| p.is_dir()).collect())
}

/// The `cwd` of a rollout's `session_meta`, its first line.
fn rollout_cwd(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let first = std::io::BufReader::new(file).lines().next()?.ok()?;
    let value: serde_json::Value = serde_json::from_str(&first).ok()?;
    (value.get("type")?.as_str()? == "session_meta").then_some(())?;
    value.pointer("/payload/cwd")?.as_str().map(str::to_owned)
}

/// For a name Claude Code shortens: the existing project directories whose name is the
/// shortened prefix, `-` and anything (Claude Code's own fallback lookup), sorted. Empty for a
/// name Claude Code keeps whole.
fn long_claude_dirs(projects: &Path, cwd: &str) -> Result<Vec<PathBuf>> {
    let mut prefix = sanitized(cwd);
    if prefix.len() <= CLAUDE_NAME_LIMIT {
        return Ok(Vec::new());
    }
    prefix.truncate(CLAUDE_NAME_LIMIT);
    prefix.push('-');
    let read = match std::fs::read_dir(projects) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(TranscriptError::io("list", projects, e)),
    };
    let mut matches: Vec<PathBuf> = read
        .filter_map(|item| item.ok().map(|i| i.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&prefix)))
        .filter(|p| p.is_dir())
        .collect();
    matches.sort();
    Ok(matches)
}

/// The first `cwd` a Claude Code transcript records, read line by line up to it.
fn recorded_cwd(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    std::io::BufReader::new(file).lines().map_while(std::result::Result::ok).find_map(|line| {
        let value: serde_json::Value = serde_json::from_str(&line).ok()?;
        value.get("cwd")?.as_str().map(str::to_owned)
    })
}

fn rfc3339(time: SystemTime) -> String {
    jiff::Timestamp::try_from(time).map(|t| t.to_string()).unwrap_or_default()
}
