//! Reading Codex CLI rollout files (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`).
//!
//! Every line is `{"timestamp", "type", "payload"}`. The first is `session_meta` (the thread id,
//! cwd, originator, CLI version, ...); after it come `response_item` (what the model sees),
//! `event_msg` (what the UI showed), `turn_context` (the settings of a turn) and `compacted`
//! lines, appended in order. The conversation is linear: the active path is the lines as
//! written, except that a `thread_rolled_back` event takes the last N turns back out, as Codex
//! does when it replays the file; the rolled-back turns and the marker are left out.
//!
//! The lines carry no ids of their own, so each gets one derived from its text (and, for an
//! exact repeat, how many copies came before it): the same line gets the same id in the file,
//! in a snapshot's document and in a session written from it, and lines the agent appends
//! later never move the ids of the earlier ones.
//!
//! The prompt the user typed is the `event_msg` `user_message`; the `response_item` user
//! message written just before it also carries context Codex injects (AGENTS.md, the
//! environment), so it is not taken for the prompt.
//!
//! Formats follow Codex CLI 0.125.0 (`codex-rs`, `protocol/src/protocol.rs`).

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::error::{Result, TranscriptError};
use crate::graph::IdIndex;
use crate::jsonl::{RawLine, str_field};
use crate::model::{Entry, Format};
use crate::transcript::Transcript;

/// Whether parsed lines are a Codex CLI rollout: the first line is its `session_meta`.
pub(crate) fn is_rollout(lines: &[RawLine]) -> bool {
    lines.first().is_some_and(|l| is_session_meta(&l.object))
}

fn is_session_meta(object: &Map<String, Value>) -> bool {
    str_field(object, "type") == Some("session_meta")
        && object.get("payload").and_then(|p| p.get("id")).is_some_and(Value::is_string)
}

/// Builds a Codex CLI transcript from the lines of a rollout; `lines[0]` is its `session_meta`.
pub(crate) fn parse(source: &str, lines: Vec<RawLine>) -> Result<Transcript> {
    let mut lines = lines.into_iter();
    let Some(meta) = lines.next() else {
        return Err(TranscriptError::Empty { file: source.to_owned() });
    };
    let payload = meta.object.get("payload");
    let field = |key: &str| payload.and_then(|p| p.get(key)).and_then(Value::as_str).map(str::to_owned);
    let (session_id, cwd) = (field("id"), field("cwd"));

    let mut kept: Vec<RawLine> = Vec::new();
    for line in lines {
        if let Some(turns) = rolled_back_turns(&line.object) {
            roll_back(&mut kept, turns);
            continue;
        }
        kept.push(line);
    }

    let mut entries = Vec::with_capacity(kept.len());
    let mut ids = IdIndex::new();
    let mut copies: HashMap<String, usize> = HashMap::new();
    let mut parent: Option<String> = None;
    for line in kept {
        let id = line_id(&line.text, &mut copies);
        ids.insert(id.clone(), entries.len());
        entries.push(Entry {
            line: line.line,
            id: Some(id.clone()),
            parent_id: parent.replace(id),
            kind: str_field(&line.object, "type").unwrap_or_default().to_owned(),
            sidechain: false,
            text: line.text,
        });
    }
    Ok(Transcript {
        source: source.to_owned(),
        format: Format::Codex,
        pi_version: None,
        header: Some(meta.text),
        session_id,
        cwd,
        leaf: entries.len().checked_sub(1),
        entries,
        ids,
        meta_refs: Default::default(),
        skipped: Vec::new(),
        orphans: Vec::new(),
    })
}

/// Gives `entries`, a rollout's lines in order, the ids a parse of them gives: after their
/// text changed (a path moved to another root), so a session written from them reads back
/// with the ids it was written with.
pub(crate) fn renumber(entries: &mut [Entry]) {
    let mut copies: HashMap<String, usize> = HashMap::new();
    let mut parent: Option<String> = None;
    for entry in entries {
        let id = line_id(&entry.text, &mut copies);
        entry.parent_id = parent.replace(id.clone());
        entry.id = Some(id);
    }
}

/// A line's id: 16 hex digits of its text's FNV-1a hash, and `-N` for the Nth exact copy.
fn line_id(text: &str, copies: &mut HashMap<String, usize>) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let base = format!("{hash:016x}");
    let seen = copies.entry(base.clone()).or_insert(0);
    *seen += 1;
    if *seen == 1 { base } else { format!("{base}-{seen}") }
}

/// `num_turns` of a `thread_rolled_back` event.
fn rolled_back_turns(object: &Map<String, Value>) -> Option<usize> {
    if str_field(object, "type") != Some("event_msg") {
        return None;
    }
    let payload = object.get("payload")?;
    (payload.get("type")?.as_str()? == "thread_rolled_back").then_some(())?;
    let turns = payload.get("num_turns").and_then(Value::as_u64).unwrap_or(0);
    Some(usize::try_from(turns).unwrap_or(usize::MAX))
}

