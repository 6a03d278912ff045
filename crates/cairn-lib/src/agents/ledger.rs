//! The turn ledger: where each agent turn began in the agent's conversation, recorded when the
//! prompt arrives, so a rewind cuts the conversation by a record rather than by matching text.
//!
//! Agents do not agree on when they write a prompt: Gemini CLI fires `BeforeAgent` before it
//! records the user's message, Claude Code and Codex CLI run the prompt hook before they append
//! it, and a checkpoint that waited on a busy store may read the transcript after the agent has
//! written the prompt and more. So the hook reads the transcript and looks for the prompt only
//! after where the previous turn began: found, the turn begins just before it; not found, the
//! agent has not written it yet and the turn begins after the last entry. Either way the record
//! is an entry id, which later appends never move.
//!
//! A prompt delivered twice (agents run matching hooks in parallel; a user may install both the
//! user and the project scope) is one turn: the checkpoint of one agent session holds a lock
//! for its whole run, and a prompt whose digest and start match the last turn's is not counted
//! again.
//!
//! A rewind that writes the conversation as a new agent session records where it came from
//! (`forks/` objects), so that session's turns continue the numbering of the one it was cut
//! from, and the turns before the cut stay reachable through it.

use std::path::Path;

use cairn_transcript::{ActivePath, Transcript};
use serde::{Deserialize, Serialize};

use crate::Repository;
use crate::error::{Error, Result};
use crate::ops::moment::{AgentTurn, ForkOrigin, TurnStart};

/// The digest a turn records of its prompt: BLAKE3 of the text without surrounding
/// whitespace, which agents trim or keep as they like.
pub(crate) fn prompt_digest(prompt: &str) -> String {
    blake3::hash(prompt.trim().as_bytes()).to_hex().to_string()
}

/// Where the conversation in `transcript` stands for a turn whose prompt is `prompt`, given the
/// agent session's previous turn. A transcript that cannot be read counts as empty: the turn
/// then begins the conversation, the safe end to cut at.
pub(crate) fn turn_start(transcript: Option<&Path>, prompt: &str, previous: Option<&AgentTurn>) -> TurnStart {
    let digest = prompt_digest(prompt);
    let path = transcript
        .filter(|f| f.is_file())
        .and_then(|f| Transcript::read_as_agent(f).ok())
        .map(|t| t.active_path());
    let Some(path) = path else {
        return TurnStart { after_entry: None, prompt_digest: digest, prompt_written: false };
    };
    let from = search_from(&path, previous.and_then(|t| t.start.as_ref()));
    let written = path.entries[from..]
        .iter()
        .position(|e| user_text(&path, &e.text).is_some_and(|text| is_prompt(&text, prompt, &digest)))
        .map(|at| from + at);
    let before = written.unwrap_or(path.entries.len());
    let after_entry = path.entries[..before].iter().rev().find_map(|e| e.id.clone());
    TurnStart { after_entry, prompt_digest: digest, prompt_written: written.is_some() }
}

/// The first entry that can be this turn's prompt: past the previous turn's start and its
/// prompt. A previous start that the path no longer holds (a compaction began a new path) or
/// a previous turn without one leaves the whole path to search, which with a fresh path is
/// what the agent now resumes from.
fn search_from(path: &ActivePath, previous: Option<&TurnStart>) -> usize {
    let Some(previous) = previous else { return 0 };
    let start = match &previous.after_entry {
        Some(id) => match path.entries.iter().position(|e| e.id.as_deref() == Some(id)) {
            Some(at) => at + 1,
            None => return 0,
        },
        None => 0,
    };
    // The previous prompt itself, when the agent wrote it: this turn's comes after it.
    path.entries[start..]
        .iter()
        .position(|e| {
            user_text(path, &e.text).is_some_and(|text| prompt_digest(&text) == previous.prompt_digest)
        })
        .map_or(start, |at| start + at + 1)
}

/// Whether a user message's text is the prompt: the same text, or, when the agent added to
/// it (attachments, expanded commands), the same first line.
fn is_prompt(text: &str, prompt: &str, digest: &str) -> bool {
    prompt_digest(text) == *digest || first_line(text) == first_line(prompt) && !first_line(prompt).is_empty()
}

fn first_line(text: &str) -> &str {
    text.trim().lines().next().unwrap_or_default().trim()
}

/// Whether a prompt arriving now is the last recorded turn delivered again: the same prompt
/// from the same place in the conversation. Without a transcript the place is unknown, and a
/// second delivery is one that arrives within [`DUPLICATE_WINDOW_SECONDS`].
pub(crate) fn is_duplicate(last: &AgentTurn, last_at: &str, start: &TurnStart) -> bool {
    let Some(before) = &last.start else { return false };
    if before.prompt_digest != start.prompt_digest {
        return false;
    }
    if before.after_entry.is_some() || start.after_entry.is_some() {
        return before.after_entry == start.after_entry;
    }
    let age = crate::time::parse_record_time(last_at)
        .map(|t| jiff::Timestamp::now().as_second() - t.as_second())
        .unwrap_or(i64::MAX);
    age <= DUPLICATE_WINDOW_SECONDS
}

/// How close together two deliveries of one prompt with no transcript must arrive to be taken
/// for one turn.
const DUPLICATE_WINDOW_SECONDS: i64 = 10;

