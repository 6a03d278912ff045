//! Reading Gemini CLI session files.
//!
//! Current files (`session-*.jsonl`) are a log: a first line of metadata (`sessionId`,
//! `projectHash`, `startTime`, ...), then records. A record with an `id` is a message, appended
//! again whole each time it changes: the last copy wins, in the place of the first.
//! `{"$set": {...}}` updates the metadata (`$set.messages` replaces every message) and
//! `{"$rewindTo": ID}` drops that message and all after it. Older files (`session-*.json`)
//! are one JSON object holding the metadata and a `messages` array.
//!
//! The active conversation is the messages that remain, in order: a linear chain, each
//! message hanging from the one before. Its header is the merged metadata, written as one line,
//! so a path's document is itself a valid JSONL session.

use serde_json::{Map, Value};

use crate::error::{Result, TranscriptError};
use crate::graph::IdIndex;
use crate::jsonl::{RawLine, str_field};
use crate::model::{Entry, Format};
use crate::transcript::Transcript;

/// Whether parsed lines are a Gemini CLI JSONL session: the first line is its metadata.
pub(crate) fn is_session(lines: &[RawLine]) -> bool {
    lines.first().is_some_and(|l| is_metadata(&l.object))
}

fn is_metadata(object: &Map<String, Value>) -> bool {
    str_field(object, "sessionId").is_some()
        && str_field(object, "projectHash").is_some()
        && !object.contains_key("id")
}

/// A legacy single-object session, if `text` is one.
pub(crate) fn parse_legacy(source: &str, text: &str) -> Option<Result<Transcript>> {
    let Ok(Value::Object(mut record)) = serde_json::from_str::<Value>(text) else {
        return None;
    };
    if !is_metadata(&record) || !record.get("messages").is_some_and(Value::is_array) {
        return None;
    }
    let Some(Value::Array(messages)) = record.remove("messages") else {
        return None;
    };
    let mut replay = Replay::new(record);
    for message in messages {
        if let Err(e) = replay.message(source, 1, None, message) {
            return Some(Err(e));
        }
    }
    Some(replay.finish(source))
}

/// Builds a Gemini CLI transcript from the lines of a JSONL session.
pub(crate) fn parse(source: &str, lines: Vec<RawLine>) -> Result<Transcript> {
    let mut lines = lines.into_iter();
    let Some(first) = lines.next() else {
        return Err(TranscriptError::Empty { file: source.to_owned() });
    };
    let mut replay = Replay::new(first.object);
    for line in lines {
        let RawLine { line, text, mut object } = line;
        if let Some(target) = str_field(&object, "$rewindTo") {
            replay.rewind(target);
        } else if let Some(Value::Object(set)) = object.remove("$set") {
            for (key, value) in set {
                if key == "messages" {
                    replay.messages.clear();
                    for message in value.as_array().cloned().unwrap_or_default() {
                        replay.message(source, line, None, message)?;
                    }
                } else {
                    replay.metadata.insert(key, value);
                }
            }
        } else if object.contains_key("id") {
            replay.message(source, line, Some(text), Value::Object(object))?;
        } else if is_metadata(&object) {
            // A second metadata line (as a resumed legacy file starts with) merges in.
            replay.metadata.extend(object);
        }
        // Anything else is a record kind this version does not know; Gemini CLI skips those too.
    }
    replay.finish(source)
}

/// The state of a session while its records are replayed.
struct Replay {
    metadata: Map<String, Value>,
    /// (line, text, id, type) of each message still in the conversation, in order.
    messages: Vec<(usize, String, String, String)>,
}

impl Replay {
    fn new(metadata: Map<String, Value>) -> Replay {
        Replay { metadata, messages: Vec::new() }
    }

    /// Adds a message, or replaces the earlier copy with the same id in its place.
    fn message(&mut self, source: &str, line: usize, text: Option<String>, message: Value) -> Result<()> {
        let Value::Object(object) = &message else {
            return Err(TranscriptError::Malformed {
                file: source.to_owned(),
                line,
                reason: "a message record is not an object".to_owned(),
            });
        };
        let Some(id) = str_field(object, "id").map(str::to_owned) else {
            return Err(TranscriptError::MissingId { file: source.to_owned(), line, field: "id" });
        };
        let kind = str_field(object, "type").unwrap_or_default().to_owned();
        let text = text.unwrap_or_else(|| message.to_string());
        match self.messages.iter_mut().find(|m| m.2 == id) {
            Some(existing) => *existing = (line, text, id, kind),
            None => self.messages.push((line, text, id, kind)),
        }
        Ok(())
    }

    fn rewind(&mut self, target: &str) {
        match self.messages.iter().position(|m| m.2 == target) {
            Some(at) => self.messages.truncate(at),
            // As Gemini CLI does: a rewind to an unknown message clears the conversation.
            None => self.messages.clear(),
        }
    }

    fn finish(self, source: &str) -> Result<Transcript> {
        let mut entries = Vec::with_capacity(self.messages.len());
        let mut ids = IdIndex::new();
        let mut parent: Option<String> = None;
        for (line, text, id, kind) in self.messages {
            ids.insert(id.clone(), entries.len());
            entries.push(Entry {
                line,
                id: Some(id.clone()),
                parent_id: parent.replace(id),
                kind,
                sidechain: false,
                text,
            });
        }
        let session_id = str_field(&self.metadata, "sessionId").map(str::to_owned);
        let header = Value::Object(self.metadata).to_string();
        Ok(Transcript {
            source: source.to_owned(),
            format: Format::Gemini,
            pi_version: None,
            header: Some(header),
            session_id,
            cwd: None,
            leaf: entries.len().checked_sub(1),
            entries,
            ids,
            meta_refs: Default::default(),
            skipped: Vec::new(),
            orphans: Vec::new(),
        })
    }
}

/// The role (`user`, `assistant`, `info`, `error`, `warning`) and text of a Gemini CLI
/// message: its content's text parts, then its tool calls by name.
pub(crate) fn describe(kind: &str, object: &Map<String, Value>) -> (String, String) {
    let role = if kind == "gemini" { "assistant" } else { kind };
    let mut parts = Vec::new();
    match object.get("content") {
        Some(Value::String(text)) => parts.push(text.clone()),
        Some(Value::Array(items)) => {
            for item in items {
                match item {
                    Value::String(text) => parts.push(text.clone()),
                    Value::Object(part) if part.get("thought") != Some(&Value::Bool(true)) => {
                        parts.extend(str_field(part, "text").map(str::to_owned));
                    }
                    _ => {}
                }
            }
        }
        Some(Value::Object(part)) => parts.extend(str_field(part, "text").map(str::to_owned)),
        _ => {}
    }
    for call in object.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
        parts.extend(call.get("name").and_then(Value::as_str).map(|name| format!("[{name}]")));
    }
    parts.retain(|p| !p.trim().is_empty());
    (role.to_owned(), parts.join(" "))
}
