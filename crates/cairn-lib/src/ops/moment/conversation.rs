//! Putting a moment's conversation part back: the saved path written as a new session of its
//! agent (as a transcript load does), optionally cut just before a prompt, so the agent resumes
//! from the state the conversation was in before that prompt was sent.

use cairn_transcript::{ActivePath, LoadOptions, load_session};
use serde_json::Value;

use crate::Repository;
use crate::error::Result;
use crate::ops::transcript::{AgentPlaces, TranscriptWritten, transcript_error};
use crate::snapshot::Snapshot;

/// Writes transcript snapshot `snapshot` as a new session for `places.cwd`; with
/// `cut_before`, the path ends just before the last user message starting with that line.
pub(crate) fn load_conversation(
    store: &Repository,
    snapshot: &Snapshot,
    places: &AgentPlaces,
    cut_before: Option<&str>,
) -> Result<TranscriptWritten> {
    if places.cwd.is_empty() {
        return Err(crate::error::Error::invalid(
            "no working directory to load the conversation for; pass one",
        ));
    }
    let mut path = store.transcript_path_and_files(snapshot, false)?;
    let attached = path.take_attached();
    if let Some(prompt) = cut_before {
        cut_before_prompt(&mut path, prompt);
    }
    let load = LoadOptions {
        cwd: places.cwd.clone(),
        parent_session: None,
        rewrite_cwd: false,
        note: None,
        attached,
    };
    let written = load_session(&path, &places.dirs(), &load).map_err(transcript_error)?;
    Ok(TranscriptWritten {
        snapshot: snapshot.clone(),
        file: written.path,
        format: written.format,
        session_id: written.session_id,
        resume_command: written.resume_command,
        fork_command: written.fork_command,
        prompt: None,
        prompt_file: None,
        subagent_files: written.attached,
    })
}

/// Drops the last user message whose first line is `prompt`'s, and everything after it.
/// A path that does not hold the prompt yet (saved before the agent wrote it) is left whole.
pub(crate) fn cut_before_prompt(path: &mut ActivePath, prompt: &str) {
    let want = prompt.lines().next().unwrap_or_default().trim();
    let at = path.entries.iter().rposition(|e| {
        user_text(&e.text).is_some_and(|text| text.lines().next().unwrap_or_default().trim() == want)
    });
    if let Some(at) = at {
        path.entries.truncate(at);
    }
}

/// The text of a user message line, in Claude Code's, Pi's or Gemini CLI's shape; `None` for
/// other lines (assistant messages, tool results, metadata).
fn user_text(line: &str) -> Option<String> {
    let value: Value = serde_json::from_str(line).ok()?;
    let message = match value.get("type")?.as_str()? {
        // Claude Code nests the message; Gemini CLI keeps `content` on the record itself.
        "user" => value.get("message").unwrap_or(&value),
        "message" if value.pointer("/message/role")?.as_str()? == "user" => value.get("message")?,
        _ => return None,
    };
    match message.get("content")? {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|p| p.get("type").is_none_or(|t| t == "text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::user_text;

    #[test]
    fn user_messages_are_read_in_each_agents_shape_and_tool_results_are_not() {
        let claude = r#"{"type":"user","message":{"role":"user","content":"Fix it\nplease"}}"#;
        let pi =
            r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"Fix it"}]}}"#;
        let gemini = r#"{"id":"1","type":"user","content":[{"text":"Fix it"}]}"#;
        let result =
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"ok"}]}}"#;
        for line in [claude, pi, gemini] {
            assert_eq!(user_text(line).as_deref().and_then(|t| t.lines().next()), Some("Fix it"), "{line}");
        }
        assert_eq!(user_text(result), None);
        assert_eq!(user_text(r#"{"type":"assistant","message":{"content":"Fix it"}}"#), None);
    }
}
