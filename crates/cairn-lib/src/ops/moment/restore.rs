//! Restoring a moment: every part (or the kinds asked for) put back, all or nothing.
//!
//! Order: directories, then the conversation, then Compose projects (the slowest and the most
//! likely to fail last). Each directory and Compose part is restored in place with its own
//! safety snapshot; the conversation is written as a new session of its agent, which replaces
//! nothing. If a part fails, the parts already put back are undone in reverse order (from
//! their safety snapshots; a written session file is deleted) and the error names the part
//! that failed and what was undone.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Moment, MomentPart};
use crate::Repository;
use crate::error::{Error, NeutralWords, Result};
use crate::id::SnapshotId;
use crate::ops::compose::ComposeRollbackOptions;
use crate::ops::resolve::CallContext;
use crate::ops::restore::RestoreOptions;
use crate::ops::transcript::AgentPlaces;
use crate::session::SessionRef;

/// Which moment to restore, and which of its parts.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct MomentRestoreOptions {
    /// The moment: an id, a unique id prefix, a name, or `latest`.
    #[serde(rename = "ref")]
    #[schemars(description = "The moment: its id, a unique id prefix, its name, or \"latest\".")]
    pub reference: String,
    /// Only these part kinds (`dir`, `transcript`, `compose`); every part when empty.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long, value_delimiter = ',', value_name = "KIND[,KIND]"))]
    pub only: Vec<String>,
    /// The session (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
    /// An agent's checkpoint: make the files exactly the checkpoint's, including what others
    /// changed since (by default only what the agent changed goes back).
    #[schemars(
        description = "For an agent's checkpoint: make the files exactly the checkpoint's, including what others changed since. By default only what the agent changed goes back, and files others changed are kept or merged."
    )]
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub exact: bool,
    /// Where the agents keep their sessions, for the conversation part (filled in by the front).
    #[serde(skip)]
    #[schemars(skip)]
    #[cfg_attr(feature = "clap", arg(skip))]
    pub places: AgentPlaces,
    /// Where to cut the conversation (a rewind: just before the turn's prompt).
    #[serde(skip)]
    #[schemars(skip)]
    #[cfg_attr(feature = "clap", arg(skip))]
    pub cut: Option<super::ConversationCut>,
    /// Put back only these paths of the directory part (relative to it, or absolute inside it).
    #[serde(skip)]
    #[schemars(skip)]
    #[cfg_attr(feature = "clap", arg(skip))]
    pub paths: Vec<String>,
    /// Show what would change and change nothing: the directory part's plan, and what the
    /// other parts would do.
    #[serde(skip)]
    #[schemars(skip)]
    #[cfg_attr(feature = "clap", arg(skip))]
    pub dry_run: bool,
    /// How the directory part's restore is narrowed (a rewind: only what the agent changed).
    #[serde(skip)]
    #[schemars(skip)]
    #[cfg_attr(feature = "clap", arg(skip))]
    pub rule: Option<crate::ops::restore::RestoreRule>,
}

/// What restoring a moment did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MomentRestoreResult {
    /// The moment restored.
    pub moment: Moment,
    /// Each part put back, in the order it was.
    pub parts: Vec<RestoredPart>,
    /// What was left as it is, and why (a conversation with nothing before the turn).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// What a rewind to a turn that began the conversation says of it.
pub(crate) const BEGAN_CONVERSATION: &str =
    "this turn began the conversation: there is nothing before it to resume; start the agent anew";

/// One part put back.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RestoredPart {
    /// `dir`, `transcript` or `compose`.
    pub kind: String,
    /// The target.
    pub target: String,
    /// The part's snapshot.
    pub snapshot: SnapshotId,
    /// The safety snapshot of the live state taken first (directories, Compose projects).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub safety_snapshot: Option<String>,
    /// Files written (directories).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_written: Option<u64>,
    /// The new session file (the conversation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// The new session's id (the conversation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The command that resumes the new session (the conversation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_command: Option<String>,
    /// Files written beside the new session (subagent transcripts).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extra_files: Vec<PathBuf>,
    /// Paths of the directory part a narrowed restore kept as they were (`keep`) or merged
    /// (`merge`, `conflict`: written with conflict markers).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<crate::PlanEntry>,
    /// What a dry run of the directory part would change, entry by entry.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plan: Vec<crate::PlanEntry>,
    /// Why a part was left as it is, when it was (a conversation with nothing before the turn),
    /// or what it would do (a dry run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl RestoredPart {
    /// `part`, before anything is put back.
    fn of(part: &MomentPart) -> Self {
        RestoredPart {
            kind: part.kind.clone(),
            target: part.target.clone(),
            snapshot: part.snapshot,
            safety_snapshot: None,
            files_written: None,
            file: None,
            session_id: None,
            resume_command: None,
            extra_files: Vec::new(),
            held: Vec::new(),
            plan: Vec::new(),
            note: None,
        }
    }
}

