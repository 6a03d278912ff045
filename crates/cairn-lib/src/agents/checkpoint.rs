//! What a hook event saves: the agent checkpoints.
//!
//! - A submitted prompt (`UserPromptSubmit`, `BeforeAgent`): a moment of the workspace and the
//!   session's transcript, labelled with the turn's number and the prompt's first line. The
//!   turn number counts the prompt moments of the agent session.
//! - A file-changing tool finished (`Write`, `Edit`, `Bash`, `write_file`, …): a moment of the
//!   workspace alone, so shell side effects are caught too.
//! - A workspace that did not change gets no new snapshot: a prompt moment reuses the last one,
//!   a tool checkpoint records nothing.
//!
//! - A workspace an interrupted restore left mixed gets no checkpoint: the refusal a save
//!   gives, which the hook shows the agent's user.
//!
//! The workspace is the agent's project (see [`workspace_of`]), whatever directory its shell
//! is in. A checkpoint whose capture begins after the agent stopped waiting for the hook
//! ([`agent_waits_until`]) is recorded with `exact: false`: it may hold the turn's first
//! edits, and `cairn rewind` refuses it unless forced, naming the nearest exact turn.
//!
//! After each checkpoint the auto keep policy runs (see [`Repository::apply_hooks_keep_policy`]).

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde::Serialize;

use super::{HookEvent, HookInvocation, ledger};
use crate::Repository;
use crate::error::{Error, Result};
use crate::ops::moment::{AgentTurn, Moment, PartPlan, TakeOptions};
use crate::ops::resolve::CallContext;
use crate::session::SessionRef;
use crate::targets::Target;

/// What a hook run did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CheckpointOutcome {
    /// The moment saved, if any.
    pub moment: Option<Moment>,
    /// Automatic moments the keep policy removed afterwards.
    pub removed: usize,
    /// What happened, in a few words (the hook log's outcome).
    pub said: String,
    /// How many entries (files, directories, links) the workspace held at this checkpoint,
    /// 0 when nothing was saved: what a front weighs to start a change-journal watcher.
    pub workspace_entries: u64,
}

impl Repository {
    /// Saves what `invocation` calls for (see the module documentation).
    pub fn hook_checkpoint(
        &self,
        invocation: &HookInvocation,
        context: &CallContext,
    ) -> Result<CheckpointOutcome> {
        let nothing = |said: &str| {
            Ok(CheckpointOutcome { moment: None, removed: 0, said: said.to_owned(), workspace_entries: 0 })
        };
        let (prompt, trigger) = match &invocation.event {
            HookEvent::PromptSubmitted { prompt } => (Some(prompt.as_str()), "prompt".to_owned()),
            HookEvent::FileToolFinished { tool } => (None, tool.clone()),
            HookEvent::TurnEnded => return nothing("turn ended; nothing to save"),
            HookEvent::Other { .. } => return nothing("ignored"),
        };
        let root = workspace_of(invocation)
            .ok_or_else(|| Error::invalid("the hook event names no working directory; nothing was saved"))?;
        let workspace = Target::parse(&root.display().to_string())?.key();
        // Said before anything is read, in one sentence whose code the hook recognises to show
        // it where the agent's user looks (`ops/interrupted.rs`).
        self.refuse_interrupted(&workspace)?;
        let session = self.resolve_session(&context.choice(None))?;
        let agent = invocation.agent.as_str();
        // One checkpoint of an agent session at a time: a prompt delivered twice at once must
        // find the first delivery's turn recorded (see `ledger.rs`).
        let lock_name = format!(
            "turn-{}",
            blake3::hash(format!("{agent}\0{}", invocation.session_id).as_bytes()).to_hex()
        );
        let _turn_lock = crate::store::lock::lock_waiting(&self.layout().locks(), &lock_name)?;
        let last = self.last_prompt_turn(&session, agent, &invocation.session_id)?;
        let forked_from = match &last {
            Some((turn, _)) => turn.forked_from.clone(),
            None => self.fork_origin(agent, &invocation.session_id),
        };
        let turns = match (&last, &forked_from) {
            (Some((turn, _)), _) => turn.number,
            (None, Some(origin)) => origin.before_turn.saturating_sub(1),
            (None, None) => 0,
        };
        let start = prompt.map(|p| {
            ledger::turn_start(invocation.transcript_path.as_deref(), p, last.as_ref().map(|(t, _)| t))
        });
        if let (Some(start), Some((turn, at))) = (&start, &last)
            && ledger::is_duplicate(turn, at, start)
        {
            return nothing(&format!("the prompt of turn {} again; already saved", turn.number));
        }
        let number = turns + u64::from(prompt.is_some());
        let first_line = prompt.map(|p| p.lines().next().unwrap_or_default().trim().to_owned());
        let mut plans = vec![PartPlan { target: workspace.clone(), reuse_unchanged: true }];
        // The conversation, when the agent's module says cairn reads it (see `AgentSpec`).
        if prompt.is_some()
            && let Some(file) = invocation.conversation_file()
        {
            plans.push(PartPlan { target: format!("transcript:{}", file.display()), reuse_unchanged: false });
        }
        let description = match &first_line {
            Some(line) => format!("turn {number}: {line}"),
            None => format!("turn {number}: after {trigger}"),
        };
        // Taken as late as possible before the capture: a checkpoint that waited (on a busy
        // store, on another checkpoint) past the moment the agent went on may hold the turn's
        // first edits, and must not be labelled "before prompt N".
        let exact = invocation.agent_waits_until.is_none_or(|until| SystemTime::now() <= until);
        let take = TakeOptions {
            description: Some(description),
            auto: true,
            turn: Some(AgentTurn {
                agent: invocation.agent.as_str().to_owned(),
                agent_session: invocation.session_id.clone(),
                workspace: workspace.clone(),
                number,
                trigger,
                prompt: first_line,
                start,
                exact,
                forked_from,
            }),
            // A tool checkpoint of a workspace that did not change records nothing.
            skip_if_unchanged: prompt.is_none(),
            ..TakeOptions::default()
        };
        match self.take_moment(&session, &plans, &take)? {
            Some(saved) => {
                let entries =
                    saved.snapshots.iter().find(|s| s.target == workspace).map_or(0, |s| s.stats.entries());
                let mut outcome = self.after_checkpoint(&session, &workspace, saved.moment)?;
                outcome.workspace_entries = entries;
                Ok(outcome)
            }
            None => nothing("nothing changed; nothing saved"),
        }
    }

