//! Writing a saved path back as a session the agent opens normally, and exporting it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::edit::set_fields;
use crate::error::{Result, TranscriptError};
use crate::locate::AgentDirs;
use crate::migrate::v3_entry_lines;
use crate::model::{ActivePath, Format};
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
}

/// Writes `path` as a new session of its agent, under the directory for `options.cwd`.
///
/// Pi: a new version 3 header (new UUIDv7 id, the current time, `options.cwd`,
/// `parentSession`) followed by the entries. Claude Code: the lines with every `sessionId`
/// set to a new UUIDv7, in `<id>.jsonl`. The text is parsed again before anything is
/// written, and must give back the same path.
pub fn load_session(path: &ActivePath, dirs: &AgentDirs, options: &LoadOptions) -> Result<WrittenSession> {
    let session_id = uuid::Uuid::now_v7().to_string();
    let now = jiff::Timestamp::now();
    match path.format {
        Format::Pi => {
            let timestamp = iso_millis(now);
            let parent = options.parent_session.as_deref().unwrap_or(&path.source);
            let header = pi_header(&session_id, &timestamp, &options.cwd, Some(parent));
            let file_stamp = timestamp.replace([':', '.'], "-");
            let file = dirs.pi_dir_for(&options.cwd).join(format!("{file_stamp}_{session_id}.jsonl"));
            let text = join_lines(Some(header), v3_entry_lines(path));
            write_checked(&file, &text, path, false)?;
            Ok(pi_written(file, session_id))
        }
        Format::Claude => {
            let mut fields = vec![("sessionId", Value::String(session_id.clone()))];
            if options.rewrite_cwd {
                fields.push(("cwd", Value::String(options.cwd.clone())));
            }
            let lines = path.entries.iter().map(|e| claude_line(&e.text, &fields)).collect();
            let file = dirs.claude_dir_for(&options.cwd).join(format!("{session_id}.jsonl"));
            write_checked(&file, &join_lines(None, lines), path, false)?;
            Ok(WrittenSession {
                path: file,
                format: Format::Claude,
                resume_command: Some(format!("claude --resume {session_id}")),
                fork_command: None,
                session_id,
            })
        }
        // Gemini CLI's sessions live under its own directory, which `dirs` does not name.
        Format::Gemini => Err(TranscriptError::GeminiDirNeeded),
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
            let header = match (&path.header, path.pi_version) {
                (Some(header), Some(3)) => header.clone(),
                _ => pi_header(
                    &session_id,
                    field("timestamp"),
                    field("cwd"),
                    old.get("parentSession").and_then(Value::as_str),
                ),
            };
            let text = join_lines(Some(header), v3_entry_lines(path));
            write_checked(dest, &text, path, overwrite)?;
            Ok(pi_written(dest.to_path_buf(), session_id))
        }
        Format::Claude | Format::Gemini => {
            write_checked(dest, &path.document(), path, overwrite)?;
            Ok(WrittenSession {
                path: dest.to_path_buf(),
                format: path.format,
                session_id: path.summary().session_id.unwrap_or_default(),
                resume_command: None,
                fork_command: None,
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
fn claude_line(text: &str, fields: &[(&str, Value)]) -> String {
    let has_session = serde_json::from_str::<Value>(text).ok().is_some_and(|v| v.get("sessionId").is_some());
    if has_session { set_fields(text, fields) } else { text.to_owned() }
}

fn join_lines(header: Option<String>, lines: Vec<String>) -> String {
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

/// Checks that `text` parses as the same path, then writes it atomically.
pub(crate) fn write_checked(dest: &Path, text: &str, expected: &ActivePath, overwrite: bool) -> Result<()> {
    let refuse = |reason: String| TranscriptError::WouldBeInvalid { path: dest.to_path_buf(), reason };
    let reparsed = Transcript::parse(&dest.display().to_string(), text).map_err(|e| refuse(e.to_string()))?;
    let ids = |p: &ActivePath| -> Vec<Option<String>> { p.entries.iter().map(|e| e.id.clone()).collect() };
    if ids(&reparsed.active_path()) != ids(expected) {
        return Err(refuse("its active path differs from the saved one".to_owned()));
    }
    crate::fsio::write_atomic(dest, text, overwrite)
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
