//! Agent hook integration: cairn's entries in Claude Code's and Gemini CLI's settings files
//! (install, uninstall, status), and the hook events those agents send `cairn hook AGENT` on
//! stdin, typed and classified.
//!
//! Nothing here reads the environment: the front passes the home and project directories
//! (and any agent directory the user moved) in [`AgentPlaces`]. The settings files are edited
//! in place, so everything cairn does not own keeps its bytes (see [`settings`]).

mod checkpoint;
mod disabled;
mod entries;
mod install;
mod keep;
pub(crate) mod ledger;
mod log;
mod payload;
pub(crate) mod places;
mod settings;

use serde::{Deserialize, Serialize};

pub use checkpoint::{CheckpointOutcome, UNWAITED_GRACE, agent_waits_until};
pub use entries::HookCommand;
pub use install::{
    HooksChange, HooksInstallOptions, HooksPlace, HooksStatus, HooksStatusOptions, HooksUninstallOptions,
    install, status, uninstall,
};
pub use log::{HookLogLine, append_hook_log};
pub use payload::{ClaudeCodePayload, GeminiCliPayload, HookEvent, HookInvocation, REJECTED, parse_payload};
pub use places::{AgentPlaces, HOME_UNKNOWN};

/// An agent whose hooks cairn installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    /// Anthropic's Claude Code.
    #[default]
    ClaudeCode,
    /// Google's Gemini CLI.
    GeminiCli,
}

impl Agent {
    /// Both agents, in the order status lists them.
    pub const ALL: [Agent; 2] = [Agent::ClaudeCode, Agent::GeminiCli];

    /// The name used on the command line and in the installed command (`claude-code`).
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::GeminiCli => "gemini-cli",
        }
    }

    /// The scopes this agent reads settings from, narrowest last.
    pub fn scopes(self) -> &'static [Scope] {
        match self {
            Agent::ClaudeCode => &[Scope::User, Scope::Project, Scope::Local],
            Agent::GeminiCli => &[Scope::User, Scope::Project],
        }
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which of an agent's settings files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The user's own settings, for every project (`~/.claude/settings.json`,
    /// `~/.gemini/settings.json`).
    #[default]
    User,
    /// The project's shared settings (`.claude/settings.json`, `.gemini/settings.json`).
    Project,
    /// Claude Code only: the project's personal settings (`.claude/settings.local.json`).
    Local,
}

impl Scope {
    /// The lowercase name (`user`, `project`, `local`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
