//! Splitting a JSONL text into numbered, parsed lines while keeping each line's exact text.
//!
//! Both agents read their files line by line and skip a line they cannot parse (Pi's session
//! manager drops it silently; a session killed mid-write ends in a torn line). Reading the
//! same way keeps what the agent itself would show; strict reading refuses such a file instead.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Result, TranscriptError};

/// One non-blank line of a JSONL file: its number, its exact text and its parsed object.
#[derive(Debug, Clone)]
pub(crate) struct RawLine {
    /// 1-based line number in the file.
    pub line: usize,
    /// The line exactly as read, without its line terminator.
    pub text: String,
    /// The parsed JSON object.
    pub object: Map<String, Value>,
}

/// A line that was left out because it is not a JSON object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedLine {
    /// 1-based line number in the file.
    pub line: usize,
    /// What is wrong with it, positions counted within that line.
    pub reason: String,
}

/// The lines that parsed, and the ones that did not (always empty when `strict`).
pub(crate) struct ParsedLines {
    pub lines: Vec<RawLine>,
    pub skipped: Vec<SkippedLine>,
}

/// Parses every non-blank line as a JSON object.
///
/// Blank lines are skipped, as both agents do. A trailing `\r` is kept out of the text so
/// that a file written on Windows does not carry it into the rewritten session. A line that
/// is not a JSON object is refused when `strict`, and otherwise left out and reported.
pub(crate) fn parse_lines(file: &str, text: &str, strict: bool) -> Result<ParsedLines> {
    let mut lines = Vec::new();
    let mut skipped = Vec::new();
    for (index, raw) in text.split('\n').enumerate() {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if raw.trim().is_empty() {
            continue;
        }
        let reason = match serde_json::from_str::<Value>(raw) {
            Ok(Value::Object(object)) => {
                lines.push(RawLine { line: index + 1, text: raw.to_owned(), object });
                continue;
            }
            Ok(_) => "the line is not a JSON object".to_owned(),
            Err(e) => parse_reason(&e),
        };
        if strict {
            return Err(TranscriptError::Malformed { file: file.to_owned(), line: index + 1, reason });
        }
        skipped.push(SkippedLine { line: index + 1, reason });
    }
    if lines.is_empty() {
        return Err(TranscriptError::Empty { file: file.to_owned() });
    }
    Ok(ParsedLines { lines, skipped })
}

/// The parser's message with its position given within the line. serde_json says "at line 1
/// column 540" because it sees one line at a time; beside the file's own line number that
/// reads like a second, contradicting location.
fn parse_reason(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let bare = match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message,
    };
    match error.column() {
        0 => bare,
        column => format!("{bare}, at character {column} of the line"),
    }
}

/// The string value of `key`, if present and a string.
pub(crate) fn str_field<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_line_is_skipped_with_its_position_inside_the_line() {
        let text = "{\"a\":1}\n{\"b\":2}{\"c\":3}\n{\"d\":";
        let parsed = parse_lines("f", text, false).unwrap();
        assert_eq!(parsed.lines.len(), 1);
        let lines: Vec<usize> = parsed.skipped.iter().map(|s| s.line).collect();
        assert_eq!(lines, [2, 3]);
        assert_eq!(parsed.skipped[0].reason, "trailing characters, at character 8 of the line");
        assert!(!parsed.skipped[1].reason.contains("line 1"), "{}", parsed.skipped[1].reason);
        assert!(parse_lines("f", text, true).is_err());
    }
}
