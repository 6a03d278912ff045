//! Putting a moment's conversation part back: the saved path written as a new session of its
//! agent (as a transcript load does), optionally cut just before a prompt, so the agent resumes
//! from the state the conversation was in before that prompt was sent.

use cairn_transcript::{ActivePath, LoadOptions, load_session};

use crate::Repository;
use crate::error::Result;
use crate::ops::transcript::{AgentPlaces, TranscriptWritten, transcript_error};
use crate::snapshot::Snapshot;

/// Where a rewind cuts a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConversationCut {
    /// Keep the entries up to and including this one: where the turn ledger says the turn
    /// began. `None`: the turn began the conversation, and nothing is left to resume.
    AfterEntry(Option<String>),
    /// Before the last user message whose first line is this one: for turns recorded before
    /// the ledger, which kept only the prompt's first line.
    BeforePrompt(String),
}

/// Writes transcript snapshot `snapshot` as a new session for `places.cwd`, cut at `cut`.
pub(crate) fn load_conversation(
    store: &Repository,
    snapshot: &Snapshot,
    places: &AgentPlaces,
    cut: Option<&ConversationCut>,
) -> Result<TranscriptWritten> {
    if places.cwd.is_empty() {
        return Err(crate::error::Error::invalid(
            "no working directory to load the conversation for; pass one",
        ));
    }
    let mut path = store.transcript_path_and_files(snapshot, false)?;
    let attached = path.take_attached();
    match cut {
        Some(ConversationCut::AfterEntry(Some(id))) => cut_after_entry(&mut path, id)?,
        Some(ConversationCut::AfterEntry(None)) => path.entries.clear(),
        Some(ConversationCut::BeforePrompt(prompt)) => cut_before_prompt(&mut path, prompt),
        None => {}
    }
    let load = LoadOptions {
        cwd: places.cwd.clone(),
        parent_session: None,
        rewrite_cwd: false,
        note: None,
        attached,
    };
    let written = load_session(&path, &places.dirs(), &load).map_err(transcript_error)?;
    Ok(TranscriptWritten {
        snapshot: snapshot.clone(),
        file: written.path,
        format: written.format,
        session_id: written.session_id,
        resume_command: written.resume_command,
        fork_command: written.fork_command,
        prompt: None,
        prompt_file: None,
        subagent_files: written.attached,
    })
}

/// Keeps the entries up to and including `id`. The turn's own transcript snapshot always
/// holds it (the ledger read it from that file before the snapshot was taken), so a missing
/// id is damage, refused rather than guessed around.
pub(crate) fn cut_after_entry(path: &mut ActivePath, id: &str) -> Result<()> {
    let at = path.entries.iter().position(|e| e.id.as_deref() == Some(id)).ok_or_else(|| {
        crate::error::Error::corrupt(format!(
            "the conversation saved with this turn does not hold entry {id:?}, where the turn began"
        ))
    })?;
    // Lines without an id (Claude Code's file-history snapshots) placed after the entry
    // belong to the turn before: they go up to the next entry with an id.
    let end =
        path.entries[at + 1..].iter().position(|e| e.id.is_some()).map_or(path.entries.len(), |n| at + 1 + n);
    path.entries.truncate(end);
    Ok(())
}

/// Drops the last user message whose first line is `prompt`'s, and everything after it.
/// A path that does not hold the prompt yet (saved before the agent wrote it) is left whole.
pub(crate) fn cut_before_prompt(path: &mut ActivePath, prompt: &str) {
    let want = prompt.lines().next().unwrap_or_default().trim();
    let at = path.entries.iter().rposition(|e| {
        crate::agents::ledger::user_text(path, &e.text)
            .is_some_and(|text| text.lines().next().unwrap_or_default().trim() == want)
    });
    if let Some(at) = at {
        path.entries.truncate(at);
    }
}
