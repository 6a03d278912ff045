//! Changing a few top-level fields of a JSON line while leaving the rest of its text as it was.
//!
//! Writing a session sometimes has to change a line (a new `sessionId`, ids for a version 1
//! Pi entry). Re-serialising the whole object would reorder keys and re-escape strings, so the
//! change is made on the text: an existing `"key":value` pair is replaced where it occurs once,
//! a missing key is inserted right after the opening brace. When that cannot be done safely
//! (unusual spacing, the pair also occurring inside nested data) the line is re-serialised.

use serde_json::{Map, Value};

/// Sets the top-level `fields` of the JSON object in `text`.
pub(crate) fn set_fields(text: &str, fields: &[(&str, Value)]) -> String {
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(text) else {
        return text.to_owned();
    };
    match splice(text, &object, fields) {
        Some(edited) if has_fields(&edited, fields) => edited,
        _ => reserialize(object, fields),
    }
}

fn splice(text: &str, object: &Map<String, Value>, fields: &[(&str, Value)]) -> Option<String> {
    let mut out = text.to_owned();
    let mut inserts = Vec::new();
    for (key, value) in fields {
        let new_pair = pair(key, value);
        match object.get(*key) {
            None => inserts.push(new_pair),
            Some(old) if old == value => {}
            Some(old) => {
                let old_pair = pair(key, old);
                if out.matches(&old_pair).count() != 1 {
                    return None;
                }
                out = out.replacen(&old_pair, &new_pair, 1);
            }
        }
    }
    if !inserts.is_empty() {
        let brace = out.find('{')? + 1;
        let mut insert = inserts.join(",");
        if !out[brace..].trim_start().starts_with('}') {
            insert.push(',');
        }
        out.insert_str(brace, &insert);
    }
    Some(out)
}

fn pair(key: &str, value: &Value) -> String {
    format!("{}:{}", Value::String(key.to_owned()), value)
}

fn has_fields(text: &str, fields: &[(&str, Value)]) -> bool {
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    fields.iter().all(|(key, value)| object.get(*key) == Some(value))
}

fn reserialize(mut object: Map<String, Value>, fields: &[(&str, Value)]) -> String {
    for (key, value) in fields {
        object.insert((*key).to_owned(), value.clone());
    }
    Value::Object(object).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn replaces_in_place_and_keeps_key_order() {
        let text = r#"{"type":"user","sessionId":"old","z":1}"#;
        let out = set_fields(text, &[("sessionId", json!("new"))]);
        assert_eq!(out, r#"{"type":"user","sessionId":"new","z":1}"#);
    }

    #[test]
    fn inserts_missing_keys_after_the_brace() {
        let out = set_fields(r#"{"type":"message"}"#, &[("id", json!("ab")), ("parentId", Value::Null)]);
        assert_eq!(out, r#"{"id":"ab","parentId":null,"type":"message"}"#);
        assert_eq!(set_fields("{}", &[("id", json!("ab"))]), r#"{"id":"ab"}"#);
    }

    #[test]
    fn falls_back_to_reserialising_when_the_pair_repeats() {
        let text = r#"{"b":{"sessionId":"old"},"sessionId":"old"}"#;
        let out = set_fields(text, &[("sessionId", json!("new"))]);
        assert_eq!(out, r#"{"b":{"sessionId":"old"},"sessionId":"new"}"#);
    }
}
