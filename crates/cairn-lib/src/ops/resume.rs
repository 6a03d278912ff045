//! Resume: hand an agent turn (or any moment) to this machine. The turn's files go into a new
//! or empty directory (`--to`, by default the path they had), its Compose projects are rolled
//! back to their savepoints when Docker is here (one this engine does not run is created from
//! the new directory: its working directory, compose files and bind mounts under the old root
//! are moved to the new one), and its conversation is written as a new session of its agent
//! for the new directory, every path naming the old project root moved to the new one
//! ([`cairn_transcript::ActivePath::remap_root`]), cut where the turn began as a rewind cuts
//! it. Nothing of the moment changes. The new session is recorded as a fork of the old one
//! before the turn (`agents/ledger.rs`), so its next hook-made turn continues the numbering in
//! the same store, and `cairn rewind` lists it under the new directory.
//!
//! A bare turn number is looked up among the turns of one project: the one `project` names,
//! else the directory the command runs in when turns were taken of it, else the only project
//! of the store's session that has turns (several: `project` must say which).

use std::collections::BTreeSet;
use std::path::PathBuf;

use cairn_transcript::{LoadOptions, load_session};
use serde::{Deserialize, Serialize};

use super::moment::{
    ForkOrigin, Moment, MomentPart, RewindList, RewindListOptions, cut_after_entry, cut_before_prompt,
};
use super::resolve::CallContext;
use super::restore::RestoreOptions;
use super::transcript::{AgentPlaces, transcript_error};
use crate::Repository;
use crate::agents::{Agent, Layers};
use crate::error::{Error, Hint, Result, echo};
use crate::ops::compose::ComposeRollbackOptions;
use crate::session::SessionRef;
use crate::targets::Target;

/// Which turn to hand to this machine, and where to put it.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ResumeOptions {
    /// The turn (its number in the newest agent session of the project) or a moment.
    #[serde(rename = "ref")]
    #[cfg_attr(feature = "clap", arg(value_name = "TURN|MOMENT"))]
    pub reference: String,
    /// The new or empty directory to put the files in (by default the path they had).
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub to: Option<PathBuf>,
    /// The project (its root on the machine the turns were taken on) a turn number is looked
    /// up in, when the store holds turns of several.
    #[cfg_attr(feature = "clap", arg(long, value_name = "OLD_ROOT"))]
    pub project: Option<String>,
    /// Use a turn whose checkpoint was taken late (after the agent may have acted on it).
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub force: bool,
    /// The session (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
    /// The directory the command runs in (filled in by the front).
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(skip))]
    pub workspace: String,
    /// Where this machine's agents keep their sessions (filled in by the front).
    #[serde(skip)]
    #[schemars(skip)]
    #[cfg_attr(feature = "clap", arg(skip))]
    pub places: AgentPlaces,
}

/// What a resume put where.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ResumeResult {
    /// The moment resumed (a turn's, or the one named).
    pub moment: Moment,
    /// The project root the moment was taken of.
    pub from: String,
    /// The directory the files were put in.
    pub to: String,
    /// Files written there.
    pub files_written: u64,
    /// The conversation, when it was moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation: Option<ResumedConversation>,
    /// The Compose projects rolled back to the moment's savepoints.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compose: Vec<String>,
    /// What was left out, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The conversation written as a session of this machine's agent.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ResumedConversation {
    /// The agent.
    pub agent: String,
    /// The session file written.
    pub file: PathBuf,
    /// Files written beside it (subagent transcripts).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extra_files: Vec<PathBuf>,
    /// The new session's id.
    pub session_id: String,
    /// Lines whose paths were moved from the old root to the new one.
    pub lines_remapped: u64,
    /// The command that resumes it, run in the new directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_command: Option<String>,
    /// The agent session it was forked from, and the turn it was cut before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkOrigin>,
}

impl Repository {
    /// Hands a turn or a moment to this machine (see the module documentation).
    pub fn resume(&self, options: &ResumeOptions, context: &CallContext) -> Result<ResumeResult> {
        let session = self.resolve_session(&context.choice(options.session.clone()))?;
        let moment = self.resume_moment(&session, options)?;
        if let Some(turn) = moment.turn.as_ref().filter(|t| !t.exact && !options.force) {
            return Err(Error::invalid(format!(
                "turn {}'s checkpoint was taken late (the store was busy), after the agent may already have changed files",
                turn.number
            ))
            .with_code("TURN_INEXACT")
            .hint(Hint::SetOption("force")));
        }
        let dir = resume_dir_part(&moment)?;
        let from = dir.target.clone();
        let to = options.to.clone().unwrap_or_else(|| PathBuf::from(&from));
        if !to.is_absolute() {
            return Err(Error::invalid(format!("{} is not an absolute path; pass one", to.display())));
        }
        // Said in resume's words before anything is read: a restore's refusal would offer an
        // in-place restore, which is not what a resume does.
        if std::fs::read_dir(&to).is_ok_and(|mut entries| entries.next().is_some()) {
            return Err(Error::invalid(format!(
                "{} is not empty; a turn is resumed into a new or empty directory",
                to.display()
            ))
            .with_code("DESTINATION_NOT_EMPTY")
            .hint(Hint::SetOption("to")));
        }
        let restored = self.restore(
            &RestoreOptions {
                // By its id alone: the old root need not exist on this machine, and a target
                // would be looked up (canonicalised) here.
                reference: Some(dir.snapshot.to_string()),
                to: Some(to.clone()),
                session: Some(session.id.to_string()),
                ..RestoreOptions::default()
            },
            &CallContext::default(),
        )?;
        let to = Target::parse(&to.to_string_lossy())?.key();
        let mut result = ResumeResult {
            moment: moment.clone(),
            from,
            to,
            files_written: restored.files_written,
            conversation: None,
            compose: Vec::new(),
            notes: Vec::new(),
        };
        self.resume_conversation(&session, &moment, options, &mut result)?;
        self.resume_compose(&session, &moment, &mut result);
        Ok(result)
    }

