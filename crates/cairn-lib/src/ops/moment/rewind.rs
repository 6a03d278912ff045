//! Rewind: the agent turns of a project, and putting one back. Each turn is the moment an
//! agent hook took when its prompt was submitted (the workspace and the conversation as they
//! were before the agent acted on it). Rewinding restores the workspace and writes the
//! conversation as a new agent session that ends just before that prompt, cut where the turn
//! ledger says the turn began (`agents/ledger.rs`), so the agent resumes from there; `code` or
//! `conversation` picks one of the two.
//!
//! Turns are numbered per agent session. A session a rewind forked continues the numbering of
//! the one it was cut from, and its turns before the cut are the parent's: `rewind 2` in the
//! fork goes to the parent's turn 2, which the fork's conversation also holds.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::restore::BEGAN_CONVERSATION;
use super::{ConversationCut, ForkOrigin, Moment, MomentRestoreOptions, MomentRestoreResult};
use crate::Repository;
use crate::agents::{Agent, Layers};
use crate::error::{Error, ErrorKind, Hint, Result, echo};
use crate::id::{MomentId, ObjectId};
use crate::ops::diff::DiffOptions;
use crate::ops::resolve::CallContext;
use crate::ops::restore::RestoreRule;
use crate::ops::transcript::AgentPlaces;
use crate::session::SessionRef;
use crate::targets::Target;

/// Which turns to list.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct RewindListOptions {
    /// The workspace directory (the front passes the current one): the project it is in.
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
    /// The turn (its number in the newest agent session) or a moment; omit it to list the turns.
    pub turn: Option<String>,
    /// Put back the files only.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long, conflicts_with = "conversation"))]
    pub code: bool,
    /// Put back the conversation only.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub conversation: bool,
    /// Use a turn whose checkpoint was taken late (after the agent may have acted on it).
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub force: bool,
    /// Make the files exactly the turn's, including what others changed since (behind the
    /// safety snapshot); by default only what the agent changed is put back.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long, conflicts_with = "undo"))]
    pub exact: bool,
    /// Take back only this turn's file changes, keeping every later turn's (the conversation
    /// is not touched).
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long, conflicts_with = "conversation"))]
    pub undo: bool,
    /// Show what would change, and change nothing.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub dry_run: bool,
    /// Put back only these files or directories.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(last = true, value_name = "PATH"))]
    pub paths: Vec<String>,
    /// The workspace directory (the front passes the current one): the project it is in.
    #[serde(default)]
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

/// The turns of a project, by agent session.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RewindList {
    /// The project: the workspace the turns were taken of.
    pub workspace: String,
    /// The agent sessions, the newest (the one a turn number means) first.
    pub sessions: Vec<RewindSession>,
    /// Every turn, the newest session's first, each session's oldest first.
    pub turns: Vec<RewindTurn>,
}

/// One agent session of a project.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RewindSession {
    /// The agent.
    pub agent: String,
    /// The agent's session id.
    pub agent_session: String,
    /// The first line of its first prompt.
    pub first_prompt: String,
    /// Its turns.
    pub turns: u64,
    /// Whether a turn number means this session's turns (the newest session).
    pub current: bool,
    /// The session a rewind forked this one from, and the turn it was cut before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkOrigin>,
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
    /// False when the checkpoint was taken late, after the agent may have acted on the prompt.
    pub exact: bool,
    /// The moment.
    pub moment: MomentId,
}

impl Repository {
    /// The turns of the project's agent sessions (see [`RewindList`]).
    pub fn rewind_list(&self, options: &RewindListOptions, context: &CallContext) -> Result<RewindList> {
        let session = self.resolve_session(&context.choice(options.session.clone()))?;
        let turns = ProjectTurns::of(self, &session, &options.workspace)?;
        let newest = self.last_snapshot_of(&session, &turns.workspace)?;
        let mut out = Vec::new();
        let mut sessions = Vec::new();
        for (agent_session, moments) in turns.by_session() {
            let first = moments[0].turn.as_ref().expect("turn moments have a turn");
            sessions.push(RewindSession {
                agent: first.agent.clone(),
                agent_session: agent_session.clone(),
                first_prompt: first.prompt.clone().unwrap_or_default(),
                turns: moments.len() as u64,
                current: Some(&agent_session) == turns.newest_session().as_ref(),
                forked_from: first.forked_from.clone(),
            });
            for m in moments {
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
                out.push(RewindTurn {
                    number: t.number,
                    created_at: m.created_at.clone(),
                    agent: t.agent,
                    agent_session: t.agent_session,
                    prompt: t.prompt.unwrap_or_default(),
                    files_changed_since,
                    conversation: m.part("transcript").is_some(),
                    exact: t.exact,
                    moment: m.id,
                });
            }
        }
        Ok(RewindList { workspace: turns.workspace, sessions, turns: out })
    }

