//! Moving a conversation to another project root: every JSON string value that names the old
//! root (`cwd` fields, paths in tool calls and their results) is made to name the new one.
//!
//! The old root is replaced where it stands as a whole path: not preceded by a character that
//! continues a path (`/x/a/proj` does not name `/a/proj`) and followed by `/`, the end of the
//! string, or a character that cannot continue a file name (`/a/proj.bak` is another file).
//! The change is made on the line's text, so the rest of it keeps its bytes; it is checked
//! against the same change made on the parsed values, and when the two disagree (the root in
//! a key, a string with escapes the text match cannot see through) the line is re-serialised
//! from the changed values. A line the change does not touch keeps its bytes.

use serde_json::Value;

use crate::model::ActivePath;

impl ActivePath {
    /// Rewrites every string value of the header and entries that names `old` (as a whole
    /// path, see the module documentation) to name `new` instead; returns how many lines
    /// changed. An empty `old`, `/` or `old == new` changes nothing. A Codex CLI line's id is
    /// its text's hash, so a Codex path's entries get the ids of their new text: cut a path
    /// by its saved ids before moving it.
    pub fn remap_root(&mut self, old: &str, new: &str) -> usize {
        let mut changed = 0;
        for line in self.header.iter_mut().chain(self.entries.iter_mut().map(|e| &mut e.text)) {
            if let Some(text) = remap_root_line(line, old, new) {
                *line = text;
                changed += 1;
            }
        }
        if changed > 0 && self.format == crate::model::Format::Codex {
            crate::codex::renumber(&mut self.entries);
        }
        changed
    }
}

/// [`ActivePath::remap_root`] for one JSON line: the new text, or `None` when nothing in it
/// names `old` (or it is not JSON).
pub fn remap_root_line(line: &str, old: &str, new: &str) -> Option<String> {
    let old = old.trim_end_matches('/');
    let new = new.trim_end_matches('/');
    if old.is_empty() || old == new {
        return None;
    }
    let mut value: Value = serde_json::from_str(line).ok()?;
    if !remap_value(&mut value, old, new) {
        return None;
    }
    let textual = replace_whole(line, &json_inner(old), &json_inner(new));
    match textual.and_then(|t| serde_json::from_str::<Value>(&t).ok().filter(|v| *v == value).map(|_| t)) {
        Some(text) => Some(text),
        None => Some(value.to_string()),
    }
}

/// The text of `s` as it stands inside a JSON string.
fn json_inner(s: &str) -> String {
    let quoted = Value::String(s.to_owned()).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

/// Replaces every string value under `value` (not keys); whether any changed.
fn remap_value(value: &mut Value, old: &str, new: &str) -> bool {
    match value {
        Value::String(s) => match replace_whole(s, old, new) {
            Some(changed) => {
                *s = changed;
                true
            }
            None => false,
        },
        Value::Array(items) => items.iter_mut().fold(false, |any, v| remap_value(v, old, new) | any),
        Value::Object(map) => map.values_mut().fold(false, |any, v| remap_value(v, old, new) | any),
        _ => false,
    }
}

/// `text` with each whole-path occurrence of `old` replaced by `new`; `None` when there is none.
fn replace_whole(text: &str, old: &str, new: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut any = false;
    let mut before: Option<char> = None;
    while let Some(at) = rest.find(old) {
        let prev = rest[..at].chars().next_back().or(before);
        let next = rest[at + old.len()..].chars().next();
        let starts = prev.is_none_or(|c| !continues_path(c) && c != '/');
        let ends = next.is_none_or(|c| c == '/' || !continues_path(c));
        let take = at + old.len();
        if starts && ends {
            out.push_str(&rest[..at]);
            out.push_str(new);
            any = true;
        } else {
            out.push_str(&rest[..take]);
        }
        before = rest[..take].chars().next_back();
        rest = &rest[take..];
    }
    out.push_str(rest);
    any.then_some(out)
}

/// Whether `c` can continue a file name.
fn continues_path(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '~' | '+' | '@')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_paths_are_replaced_and_the_rest_of_the_line_keeps_its_bytes() {
        let line = r#"{"cwd":"/a/proj", "x" : 1,"input":{"file_path":"/a/proj/src/m.rs","command":"cd /a/proj && ls /a/proj.bak /x/a/proj"}}"#;
        let out = remap_root_line(line, "/a/proj", "/b/work").unwrap();
        assert_eq!(
            out,
            r#"{"cwd":"/b/work", "x" : 1,"input":{"file_path":"/b/work/src/m.rs","command":"cd /b/work && ls /a/proj.bak /x/a/proj"}}"#
        );
    }

    #[test]
    fn a_line_that_does_not_name_the_root_is_left_alone() {
        assert_eq!(remap_root_line(r#"{"cwd":"/a/project"}"#, "/a/proj", "/b/work"), None);
        assert_eq!(remap_root_line("not json /a/proj", "/a/proj", "/b/work"), None);
        assert_eq!(remap_root_line(r#"{"cwd":"/a/proj"}"#, "/", "/b"), None);
    }

    #[test]
    fn a_root_in_a_key_stays_and_the_values_change() {
        let out = remap_root_line(r#"{"/a/proj":"/a/proj"}"#, "/a/proj", "/b/work").unwrap();
        assert_eq!(out, r#"{"/a/proj":"/b/work"}"#);
    }

    #[test]
    fn a_moved_codex_path_has_the_ids_its_new_lines_read_back_with() {
        let line = |kind: &str, text: &str| {
            serde_json::json!({"timestamp": "t", "type": kind, "payload": {"cwd": "/a/proj", "text": text}})
                .to_string()
        };
        let meta = r#"{"timestamp":"t","type":"session_meta","payload":{"id":"x","cwd":"/a/proj"}}"#;
        let lines = [
            meta.to_owned(),
            line("turn_context", "same"),
            line("event_msg", "same"),
            line("event_msg", "same"),
        ];
        let mut path = crate::Transcript::parse("rollout.jsonl", &lines.join("\n")).unwrap().active_path();
        assert_eq!(path.remap_root("/a/proj", "/b/work"), 4);
        let written =
            [path.header.clone().unwrap()].into_iter().chain(path.entries.iter().map(|e| e.text.clone()));
        let again = crate::Transcript::parse("moved.jsonl", &written.collect::<Vec<_>>().join("\n")).unwrap();
        let ids = |p: &ActivePath| -> Vec<(Option<String>, Option<String>)> {
            p.entries.iter().map(|e| (e.id.clone(), e.parent_id.clone())).collect()
        };
        assert_eq!(ids(&path), ids(&again.active_path()));
        assert!(path.entries.iter().all(|e| e.text.contains("/b/work")));
    }

    #[test]
    fn nested_json_text_is_remapped_too() {
        let inner = r#"{"cwd":"/a/proj"}"#;
        let line = serde_json::json!({"path": "agent-1.jsonl", "text": inner}).to_string();
        let out = remap_root_line(&line, "/a/proj", "/b/work").unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["text"], r#"{"cwd":"/b/work"}"#);
    }
}
