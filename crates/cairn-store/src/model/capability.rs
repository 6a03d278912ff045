//! What an agent may be allowed to do, and the setting that holds the user's answer.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::config::Config;

/// Something an agent may be allowed to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// Save snapshots (allowed unless the user denied it).
    Save,
    /// Restore snapshots, overwriting live state (denied unless the user allowed it, or the
    /// compatibility profile's original tool lets agents do it without asking).
    Restore,
    /// Remove snapshots and delete sessions (denied unless the user allowed it, or the
    /// compatibility profile's original tool lets agents do it without asking).
    Remove,
    /// Save transcript snapshots through the pi profile (denied unless the user allowed it).
    #[serde(rename = "transcript-save")]
    TranscriptSave,
    /// Load transcript snapshots as new sessions through the pi profile (denied unless the
    /// user allowed it).
    #[serde(rename = "transcript-restore")]
    TranscriptRestore,
}

impl Capability {
    /// Every capability, in the order status lists them.
    pub const ALL: [Capability; 5] = [
        Capability::Save,
        Capability::Restore,
        Capability::Remove,
        Capability::TranscriptSave,
        Capability::TranscriptRestore,
    ];

    /// The word used on the command line: `save`, `restore` or `remove`.
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::Save => "save",
            Capability::Restore => "restore",
            Capability::Remove => "remove",
            Capability::TranscriptSave => "transcript-save",
            Capability::TranscriptRestore => "transcript-restore",
        }
    }

    /// The config key holding the user's answer.
    pub fn key(self) -> &'static str {
        match self {
            Capability::Save => "agent.save",
            Capability::Restore => "agent.restore",
            Capability::Remove => "agent.remove",
            Capability::TranscriptSave => "agent.transcript-save",
            Capability::TranscriptRestore => "agent.transcript-restore",
        }
    }

    /// The user's answer in `config`, read through the setting's typed accessor (its default
    /// when unset).
    pub fn allowed_in(self, config: &Config) -> bool {
        match self {
            Capability::Save => config.agent_save(),
            Capability::Restore => config.agent_restore(),
            Capability::Remove => config.agent_remove(),
            Capability::TranscriptSave => config.agent_transcript_save(),
            Capability::TranscriptRestore => config.agent_transcript_restore(),
        }
    }

    /// What the capability allows, as a refusal names it (`restoring snapshots`).
    pub fn doing(self) -> &'static str {
        match self {
            Capability::Save => "saving snapshots",
            Capability::Restore => "restoring snapshots",
            Capability::Remove => "removing snapshots and deleting sessions",
            Capability::TranscriptSave => "saving transcript snapshots",
            Capability::TranscriptRestore => "restoring transcript snapshots",
        }
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
