//! Reading Pi session files (versions 1, 2 and 3).
//!
//! Line 1 is the header `{"type":"session","version":3,"id",...}`. Version 1 files (no
//! `version`) are linear and their entries carry no `id`/`parentId`: as Pi does when it
//! migrates them, each entry gets an id and hangs from the entry before it. Pi draws those ids
//! at random; here they are derived from the entry's position and text so that reading the
//! same file twice gives the same ids (and diffs of two snapshots line up).

use serde_json::Value;

use crate::error::{Result, TranscriptError};
use crate::graph::{self, IdIndex};
use crate::jsonl::{RawLine, str_field};
use crate::model::{Entry, Format};
use crate::transcript::Transcript;

/// Whether a first line is a Pi session header.
pub(crate) fn is_header(line: &RawLine) -> bool {
    str_field(&line.object, "type") == Some("session")
}

/// Whether a file's first line is a Pi session header with a string id, the test Pi applies
/// before it takes a file as the most recent session.
pub(crate) fn starts_with_header(text: &str) -> bool {
    let first = text.lines().next().unwrap_or_default();
    match serde_json::from_str::<Value>(first) {
        Ok(header) => {
            header.get("type") == Some(&Value::from("session"))
                && header.get("id").is_some_and(Value::is_string)
        }
        Err(_) => false,
    }
}

/// Builds a Pi transcript from its parsed lines; `lines[0]` is the header.
pub(crate) fn parse(file: &str, lines: Vec<RawLine>, tolerate_orphans: bool) -> Result<Transcript> {
    let mut lines = lines.into_iter();
    let Some(header) = lines.next() else {
        return Err(TranscriptError::Empty { file: file.to_owned() });
    };
    let version = header_version(file, &header)?;
    let Some(session_id) = str_field(&header.object, "id").map(str::to_owned) else {
        return Err(TranscriptError::HeaderWithoutId { file: file.to_owned(), line: header.line });
    };
    let cwd = str_field(&header.object, "cwd").map(str::to_owned);

    let mut entries: Vec<Entry> = Vec::new();
    let mut ids = IdIndex::new();
    for line in lines {
        if is_header(&line) {
            return Err(TranscriptError::SecondHeader { file: file.to_owned(), line: line.line });
        }
        let (id, parent_id) = if version == 1 {
            let parent = entries.last().and_then(|e| e.id.clone());
            (assigned_id(entries.len(), &line.text, &ids), parent)
        } else {
            let id = str_field(&line.object, "id")
                .ok_or_else(|| TranscriptError::MissingId {
                    file: file.to_owned(),
                    line: line.line,
                    field: "id",
                })?
                .to_owned();
            (id, parent_field(file, &line, "parentId")?)
        };
        if let Some(&first) = ids.get(&id) {
            return Err(TranscriptError::DuplicateId {
                file: file.to_owned(),
                line: line.line,
                first_line: entries[first].line,
                id,
            });
        }
        ids.insert(id.clone(), entries.len());
        entries.push(Entry {
            line: line.line,
            id: Some(id),
            parent_id,
            kind: str_field(&line.object, "type").unwrap_or_default().to_owned(),
            sidechain: false,
            text: line.text,
        });
    }
    let orphans = graph::check_parents(file, &mut entries, &ids, tolerate_orphans)?;
    graph::check_cycles(file, &entries, &ids)?;

    // The leaf is the last entry in the file: Pi appends every new entry as the new leaf.
    let leaf = entries.len().checked_sub(1);
    Ok(Transcript {
        source: file.to_owned(),
        format: Format::Pi,
        pi_version: Some(version),
        header: Some(header.text),
        session_id: Some(session_id),
        cwd,
        entries,
        ids,
        leaf,
        meta_refs: Default::default(),
        skipped: Vec::new(),
        orphans,
    })
}

/// Reads the `parentId`-like field of an entry: a string, or null/absent for a root.
pub(crate) fn parent_field(file: &str, line: &RawLine, key: &str) -> Result<Option<String>> {
    match line.object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(parent)) => Ok(Some(parent.clone())),
        Some(_) => Err(TranscriptError::Malformed {
            file: file.to_owned(),
            line: line.line,
            reason: format!("\"{key}\" is neither a string nor null"),
        }),
    }
}

fn header_version(file: &str, header: &RawLine) -> Result<u32> {
    match header.object.get("version") {
        None | Some(Value::Null) => Ok(1),
        Some(Value::Number(n)) if matches!(n.as_u64(), Some(1..=3)) => Ok(n.as_u64().map_or(1, |v| v as u32)),
        Some(other) => Err(TranscriptError::UnsupportedVersion {
            file: file.to_owned(),
            line: header.line,
            version: other.to_string(),
        }),
    }
}

/// A stable 8-hex-digit id for the `ordinal`-th entry of a version 1 file.
fn assigned_id(ordinal: usize, text: &str, taken: &IdIndex) -> String {
    let mut salt: u64 = 0;
    loop {
        let id = format!("{:08x}", fnv1a(ordinal as u64, salt, text) as u32);
        if !taken.contains_key(&id) {
            return id;
        }
        salt += 1;
    }
}

fn fnv1a(ordinal: u64, salt: u64, text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let bytes = ordinal.to_le_bytes().into_iter().chain(salt.to_le_bytes()).chain(text.bytes());
    for byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // Fold the high half in so the low 32 bits depend on every input byte.
    hash ^ (hash >> 32)
}
