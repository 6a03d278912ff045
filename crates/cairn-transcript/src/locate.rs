//! Where each agent keeps its session files, and finding the newest one for a directory.
//!
//! Pi: `<pi sessions>/--<cwd>--/<timestamp>_<uuid>.jsonl`, where `<cwd>` loses its leading
//! `/` and has every `/`, `\` and `:` replaced by `-` (`/home/a/proj` → `--home-a-proj--`).
//!
//! Claude Code: `<claude projects>/<cwd>/<sessionId>.jsonl`, where every character of the cwd
//! that is not an ASCII letter or digit becomes `-` (`/home/a/my_proj.v2` →
//! `-home-a-my-proj-v2`). Claude Code does this per UTF-16 unit, so a character outside the
//! Basic Multilingual Plane becomes two dashes; that is matched here. Claude Code shortens
//! very long names (over 200 characters) and appends a hash whose recipe is not public; for
//! those, lookups fall back to a directory whose name starts with the first 200 characters.

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
}

impl AgentDirs {
    /// The agents' default directories under a home directory.
    pub fn from_home(home: &Path) -> AgentDirs {
        AgentDirs {
            pi_sessions: home.join(".pi").join("agent").join("sessions"),
            claude_projects: home.join(".claude").join("projects"),
            gemini: Some(home.join(".gemini")),
        }
    }

    /// The directory Pi keeps the sessions of `cwd` in.
    pub fn pi_dir_for(&self, cwd: &str) -> PathBuf {
        self.pi_sessions.join(pi_dir_name(cwd))
    }

    /// The directory Claude Code keeps the transcripts of `cwd` in.
    pub fn claude_dir_for(&self, cwd: &str) -> PathBuf {
        self.claude_projects.join(claude_dir_name(cwd))
    }
}

/// Pi's directory name for a working directory (`/home/a/proj` → `--home-a-proj--`).
pub fn pi_dir_name(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix('/').or_else(|| cwd.strip_prefix('\\')).unwrap_or(cwd);
    let body: String = trimmed.chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect();
    format!("--{body}--")
}

/// Claude Code's directory name for a working directory (`/home/a/proj` → `-home-a-proj`).
pub fn claude_dir_name(cwd: &str) -> String {
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
    let claude = dirs.claude_dir_for(cwd);
    if claude.is_dir() {
        collect(&claude, Format::Claude, &mut found)?;
    } else if let Some(long) = long_claude_dir(&dirs.claude_projects, cwd)? {
        collect(&long, Format::Claude, &mut found)?;
    }
    if let Some(gemini) = &dirs.gemini {
        collect(&crate::gemini_write::gemini_chats_dir(gemini, cwd), Format::Gemini, &mut found)?;
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

/// For a name Claude Code would shorten: the project directory starting with its first part.
fn long_claude_dir(projects: &Path, cwd: &str) -> Result<Option<PathBuf>> {
    let name = claude_dir_name(cwd);
    if name.len() <= CLAUDE_NAME_LIMIT {
        return Ok(None);
    }
    let prefix = &name[..CLAUDE_NAME_LIMIT];
    let read = match std::fs::read_dir(projects) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(TranscriptError::io("list", projects, e)),
    };
    let mut matches: Vec<PathBuf> = read
        .filter_map(|item| item.ok().map(|i| i.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(prefix)))
        .collect();
    matches.sort();
    Ok(matches.into_iter().next())
}

fn rfc3339(time: SystemTime) -> String {
    jiff::Timestamp::try_from(time).map(|t| t.to_string()).unwrap_or_default()
}
