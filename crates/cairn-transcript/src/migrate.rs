//! Bringing the entries of a Pi version 1 or 2 session up to version 3 for writing.
//!
//! cairn writes every new Pi session as version 3, so older entries are changed the way Pi
//! changes them when it opens an old file: version 1 entries receive `id` and `parentId`
//! (the ids assigned on load) and a compaction's `firstKeptEntryIndex` gains the matching
//! `firstKeptEntryId`; the `hookMessage` role of versions 1 and 2 becomes `custom`. The
//! entries of a version 3 session are written unchanged.

use serde_json::Value;

use crate::edit::set_fields;
use crate::model::ActivePath;

/// The lines of `path`'s entries as a version 3 session holds them.
pub(crate) fn v3_entry_lines(path: &ActivePath) -> Vec<String> {
    let version = path.pi_version.unwrap_or(3);
    path.entries
        .iter()
        .map(|entry| {
            let mut text = entry.text.clone();
            if version < 2 {
                let parent = entry.parent_id.clone().map_or(Value::Null, Value::String);
                let mut fields =
                    vec![("id", Value::String(entry.id.clone().unwrap_or_default())), ("parentId", parent)];
                if let Some(kept) = first_kept_id(path, &text) {
                    fields.push(("firstKeptEntryId", Value::String(kept)));
                }
                text = set_fields(&text, &fields);
            }
            if version < 3 {
                text = rename_hook_role(&text);
            }
            text
        })
        .collect()
}

/// For a version 1 compaction: the id of the entry its `firstKeptEntryIndex` points at. The
/// index counts the lines of the file with the header as 0; a version 1 path is the whole
/// file, so entry `index - 1` of the path is that line.
fn first_kept_id(path: &ActivePath, text: &str) -> Option<String> {
    let value: Value = serde_json::from_str(text).ok()?;
    if value.get("type")?.as_str()? != "compaction" || value.get("firstKeptEntryId").is_some() {
        return None;
    }
    let index = value.get("firstKeptEntryIndex")?.as_u64()?;
    let ordinal = usize::try_from(index.checked_sub(1)?).ok()?;
    path.entries.get(ordinal)?.id.clone()
}

/// Renames a message's `hookMessage` role to `custom`, as Pi's version 3 did.
fn rename_hook_role(text: &str) -> String {
    let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(text) else {
        return text.to_owned();
    };
    let Some(Value::Object(message)) = object.get_mut("message") else {
        return text.to_owned();
    };
    if message.get("role").and_then(Value::as_str) != Some("hookMessage") {
        return text.to_owned();
    }
    let old = r#""role":"hookMessage""#;
    if text.matches(old).count() == 1 {
        return text.replacen(old, r#""role":"custom""#, 1);
    }
    message.insert("role".to_owned(), Value::String("custom".to_owned()));
    Value::Object(object).to_string()
}
