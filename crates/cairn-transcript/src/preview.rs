//! What an entry is (its role) and a one-line preview of what it says, for diffs and listings.

use serde_json::{Map, Value};

use crate::model::{Entry, Format};

/// Longest preview, in characters, including the trailing ellipsis of a cut preview.
const PREVIEW_CHARS: usize = 80;

/// The role of an entry and a short single-line preview of its text.
pub(crate) fn describe(format: Format, entry: &Entry) -> (String, String) {
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(&entry.text) else {
        return (entry.kind.clone(), String::new());
    };
    let (role, text) = match format {
        Format::Pi => describe_pi(&entry.kind, &object),
        Format::Claude => describe_claude(&entry.kind, &object),
        Format::Gemini => crate::gemini::describe(&entry.kind, &object),
        Format::Codex => crate::codex::describe(&entry.kind, &object),
    };
    (role, shorten(&text))
}

fn describe_pi(kind: &str, object: &Map<String, Value>) -> (String, String) {
    let field = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or_default();
    match kind {
        "message" => {
            let message = object.get("message").and_then(Value::as_object);
            let role = message.and_then(|m| m.get("role")).and_then(Value::as_str).unwrap_or_default();
            let text = message.map(pi_message_text).unwrap_or_default();
            (pi_role(role).to_owned(), text)
        }
        "compaction" | "branch_summary" => (kind.to_owned(), field("summary").to_owned()),
        "model_change" => (kind.to_owned(), format!("{}/{}", field("provider"), field("modelId"))),
        "thinking_level_change" => (kind.to_owned(), field("thinkingLevel").to_owned()),
        "custom_message" => (kind.to_owned(), object.get("content").map(content_text).unwrap_or_default()),
        "custom" => (kind.to_owned(), field("customType").to_owned()),
        "label" => (kind.to_owned(), field("label").to_owned()),
        "session_info" => (kind.to_owned(), field("name").to_owned()),
        other => (other.to_owned(), String::new()),
    }
}

/// Pi's message roles, named in the snake_case the rest of the output uses.
fn pi_role(role: &str) -> &str {
    match role {
        "toolResult" => "tool_result",
        "bashExecution" => "bash_execution",
        "hookMessage" => "custom",
        "branchSummary" => "branch_summary",
        "compactionSummary" => "compaction",
        "" => "message",
        other => other,
    }
}

fn pi_message_text(message: &Map<String, Value>) -> String {
    if let Some(command) = message.get("command").and_then(Value::as_str) {
        return command.to_owned();
    }
    if let Some(summary) = message.get("summary").and_then(Value::as_str) {
        return summary.to_owned();
    }
    message.get("content").map(content_text).unwrap_or_default()
}

fn describe_claude(kind: &str, object: &Map<String, Value>) -> (String, String) {
    let content = object.get("message").and_then(Value::as_object).and_then(|m| m.get("content"));
    match kind {
        "user" => {
            let only_results = content
                .and_then(Value::as_array)
                .is_some_and(|blocks| !blocks.is_empty() && blocks.iter().all(is_tool_result));
            let role = if only_results { "tool_result" } else { "user" };
            (role.to_owned(), content.map(content_text).unwrap_or_default())
        }
        "assistant" => (kind.to_owned(), content.map(content_text).unwrap_or_default()),
        "system" => {
            let text = object
                .get("content")
                .and_then(Value::as_str)
                .or_else(|| object.get("subtype").and_then(Value::as_str))
                .unwrap_or_default();
            (kind.to_owned(), text.to_owned())
        }
        "summary" => {
            let text = object.get("summary").and_then(Value::as_str);
            (kind.to_owned(), text.unwrap_or_default().to_owned())
        }
        other => (other.to_owned(), String::new()),
    }
}

/// Tags Claude Code wraps context in that the user did not type (IDE state, reminders).
const CONTEXT_WRAPPERS: [&str; 3] = ["ide_selection", "ide_opened_file", "system-reminder"];

