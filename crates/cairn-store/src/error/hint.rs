//! What to do about an error, as data: each front says it in its own words.
//!
//! The library says "set the force option" or "list the snapshots" only through a [`Hint`]; the
//! CLI renders it as `pass --force` / `run `cairn list``, the MCP server as `set force: true` /
//! `call snapshot_list`, and each compatibility profile in its contract's words. A front
//! implements [`Words`]; anything it does not know reads as [`NeutralWords`] do.

use std::path::PathBuf;

use crate::model::capability::Capability;

/// One thing the caller can do about an error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Hint {
    /// Turn on the boolean option of the failed operation (an options field name: `force`).
    SetOption(&'static str),
    /// Give the option of the failed operation a value (`to`, `target`, `pi_dir`).
    GiveOption(&'static str),
    /// Give one of these options a value (`pi_dir`, `claude_dir`).
    GiveOneOf(&'static [&'static str]),
    /// Leave the option of the failed operation out (`to`).
    DropOption(&'static str),
    /// Run another operation.
    Run(Operation),
    /// Ask the user to allow an agent capability on the store at `store`.
    Allow {
        /// What to allow.
        capability: Capability,
        /// The store's directory, for the command that allows it.
        store: PathBuf,
    },
    /// Use another store (the store lies in the way, or is not a store).
    ChooseStore,
    /// Drop the session pin that outranks the current session.
    Unpin,
    /// Give the password or key file of an encrypted store.
    GiveSecret,
}

/// An operation a hint points to, with what it needs to run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Operation {
    /// Save a snapshot.
    Save,
    /// List the snapshots of a session.
    ListSnapshots,
    /// List the sessions.
    ListSessions,
    /// Make a session current.
    SetSession,
    /// Clear the current session.
    UnsetSession,
    /// Verify the store.
    Check,
    /// Rebuild a damaged store's catalog and index.
    Repair,
    /// Reclaim data no snapshot references.
    Gc,
    /// List the transcript snapshots.
    ListTranscripts,
    /// Load a transcript snapshot as a new agent session.
    LoadTranscript {
        /// The snapshot.
        snapshot: String,
    },
    /// Restore a snapshot.
    Restore {
        /// The snapshot.
        snapshot: String,
    },
    /// List the savepoints of a Compose project.
    ListSavepoints {
        /// The project.
        project: String,
    },
    /// Roll a Compose project back to a savepoint.
    Rollback {
        /// The project.
        project: String,
        /// The savepoint.
        snapshot: String,
    },
    /// List the debug captures.
    ListDebugCaptures,
    /// Compare two debug captures.
    DiffDebugCaptures,
    /// Finish the restore a killed process left half applied, keeping what was written since.
    ContinueRestore,
    /// Roll back the restore a killed process left half applied, keeping what was written since.
    AbortRestore,
    /// Reset an agent setting (`word` is a capability or `all`), or allow or deny it.
    ResetAgentSetting {
        /// The capability word, or `all`.
        word: String,
        /// The store's directory.
        store: PathBuf,
    },
}

/// How a front names options and says hints.
pub trait Words: std::fmt::Debug {
    /// An option (given by its options field name) as the front spells it: `--retain-for`, `retain_for`.
    fn option(&self, name: &str) -> String {
        name.to_owned()
    }

    /// A message about the value of `option`: `invalid --retain-for "120": want …`, where
    /// `rest` is the quoted value and why it is refused.
    fn invalid_value(&self, option: &str, rest: &str) -> String {
        format!("invalid {} {rest}", self.option(option))
    }

    /// One hint as an imperative phrase: "pass --force", "call snapshot_list".
    fn hint(&self, hint: &Hint) -> String {
        NeutralWords.hint(hint)
    }
}

/// Words that belong to no front: "set the force option", "list the snapshots".
#[derive(Debug, Clone, Copy, Default)]
pub struct NeutralWords;

impl Words for NeutralWords {
    fn hint(&self, hint: &Hint) -> String {
        match hint {
            Hint::SetOption(o) => format!("set the {o} option"),
            Hint::GiveOption(o) => format!("give the {o} option"),
            Hint::GiveOneOf(options) => format!("give the {} option", options.join(" or ")),
            Hint::DropOption(o) => format!("leave out the {o} option"),
            Hint::Run(op) => NeutralWords::operation(op),
            Hint::Allow { capability, .. } => format!("ask the user to allow {capability} for agents"),
            Hint::ChooseStore => "use another store".to_owned(),
            Hint::Unpin => "drop the session pin".to_owned(),
            Hint::GiveSecret => "give the store's password or key file".to_owned(),
        }
    }
}

impl NeutralWords {
    /// An operation as a neutral imperative phrase.
    pub fn operation(op: &Operation) -> String {
        match op {
            Operation::Save => "save a snapshot".to_owned(),
            Operation::ListSnapshots => "list the snapshots".to_owned(),
            Operation::ListSessions => "list the sessions".to_owned(),
            Operation::SetSession => "make another session current".to_owned(),
            Operation::UnsetSession => "clear the current session".to_owned(),
            Operation::Check => "check the store".to_owned(),
            Operation::Repair => "repair the store".to_owned(),
            Operation::Gc => "collect the store's garbage".to_owned(),
            Operation::ListTranscripts => "list the transcript snapshots".to_owned(),
            Operation::LoadTranscript { snapshot } => {
                format!("load transcript snapshot {snapshot} as a new agent session")
            }
            Operation::Restore { snapshot } => format!("restore snapshot {snapshot}"),
            Operation::ListSavepoints { project } => format!("list the savepoints of project {project}"),
            Operation::Rollback { project, snapshot } => format!("roll project {project} back to {snapshot}"),
            Operation::ListDebugCaptures => "list the debug captures".to_owned(),
            Operation::DiffDebugCaptures => "compare the debug captures".to_owned(),
            Operation::ContinueRestore => "finish the interrupted restore".to_owned(),
            Operation::AbortRestore => "roll back the interrupted restore".to_owned(),
            Operation::ResetAgentSetting { word, .. } => format!("reset the agent setting {word}"),
        }
    }
}
