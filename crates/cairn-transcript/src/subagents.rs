//! Claude Code subagent transcripts: finding the ones a session names, and carrying them with
//! a saved path.
//!
//! A Task (or Agent) tool result names the subagent it ran in `toolUseResult.agentId`. Claude
//! Code 2.1 keeps that subagent's conversation in `<session id>/subagents/agent-<id>.jsonl`
//! (with `agent-<id>.meta.json` beside it) next to the session file; 2.0 kept it as
//! `agent-<id>.jsonl` beside the session. A resumed session whose subagent files are missing
//! has references that lead nowhere, so a saved path carries them, and a loaded session gets
//! them back beside it under its new session id.
//!
//! In a saved document each carried file is one line of type [`ATTACHED`] after the path; the
//! reader takes those lines out again ([`ActivePath::take_attached`]), so they never reach a
//! written session.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Result, TranscriptError};
use crate::model::{ActivePath, Format};
use crate::write::{claude_line, join_lines};

/// The `type` of a line that carries a file in a saved document.
pub const ATTACHED: &str = "cairn-attached-file";

/// A file saved with a transcript's path: where it sits relative to the session's directory,
/// and its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttachedFile {
    /// The path relative to the directory of the session file (`agent-<id>.jsonl`, or
    /// `<session id>/subagents/agent-<id>.jsonl`).
    pub path: String,
    /// The file's text.
    pub text: String,
}

/// What was found for the subagents a path names.
#[derive(Debug, Clone, Default)]
pub struct Subagents {
    /// The files found.
    pub files: Vec<AttachedFile>,
    /// The agent ids named on the path whose transcript was not found.
    pub missing: Vec<String>,
}

impl ActivePath {
    /// The agent ids the path's tool results name, in order, each once.
    pub fn subagent_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        if self.format != Format::Claude {
            return ids;
        }
        for entry in &self.entries {
            let Ok(value) = serde_json::from_str::<Value>(&entry.text) else { continue };
            let id = value.get("toolUseResult").and_then(|r| r.get("agentId")).and_then(Value::as_str);
            if let Some(id) = id
                && is_plain(id)
                && !ids.iter().any(|known| known == id)
            {
                ids.push(id.to_owned());
            }
        }
        ids
    }

    /// Reads the subagent files of this path, saved from `session_file`.
    pub fn find_subagents(&self, session_file: &Path) -> Result<Subagents> {
        let mut found = Subagents::default();
        let Some(dir) = session_file.parent() else { return Ok(found) };
        let session = session_file.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        for id in self.subagent_ids() {
            let nested = format!("{session}/subagents/agent-{id}");
            let candidates = [
                (format!("{nested}.jsonl"), Some(format!("{nested}.meta.json"))),
                (format!("agent-{id}.jsonl"), None),
            ];
            let mut any = false;
            for (transcript, meta) in candidates {
                if let Some(text) = read_if_present(&dir.join(&transcript))? {
                    found.files.push(AttachedFile { path: transcript, text });
                    if let Some(meta) = meta
                        && let Some(text) = read_if_present(&dir.join(&meta))?
                    {
                        found.files.push(AttachedFile { path: meta, text });
                    }
                    any = true;
                    break;
                }
            }
            if !any {
                found.missing.push(id);
            }
        }
        Ok(found)
    }

    /// The document with `files` carried after the path, one line each.
    pub fn document_with(&self, files: &[AttachedFile]) -> String {
        let mut out = self.document();
        for file in files {
            let line = serde_json::json!({"type": ATTACHED, "path": file.path, "text": file.text});
            out.push_str(&line.to_string());
            out.push('\n');
        }
        out
    }

    /// Takes the carried files out of a path read from a saved document.
    pub fn take_attached(&mut self) -> Vec<AttachedFile> {
        let mut files = Vec::new();
        self.entries.retain(|entry| {
            if entry.id.is_some() || entry.kind != ATTACHED {
                return true;
            }
            if let Ok(file) = serde_json::from_str::<AttachedFile>(&entry.text) {
                files.push(file);
            }
            false
        });
        files
    }
}

/// Writes one carried file under `dir`: a path under the old session's id moves under the new
/// one, and each line of a transcript gets the new session id (the meta file is kept as is).
/// A file Claude Code 2.0 kept beside the sessions (`agent-<id>.jsonl`, named by the agent id
/// alone) that is still there is left as it is: it already resolves the reference. Returns the
/// file written, if one was.
pub(crate) fn write_attached(
    dir: &Path,
    file: &AttachedFile,
    old_id: &str,
    new_id: &str,
    fields: &[(&str, Value)],
) -> Result<Option<PathBuf>> {
    let relative = match file.path.strip_prefix(&format!("{old_id}/")) {
        Some(rest) if !old_id.is_empty() => format!("{new_id}/{rest}"),
        _ => file.path.clone(),
    };
    let plain = Path::new(&relative).components().all(|c| matches!(c, std::path::Component::Normal(_)));
    if !plain {
        return Err(TranscriptError::WouldBeInvalid {
            path: dir.join(&relative),
            reason: "a file saved with the session names a path outside the session's directory".to_owned(),
        });
    }
    let text = if relative.ends_with(".jsonl") {
        let lines: Vec<String> = file.text.lines().map(|l| claude_line(l, fields)).collect();
        join_lines(None, lines)
    } else {
        file.text.clone()
    };
    let dest = dir.join(&relative);
    if !relative.contains('/') && dest.exists() {
        return Ok(None);
    }
    crate::fsio::write_atomic(&dest, &text, false)?;
    Ok(Some(dest))
}

/// An agent id is used in a file name: only letters, digits, `-` and `_` are taken.
fn is_plain(id: &str) -> bool {
    !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn read_if_present(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(TranscriptError::io("read", path, e)),
    }
}