/// Starts of user text that Claude Code writes itself: the preamble of a local command's
/// output and the echo of a slash command.
const GENERATED_STARTS: [&str; 4] = [
    "Caveat: The messages below were generated",
    "<command-name>",
    "<command-message>",
    "<local-command-stdout>",
];

/// The text the user typed in a Claude Code user message content, without the context blocks
/// Claude Code adds; `None` for tool results, generated text, or nothing left.
pub(crate) fn claude_prompt(content: &Value) -> Option<String> {
    let texts: Vec<&str> = match content {
        Value::String(text) => vec![text.as_str()],
        Value::Array(blocks) => {
            if blocks.iter().any(is_tool_result) {
                return None;
            }
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect()
        }
        _ => return None,
    };
    let kept: Vec<String> = texts
        .into_iter()
        .map(strip_context)
        .filter(|t| !t.is_empty() && !GENERATED_STARTS.iter().any(|start| t.starts_with(start)))
        .collect();
    (!kept.is_empty()).then(|| kept.join(" "))
}

/// Removes leading `<tag>…</tag>` blocks of [`CONTEXT_WRAPPERS`] and trims what is left.
fn strip_context(text: &str) -> String {
    let mut rest = text.trim();
    'outer: loop {
        for tag in CONTEXT_WRAPPERS {
            let open = format!("<{tag}>");
            let close = format!("</{tag}>");
            if let Some(after_open) = rest.strip_prefix(&open) {
                rest = match after_open.find(&close) {
                    Some(end) => after_open[end + close.len()..].trim_start(),
                    None => "",
                };
                continue 'outer;
            }
        }
        return rest.trim().to_owned();
    }
}

fn is_tool_result(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("tool_result")
}

/// The text of a message content: a string, or blocks whose text parts are joined; tool calls
/// appear as their tool name, images as `[image]`, thinking is left out.
fn content_text(content: &Value) -> String {
    let blocks = match content {
        Value::String(text) => return text.clone(),
        Value::Array(blocks) => blocks,
        _ => return String::new(),
    };
    let mut parts = Vec::new();
    for block in blocks {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or_default();
        let part = match kind {
            "text" => block.get("text").and_then(Value::as_str).map(str::to_owned),
            "toolCall" | "tool_use" => {
                block.get("name").and_then(Value::as_str).map(|name| format!("[{name}]"))
            }
            "tool_result" => block.get("content").map(content_text),
            "image" => Some("[image]".to_owned()),
            _ => None,
        };
        parts.extend(part.filter(|p| !p.is_empty()));
    }
    parts.join(" ")
}

/// Collapses whitespace to single spaces and cuts to [`PREVIEW_CHARS`] characters.
pub(crate) fn shorten(text: &str) -> String {
    let single_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if single_line.chars().count() <= PREVIEW_CHARS {
        return single_line;
    }
    let mut cut: String = single_line.chars().take(PREVIEW_CHARS - 1).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorten_keeps_short_text_and_cuts_long_text() {
        assert_eq!(shorten("  a\n\tb  "), "a b");
        let long = "x".repeat(200);
        let cut = shorten(&long);
        assert_eq!(cut.chars().count(), PREVIEW_CHARS);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn claude_prompts_leave_out_what_the_user_did_not_type() {
        let selection = serde_json::json!([
            {"type": "text", "text": "<ide_selection>The user selected lines 1 to 3 of a.rs</ide_selection>"},
            {"type": "text", "text": "Why does this panic?"}
        ]);
        assert_eq!(claude_prompt(&selection).as_deref(), Some("Why does this panic?"));
        let caveat = Value::from(
            "Caveat: The messages below were generated by the user while running local commands.",
        );
        assert_eq!(claude_prompt(&caveat), None);
        assert_eq!(claude_prompt(&Value::from("<command-name>/clear</command-name>")), None);
    }

    #[test]
    fn content_blocks_join_text_and_name_tools() {
        let content = serde_json::json!([
            {"type": "thinking", "thinking": "hidden"},
            {"type": "text", "text": "Reading it."},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}
        ]);
        assert_eq!(content_text(&content), "Reading it. [read]");
    }
}
