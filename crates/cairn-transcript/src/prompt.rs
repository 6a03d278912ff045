//! The text of the prompt a line of a transcript holds, for finding where a turn began.

use serde_json::Value;

use crate::model::Format;

/// The text of the user's message on `line`, a line of a transcript of `format`; `None` for
/// other lines (assistant messages, tool results, metadata).
///
/// Pi: a `message` entry with `message.role` `user`. Claude Code: a `user` entry's
/// `message.content`. Gemini CLI: a `user` record's `content`. The content is a string or
/// parts whose text parts are joined with newlines; parts that are all tool results give
/// `None`. Codex CLI: the `message` of an `event_msg` `user_message`, the prompt exactly as
/// typed (the `response_item` user message beside it also carries context Codex injects).
pub fn user_prompt_text(format: Format, line: &str) -> Option<String> {
    let value: Value = serde_json::from_str(line).ok()?;
    let message = match (format, value.get("type")?.as_str()?) {
        (Format::Codex, _) => {
            let Value::Object(object) = &value else { return None };
            return crate::codex::prompt_text(object);
        }
        (Format::Claude, "user") => value.get("message")?,
        // Gemini CLI keeps `content` on the record itself.
        (Format::Gemini, "user") => &value,
        (Format::Pi, "message") if value.pointer("/message/role")?.as_str()? == "user" => {
            value.get("message")?
        }
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
    use super::*;

    #[test]
    fn each_format_gives_the_prompt_and_nothing_else() {
        let pi = r#"{"type":"message","id":"a","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}"#;
        assert_eq!(user_prompt_text(Format::Pi, pi).as_deref(), Some("hi"));
        let claude = r#"{"type":"user","uuid":"u","message":{"role":"user","content":"fix it"}}"#;
        assert_eq!(user_prompt_text(Format::Claude, claude).as_deref(), Some("fix it"));
        let result =
            r#"{"type":"user","uuid":"u","message":{"content":[{"type":"tool_result","content":"ok"}]}}"#;
        assert_eq!(user_prompt_text(Format::Claude, result), None);
        let gemini = r#"{"id":"m","type":"user","content":[{"text":"rename"}]}"#;
        assert_eq!(user_prompt_text(Format::Gemini, gemini).as_deref(), Some("rename"));
        let codex = r#"{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":"fix the tests","local_images":[]}}"#;
        assert_eq!(user_prompt_text(Format::Codex, codex).as_deref(), Some("fix the tests"));
        let injected = r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the tests"}]}}"#;
        assert_eq!(user_prompt_text(Format::Codex, injected), None);
    }
}