/// The text of a user's prompt on a line of `path`, in its agent's shape; `None` for other
/// lines (assistant messages, tool results, metadata, injected context).
pub(crate) fn user_text(path: &ActivePath, line: &str) -> Option<String> {
    cairn_transcript::user_prompt_text(path.format, line)
}

/// The record of a forked agent session, as stored under `forks/`.
#[derive(Debug, Serialize, Deserialize)]
struct ForkRecord {
    agent: String,
    agent_session: String,
    origin: ForkOrigin,
}

/// The object holding where `agent_session` was forked from: keyed by a hash, so the key says
/// nothing of the session in an encrypted store.
fn fork_key(agent: &str, agent_session: &str) -> String {
    let hash = blake3::hash(format!("{agent}\0{agent_session}").as_bytes()).to_hex();
    format!("forks/{hash}.json")
}

impl Repository {
    /// Records that a rewind wrote `agent_session` as a fork of `origin`.
    pub(crate) fn record_fork(&self, agent: &str, agent_session: &str, origin: ForkOrigin) -> Result<()> {
        let record = ForkRecord { agent: agent.to_owned(), agent_session: agent_session.to_owned(), origin };
        let bytes = serde_json::to_vec(&record)
            .map_err(|e| Error::corrupt(format!("could not encode the fork record: {e}")))?;
        self.backend().put_if_absent(&fork_key(agent, agent_session), &bytes)?;
        Ok(())
    }

    /// Where `agent_session` was forked from by a rewind, if it was.
    pub(crate) fn fork_origin(&self, agent: &str, agent_session: &str) -> Option<ForkOrigin> {
        let bytes = self.backend().get(&fork_key(agent, agent_session)).ok()?;
        let record: ForkRecord = serde_json::from_slice(&bytes).ok()?;
        (record.agent == agent && record.agent_session == agent_session).then_some(record.origin)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn claude_line(uuid: &str, kind: &str, text: &str) -> String {
        serde_json::json!({
            "type": kind, "uuid": uuid, "parentUuid": null, "sessionId": "s",
            "message": {"role": kind, "content": text}
        })
        .to_string()
    }

    /// A Claude Code transcript whose entries chain one after another.
    fn transcript(dir: &Path, lines: &[(&str, &str, &str)]) -> std::path::PathBuf {
        let mut parent: Option<String> = None;
        let mut text = String::new();
        for (uuid, kind, body) in lines {
            let mut value: Value = serde_json::from_str(&claude_line(uuid, kind, body)).unwrap();
            value["parentUuid"] = parent.clone().map_or(Value::Null, Value::String);
            text.push_str(&value.to_string());
            text.push('\n');
            parent = Some((*uuid).to_owned());
        }
        let file = dir.join("t.jsonl");
        std::fs::write(&file, text).unwrap();
        file
    }

    fn turn(start: TurnStart) -> AgentTurn {
        AgentTurn {
            agent: "claude-code".into(),
            agent_session: "s".into(),
            workspace: "/w".into(),
            number: 1,
            trigger: "prompt".into(),
            prompt: None,
            start: Some(start),
            exact: true,
            forked_from: None,
        }
    }

    #[test]
    fn a_prompt_not_yet_written_begins_after_the_last_entry() {
        let dir = tempfile::tempdir().unwrap();
        let file = transcript(dir.path(), &[("u1", "user", "continue"), ("a1", "assistant", "done")]);
        let first =
            TurnStart { after_entry: None, prompt_digest: prompt_digest("continue"), prompt_written: true };
        let start = turn_start(Some(&file), "continue", Some(&turn(first)));
        assert_eq!(start.after_entry.as_deref(), Some("a1"));
        assert!(!start.prompt_written);
    }

    #[test]
    fn a_prompt_already_written_begins_before_it_even_when_repeated() {
        let dir = tempfile::tempdir().unwrap();
        let file = transcript(
            dir.path(),
            &[
                ("u1", "user", "continue"),
                ("a1", "assistant", "x"),
                ("u2", "user", "continue"),
                ("a2", "assistant", "y"),
            ],
        );
        let first =
            TurnStart { after_entry: None, prompt_digest: prompt_digest("continue"), prompt_written: true };
        let start = turn_start(Some(&file), "continue", Some(&turn(first)));
        assert_eq!(start.after_entry.as_deref(), Some("a1"));
        assert!(start.prompt_written);
    }

    #[test]
    fn the_first_prompt_of_a_conversation_begins_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = transcript(dir.path(), &[("u1", "user", "hello"), ("a1", "assistant", "hi")]);
        assert_eq!(turn_start(Some(&file), "hello", None).after_entry, None);
        assert_eq!(turn_start(None, "hello", None).after_entry, None);
    }

    #[test]
    fn one_prompt_from_one_place_is_one_turn() {
        let start = TurnStart {
            after_entry: Some("a1".into()),
            prompt_digest: prompt_digest("go"),
            prompt_written: false,
        };
        let last = turn(start.clone());
        let now = crate::time::now_rfc3339();
        assert!(is_duplicate(&last, &now, &start));
        let later = TurnStart { after_entry: Some("a2".into()), ..start.clone() };
        assert!(!is_duplicate(&last, &now, &later));
        let other = TurnStart { prompt_digest: prompt_digest("stop"), ..start };
        assert!(!is_duplicate(&last, &now, &other));
    }
}
