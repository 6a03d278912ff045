//! Writing a saved path back as a session the agent opens normally, and exporting it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::edit::set_fields;
use crate::error::{Result, TranscriptError};
use crate::file_history::carry;
use crate::locate::AgentDirs;
use crate::migrate::v3_entry_lines;
use crate::model::{ActivePath, Format};
use crate::note::{RestoreNote, note_id, note_line};
use crate::subagents::{AttachedFile, write_attached};
use crate::transcript::Transcript;

/// How a saved path becomes a new session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadOptions {
    /// The working directory the new session belongs to: it picks the agent's directory and
    /// is the `cwd` of a new Pi header.
    pub cwd: String,
    /// Pi: the `parentSession` of the new header. `None` names the path's source file.
    #[serde(default)]
    pub parent_session: Option<String>,
    /// Claude Code: also rewrite every entry's `cwd` to [`LoadOptions::cwd`] (kept otherwise).
    #[serde(default)]
    pub rewrite_cwd: bool,
    /// Pi: a note to end the new session with, which the user sees and the model's context
    /// does not (see [`RestoreNote`]).
    #[serde(default)]
    pub note: Option<RestoreNote>,
    /// Claude Code: files saved with the path (subagent transcripts), written beside the new
    /// session under its new id.
    #[serde(default)]
    pub attached: Vec<AttachedFile>,
}

/// A session file that was written, and how to open it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WrittenSession {
    /// Where the file was written.
    pub path: PathBuf,
    /// Which agent's format it is in.
    pub format: Format,
    /// The session id in the file.
    pub session_id: String,
    /// The command that resumes it (`pi --session FILE`, `claude --resume ID`), when the
    /// agent can find it where it is.
    pub resume_command: Option<String>,
    /// The command that starts a new session from it (`pi --fork FILE`), for Pi.
    pub fork_command: Option<String>,
    /// The files written beside it (subagent transcripts), if any.
    #[serde(default)]
    pub attached: Vec<PathBuf>,
    /// Claude Code: the directory the session's file-history backups were linked into
    /// (`<config dir>/file-history/<id>/`), when it has any. Taking the session back removes it.
    #[serde(default)]
    pub file_history: Option<PathBuf>,
}

