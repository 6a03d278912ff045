//! Moments as the catalog and the record objects hold them: one id and name over one snapshot
//! per target, taken together. What the engine does with them is in its `ops/moment`.

use serde::{Deserialize, Serialize};

use crate::id::{MomentId, SessionId, SnapshotId};

/// A moment: the snapshots of several targets taken together.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Moment {
    /// UUIDv7 id; sorts by creation time.
    pub id: MomentId,
    /// Optional name, unique per session among moments.
    pub name: Option<String>,
    /// What the moment was taken before, in the caller's words (or the agent turn's label).
    pub description: Option<String>,
    /// The session it belongs to.
    pub session: SessionId,
    /// Creation time, RFC 3339 UTC.
    pub created_at: String,
    /// True for the checkpoints agent hooks take; they have their own keep policy.
    pub auto: bool,
    /// The agent turn an automatic moment was taken at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<AgentTurn>,
    /// One snapshot per target.
    pub parts: Vec<MomentPart>,
}

/// One part of a moment: the snapshot of one target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MomentPart {
    /// `dir`, `transcript` or `compose`.
    pub kind: String,
    /// The target's key (an absolute path, `transcript:<file>`, `compose:<project>`).
    pub target: String,
    /// The snapshot of that target.
    pub snapshot: SnapshotId,
}

/// Where in an agent's conversation an automatic moment was taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentTurn {
    /// The agent (`claude-code`, `gemini-cli`).
    pub agent: String,
    /// The agent's session id.
    pub agent_session: String,
    /// The workspace directory (its target key).
    pub workspace: String,
    /// The turn's number in the agent session, from 1.
    pub number: u64,
    /// What triggered it: `prompt` (before the agent acts on a prompt) or the tool that ran.
    pub trigger: String,
    /// The first line of the prompt (prompt moments only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Where the conversation stood when the turn began (prompt moments whose agent named its
    /// transcript): what a rewind cuts the conversation by. Moments from before the ledger have
    /// none, and are cut by their prompt's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<TurnStart>,
    /// False when the checkpoint was taken after the agent may already have acted on the
    /// prompt (the store was busy past the hook's budget): it is not "before prompt N".
    #[serde(default = "exact", skip_serializing_if = "is_exact")]
    pub exact: bool,
    /// The agent session this one was forked from by a rewind, and the turn it was cut before:
    /// its numbering continues from there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkOrigin>,
}

/// Where an agent's conversation stood when a turn began.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TurnStart {
    /// The id of the last entry of the conversation before the prompt; `None` when the prompt
    /// began the conversation. Entries are only ever appended after it, so the id stays right
    /// whenever the transcript is read again.
    pub after_entry: Option<String>,
    /// BLAKE3 of the prompt's whole text, in hex: one prompt delivered twice is one turn.
    pub prompt_digest: String,
    /// Whether the agent had already written the prompt to its transcript when the hook ran.
    pub prompt_written: bool,
}

/// The agent session a rewind forked one from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ForkOrigin {
    /// The agent session the fork was cut from.
    pub agent_session: String,
    /// The turn the fork ends before: its own first turn has this number.
    pub before_turn: u64,
}

fn exact() -> bool {
    true
}

fn is_exact(exact: &bool) -> bool {
    *exact
}

impl Moment {
    /// The part of `kind`, if the moment has one.
    pub fn part(&self, kind: &str) -> Option<&MomentPart> {
        self.parts.iter().find(|p| p.kind == kind)
    }

    /// How the moment is spoken of in messages: its name, else its id.
    pub fn label(&self) -> String {
        match &self.name {
            Some(name) => format!("{name:?} ({})", self.id),
            None => self.id.to_string(),
        }
    }
}
