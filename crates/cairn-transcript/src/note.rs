//! The note that closes a restored Pi session, and its line.

use serde::{Deserialize, Serialize};

use crate::model::ActivePath;

/// A note that closes a restored Pi session: "Restored session snapshot "<name>"."
///
/// It is written as a Pi `custom` entry: the entry type Pi keeps for extensions' own records,
/// which Pi's session context leaves out of what the model is sent (only `message`,
/// `custom_message`, `branch_summary` and `compaction` entries reach it) and which the session
/// tree shows. A `custom_message` would be shown in the chat but is always sent to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestoreNote {
    /// The `customType` of the entry (the extension the note speaks for).
    pub custom_type: String,
    /// The snapshot that was restored.
    pub name: String,
}

impl RestoreNote {
    /// The sentence the note carries.
    pub fn message(&self) -> String {
        format!("Restored session snapshot \"{}\".", self.name)
    }
}

/// An 8-hex-digit id for the note that no entry of `path` uses.
pub(crate) fn note_id(path: &ActivePath) -> String {
    let taken: std::collections::HashSet<&str> =
        path.entries.iter().filter_map(|e| e.id.as_deref()).collect();
    let mut uuid = uuid::Uuid::now_v7().simple().to_string();
    loop {
        // The random tail of a UUIDv7, cut as Pi cuts a random UUID.
        let id = uuid[uuid.len() - 8..].to_owned();
        if !taken.contains(id.as_str()) {
            return id;
        }
        uuid = uuid::Uuid::now_v7().simple().to_string();
    }
}

/// The note's line, with Pi's field order for a `custom` entry.
pub(crate) fn note_line(note: &RestoreNote, id: &str, parent: Option<&str>, timestamp: &str) -> String {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Data<'a> {
        message: String,
        name: &'a str,
    }
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Custom<'a> {
        r#type: &'a str,
        custom_type: &'a str,
        data: Data<'a>,
        id: &'a str,
        parent_id: Option<&'a str>,
        timestamp: &'a str,
    }
    let entry = Custom {
        r#type: "custom",
        custom_type: &note.custom_type,
        data: Data { message: note.message(), name: &note.name },
        id,
        parent_id: parent,
        timestamp,
    };
    serde_json::to_string(&entry).unwrap_or_default()
}