    /// The moment `options.reference` names: a turn number among the project's turns, or a
    /// moment reference.
    fn resume_moment(&self, session: &SessionRef, options: &ResumeOptions) -> Result<Moment> {
        let Ok(number) = options.reference.trim().parse::<u64>() else {
            return self.resolve_moment(session, &options.reference);
        };
        let project = self.resume_project(session, options)?;
        let list = self.rewind_list(
            &RewindListOptions { workspace: project.clone(), session: Some(session.id.to_string()) },
            &CallContext::default(),
        )?;
        let id = turn_in_lineage(&list, number).ok_or_else(|| {
            Error::not_found(format!("no turn {number} in the newest agent session of {project}"))
                .with_code("TURN_NOT_FOUND")
        })?;
        self.resolve_moment(session, &id)
    }

    /// The project a turn number is looked up in (see the module documentation).
    fn resume_project(&self, session: &SessionRef, options: &ResumeOptions) -> Result<String> {
        if let Some(project) = &options.project {
            return old_root(project);
        }
        let projects: BTreeSet<String> = self
            .moments_of(session)?
            .into_iter()
            .filter_map(|m| m.turn.filter(|t| t.trigger == "prompt").map(|t| t.workspace))
            .collect();
        if !options.workspace.is_empty() {
            let here = Target::parse(&options.workspace)?.key();
            if let Some(found) = projects
                .iter()
                .find(|p| here == **p || here.starts_with(&format!("{}/", p.trim_end_matches('/'))))
            {
                return Ok(found.clone());
            }
        }
        let mut only = projects.iter();
        match (only.next(), only.next()) {
            (Some(project), None) => Ok(project.clone()),
            (None, _) => Err(Error::not_found("the store holds no agent turns; name a moment instead")
                .with_code("TURN_NOT_FOUND")),
            (Some(_), Some(_)) => Err(Error::invalid(format!(
                "turns were taken of several projects ({}); say which with its root",
                projects.iter().map(|p| echo(p)).collect::<Vec<_>>().join(", ")
            ))
            .with_code("PROJECT_AMBIGUOUS")
            .hint(Hint::SetOption("project"))),
        }
    }

    /// Writes the moment's conversation for the new directory, its paths moved there, and
    /// records it as a fork; a conversation that cannot be moved is a note.
    fn resume_conversation(
        &self,
        session: &SessionRef,
        moment: &Moment,
        options: &ResumeOptions,
        result: &mut ResumeResult,
    ) -> Result<()> {
        let turn = moment.turn.as_ref();
        // An agent whose conversation cairn does not read (Cursor, Copilot CLI, OpenCode) has
        // no place in its turns' start: said so before anything else.
        let code_only = turn
            .and_then(|t| Agent::ALL.into_iter().find(|a| a.as_str() == t.agent))
            .is_some_and(|a| a.layers() == Layers::CodeOnly);
        let began = turn.and_then(|t| t.start.as_ref()).is_some_and(|s| s.after_entry.is_none());
        if began && !code_only {
            result.notes.push(
                "this turn began the conversation: there is nothing before it to resume; start the agent anew in the new directory"
                    .to_owned(),
            );
            return Ok(());
        }
        let Some(part) = moment.part("transcript") else {
            let agent = turn.map_or("the agent", |t| t.agent.as_str());
            result.notes.push(format!(
                "this moment holds no conversation ({agent}'s is not saved by cairn): only the files and environment were moved"
            ));
            return Ok(());
        };
        let snapshot = self.part_snapshot(session, part)?;
        let mut path = self.transcript_path_and_files(&snapshot, false)?;
        // Cut first, by the ids and the prompt as the turn recorded them: a line whose id is
        // its text's hash (Codex CLI's) gets a new id when a path in it moves.
        match turn.map(|t| (&t.start, &t.prompt)) {
            Some((Some(start), _)) => {
                if let Some(id) = &start.after_entry {
                    cut_after_entry(&mut path, id)?;
                }
            }
            Some((None, Some(prompt))) => cut_before_prompt(&mut path, prompt),
            _ => {}
        }
        let lines_remapped = path.remap_root(&result.from, &result.to) as u64;
        let attached = path.take_attached();
        let load = LoadOptions {
            cwd: result.to.clone(),
            parent_session: None,
            rewrite_cwd: false,
            note: None,
            attached,
        };
        let mut places = options.places.clone();
        places.cwd = result.to.clone();
        let written = match load_session(&path, &places.dirs(), &load) {
            Ok(written) => written,
            Err(e) => {
                let e = transcript_error(e);
                result.notes.push(format!(
                    "the conversation could not be moved ({}): only the files and environment were",
                    e.render_message(&crate::error::NeutralWords)
                ));
                return Ok(());
            }
        };
        let forked_from =
            turn.map(|t| ForkOrigin { agent_session: t.agent_session.clone(), before_turn: t.number });
        if let (Some(turn), Some(origin)) = (turn, &forked_from) {
            self.record_fork(&turn.agent, &written.session_id, origin.clone())?;
        }
        result.conversation = Some(ResumedConversation {
            agent: turn.map_or_else(|| written.format.to_string(), |t| t.agent.clone()),
            file: written.path,
            extra_files: written.attached,
            session_id: written.session_id,
            lines_remapped,
            resume_command: written.resume_command,
            forked_from,
        });
        Ok(())
    }

