//! The one interface every agent module fills in: where its hook settings live and how they
//! look, which events cairn subscribes to, how its events read, and its quirks.
//!
//! Install, uninstall, status and `cairn hook AGENT` go through [`AgentSpec`] alone, so adding
//! an agent is one module implementing it plus one [`Agent`] variant. The engine's turn logic
//! (`checkpoint.rs`, `ledger.rs`) sees only the [`HookInvocation`] a module's parser gives.

use std::path::{Path, PathBuf};

use jsonc_parser::cst::CstInputValue;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Agent, AgentPlaces, HookCommand, HookInvocation, Scope};
use crate::error::Result;

/// One event cairn hooks into.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EventEntry {
    /// The event's key in `hooks` (`UserPromptSubmit`, `AfterTool`, `afterFileEdit`, ...).
    pub event: &'static str,
    /// The tool-name matcher, for tool events.
    pub matcher: Option<&'static str>,
}

/// How an event's list holds hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `[{"matcher": ..., "hooks": [HOOK, ...]}]`: Claude Code, Gemini CLI, Codex CLI.
    Groups,
    /// `[HOOK, ...]`, under a top-level `"version": 1`: Cursor, GitHub Copilot CLI.
    Flat,
    /// No settings file to edit: a file cairn writes whole and owns, which the agent loads as
    /// code (Pi's extension, OpenCode's plugin); see [`AgentSpec::own_file`].
    OwnFile,
}

/// The shape of an agent's hook settings file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SettingsShape {
    /// Whether the agent reads the file as JSON with comments (else strict JSON).
    pub comments: bool,
    /// How an event's list holds hooks.
    pub layout: Layout,
    /// The `version` a file cairn creates starts with (`None`: no version key).
    pub version: Option<u64>,
    /// Keys of `hooks` that are switches, not event lists.
    pub switches: &'static [&'static str],
}

/// Which of a turn's layers cairn keeps for an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Layers {
    /// The files and the agent's conversation: `cairn rewind` forks the conversation too.
    CodeAndConversation,
    /// The files only: the agent's conversation is not read (yet), `cairn rewind` puts the
    /// files back and says so.
    CodeOnly,
}

/// Everything cairn knows about one agent's hooks. Implemented by one unit struct per agent
/// module; reached through [`Agent::spec`].
pub(crate) trait AgentSpec: Sync {
    /// The agent.
    fn agent(&self) -> Agent;

    /// The agent's name in sentences (`Claude Code`).
    fn title(&self) -> &'static str;

    /// The scopes this agent reads hook settings from, narrowest last.
    fn scopes(&self) -> &'static [Scope];

    /// The hook settings file at `scope`; a scope the agent does not have is refused.
    fn settings_file(&self, places: &AgentPlaces, scope: Scope) -> Result<PathBuf>;

    /// The agent's user configuration directory: `hooks install --all` installs for an agent
    /// when it exists.
    fn user_dir(&self, places: &AgentPlaces) -> PathBuf;

    /// The settings file's shape.
    fn shape(&self) -> SettingsShape;

    /// The events cairn hooks into, in the order they are written.
    fn events(&self) -> &'static [EventEntry];

    /// The shell command installed for `entry`.
    fn command(&self, command: &HookCommand, _entry: &EventEntry) -> Result<String> {
        command.render(self.agent())
    }

    /// The element cairn appends to `entry`'s list, running `command` (not used for an
    /// agent of [`Layout::OwnFile`]).
    fn hook(&self, entry: &EventEntry, command: &str) -> CstInputValue;

    /// [`Layout::OwnFile`]: the whole text of the file cairn owns, running `command`. The file
    /// must name the command so that [`super::own_file`] can tell, without being given it,
    /// whether a file on disk is still exactly what cairn wrote.
    fn own_file(&self, _command: &HookCommand) -> Result<String> {
        Err(crate::error::Error::invalid(format!("{} keeps its hooks in a settings file", self.title())))
    }

    /// Parses the JSON the agent sent on stdin; `event` is the event named on the command line
    /// (for an agent whose payload does not name it).
    fn parse(&self, text: &str, event: Option<&str>) -> Result<HookInvocation>;

    /// The variable in which the agent names its project directory to the hook, if any.
    fn project_dir_var(&self) -> Option<&'static str> {
        None
    }

    /// Settings of the file (parsed as `value`, at `path`) that keep the agent from running
    /// cairn's hooks, one sentence each. Only values written in the file count.
    fn warnings(&self, _path: &Path, _value: &Value) -> Vec<String> {
        Vec::new()
    }

    /// Which layers a turn of this agent keeps.
    fn layers(&self) -> Layers;

    /// What the user must know or do for the hooks to run, beyond the file (trust, versions,
    /// layers), one sentence each.
    fn notes(&self, _places: &AgentPlaces) -> Vec<String> {
        Vec::new()
    }

    /// The conversation file a prompt's moment keeps as its `transcript:` part, from the
    /// transcript path the event named: only when cairn can read that agent's conversation.
    fn conversation_file(&self, transcript: &Path) -> Option<PathBuf>;

    /// What the hook prints on stdout for `invocation`, where the agent reads stdout as a
    /// decision; `paused` is the sentence of an interrupted restore that stops checkpoints.
    /// By default the `systemMessage` Claude Code, Gemini CLI and Codex CLI show their user.
    fn reply(&self, _invocation: &HookInvocation, paused: Option<&str>) -> Option<String> {
        paused.map(|text| serde_json::json!({ "systemMessage": format!("cairn: {text}") }).to_string())
    }
}
