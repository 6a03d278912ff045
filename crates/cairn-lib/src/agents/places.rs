//! Where each agent keeps its settings files, and the one reading of the agents' own
//! variables (`HOME`, `CLAUDE_CONFIG_DIR`, `GEMINI_CLI_HOME`, `CODEX_HOME`, `COPILOT_HOME`,
//! `PI_CODING_AGENT_DIR`, `OPENCODE_CONFIG_DIR`, `XDG_CONFIG_HOME`) from the
//! environment a front passes in: every front and both kinds of places go through
//! [`AgentEnv::read`], so no front can forget one of them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Agent, Scope};
use crate::error::{Error, Result};
use crate::store::address::{EnvLookup, env};

/// The code of the refusal when no home directory is known, for a front to name its variable.
pub const HOME_UNKNOWN: &str = "HOME_UNKNOWN";

/// The agents' own variables, as the agents themselves read them (an empty one is unset).
#[derive(Debug, Clone, Default)]
pub(crate) struct AgentEnv {
    /// `HOME`.
    pub home: Option<PathBuf>,
    /// Claude Code's `CLAUDE_CONFIG_DIR` (its user directory, holding `projects/`).
    pub claude_config_dir: Option<PathBuf>,
    /// Gemini CLI's `GEMINI_CLI_HOME` (the home its `.gemini` directory sits in).
    pub gemini_cli_home: Option<PathBuf>,
    /// Pi's `PI_CODING_AGENT_DIR` (its agent directory, holding `sessions/`).
    pub pi_agent_dir: Option<PathBuf>,
    /// Codex CLI's `CODEX_HOME` (its user directory, holding `config.toml` and `hooks.json`).
    pub codex_home: Option<PathBuf>,
    /// GitHub Copilot CLI's `COPILOT_HOME` (replaces all of `~/.copilot`).
    pub copilot_home: Option<PathBuf>,
    /// OpenCode's `OPENCODE_CONFIG_DIR` (a configuration directory it loads plugins from).
    pub opencode_config_dir: Option<PathBuf>,
    /// `XDG_CONFIG_HOME` (OpenCode's user configuration is `$XDG_CONFIG_HOME/opencode`).
    pub xdg_config_home: Option<PathBuf>,
}

impl AgentEnv {
    /// The variables of `env`.
    pub(crate) fn read(env: &EnvLookup) -> Self {
        Self {
            home: env::var("HOME", env),
            claude_config_dir: env::var("CLAUDE_CONFIG_DIR", env),
            gemini_cli_home: env::var("GEMINI_CLI_HOME", env),
            pi_agent_dir: env::var("PI_CODING_AGENT_DIR", env),
            codex_home: env::var("CODEX_HOME", env),
            copilot_home: env::var("COPILOT_HOME", env),
            opencode_config_dir: env::var("OPENCODE_CONFIG_DIR", env),
            xdg_config_home: env::var("XDG_CONFIG_HOME", env),
        }
    }

    /// Gemini CLI's user directory: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`.
    pub(crate) fn gemini_dir(&self) -> Option<PathBuf> {
        self.gemini_cli_home.as_ref().or(self.home.as_ref()).map(|home| home.join(".gemini"))
    }
}

/// The directories settings files are found from. [`AgentPlaces::from_env`] finds them as the
/// agents do; [`AgentPlaces::new`] gives the agents' defaults under a home.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentPlaces {
    /// The project directory (the agent's working directory).
    pub project: PathBuf,
    /// Claude Code's user directory (by default `~/.claude`).
    pub claude_dir: PathBuf,
    /// Gemini CLI's user directory (by default `~/.gemini`).
    pub gemini_dir: PathBuf,
    /// Codex CLI's user directory (by default `~/.codex`).
    pub codex_dir: PathBuf,
    /// Cursor's user directory (`~/.cursor`).
    pub cursor_dir: PathBuf,
    /// GitHub Copilot CLI's user directory (by default `~/.copilot`).
    pub copilot_dir: PathBuf,
    /// Pi's agent directory (by default `~/.pi/agent`), holding `extensions/`.
    pub pi_dir: PathBuf,
    /// OpenCode's user configuration directory (by default `~/.config/opencode`), holding
    /// `plugin/`.
    pub opencode_dir: PathBuf,
}

impl AgentPlaces {
    /// The agents' default directories under `home`, for the project at `project`.
    pub fn new(home: &Path, project: &Path) -> AgentPlaces {
        AgentPlaces {
            project: project.to_path_buf(),
            claude_dir: home.join(".claude"),
            gemini_dir: home.join(".gemini"),
            codex_dir: home.join(".codex"),
            cursor_dir: home.join(".cursor"),
            copilot_dir: home.join(".copilot"),
            pi_dir: home.join(".pi").join("agent"),
            opencode_dir: home.join(".config").join("opencode"),
        }
    }

    /// The agents' directories as the agents find them in `env` (Claude Code's
    /// `CLAUDE_CONFIG_DIR`, Gemini CLI's `GEMINI_CLI_HOME`, Codex CLI's `CODEX_HOME`, GitHub
    /// Copilot CLI's `COPILOT_HOME`, Pi's `PI_CODING_AGENT_DIR`, OpenCode's
    /// `OPENCODE_CONFIG_DIR` or `XDG_CONFIG_HOME`, else under `HOME`), for the project
    /// at `project`; refused when no home is known.
    pub fn from_env(env: &EnvLookup, project: &Path) -> Result<AgentPlaces> {
        let vars = AgentEnv::read(env);
        let home = vars.home.clone().ok_or_else(|| {
            Error::invalid("cannot find the agents' settings: no home directory is known")
                .with_code(HOME_UNKNOWN)
        })?;
        let mut places = AgentPlaces::new(&home, project);
        if let Some(dir) = &vars.claude_config_dir {
            places.claude_dir = dir.clone();
        }
        if let Some(dir) = vars.gemini_dir() {
            places.gemini_dir = dir;
        }
        if let Some(dir) = &vars.codex_home {
            places.codex_dir = dir.clone();
        }
        if let Some(dir) = &vars.copilot_home {
            places.copilot_dir = dir.clone();
        }
        if let Some(dir) = &vars.pi_agent_dir {
            places.pi_dir = dir.clone();
        }
        if let Some(dir) = vars
            .opencode_config_dir
            .clone()
            .or_else(|| vars.xdg_config_home.as_ref().map(|d| d.join("opencode")))
        {
            places.opencode_dir = dir;
        }
        Ok(places)
    }

    /// The settings file of `agent` at `scope`; a scope the agent does not have is refused.
    pub fn settings_file(&self, agent: Agent, scope: Scope) -> Result<PathBuf> {
        agent.spec().settings_file(self, scope)
    }
}