    /// Rolls the moment's Compose projects back to their savepoints; a project this engine
    /// does not run is created from the new directory, its paths under the old root moved
    /// there. Without Docker, or when a rollback fails, a note says what to run where it can.
    fn resume_compose(&self, session: &SessionRef, moment: &Moment, result: &mut ResumeResult) {
        let parts: Vec<&MomentPart> = moment.parts.iter().filter(|p| p.kind == "compose").collect();
        if parts.is_empty() {
            return;
        }
        let docker = crate::targets::compose::docker::Docker::connect();
        for part in parts {
            let project = part.target.trim_start_matches("compose:").to_owned();
            let rollback = || {
                self.compose_rollback_moved(
                    &ComposeRollbackOptions {
                        project: project.clone(),
                        reference: part.snapshot.to_string(),
                        session: Some(session.id.to_string()),
                        ..ComposeRollbackOptions::default()
                    },
                    &CallContext::default(),
                    Some((&result.from, &result.to)),
                )
            };
            let outcome = match &docker {
                Err(e) => Err(format!("Docker is not available here ({e})")),
                Ok(_) => rollback().map_err(|e| e.render_message(&crate::error::NeutralWords)),
            };
            match outcome {
                Ok(_) => result.compose.push(project),
                Err(why) => result.notes.push(format!(
                    "Compose project {project} was not brought up: {why}; roll the project back to snapshot {} where Docker runs",
                    part.snapshot
                )),
            }
        }
    }
}

/// The key of `project`, a project root on the machine the turns were taken on: as a target
/// names it when it exists here too, else as written (it need not exist on this machine).
fn old_root(project: &str) -> Result<String> {
    if let Ok(target) = Target::parse(project) {
        return Ok(target.key());
    }
    let trimmed = project.trim_end_matches('/');
    if !trimmed.starts_with('/') {
        return Err(Error::invalid(format!(
            "{} is not an absolute path; name the project by its root on the machine its turns were taken on",
            echo(project)
        ))
        .hint(Hint::SetOption("project")));
    }
    Ok(trimmed.to_owned())
}

/// The directory part of `moment`: a turn's project, or its only directory.
fn resume_dir_part(moment: &Moment) -> Result<&MomentPart> {
    let dirs: Vec<&MomentPart> = moment.parts.iter().filter(|p| p.kind == "dir").collect();
    if let Some(turn) = &moment.turn
        && let Some(part) = dirs.iter().find(|p| p.target == turn.workspace)
    {
        return Ok(part);
    }
    match dirs.as_slice() {
        [only] => Ok(only),
        [] => Err(Error::invalid(format!("moment {} holds no directory to resume", moment.label()))),
        _ => Err(Error::invalid(format!(
            "moment {} holds several directories; restore one of its snapshots into a new directory instead",
            moment.label()
        ))),
    }
}

/// Turn `number` as the newest agent session's lineage sees it: its own turn, or, below the
/// turn it was forked before, its parent's.
fn turn_in_lineage(list: &RewindList, number: u64) -> Option<String> {
    let mut current = list.sessions.iter().find(|s| s.current)?;
    // A lineage longer than the sessions is a cycle in damaged records.
    for _ in 0..=list.sessions.len() {
        if let Some(turn) =
            list.turns.iter().rev().find(|t| t.agent_session == current.agent_session && t.number == number)
        {
            return Some(turn.moment.to_string());
        }
        let origin = current.forked_from.as_ref()?;
        if number >= origin.before_turn {
            return None;
        }
        current = list.sessions.iter().find(|s| s.agent_session == origin.agent_session)?;
    }
    None
}