    fn after_checkpoint(
        &self,
        session: &SessionRef,
        workspace: &str,
        moment: Moment,
    ) -> Result<CheckpointOutcome> {
        let removed = self.apply_hooks_keep_policy(session, workspace, moment.id)?;
        let kinds: Vec<&str> = moment.parts.iter().map(|p| p.kind.as_str()).collect();
        // Never the prompt's text: the hook log is for diagnosing hooks, not a transcript.
        let turn = moment.turn.as_ref().map_or(0, |t| t.number);
        let late = if moment.turn.as_ref().is_some_and(|t| !t.exact) {
            "; taken after the agent went on, marked inexact"
        } else {
            ""
        };
        let mut said = format!("saved moment {} (turn {turn}: {}{late})", moment.id, kinds.join(" + "));
        if removed > 0 {
            said.push_str(&format!("; the keep policy removed {removed} older checkpoints"));
        }
        Ok(CheckpointOutcome { moment: Some(moment), removed, said, workspace_entries: 0 })
    }

    /// The newest prompt turn of one agent session, and when it was taken.
    fn last_prompt_turn(
        &self,
        session: &SessionRef,
        agent: &str,
        agent_session: &str,
    ) -> Result<Option<(AgentTurn, String)>> {
        Ok(self
            .moments_of(session)?
            .into_iter()
            .filter_map(|m| m.turn.map(|t| (t, m.created_at)))
            .filter(|(t, _)| t.agent == agent && t.agent_session == agent_session && t.trigger == "prompt")
            .max_by_key(|(t, _)| t.number))
    }
}

/// The directory a hook's turn is of: the agent's project directory when the front found one
/// (an absolute path to a directory), else the repository the working directory is in (its top
/// directory, holding `.git`), else the working directory itself. An agent's shell may `cd`
/// into a subdirectory, and the payload's `cwd` follows it; the turn is still of the whole
/// project, so `cairn rewind` finds every turn from the root or any subdirectory.
fn workspace_of(invocation: &HookInvocation) -> Option<PathBuf> {
    let declared = invocation.project_dir.as_ref().filter(|dir| dir.is_absolute() && dir.is_dir());
    if let Some(dir) = declared {
        return Some(dir.clone());
    }
    let cwd = invocation.cwd.as_deref()?;
    Some(cwd.ancestors().find(|dir| dir.join(".git").exists()).unwrap_or(cwd).to_path_buf())
}

/// How long after the store opened a checkpoint the agent never waited for (`hooks.budget =
/// 0s`) may begin and still be exact: less than an agent takes to send the prompt to its model
/// and act on the answer, and far less than a wait on a busy store (a gc, an import, another
/// save), which is what makes a checkpoint late.
pub const UNWAITED_GRACE: Duration = Duration::from_secs(1);

/// When the agent stops waiting for a hook that started at `hook_started`, waits at most
/// `budget`, and whose checkpoint opened the store at `store_open`: the hook waits for the
/// store to open before it counts the budget down, so the later of the two. With a budget of
/// 0 the hook returns once the store is open, and the checkpoint gets [`UNWAITED_GRACE`]
/// from then. A front passes the result as [`HookInvocation::agent_waits_until`].
pub fn agent_waits_until(hook_started: SystemTime, store_open: SystemTime, budget: Duration) -> SystemTime {
    if budget.is_zero() {
        return store_open + UNWAITED_GRACE;
    }
    (hook_started + budget).max(store_open)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_goes_on_after_the_budget_or_once_the_store_is_open() {
        let started = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        let second = Duration::from_secs(1);
        // A store that opened in time: the budget counts from the event.
        assert_eq!(agent_waits_until(started, started + second, 5 * second), started + 5 * second);
        // A store slower to open than the budget: the hook waited for it, and no longer.
        assert_eq!(agent_waits_until(started, started + 9 * second, 5 * second), started + 9 * second);
        // Never waited for: the grace from the open.
        assert_eq!(
            agent_waits_until(started, started + second, Duration::ZERO),
            started + second + UNWAITED_GRACE
        );
    }
}
