//! Agent hook integration: cairn's entries in the agents' hook settings files (install,
//! uninstall, status), and the hook events the agents send `cairn hook AGENT` on stdin, typed
//! and classified.
//!
//! One module per agent (`claude_code.rs`, `gemini_cli.rs`, ...) implements [`spec::AgentSpec`]:
//! its settings file and entry shape, its events, its payload parser and its quirks. Install,
//! uninstall, status and the hook go through that interface only; adding an agent is one
//! module and one [`Agent`] variant.
//!
//! Nothing here reads the environment: the front passes the home and project directories
//! (and any agent directory the user moved) in [`AgentPlaces`]. The settings files are edited
//! in place, so everything cairn does not own keeps its bytes (see [`settings`]).

mod checkpoint;
mod claude_code;
mod codex;
mod copilot_cli;
mod cursor;
mod entries;
mod gemini_cli;
mod install;
mod keep;
pub(crate) mod ledger;
mod log;
mod opencode;
mod own_file;
mod payload;
mod pi;
pub(crate) mod places;
mod settings;
mod spec;

use serde::{Deserialize, Serialize};

pub use checkpoint::{CheckpointOutcome, UNWAITED_GRACE, agent_waits_until};
pub use claude_code::ClaudeCodePayload;
pub use codex::CodexPayload;
pub use copilot_cli::CopilotCliPayload;
pub use cursor::CursorPayload;
pub use entries::HookCommand;
pub use gemini_cli::GeminiCliPayload;
pub use install::{
    AgentNotes, FailedAgent, HooksChange, HooksInstallAll, HooksInstallAllOptions, HooksInstallOptions,
    HooksPlace, HooksStatus, HooksStatusOptions, HooksUninstallOptions, SkippedAgent, install, install_all,
    status, uninstall,
};
pub use log::{HookLogLine, append_hook_log};
pub use opencode::OpenCodePayload;
pub use payload::{HookEvent, HookInvocation, REJECTED, parse_hook_event, parse_payload};
pub use pi::PiPayload;
pub use places::{AgentPlaces, HOME_UNKNOWN};
pub use spec::Layers;

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
    /// OpenAI's Codex CLI.
    Codex,
    /// Cursor's agent, in the editor and `cursor-agent`.
    Cursor,
    /// GitHub Copilot CLI.
    CopilotCli,
    /// Pi (`@mariozechner/pi-coding-agent`), through an extension file cairn owns.
    Pi,
    /// OpenCode (1.x), through a plugin file cairn owns.
    #[serde(rename = "opencode")]
    #[cfg_attr(feature = "clap", value(name = "opencode"))]
    OpenCode,
}

impl Agent {
    /// Every agent, in the order status lists them.
    pub const ALL: [Agent; 7] = [
        Agent::ClaudeCode,
        Agent::GeminiCli,
        Agent::Codex,
        Agent::Cursor,
        Agent::CopilotCli,
        Agent::Pi,
        Agent::OpenCode,
    ];

    /// The name used on the command line and in the installed command (`claude-code`).
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::GeminiCli => "gemini-cli",
            Agent::Codex => "codex",
            Agent::Cursor => "cursor",
            Agent::CopilotCli => "copilot-cli",
            Agent::Pi => "pi",
            Agent::OpenCode => "opencode",
        }
    }

    /// The agent's name in sentences (`Claude Code`, `GitHub Copilot CLI`).
    pub fn title(self) -> &'static str {
        self.spec().title()
    }

    /// The scopes this agent reads settings from, narrowest last.
    pub fn scopes(self) -> &'static [Scope] {
        self.spec().scopes()
    }

    /// The variable in which the agent names its project directory to its hooks, if any
    /// (`CLAUDE_PROJECT_DIR`): a front reads it and passes it in
    /// [`HookInvocation::project_dir`].
    pub fn project_dir_var(self) -> Option<&'static str> {
        self.spec().project_dir_var()
    }

    /// Which layers a turn of this agent keeps.
    pub fn layers(self) -> Layers {
        self.spec().layers()
    }

    /// What the hook prints on stdout after `invocation`, where the agent reads stdout as a
    /// decision (`paused`: an interrupted restore stops checkpoints, in one sentence).
    pub fn reply(self, invocation: &HookInvocation, paused: Option<&str>) -> Option<String> {
        self.spec().reply(invocation, paused)
    }

    /// The agent's module: everything cairn knows about its hooks.
    pub(crate) fn spec(self) -> &'static dyn spec::AgentSpec {
        match self {
            Agent::ClaudeCode => &claude_code::ClaudeCode,
            Agent::GeminiCli => &gemini_cli::GeminiCli,
            Agent::Codex => &codex::Codex,
            Agent::Cursor => &cursor::Cursor,
            Agent::CopilotCli => &copilot_cli::CopilotCli,
            Agent::Pi => &pi::Pi,
            Agent::OpenCode => &opencode::OpenCode,
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
