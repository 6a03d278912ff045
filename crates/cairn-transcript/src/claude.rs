//! Reading Claude Code transcripts.
//!
//! Conversation entries carry `uuid`, `parentUuid`, `sessionId`, `cwd` and `type`. Other lines
//! have no `uuid`: `summary` (pointing at an entry through `leafUuid`),
//! `file-history-snapshot` (pointing at a message through `messageId`) and similar bookkeeping.
//! Those lines are kept as entries without an id; [`crate::Transcript::active_path`] says
//! which of them a snapshot keeps.
//!
//! Claude Code has been seen to append the same entry twice when a session is resumed; an
//! exact repeat of an earlier line is therefore dropped, while two different lines with one
//! `uuid` are refused.

use std::collections::HashMap;

use serde_json::Value;

use crate::error::{Result, TranscriptError};
use crate::graph::{self, IdIndex};
use crate::jsonl::{RawLine, str_field};
use crate::model::{Entry, Format};
use crate::pi::parent_field;
use crate::transcript::Transcript;

/// Fields through which a line without `uuid` points at a conversation entry.
const META_REFERENCES: [&str; 2] = ["leafUuid", "messageId"];

/// Whether a line looks like a Claude Code conversation entry.
pub(crate) fn is_entry(line: &RawLine) -> bool {
    str_field(&line.object, "uuid").is_some()
        && (line.object.contains_key("parentUuid") || line.object.contains_key("sessionId"))
}

/// Builds a Claude Code transcript from its parsed lines.
pub(crate) fn parse(file: &str, lines: Vec<RawLine>, tolerate_orphans: bool) -> Result<Transcript> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut ids = IdIndex::new();
    let mut logical_parents: Vec<(usize, String)> = Vec::new();
    let mut meta_refs: HashMap<usize, String> = HashMap::new();
    let mut session_ids: Vec<Option<String>> = Vec::new();
    let mut cwds: Vec<Option<String>> = Vec::new();

    for line in lines {
        let kind = str_field(&line.object, "type").unwrap_or_default().to_owned();
        let sidechain = line.object.get("isSidechain") == Some(&Value::Bool(true));
        let index = entries.len();
        let id = str_field(&line.object, "uuid").map(str::to_owned);
        let parent_id = match &id {
            Some(id) => {
                if let Some(&first) = ids.get(id) {
                    if entries[first].text == line.text {
                        continue;
                    }
                    return Err(TranscriptError::DuplicateId {
                        file: file.to_owned(),
                        line: line.line,
                        first_line: entries[first].line,
                        id: id.clone(),
                    });
                }
                ids.insert(id.clone(), index);
                let parent = parent_field(file, &line, "parentUuid")?;
                if parent.is_none()
                    && let Some(logical) = str_field(&line.object, "logicalParentUuid")
                {
                    logical_parents.push((index, logical.to_owned()));
                }
                parent
            }
            None => {
                if let Some(target) = META_REFERENCES.iter().find_map(|key| str_field(&line.object, key)) {
                    meta_refs.insert(index, target.to_owned());
                }
                None
            }
        };
        session_ids.push(str_field(&line.object, "sessionId").map(str::to_owned));
        cwds.push(str_field(&line.object, "cwd").map(str::to_owned));
        entries.push(Entry { line: line.line, id, parent_id, kind, sidechain, text: line.text });
    }

    // A compaction boundary starts a new chain (`parentUuid: null`) but names the entry it
    // continues in `logicalParentUuid`; following it keeps the history before the compaction
    // on the path, as Claude Code shows it. A logical parent outside the file is ignored.
    for (index, logical) in logical_parents {
        if ids.contains_key(&logical) {
            entries[index].parent_id = Some(logical);
        }
    }
    let orphans = graph::check_parents(file, &mut entries, &ids, tolerate_orphans)?;
    graph::check_cycles(file, &entries, &ids)?;

    let leaf = entries
        .iter()
        .rposition(|e| e.id.is_some() && !e.sidechain)
        .ok_or_else(|| TranscriptError::NoConversation { file: file.to_owned() })?;
    let pick =
        |values: &[Option<String>]| values[leaf].clone().or_else(|| values.iter().flatten().next().cloned());
    Ok(Transcript {
        source: file.to_owned(),
        format: Format::Claude,
        pi_version: None,
        header: None,
        session_id: pick(&session_ids),
        cwd: pick(&cwds),
        entries,
        ids,
        leaf: Some(leaf),
        meta_refs,
        skipped: Vec::new(),
        orphans,
    })
}

/// Whether a line is a `summary` line (a session title Claude Code writes, pointing at a leaf).
pub(crate) fn is_summary(line: &RawLine) -> bool {
    str_field(&line.object, "type") == Some("summary")
}

/// Whether the transcript at `text` holds a conversation of its own, not only a subagent's
/// sidechain or summary lines: what picking "the session" of a directory has to skip.
pub(crate) fn has_main_chain(text: &str) -> bool {
    text.lines().any(|raw| {
        let Ok(Value::Object(object)) = serde_json::from_str::<Value>(raw) else {
            return false;
        };
        str_field(&object, "uuid").is_some() && object.get("isSidechain") != Some(&Value::Bool(true))
    })
}
