//! Rewind: the agent turns of a workspace, and putting one back. Each turn is the moment an
//! agent hook took when its prompt was submitted (the workspace and the conversation as they
//! were before the agent acted on it). Rewinding restores the workspace and writes the
//! conversation as a new session that ends just before that prompt, so the agent resumes
//! from there; `code` or `conversation` picks one of the two.

use serde::{Deserialize, Serialize};

use super::{Moment, MomentRestoreOptions, MomentRestoreResult};
use crate::Repository;
use crate::error::{Error, Result, echo};
use crate::id::MomentId;
use crate::ops::diff::DiffOptions;
use crate::ops::resolve::CallContext;
use crate::ops::transcript::AgentPlaces;
use crate::session::Session;
use crate::targets::Target;

/// Which turns to list.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct RewindListOptions {
    /// The workspace directory (the front passes the current one).
    #[cfg_attr(feature = "clap", arg(skip))]
    pub workspace: String,
    /// The session (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// Which turn to go back to, and what to put back.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct RewindOptions {
    /// A turn number (of the newest agent session of the workspace) or a moment reference.
    pub turn: String,
    /// Put back the files only.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long, conflicts_with = "conversation"))]
    pub code: bool,
    /// Put back the conversation only.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub conversation: bool,
    /// The workspace directory (the front passes the current one).
    #[cfg_attr(feature = "clap", arg(skip))]
    pub workspace: String,
    /// The session (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
    /// Where the agents keep their sessions (filled in by the front).
    #[serde(skip)]
    #[schemars(skip)]
    #[cfg_attr(feature = "clap", arg(skip))]
    pub places: AgentPlaces,
}

/// The turns of a workspace, oldest first.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RewindList {
    /// The workspace.
    pub workspace: String,
    /// The turns.
    pub turns: Vec<RewindTurn>,
}

/// One agent turn that can be gone back to.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RewindTurn {
    /// The turn's number in its agent session.
    pub number: u64,
    /// When the prompt was submitted (RFC 3339 UTC).
    pub created_at: String,
    /// The agent.
    pub agent: String,
    /// The agent's session id.
    pub agent_session: String,
    /// The prompt's first line.
    pub prompt: String,
    /// Files added, removed or changed in the workspace since, up to its newest checkpoint.
    pub files_changed_since: u64,
    /// Whether the conversation was captured with it.
    pub conversation: bool,
    /// The moment.
    pub moment: MomentId,
}

impl Repository {
    /// The turns of the workspace's agent sessions, oldest first.
    pub fn rewind_list(&self, options: &RewindListOptions, context: &CallContext) -> Result<RewindList> {
        let session = self.resolve_session(&context.choice(options.session.clone()))?;
        let workspace = workspace_key(&options.workspace)?;
        let newest = self.last_snapshot_of(&session, &workspace)?;
        let mut turns = Vec::new();
        for m in self.turn_moments(&session, &workspace)? {
            let t = m.turn.clone().expect("turn moments have a turn");
            let files_changed_since = match (m.part("dir"), &newest) {
                (Some(part), Some(newest)) if part.snapshot != newest.id => {
                    let diff = self.diff(
                        &DiffOptions {
                            from: part.snapshot.to_string(),
                            to: Some(newest.id.to_string()),
                            session: Some(session.id.to_string()),
                            ..DiffOptions::default()
                        },
                        &CallContext::default(),
                    )?;
                    diff.entries.iter().filter(|e| e.kind != "dir").count() as u64
                }
                _ => 0,
            };
            turns.push(RewindTurn {
                number: t.number,
                created_at: m.created_at.clone(),
                agent: t.agent,
                agent_session: t.agent_session,
                prompt: t.prompt.unwrap_or_default(),
                files_changed_since,
                conversation: m.part("transcript").is_some(),
                moment: m.id,
            });
        }
        Ok(RewindList { workspace, turns })
    }

    /// Goes back to a turn: restores its workspace and conversation (or one of them).
    pub fn rewind(&self, options: &RewindOptions, context: &CallContext) -> Result<MomentRestoreResult> {
        let session = self.resolve_session(&context.choice(options.session.clone()))?;
        let workspace = workspace_key(&options.workspace)?;
        let moment = self.turn_moment(&session, &workspace, &options.turn)?;
        let only: Vec<String> = match (options.code, options.conversation) {
            (true, false) => vec!["dir".into()],
            (false, true) => vec!["transcript".into()],
            _ => moment.parts.iter().filter(|p| p.kind != "compose").map(|p| p.kind.clone()).collect(),
        };
        if only.iter().any(|k| k == "transcript") && moment.part("transcript").is_none() {
            return Err(Error::not_found(format!(
                "turn {} has no conversation part (the agent named no transcript then)",
                moment.turn.as_ref().map_or(0, |t| t.number)
            )));
        }
        let cut = moment.turn.as_ref().and_then(|t| t.prompt.clone());
        let restore = MomentRestoreOptions {
            reference: moment.id.to_string(),
            only,
            session: None,
            places: options.places.clone(),
            cut_before_prompt: cut,
        };
        self.restore_moment(&session, moment, &restore)
    }

    /// The prompt moments of `workspace`, oldest first.
    fn turn_moments(&self, session: &Session, workspace: &str) -> Result<Vec<Moment>> {
        Ok(self
            .moments_of(session)?
            .into_iter()
            .filter(|m| m.turn.as_ref().is_some_and(|t| t.workspace == workspace && t.trigger == "prompt"))
            .collect())
    }

    /// Turn `reference` (a number in the newest agent session) or a moment reference.
    fn turn_moment(&self, session: &Session, workspace: &str, reference: &str) -> Result<Moment> {
        if let Ok(number) = reference.trim().parse::<u64>() {
            let turns = self.turn_moments(session, workspace)?;
            let newest = turns.last().and_then(|m| m.turn.as_ref()).map(|t| t.agent_session.clone());
            return turns
                .into_iter()
                .rev()
                .find(|m| {
                    m.turn
                        .as_ref()
                        .is_some_and(|t| Some(&t.agent_session) == newest.as_ref() && t.number == number)
                })
                .ok_or_else(|| {
                    Error::not_found(format!("no turn {number} of the newest agent session of {workspace}"))
                        .with_code("TURN_NOT_FOUND")
                });
        }
        let moment = self.resolve_moment(session, reference)?;
        if moment.turn.is_none() && moment.part("dir").is_none() {
            return Err(Error::invalid(format!("moment {:?} holds no workspace to rewind", echo(reference))));
        }
        Ok(moment)
    }
}

fn workspace_key(workspace: &str) -> Result<String> {
    if workspace.is_empty() {
        return Err(Error::invalid("no workspace directory given; pass one"));
    }
    Ok(Target::parse(workspace)?.key())
}