/// Drops the last `turns` prompted turns: everything from the start of the turn whose prompt
/// is the `turns`-th from the end. Fewer prompts than that leaves only what came before the
/// first one.
fn roll_back(kept: &mut Vec<RawLine>, turns: usize) {
    if turns == 0 {
        return;
    }
    let prompts: Vec<usize> =
        kept.iter().enumerate().filter(|(_, l)| is_user_message(&l.object)).map(|(i, _)| i).collect();
    let Some(&prompt) = prompts.len().checked_sub(turns).map_or(prompts.first(), |at| prompts.get(at)) else {
        return;
    };
    let objects: Vec<&Map<String, Value>> = kept.iter().map(|l| &l.object).collect();
    kept.truncate(turn_start(&objects, prompt));
}

/// Where the turn of the prompt at `prompt` begins: the lines Codex writes in front of a
/// prompt (`task_started`, `turn_context`, the developer and user messages that carry the
/// turn's context and the prompt itself) directly before it belong to its turn.
pub(crate) fn turn_start(objects: &[&Map<String, Value>], prompt: usize) -> usize {
    let mut start = prompt;
    while start > 0 && is_preamble(objects[start - 1]) {
        start -= 1;
    }
    start
}

/// Whether a line is one Codex writes in front of a prompt, before the model answers.
pub(crate) fn is_preamble(object: &Map<String, Value>) -> bool {
    let payload = object.get("payload").and_then(Value::as_object);
    let payload_type = payload.and_then(|p| str_field(p, "type"));
    match str_field(object, "type") {
        Some("turn_context") => true,
        Some("event_msg") => matches!(payload_type, Some("task_started" | "turn_started")),
        Some("response_item") => {
            payload_type == Some("message")
                && matches!(payload.and_then(|p| str_field(p, "role")), Some("user" | "developer"))
        }
        _ => false,
    }
}

/// Whether a line is the `event_msg` `user_message` of a prompt.
pub(crate) fn is_user_message(object: &Map<String, Value>) -> bool {
    str_field(object, "type") == Some("event_msg")
        && object.get("payload").and_then(|p| p.get("type")).and_then(Value::as_str) == Some("user_message")
}

/// The text of the prompt on an `event_msg` `user_message` line.
pub(crate) fn prompt_text(object: &Map<String, Value>) -> Option<String> {
    is_user_message(object).then_some(())?;
    object.get("payload")?.get("message")?.as_str().map(str::to_owned)
}

/// The role and text of a rollout line, for diffs and listings: `user` for a prompt,
/// `assistant`, `developer` and `input` (a user message as the model sees it, with injected
/// context) for messages, `tool_call` and `tool_result`, `reasoning`, `compaction`, and the
/// line's own type for the rest.
pub(crate) fn describe(kind: &str, object: &Map<String, Value>) -> (String, String) {
    let payload = object.get("payload").and_then(Value::as_object);
    let field = |key: &str| payload.and_then(|p| str_field(p, key)).unwrap_or_default().to_owned();
    let payload_type = field("type");
    match (kind, payload_type.as_str()) {
        ("event_msg", "user_message") => ("user".to_owned(), field("message")),
        ("event_msg", other) => (other.to_owned(), field("message")),
        ("response_item", "message") => {
            let role = match field("role").as_str() {
                "user" => "input".to_owned(),
                other => other.to_owned(),
            };
            (role, payload.and_then(|p| p.get("content")).map(content_text).unwrap_or_default())
        }
        ("response_item", "function_call" | "custom_tool_call" | "local_shell_call" | "tool_search_call") => {
            ("tool_call".to_owned(), format!("[{}]", field("name")))
        }
        ("response_item", t) if t.ends_with("_output") => {
            let output = payload.and_then(|p| p.get("output")).map(output_text).unwrap_or_default();
            ("tool_result".to_owned(), output)
        }
        ("response_item", "reasoning") => ("reasoning".to_owned(), String::new()),
        ("response_item", other) => (other.to_owned(), String::new()),
        ("compacted", _) => ("compaction".to_owned(), field("message")),
        ("turn_context", _) => ("turn_context".to_owned(), field("model")),
        ("session_meta", _) => ("session_meta".to_owned(), field("id")),
        (other, _) => (other.to_owned(), String::new()),
    }
}

fn content_text(content: &Value) -> String {
    let parts = content.as_array().into_iter().flatten();
    let texts: Vec<&str> = parts.filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
    texts.join(" ")
}

fn output_text(output: &Value) -> String {
    match output {
        Value::String(text) => text.clone(),
        Value::Array(_) => content_text(output),
        other => other.get("content").and_then(Value::as_str).unwrap_or_default().to_owned(),
    }
}

/// Whether a rollout file holds a prompt: Codex lists only those in its `resume` picker.
pub(crate) fn has_prompt(text: &str) -> bool {
    text.lines().any(|raw| {
        matches!(serde_json::from_str::<Value>(raw), Ok(Value::Object(object)) if is_user_message(&object))
    })
}