    /// Goes back to a turn: restores its workspace and conversation (or one of them).
    pub fn rewind(&self, options: &RewindOptions, context: &CallContext) -> Result<MomentRestoreResult> {
        let session = self.resolve_session(&context.choice(options.session.clone()))?;
        let turns = ProjectTurns::of(self, &session, &options.workspace)?;
        let reference = options.turn.as_deref().ok_or_else(|| {
            Error::invalid("name the turn to go back to: its number, or a moment id from the list of turns")
        })?;
        let moment = turns.resolve(self, &session, reference)?;
        if let Some(turn) = moment.turn.as_ref().filter(|t| !t.exact && !options.force) {
            let nearest = turns.nearest_exact_before(turn.number, &turn.agent_session);
            let offer = match nearest {
                Some(n) => format!("; turn {n} is the nearest exact one"),
                None => String::new(),
            };
            return Err(Error::invalid(format!(
                "turn {}'s checkpoint was taken late (the store was busy), after the agent may already have changed files{offer}",
                turn.number
            ))
            .with_code("TURN_INEXACT")
            .hint(Hint::SetOption("force")));
        }
        let only: Vec<String> = match (options.code || options.undo, options.conversation) {
            (true, false) => vec!["dir".into()],
            (false, true) => vec!["transcript".into()],
            _ => moment.parts.iter().filter(|p| p.kind != "compose").map(|p| p.kind.clone()).collect(),
        };
        // An agent whose conversation cairn does not read (Cursor, Copilot CLI) gets its files
        // back and is told so.
        let code_only = moment
            .turn
            .as_ref()
            .and_then(|t| Agent::ALL.into_iter().find(|a| a.as_str() == t.agent))
            .is_some_and(|a| a.layers() == Layers::CodeOnly);
        // A turn whose conversation had not begun when its prompt arrived (Claude Code writes
        // its session file only after the first prompt's hook) has nothing to fork.
        let began_conversation = !code_only
            && moment.part("transcript").is_none()
            && moment.turn.as_ref().and_then(|t| t.start.as_ref()).is_some_and(|s| s.after_entry.is_none());
        if code_only && options.conversation {
            return Err(Error::invalid(format!(
                "cairn keeps only the files of {}'s turns, not its conversation; rewind the code alone",
                moment.turn.as_ref().map_or("this agent", |t| t.agent.as_str())
            ))
            .hint(Hint::SetOption("code")));
        }
        if only.iter().any(|k| k == "transcript")
            && moment.part("transcript").is_none()
            && !began_conversation
        {
            return Err(Error::not_found(format!(
                "turn {} has no conversation part (the agent named no transcript then)",
                moment.turn.as_ref().map_or(0, |t| t.number)
            )));
        }
        let only: Vec<String> =
            only.into_iter().filter(|k| k != "transcript" || !began_conversation).collect();
        let cut = moment.turn.as_ref().and_then(|t| match &t.start {
            Some(start) => Some(ConversationCut::AfterEntry(start.after_entry.clone())),
            None => t.prompt.clone().map(ConversationCut::BeforePrompt),
        });
        let rule = match (options.undo, options.exact) {
            (true, _) => Some(turns.undo_rule(self, &session, &moment)?),
            (false, true) => None,
            (false, false) => Some(turns.agent_rule(self, &session, &moment)?),
        };
        // The conversation is written where the agent looks for the project's sessions, whatever
        // subdirectory the command ran in.
        let mut places = options.places.clone();
        places.cwd = turns.workspace.clone();
        let restore = MomentRestoreOptions {
            reference: moment.id.to_string(),
            only,
            session: None,
            places,
            cut,
            paths: options.paths.clone(),
            dry_run: options.dry_run,
            exact: options.exact,
            rule,
        };
        let turn = moment.turn.clone();
        let wants_conversation = !options.code && !options.undo;
        let mut result = if restore.only.is_empty() {
            MomentRestoreResult { moment, parts: Vec::new(), notes: Vec::new() }
        } else {
            self.restore_moment(&session, moment, &restore)?
        };
        if began_conversation && wants_conversation {
            result.notes.push(BEGAN_CONVERSATION.to_owned());
        }
        if code_only
            && wants_conversation
            && let Some(turn) = &turn
        {
            result.notes.push(format!(
                "cairn keeps only the files of {}'s turns: its conversation was left as it is",
                turn.agent
            ));
        }
        // The fork continues the numbering of the session it was cut from.
        if let Some(turn) = turn.filter(|_| !options.dry_run) {
            for part in result.parts.iter().filter(|p| p.kind == "transcript") {
                if let Some(forked) = &part.session_id {
                    let origin =
                        ForkOrigin { agent_session: turn.agent_session.clone(), before_turn: turn.number };
                    self.record_fork(&turn.agent, forked, origin)?;
                }
            }
        }
        Ok(result)
    }
}

