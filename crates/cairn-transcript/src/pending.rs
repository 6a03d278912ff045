//! Cutting a path before a tool call that has no result yet.
//!
//! A save made while the agent runs (the agent calling a save tool) reads a file whose last
//! assistant message holds that very call, with no result written yet. A session resumed from
//! such a path would hold a tool call without a result, which the model providers refuse.
//! As Pi's session snapshot extension does, the path is cut before that whole assistant message.

use std::collections::HashSet;

use serde_json::Value;

use crate::model::{ActivePath, Format};

impl ActivePath {
    /// Drops the first assistant message whose tool calls have no result later on the path, and
    /// everything after it. Returns how many entries with an id were dropped (0 when every
    /// tool call has its result).
    pub fn cut_unanswered_tool_calls(&mut self) -> usize {
        let parsed: Vec<Option<Value>> =
            self.entries.iter().map(|e| serde_json::from_str(&e.text).ok()).collect();
        let mut answered: HashSet<String> = HashSet::new();
        for value in parsed.iter().flatten() {
            answered.extend(result_ids(self.format, value));
        }
        let Some(mut cut) = parsed.iter().position(|value| {
            value.as_ref().is_some_and(|v| call_ids(self.format, v).iter().any(|id| !answered.contains(id)))
        }) else {
            return 0;
        };
        // Claude Code writes one assistant message as several entries (one per content block)
        // sharing `message.id`: the cut goes before the first of them.
        if self.format == Format::Claude
            && let Some(message_id) = parsed[cut].as_ref().and_then(claude_message_id)
        {
            let mut earlier = cut;
            while earlier > 0 {
                earlier -= 1;
                if self.entries[earlier].id.is_none() {
                    continue;
                }
                if parsed[earlier].as_ref().and_then(claude_message_id).as_deref()
                    != Some(message_id.as_str())
                {
                    break;
                }
                cut = earlier;
            }
        }
        let dropped = self.entries[cut..].iter().filter(|e| e.id.is_some()).count();
        self.entries.truncate(cut);
        dropped
    }
}

/// The ids of the tool calls an assistant message makes.
fn call_ids(format: Format, value: &Value) -> Vec<String> {
    let (block_type, role_ok) = match format {
        Format::Pi => ("toolCall", message_role(value) == Some("assistant")),
        Format::Claude => ("tool_use", value.get("type").and_then(Value::as_str) == Some("assistant")),
        // Gemini CLI records each tool call with its result inside one message: none is open.
        Format::Gemini => return Vec::new(),
        Format::Codex => return codex_call(value, false).into_iter().collect(),
    };
    if !role_ok {
        return Vec::new();
    }
    blocks(value)
        .filter(|b| b.get("type").and_then(Value::as_str) == Some(block_type))
        .filter_map(|b| b.get("id").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// The ids of the tool calls an entry answers.
fn result_ids(format: Format, value: &Value) -> Vec<String> {
    match format {
        Format::Pi => {
            let message = value.get("message");
            let id = message.and_then(|m| m.get("toolCallId")).and_then(Value::as_str);
            match (message_role(value), id) {
                (Some("toolResult"), Some(id)) => vec![id.to_owned()],
                _ => Vec::new(),
            }
        }
        Format::Claude => blocks(value)
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .filter_map(|b| b.get("tool_use_id").and_then(Value::as_str).map(str::to_owned))
            .collect(),
        Format::Gemini => Vec::new(),
        Format::Codex => codex_call(value, true).into_iter().collect(),
    }
}

/// The `call_id` of a Codex CLI tool call (`function_call`, `custom_tool_call`, ...) or, with
/// `output`, of its result (`function_call_output`, `custom_tool_call_output`, ...).
fn codex_call(value: &Value, output: bool) -> Option<String> {
    (value.get("type")?.as_str()? == "response_item").then_some(())?;
    let payload = value.get("payload")?;
    let kind = payload.get("type")?.as_str()?;
    let wanted = match kind.strip_suffix("_output") {
        Some(call) => output && CODEX_CALLS.contains(&call),
        None => !output && CODEX_CALLS.contains(&kind),
    };
    wanted.then_some(())?;
    payload.get("call_id")?.as_str().map(str::to_owned)
}

/// Codex CLI's tool calls whose result is a `<call>_output` item with the same `call_id`.
const CODEX_CALLS: [&str; 3] = ["function_call", "custom_tool_call", "tool_search_call"];

fn message_role(value: &Value) -> Option<&str> {
    value.get("message")?.get("role")?.as_str()
}

fn blocks(value: &Value) -> impl Iterator<Item = &Value> {
    value.get("message").and_then(|m| m.get("content")).and_then(Value::as_array).into_iter().flatten()
}

fn claude_message_id(value: &Value) -> Option<String> {
    (value.get("type")?.as_str()? == "assistant").then_some(())?;
    value.get("message")?.get("id")?.as_str().map(str::to_owned)
}
