//! Writing a saved Codex CLI conversation as a new rollout that `codex resume <id>` opens.
//!
//! The new file is `<codex home>/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl`,
//! local date and time, as Codex names its own. Its first line is a new `session_meta`: the
//! saved one with a new UUIDv7 `id` (the one in the file name, which `codex resume <id>` looks
//! for when its database does not know the thread yet), the current time, the working
//! directory the session now belongs to (the `resume` picker lists a directory's sessions by
//! it) and `forked_from_id` naming the saved session, as Codex's own forks do. The saved lines
//! follow unchanged, so each keeps its id.
//!
//! A session ends where a turn ended: the lines Codex writes in front of a prompt the path no
//! longer holds (`task_started`, `turn_context`, the context and prompt messages) are dropped,
//! and so is a tool call whose output is not on the path, with what came after it. A path with
//! no prompt left is refused: Codex lists no such session, and there is nothing to resume.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::codex::{is_preamble, is_user_message};
use crate::error::{Result, TranscriptError};
use crate::model::{ActivePath, Format};
use crate::write::{WrittenSession, entry_ids, write_checked};

/// The directory Codex CLI (whose home is `codex_home`, by default `~/.codex`) keeps the
/// sessions it starts on the day `date` (`YYYY/MM/DD` under `sessions/`).
pub fn codex_sessions_dir(codex_home: &Path, date: jiff::civil::Date) -> PathBuf {
    codex_home
        .join("sessions")
        .join(format!("{:04}", date.year()))
        .join(format!("{:02}", date.month()))
        .join(format!("{:02}", date.day()))
}

/// Writes `path` (a Codex CLI conversation) as a new rollout of today under `codex_home`, for
/// the working directory `cwd`; see the module documentation for what changes.
pub fn load_codex_session(path: &ActivePath, codex_home: &Path, cwd: &str) -> Result<WrittenSession> {
    if path.format != Format::Codex {
        return Err(TranscriptError::WouldBeInvalid {
            path: codex_home.to_path_buf(),
            reason: format!(
                "the saved conversation is a {} transcript, not a Codex CLI rollout",
                path.format
            ),
        });
    }
    let path = resumable(path)?;
    let session_id = uuid::Uuid::now_v7().to_string();
    let now = jiff::Zoned::now();
    let stamp = utc_millis(now.timestamp());
    let header = new_meta(path.header.as_deref(), &session_id, &stamp, cwd);
    let name = format!("rollout-{}-{session_id}.jsonl", now.strftime("%Y-%m-%dT%H-%M-%S"));
    let file = codex_sessions_dir(codex_home, now.date()).join(name);
    let text = crate::write::join_lines(Some(header), path.entries.iter().map(|e| e.text.clone()).collect());
    write_checked(&file, &text, &entry_ids(&path), false)?;
    Ok(WrittenSession {
        path: file,
        format: Format::Codex,
        resume_command: Some(format!("codex resume {session_id}")),
        fork_command: None,
        session_id,
        attached: Vec::new(),
        file_history: None,
    })
}

/// The path as a session can resume it: ending where a turn ended, with a prompt in it.
fn resumable(path: &ActivePath) -> Result<ActivePath> {
    let mut path = path.clone();
    path.cut_unanswered_tool_calls();
    while path.entries.last().is_some_and(|e| object(&e.text).is_some_and(|o| is_preamble(&o))) {
        path.entries.pop();
    }
    if !path.entries.iter().any(|e| object(&e.text).is_some_and(|o| is_user_message(&o))) {
        return Err(TranscriptError::NothingToResume { file: path.source.clone() });
    }
    Ok(path)
}

fn object(text: &str) -> Option<Map<String, Value>> {
    match serde_json::from_str(text) {
        Ok(Value::Object(object)) => Some(object),
        _ => None,
    }
}

/// The new `session_meta` line: the saved payload with the new id, time, cwd and the saved id
/// as `forked_from_id`.
fn new_meta(saved: Option<&str>, session_id: &str, stamp: &str, cwd: &str) -> String {
    let old = saved.and_then(object).unwrap_or_default();
    let mut payload = old.get("payload").and_then(Value::as_object).cloned().unwrap_or_default();
    let parent = payload.get("id").cloned();
    payload.insert("id".to_owned(), Value::from(session_id));
    if let Some(parent) = parent {
        payload.insert("forked_from_id".to_owned(), parent);
    }
    payload.insert("timestamp".to_owned(), Value::from(stamp));
    payload.insert("cwd".to_owned(), Value::from(cwd));
    let mut line = Map::new();
    line.insert("timestamp".to_owned(), Value::from(stamp));
    line.insert("type".to_owned(), Value::from("session_meta"));
    line.insert("payload".to_owned(), Value::Object(payload));
    Value::Object(line).to_string()
}

/// The time as Codex writes it (`2026-04-24T08:00:00.123Z`).
fn utc_millis(now: jiff::Timestamp) -> String {
    let millis = now.as_millisecond().rem_euclid(1000);
    format!("{}.{millis:03}Z", now.strftime("%Y-%m-%dT%H:%M:%S"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_new_meta_keeps_the_saved_fields_and_names_its_parent() {
        let saved = r#"{"timestamp":"t","type":"session_meta","payload":{"id":"old","cwd":"/a","originator":"codex_cli_rs","cli_version":"0.125.0","source":"cli"}}"#;
        let meta: Value =
            serde_json::from_str(&new_meta(Some(saved), "new", "2026-05-01T10:00:00.000Z", "/b")).unwrap();
        assert_eq!(meta["type"], "session_meta");
        assert_eq!(meta["payload"]["id"], "new");
        assert_eq!(meta["payload"]["forked_from_id"], "old");
        assert_eq!(meta["payload"]["cwd"], "/b");
        assert_eq!(meta["payload"]["cli_version"], "0.125.0");
        assert_eq!(meta["payload"]["timestamp"], meta["timestamp"]);
    }

    #[test]
    fn sessions_go_in_a_directory_per_day() {
        let dir = codex_sessions_dir(Path::new("/h/.codex"), jiff::civil::date(2026, 5, 1));
        assert_eq!(dir, Path::new("/h/.codex/sessions/2026/05/01"));
    }
}
