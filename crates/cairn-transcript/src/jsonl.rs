//! Splitting a JSONL text into numbered, parsed lines while keeping each line's exact text.

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

/// Parses every non-blank line as a JSON object.
///
/// Blank lines are skipped, as both agents do. A trailing `\r` is kept out of the text so
/// that a file written on Windows does not carry it into the rewritten session.
pub(crate) fn parse_lines(file: &str, text: &str) -> Result<Vec<RawLine>> {
    let mut lines = Vec::new();
    for (index, raw) in text.split('\n').enumerate() {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if raw.trim().is_empty() {
            continue;
        }
        let malformed =
            |reason: String| TranscriptError::Malformed { file: file.to_owned(), line: index + 1, reason };
        let value: Value = serde_json::from_str(raw).map_err(|e| malformed(e.to_string()))?;
        let Value::Object(object) = value else {
            return Err(malformed("the line is not a JSON object".to_owned()));
        };
        lines.push(RawLine { line: index + 1, text: raw.to_owned(), object });
    }
    if lines.is_empty() {
        return Err(TranscriptError::Empty { file: file.to_owned() });
    }
    Ok(lines)
}

/// The string value of `key`, if present and a string.
pub(crate) fn str_field<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str)
}