/// Writes `path` as a new session of its agent, under the directory for `options.cwd`.
///
/// Pi: a new version 3 header (new UUIDv7 id, the current time, `options.cwd`,
/// `parentSession`) followed by the entries. Claude Code: the lines with every `sessionId`
/// set to a new UUIDv7, in `<id>.jsonl` in the project directory Claude Code finds for
/// `options.cwd` ([`AgentDirs::claude_dir_for`]); the file-history snapshots of prompts the
/// path keeps go with it, their backups linked under the new id in the config directory's
/// `file-history/` ([`AgentDirs::claude_config_dir`]), and a backup no longer there is left
/// out of its snapshot. Gemini CLI: see [`crate::load_gemini_session`]. Codex CLI: a new
/// rollout of today under [`AgentDirs::codex`], ending where a turn ended, refused with
/// [`TranscriptError::NothingToResume`] when no prompt is left (see
/// [`crate::load_codex_session`]). The text is parsed again before anything is written, and
/// must give back the same path.
pub fn load_session(path: &ActivePath, dirs: &AgentDirs, options: &LoadOptions) -> Result<WrittenSession> {
    let session_id = uuid::Uuid::now_v7().to_string();
    let now = jiff::Timestamp::now();
    match path.format {
        Format::Pi => {
            let timestamp = iso_millis(now);
            let parent = options.parent_session.as_deref().unwrap_or(&path.source);
            let header =
                keep_v1_header_fields(path, pi_header(&session_id, &timestamp, &options.cwd, Some(parent)));
            let file_stamp = timestamp.replace([':', '.'], "-");
            let file = dirs.pi_dir_for(&options.cwd).join(format!("{file_stamp}_{session_id}.jsonl"));
            let mut lines = v3_entry_lines(path);
            let mut expected = entry_ids(path);
            if let Some(note) = &options.note {
                let id = note_id(path);
                lines.push(note_line(note, &id, path.leaf_id(), &timestamp));
                expected.push(Some(id));
            }
            let text = join_lines(Some(header), lines);
            write_checked(&file, &text, &expected, false)?;
            Ok(pi_written(file, session_id))
        }
        Format::Claude => {
            let mut fields = vec![("sessionId", Value::String(session_id.clone()))];
            if options.rewrite_cwd {
                fields.push(("cwd", Value::String(options.cwd.clone())));
            }
            let carried = carry(path, dirs.claude_config_dir(), &session_id)?;
            // A session whose subagent files are missing is not what was saved: take back
            // whatever was written for it.
            let undo = |written: &[PathBuf]| {
                for done in written {
                    let _ = std::fs::remove_file(done);
                }
                if let Some(backups) = &carried.dir {
                    let _ = std::fs::remove_dir_all(backups);
                }
            };
            let lines = carried.entries.iter().map(|e| claude_line(&e.text, &fields)).collect();
            let dir = dirs.claude_dir_for(&options.cwd);
            let file = dir.join(format!("{session_id}.jsonl"));
            let expected: Vec<Option<String>> = carried.entries.iter().map(|e| e.id.clone()).collect();
            if let Err(e) = write_checked(&file, &join_lines(None, lines), &expected, false) {
                undo(&[]);
                return Err(e);
            }
            let old_id = Path::new(&path.source).file_stem().and_then(|s| s.to_str()).unwrap_or_default();
            let mut attached = Vec::new();
            for extra in &options.attached {
                match write_attached(&dir, extra, old_id, &session_id, &fields) {
                    Ok(written) => attached.extend(written),
                    Err(e) => {
                        attached.push(file);
                        undo(&attached);
                        return Err(e);
                    }
                }
            }
            Ok(WrittenSession {
                path: file,
                format: Format::Claude,
                resume_command: Some(format!("claude --resume {session_id}")),
                fork_command: None,
                session_id,
                attached,
                file_history: carried.dir,
            })
        }
        // Gemini CLI's sessions live under its own directory, which `dirs` may not name.
        Format::Gemini => match &dirs.gemini {
            Some(gemini) => crate::gemini_write::load_gemini_session(path, gemini, &options.cwd),
            None => Err(TranscriptError::GeminiDirNeeded),
        },
        // Codex CLI keeps sessions by date under its home, which `dirs` may not name.
        Format::Codex => match &dirs.codex {
            Some(codex) => crate::codex_write::load_codex_session(path, codex, &options.cwd),
            None => Err(TranscriptError::CodexDirNeeded),
        },
    }
}

/// Writes `path` to `dest` as a file its agent accepts, refusing to replace an existing file
/// unless `overwrite`.
///
/// Pi: a valid version 3 session (the header kept when it is already version 3, otherwise
/// rebuilt as version 3 with the same id, time and cwd), which `pi --fork FILE` opens.
/// Claude Code: the lines unchanged; Claude Code finds a transcript only in its projects
/// directory, so no command is returned (use [`load_session`] for that).
pub fn export_session(path: &ActivePath, dest: &Path, overwrite: bool) -> Result<WrittenSession> {
    match path.format {
        Format::Pi => {
            let old = path
                .header
                .as_deref()
                .and_then(|h| serde_json::from_str::<Value>(h).ok())
                .unwrap_or(Value::Null);
            let field = |key: &str| old.get(key).and_then(Value::as_str).unwrap_or_default();
            let session_id = field("id").to_owned();
            // As Pi's own migration does: the header keeps every field (a version 1 header's
            // `provider`, `modelId` and `thinkingLevel` included) and only its version changes.
            let header = match (&path.header, path.pi_version) {
                (Some(header), Some(3)) => header.clone(),
                (Some(header), _) => set_fields(header, &[("version", Value::from(3))]),
                (None, _) => pi_header(&session_id, field("timestamp"), field("cwd"), None),
            };
            let text = join_lines(Some(header), v3_entry_lines(path));
            write_checked(dest, &text, &entry_ids(path), overwrite)?;
            Ok(pi_written(dest.to_path_buf(), session_id))
        }
        Format::Claude | Format::Gemini | Format::Codex => {
            write_checked(dest, &path.document(), &entry_ids(path), overwrite)?;
            Ok(WrittenSession {
                path: dest.to_path_buf(),
                format: path.format,
                session_id: path.summary().session_id.unwrap_or_default(),
                resume_command: None,
                fork_command: None,
                attached: Vec::new(),
                file_history: None,
            })
        }
    }
}