impl Repository {
    /// The rule that puts back only what agents changed in `workspace` since `moment`: every
    /// checkpoint of it from `moment` on, oldest first, each marked when an agent took it
    /// inside a turn.
    pub(crate) fn agent_changes_rule(
        &self,
        session: &SessionRef,
        moment: &Moment,
        workspace: &str,
    ) -> Result<RestoreRule> {
        let mut checkpoints = Vec::new();
        for m in self.moments_of(session)?.iter().filter(|m| m.id >= moment.id) {
            let inside_turn = m.auto && m.turn.as_ref().is_some_and(|t| t.trigger != "prompt");
            // The first is the turn's own: the state the others are changes from.
            if (m.id == moment.id || m.auto)
                && let Some(root) = self.workspace_root(session, m, workspace)?
            {
                checkpoints.push((root, inside_turn && m.id != moment.id));
            }
        }
        Ok(RestoreRule::AgentOnly { checkpoints })
    }

    /// The root of `moment`'s part for `workspace`, if it has one.
    fn workspace_root(
        &self,
        session: &SessionRef,
        moment: &Moment,
        workspace: &str,
    ) -> Result<Option<ObjectId>> {
        let Some(part) = moment.parts.iter().find(|p| p.kind == "dir" && p.target == workspace) else {
            return Ok(None);
        };
        Ok(self.part_snapshot(session, part)?.root)
    }
}

/// The prompt moments of one project, and how turn numbers resolve among them.
struct ProjectTurns {
    workspace: String,
    /// Oldest first.
    moments: Vec<Moment>,
}

impl ProjectTurns {
    /// The turns of the project `directory` is in: the turns taken of it, or else of the
    /// nearest directory above it that has some (an agent's project root, when the command
    /// runs in a subdirectory).
    fn of(store: &Repository, session: &SessionRef, directory: &str) -> Result<Self> {
        if directory.is_empty() {
            return Err(Error::invalid("no workspace directory given; pass one"));
        }
        // A project root as another machine named it (a resume's) need not exist here: its
        // turns are found by the path as written.
        let asked = match Target::parse(directory) {
            Ok(target) => target.key(),
            Err(e) if e.kind() == ErrorKind::NotFound && Path::new(directory).is_absolute() => {
                directory.trim_end_matches('/').to_owned()
            }
            Err(e) => return Err(e),
        };
        let mut by_workspace: HashMap<String, Vec<Moment>> = HashMap::new();
        for m in store.moments_of(session)? {
            if let Some(t) = m.turn.as_ref().filter(|t| t.trigger == "prompt") {
                by_workspace.entry(t.workspace.clone()).or_default().push(m);
            }
        }
        let mut at = Some(Path::new(&asked));
        while let Some(dir) = at {
            if let Some(moments) = by_workspace.remove(&*dir.to_string_lossy()) {
                return Ok(Self { workspace: dir.to_string_lossy().into_owned(), moments });
            }
            at = dir.parent();
        }
        Ok(Self { workspace: asked, moments: Vec::new() })
    }

    fn agent_rule(&self, store: &Repository, session: &SessionRef, moment: &Moment) -> Result<RestoreRule> {
        store.agent_changes_rule(session, moment, &self.workspace)
    }