/// The kinds a moment part can be.
const KINDS: [&str; 3] = ["dir", "transcript", "compose"];

impl Repository {
    /// Restores a moment (see the module documentation).
    pub fn moment_restore(
        &self,
        options: &MomentRestoreOptions,
        context: &CallContext,
    ) -> Result<MomentRestoreResult> {
        let session = self.resolve_session(&context.choice(options.session.clone()))?;
        let moment = self.resolve_moment(&session, &options.reference)?;
        // An agent's checkpoint puts back what the agent changed, as a rewind does.
        if options.rule.is_none()
            && !options.exact
            && moment.auto
            && let Some(turn) = &moment.turn
        {
            let rule = self.agent_changes_rule(&session, &moment, &turn.workspace)?;
            return self.restore_moment(
                &session,
                moment,
                &MomentRestoreOptions { rule: Some(rule), ..options.clone() },
            );
        }
        self.restore_moment(&session, moment, options)
    }

    /// Restores the parts of `moment` that `options.only` selects.
    pub(crate) fn restore_moment(
        &self,
        session: &SessionRef,
        moment: Moment,
        options: &MomentRestoreOptions,
    ) -> Result<MomentRestoreResult> {
        for kind in &options.only {
            if !KINDS.contains(&kind.as_str()) {
                return Err(Error::invalid_value("only", kind, "a part kind is dir, transcript or compose"));
            }
            if moment.part(kind).is_none() {
                return Err(Error::not_found(format!("moment {} has no {kind} part", moment.label())));
            }
        }
        let mut chosen: Vec<&MomentPart> = moment
            .parts
            .iter()
            .filter(|p| options.only.is_empty() || options.only.contains(&p.kind))
            .collect();
        chosen.sort_by_key(|p| KINDS.iter().position(|k| *k == p.kind).unwrap_or(KINDS.len()));
        for part in &chosen {
            self.part_snapshot(session, part)?;
        }
        if options.dry_run {
            let parts = chosen
                .into_iter()
                .map(|part| self.preview_part(session, part, options))
                .collect::<Result<_>>()?;
            return Ok(MomentRestoreResult { moment, parts, notes: Vec::new() });
        }
        let mut done: Vec<RestoredPart> = Vec::new();
        for part in chosen {
            match self.restore_part(session, part, options) {
                Ok(restored) => done.push(restored),
                Err(e) => {
                    let undone = self.undo_parts(session, &done);
                    return Err(Error::new(
                        e.kind(),
                        format!(
                            "restoring moment {} failed at its {} part ({}): {}; {undone}",
                            moment.label(),
                            part.kind,
                            part.target,
                            e.render_message(&NeutralWords)
                        ),
                    ));
                }
            }
        }
        Ok(MomentRestoreResult { moment, parts: done, notes: Vec::new() })
    }

    fn restore_part(
        &self,
        session: &SessionRef,
        part: &MomentPart,
        options: &MomentRestoreOptions,
    ) -> Result<RestoredPart> {
        let in_session = Some(session.id.to_string());
        let mut out = RestoredPart::of(part);
        match part.kind.as_str() {
            "dir" => {
                let result =
                    self.restore(&dir_part_options(session, part, options), &CallContext::default())?;
                out.safety_snapshot = result.safety_snapshot.map(|s| s.id.to_string());
                out.files_written = Some(result.files_written);
                out.held = result
                    .plan
                    .into_iter()
                    .filter(|e| matches!(e.action.as_str(), "keep" | "merge" | "conflict"))
                    .collect();
            }
            "transcript" => {
                if options.cut == Some(super::ConversationCut::AfterEntry(None)) {
                    out.note = Some(BEGAN_CONVERSATION.to_owned());
                    return Ok(out);
                }
                let snapshot = self.part_snapshot(session, part)?;
                let written =
                    super::load_conversation(self, &snapshot, &options.places, options.cut.as_ref())?;
                out.file = Some(written.file);
                out.session_id = Some(written.session_id);
                out.resume_command = written.resume_command;
                out.extra_files = written.subagent_files;
            }
            "compose" => {
                let result = self.compose_rollback(
                    &ComposeRollbackOptions {
                        project: part.target.trim_start_matches("compose:").to_owned(),
                        reference: part.snapshot.to_string(),
                        session: in_session,
                        ..ComposeRollbackOptions::default()
                    },
                    &CallContext::default(),
                )?;
                out.safety_snapshot = result.safety_snapshot;
            }
            other => return Err(Error::invalid(format!("a {other} part cannot be restored with a moment"))),
        }
        Ok(out)
    }

