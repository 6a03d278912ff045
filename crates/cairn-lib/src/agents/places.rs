//! Where each agent keeps its settings files, from directories the front resolved.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Agent, Scope};
use crate::error::{Error, Result};

/// The directories settings files are found from. [`AgentPlaces::new`] gives the agents'
/// defaults; a front that honours an agent's own variable (Claude Code's `CLAUDE_CONFIG_DIR`,
/// Gemini CLI's `GEMINI_CLI_HOME`) sets the field itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentPlaces {
    /// The project directory (the agent's working directory).
    pub project: PathBuf,
    /// Claude Code's user directory (by default `~/.claude`).
    pub claude_dir: PathBuf,
    /// Gemini CLI's user directory (by default `~/.gemini`).
    pub gemini_dir: PathBuf,
}

impl AgentPlaces {
    /// The agents' default directories under `home`, for the project at `project`.
    pub fn new(home: &Path, project: &Path) -> AgentPlaces {
        AgentPlaces {
            project: project.to_path_buf(),
            claude_dir: home.join(".claude"),
            gemini_dir: home.join(".gemini"),
        }
    }

    /// The settings file of `agent` at `scope`; a scope the agent does not have is refused.
    pub fn settings_file(&self, agent: Agent, scope: Scope) -> Result<PathBuf> {
        match (agent, scope) {
            (Agent::ClaudeCode, Scope::User) => Ok(self.claude_dir.join("settings.json")),
            (Agent::ClaudeCode, Scope::Project) => Ok(self.project.join(".claude").join("settings.json")),
            (Agent::ClaudeCode, Scope::Local) => Ok(self.project.join(".claude").join("settings.local.json")),
            (Agent::GeminiCli, Scope::User) => Ok(self.gemini_dir.join("settings.json")),
            (Agent::GeminiCli, Scope::Project) => Ok(self.project.join(".gemini").join("settings.json")),
            (Agent::GeminiCli, Scope::Local) => Err(Error::invalid(
                "Gemini CLI has no local settings scope; choose the user or project scope",
            )),
        }
    }
}
