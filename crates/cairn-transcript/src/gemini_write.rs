//! Writing a saved Gemini CLI conversation as a new session that `gemini --resume` finds.
//!
//! Gemini CLI looks for a project's sessions in `<gemini dir>/tmp/<project>/chats/`, where
//! `<project>` is the short name `<gemini dir>/projects.json` maps the project's path to, and
//! `tmp/<project>/.project_root` holds that path. For a project Gemini CLI has not seen under
//! a short name, the session goes to the older `tmp/<sha256 of the path>/chats/`, which Gemini
//! CLI copies to the project's new directory when it next starts there. cairn never writes
//! Gemini CLI's registry itself.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::error::{Result, TranscriptError};
use crate::model::{ActivePath, Format};
use crate::write::{WrittenSession, entry_ids, write_checked};

/// Gemini CLI's `projectHash` of a project root: the SHA-256 of the path, in hex.
pub fn gemini_project_hash(project_root: &str) -> String {
    Sha256::digest(project_root.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The directory Gemini CLI (whose user directory is `gemini_dir`, by default `~/.gemini`)
/// keeps the sessions of the project at `cwd` in.
pub fn gemini_chats_dir(gemini_dir: &Path, cwd: &str) -> PathBuf {
    let tmp = gemini_dir.join("tmp");
    let project = registered_slug(gemini_dir, cwd)
        .or_else(|| marked_slug(&tmp, cwd))
        .unwrap_or_else(|| gemini_project_hash(cwd));
    tmp.join(project).join("chats")
}

/// The short name `projects.json` gives `cwd`, when its marker agrees.
fn registered_slug(gemini_dir: &Path, cwd: &str) -> Option<String> {
    let text = std::fs::read_to_string(gemini_dir.join("projects.json")).ok()?;
    let registry: Value = serde_json::from_str(&text).ok()?;
    let slug = registry.get("projects")?.get(cwd)?.as_str()?.to_owned();
    let safe =
        !slug.is_empty() && slug.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    let marker = std::fs::read_to_string(gemini_dir.join("tmp").join(&slug).join(".project_root")).ok();
    (safe && marker.is_none_or(|owner| owner.trim() == cwd)).then_some(slug)
}

/// A `tmp/<slug>/` whose `.project_root` names `cwd`.
fn marked_slug(tmp: &Path, cwd: &str) -> Option<String> {
    let mut found: Vec<String> = std::fs::read_dir(tmp)
        .ok()?
        .filter_map(|item| item.ok())
        .filter(|item| {
            std::fs::read_to_string(item.path().join(".project_root")).is_ok_and(|owner| owner.trim() == cwd)
        })
        .filter_map(|item| item.file_name().into_string().ok())
        .collect();
    found.sort();
    found.into_iter().next()
}

/// Writes `path` (a Gemini CLI conversation) as a new session of the project at `cwd`: a new
/// session id, `projectHash` of `cwd`, the current time as its start (so `--resume latest`
/// picks it), the other metadata and every message as saved.
pub fn load_gemini_session(path: &ActivePath, gemini_dir: &Path, cwd: &str) -> Result<WrittenSession> {
    if path.format != Format::Gemini {
        return Err(TranscriptError::WouldBeInvalid {
            path: gemini_dir.to_path_buf(),
            reason: format!(
                "the saved conversation is a {} transcript, not a Gemini CLI session",
                path.format
            ),
        });
    }
    let session_id = uuid::Uuid::new_v4().to_string();
    let now = jiff::Timestamp::now();
    let stamp =
        format!("{}.{:03}Z", now.strftime("%Y-%m-%dT%H:%M:%S"), now.as_millisecond().rem_euclid(1000));
    let mut metadata: Map<String, Value> =
        path.header.as_deref().and_then(|h| serde_json::from_str(h).ok()).unwrap_or_default();
    metadata.insert("sessionId".to_owned(), Value::String(session_id.clone()));
    metadata.insert("projectHash".to_owned(), Value::String(gemini_project_hash(cwd)));
    metadata.insert("startTime".to_owned(), Value::String(stamp.clone()));
    metadata.insert("lastUpdated".to_owned(), Value::String(stamp));
    let mut text = Value::Object(metadata).to_string();
    text.push('\n');
    for entry in &path.entries {
        text.push_str(&entry.text);
        text.push('\n');
    }
    let minute = now.strftime("%Y-%m-%dT%H-%M").to_string();
    let file = gemini_chats_dir(gemini_dir, cwd).join(format!("session-{minute}-{}.jsonl", &session_id[..8]));
    write_checked(&file, &text, &entry_ids(path), false)?;
    Ok(WrittenSession {
        path: file,
        format: Format::Gemini,
        resume_command: Some(format!("gemini --resume {session_id}")),
        fork_command: None,
        session_id,
        attached: Vec::new(),
        file_history: None,
    })
}