    /// What restoring `part` would do, changing nothing.
    fn preview_part(
        &self,
        session: &SessionRef,
        part: &MomentPart,
        options: &MomentRestoreOptions,
    ) -> Result<RestoredPart> {
        let mut out = RestoredPart::of(part);
        match part.kind.as_str() {
            "dir" => {
                let dry_run = RestoreOptions { dry_run: true, ..dir_part_options(session, part, options) };
                let result = self.restore(&dry_run, &CallContext::default())?;
                let (held, plan) = result
                    .plan
                    .into_iter()
                    .partition(|e| matches!(e.action.as_str(), "keep" | "merge" | "conflict"));
                out.held = held;
                out.plan = plan;
            }
            "transcript" => {
                out.note = Some(match options.cut {
                    Some(super::ConversationCut::AfterEntry(None)) => {
                        "this turn began the conversation: nothing would be written".to_owned()
                    }
                    Some(_) => "the conversation would be written as a new session, cut before that prompt"
                        .to_owned(),
                    None => "the conversation would be written as a new session".to_owned(),
                });
            }
            _ => {
                out.note =
                    Some("a Compose project is not previewed; its rollback shows its own plan".to_owned())
            }
        }
        Ok(out)
    }

    /// Undoes restored parts, newest first; says what was undone (and what could not be).
    fn undo_parts(&self, session: &SessionRef, done: &[RestoredPart]) -> String {
        let in_session = Some(session.id.to_string());
        let mut said = Vec::new();
        for part in done.iter().rev() {
            let outcome = match (part.kind.as_str(), &part.safety_snapshot, &part.file) {
                ("dir", Some(safety), _) => self
                    .restore(
                        &RestoreOptions {
                            reference: Some(safety.clone()),
                            target: Some(part.target.clone()),
                            session: in_session.clone(),
                            ..RestoreOptions::default()
                        },
                        &CallContext::default(),
                    )
                    .map(|_| format!("{} was put back from safety snapshot {safety}", part.target)),
                ("compose", Some(safety), _) => self
                    .compose_rollback(
                        &ComposeRollbackOptions {
                            project: part.target.trim_start_matches("compose:").to_owned(),
                            reference: safety.clone(),
                            session: in_session.clone(),
                            ..ComposeRollbackOptions::default()
                        },
                        &CallContext::default(),
                    )
                    .map(|_| format!("{} was put back from safety snapshot {safety}", part.target)),
                ("transcript", _, Some(file)) => {
                    let mut files = vec![file.clone()];
                    files.extend(part.extra_files.iter().cloned());
                    files
                        .iter()
                        .try_for_each(|f| std::fs::remove_file(f).map_err(|e| Error::io("remove", f, e)))
                        .map(|()| format!("the new session file {} was deleted", file.display()))
                }
                _ => Ok(format!("{} had nothing to undo", part.target)),
            };
            said.push(outcome.unwrap_or_else(|e| format!("{} could not be undone ({e})", part.target)));
        }
        if said.is_empty() {
            "nothing had been restored yet".to_owned()
        } else {
            format!("undone: {}", said.join("; "))
        }
    }
}

/// The restore of a moment's directory part: its snapshot over its target, narrowed as the
/// moment's options say.
fn dir_part_options(
    session: &SessionRef,
    part: &MomentPart,
    options: &MomentRestoreOptions,
) -> RestoreOptions {
    RestoreOptions {
        reference: Some(part.snapshot.to_string()),
        target: Some(part.target.clone()),
        session: Some(session.id.to_string()),
        paths: options.paths.clone(),
        rule: options.rule.clone(),
        ..RestoreOptions::default()
    }
}