    /// The rule that takes back turn `moment`'s file changes: from its checkpoint to the next
    /// turn's, or to the newest agent checkpoint when it is the last turn.
    fn undo_rule(&self, store: &Repository, session: &SessionRef, moment: &Moment) -> Result<RestoreRule> {
        let turn = moment.turn.as_ref().ok_or_else(|| Error::invalid("only an agent turn can be undone"))?;
        let before = self
            .dir_root(store, session, moment)?
            .ok_or_else(|| Error::invalid(format!("turn {} holds no workspace to undo", turn.number)))?;
        let next = self.in_lineage(&turn.agent_session, turn.number + 1).cloned();
        let after_moment = match next {
            Some(next) => Some(next),
            None => store.moments_of(session)?.into_iter().rev().find(|m| {
                m.auto && m.id > moment.id && m.part("dir").is_some_and(|p| p.target == self.workspace)
            }),
        };
        let after = match after_moment {
            Some(m) => self.dir_root(store, session, &m)?,
            None => None,
        };
        match after {
            Some(after) if after != before => Ok(RestoreRule::Undo { before, after }),
            _ => Err(Error::not_found(format!(
                "turn {} changed no file that a later checkpoint saw; there is nothing to undo",
                turn.number
            ))
            .with_code("NOTHING_TO_UNDO")),
        }
    }

    /// The root of `moment`'s part for this project's workspace, if it has one.
    fn dir_root(
        &self,
        store: &Repository,
        session: &SessionRef,
        moment: &Moment,
    ) -> Result<Option<ObjectId>> {
        store.workspace_root(session, moment, &self.workspace)
    }

    /// The agent session of the newest turn: the one a bare turn number means.
    fn newest_session(&self) -> Option<String> {
        self.moments.last().and_then(|m| m.turn.as_ref()).map(|t| t.agent_session.clone())
    }

    /// The turns grouped by agent session, the newest session first, each oldest first.
    fn by_session(&self) -> Vec<(String, Vec<&Moment>)> {
        let mut groups: Vec<(String, Vec<&Moment>)> = Vec::new();
        for m in &self.moments {
            let agent_session = &m.turn.as_ref().expect("turn moments have a turn").agent_session;
            match groups.iter_mut().find(|(s, _)| s == agent_session) {
                Some((_, list)) => list.push(m),
                None => groups.push((agent_session.clone(), vec![m])),
            }
        }
        // Newest session first: the one whose latest turn is latest.
        groups.sort_by(|a, b| b.1.last().map(|m| m.id).cmp(&a.1.last().map(|m| m.id)));
        groups
    }

    /// Turn `number` as the lineage of `agent_session` sees it: its own turn, or, below the
    /// turn it was forked before, its parent's.
    fn in_lineage(&self, agent_session: &str, number: u64) -> Option<&Moment> {
        let mut current = agent_session.to_owned();
        // A lineage longer than the turns is a cycle in damaged records.
        for _ in 0..=self.moments.len() {
            let own: Vec<&Moment> = self
                .moments
                .iter()
                .filter(|m| m.turn.as_ref().is_some_and(|t| t.agent_session == current))
                .collect();
            if let Some(found) =
                own.iter().rev().find(|m| m.turn.as_ref().is_some_and(|t| t.number == number))
            {
                return Some(found);
            }
            let origin = own.iter().find_map(|m| m.turn.as_ref().and_then(|t| t.forked_from.clone()))?;
            if number >= origin.before_turn {
                return None;
            }
            current = origin.agent_session;
        }
        None
    }

    /// The newest exact turn before `number` in the lineage of `agent_session`.
    fn nearest_exact_before(&self, number: u64, agent_session: &str) -> Option<u64> {
        (1..number).rev().find(|n| {
            self.in_lineage(agent_session, *n).and_then(|m| m.turn.as_ref()).is_some_and(|t| t.exact)
        })
    }

    /// Turn `reference` (a number in the newest agent session's lineage) or a moment reference.
    fn resolve(&self, store: &Repository, session: &SessionRef, reference: &str) -> Result<Moment> {
        if let Ok(number) = reference.trim().parse::<u64>() {
            let newest = self.newest_session().unwrap_or_default();
            return self.in_lineage(&newest, number).cloned().ok_or_else(|| {
                let others = self.by_session().len() > 1;
                let also = if others {
                    "; turns of the other agent sessions are reached by their moment id, which the list of turns shows"
                } else {
                    ""
                };
                Error::not_found(format!(
                    "no turn {number} in the newest agent session of {}{also}",
                    self.workspace
                ))
                .with_code("TURN_NOT_FOUND")
            });
        }
        let moment = store.resolve_moment(session, reference)?;
        if moment.turn.is_none() && moment.part("dir").is_none() {
            return Err(Error::invalid(format!("moment {:?} holds no workspace to rewind", echo(reference))));
        }
        Ok(moment)
    }
}