fn pi_written(path: PathBuf, session_id: String) -> WrittenSession {
    let quoted = shell_quote(&path.display().to_string());
    WrittenSession {
        resume_command: Some(format!("pi --session {quoted}")),
        fork_command: Some(format!("pi --fork {quoted}")),
        path,
        format: Format::Pi,
        session_id,
        attached: Vec::new(),
        file_history: None,
    }
}

/// A Pi version 3 header line. Field order follows Pi's own headers.
fn pi_header(id: &str, timestamp: &str, cwd: &str, parent: Option<&str>) -> String {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Header<'a> {
        r#type: &'a str,
        version: u32,
        id: &'a str,
        timestamp: &'a str,
        cwd: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_session: Option<&'a str>,
    }
    let header = Header { r#type: "session", version: 3, id, timestamp, cwd, parent_session: parent };
    serde_json::to_string(&header).unwrap_or_default()
}

/// Sets `fields` on a Claude Code line that has a `sessionId` (lines without one, such as
/// `summary`, are left alone).
pub(crate) fn claude_line(text: &str, fields: &[(&str, Value)]) -> String {
    let has_session = serde_json::from_str::<Value>(text).ok().is_some_and(|v| v.get("sessionId").is_some());
    if has_session { set_fields(text, fields) } else { text.to_owned() }
}

pub(crate) fn join_lines(header: Option<String>, lines: Vec<String>) -> String {
    let mut out = String::new();
    for line in header.into_iter().chain(lines) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The time as Pi writes it (`2024-12-03T14:00:00.000Z`).
fn iso_millis(now: jiff::Timestamp) -> String {
    let millis = now.as_millisecond().rem_euclid(1000);
    format!("{}.{millis:03}Z", now.strftime("%Y-%m-%dT%H:%M:%S"))
}

/// Checks that `text` parses as a path with the `expected` entry ids, then writes it
/// atomically.
pub(crate) fn write_checked(
    dest: &Path,
    text: &str,
    expected: &[Option<String>],
    overwrite: bool,
) -> Result<()> {
    let refuse = |reason: String| TranscriptError::WouldBeInvalid { path: dest.to_path_buf(), reason };
    let reparsed =
        Transcript::parse_saved(&dest.display().to_string(), text).map_err(|e| refuse(e.to_string()))?;
    if entry_ids(&reparsed.active_path()) != expected {
        return Err(refuse("its active path differs from the saved one".to_owned()));
    }
    crate::fsio::write_atomic(dest, text, overwrite)
}

pub(crate) fn entry_ids(path: &ActivePath) -> Vec<Option<String>> {
    path.entries.iter().map(|e| e.id.clone()).collect()
}

/// A version 1 header carried the session's model and thinking level; a new header built for
/// its path keeps them, as Pi's migration keeps them in the file.
fn keep_v1_header_fields(path: &ActivePath, header: String) -> String {
    if path.pi_version != Some(1) {
        return header;
    }
    let Some(old) = path.header.as_deref().and_then(|h| serde_json::from_str::<Value>(h).ok()) else {
        return header;
    };
    let kept: Vec<(&str, Value)> = ["provider", "modelId", "thinkingLevel"]
        .into_iter()
        .filter_map(|key| old.get(key).map(|value| (key, value.clone())))
        .collect();
    if kept.is_empty() {
        return header;
    }
    let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(&header) else {
        return header;
    };
    for (key, value) in kept {
        object.insert(key.to_owned(), value);
    }
    Value::Object(object).to_string()
}

/// Quotes a path for a POSIX shell when it holds characters the shell would interpret.
fn shell_quote(text: &str) -> String {
    let plain =
        !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:@,%~".contains(c));
    if plain { text.to_owned() } else { format!("'{}'", text.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quote_leaves_plain_paths_and_quotes_others() {
        assert_eq!(shell_quote("/tmp/a_b.jsonl"), "/tmp/a_b.jsonl");
        assert_eq!(shell_quote("/tmp/it's here"), r"'/tmp/it'\''s here'");
    }

    #[test]
    fn pi_timestamps_have_milliseconds() {
        let t: jiff::Timestamp = "2024-12-03T14:00:01.5Z".parse().unwrap();
        assert_eq!(iso_millis(t), "2024-12-03T14:00:01.500Z");
    }
}
