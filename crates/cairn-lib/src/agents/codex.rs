//! Codex CLI (openai/codex `codex-rs`, tag `rust-v0.125.0`, with the hook-trust gate that came
//! after it): `$CODEX_HOME/hooks.json` (by default `~/.codex/hooks.json`, beside `config.toml`)
//! and the project's `.codex/hooks.json`, strict JSON shaped as Claude Code's (`{"hooks":
//! {EVENT: [{"matcher", "hooks": [{"type": "command", "command", "timeout"}]}]}}`, timeouts in
//! seconds); events on stdin with `session_id`, `turn_id`, `transcript_path` (the rollout file,
//! or null), `cwd`, `hook_event_name`, and the event's fields.
//!
//! Quirks:
//! - 0.122 and 0.123 run hooks only with `[features] codex_hooks = true` in `config.toml`;
//!   from 0.124 they run by default, and `codex_hooks = false` turns them all off.
//! - Later versions run a user or project hook only once it is trusted: reviewed in `/hooks`
//!   (or the "Hooks need review" screen), which writes its hash into `config.toml`. cairn does
//!   not write that hash (it covers the normalised hook and changes with it); status says what
//!   to do. `codex exec` never runs an untrusted hook.
//! - A project's `.codex/` layer loads only when the project is trusted.
//! - `PostToolUse` follows only a tool that succeeded; `apply_patch` is the file tool, and every
//!   shell tool (`shell`, `shell_command`, `exec_command`) is named `Bash`.
//! - No project directory in the environment: the turn's directory is the event's `cwd`.
//! - The rollout is written lazily: at `UserPromptSubmit` the file exists but does not hold the
//!   prompt yet.

use std::path::{Path, PathBuf};

use jsonc_parser::cst::CstInputValue;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::entries::command_group;
use super::payload::{Kinds, classify, from_json, lenient, non_empty};
use super::spec::{AgentSpec, EventEntry, Layers, Layout, SettingsShape};
use super::{Agent, AgentPlaces, HookInvocation, Scope};
use crate::error::{Error, Result};

/// Codex CLI's tools that change files: `apply_patch` and the shell tools, all named `Bash`.
const FILE_TOOLS: [&str; 2] = ["apply_patch", "Bash"];

const EVENTS: [EventEntry; 3] = [
    EventEntry { event: "UserPromptSubmit", matcher: None },
    // Only `[A-Za-z0-9_|]`: an exact match with alternatives, not a regular expression.
    EventEntry { event: "PostToolUse", matcher: Some("apply_patch|Bash") },
    EventEntry { event: "Stop", matcher: None },
];

const KINDS: Kinds =
    Kinds { prompt: "UserPromptSubmit", tools: &["PostToolUse"], end: "Stop", file_tools: &FILE_TOOLS };

/// How long Codex CLI lets the hook run, in seconds (its default is 600).
const TIMEOUT_S: u64 = 30;

/// A Codex CLI hook event (`UserPromptSubmit`, `PostToolUse`, `Stop`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodexPayload {
    /// The thread's id (the UUID in the rollout's file name).
    pub session_id: String,
    /// The turn's id (absent from `SessionStart`).
    #[serde(default, deserialize_with = "lenient")]
    pub turn_id: Option<String>,
    /// The rollout file (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), or null.
    #[serde(default, deserialize_with = "lenient")]
    pub transcript_path: Option<PathBuf>,
    /// The turn's working directory.
    #[serde(default, deserialize_with = "lenient")]
    pub cwd: Option<PathBuf>,
    /// The event: `UserPromptSubmit`, `PostToolUse`, `Stop`, `SessionStart`, ...
    pub hook_event_name: String,
    /// The model's slug.
    #[serde(default, deserialize_with = "lenient")]
    pub model: Option<String>,
    /// `default` or `bypassPermissions`.
    #[serde(default, deserialize_with = "lenient")]
    pub permission_mode: Option<String>,
    /// `UserPromptSubmit`: the prompt.
    #[serde(default, deserialize_with = "lenient")]
    pub prompt: Option<String>,
    /// Tool events: `apply_patch`, `Bash`, `mcp__<server>__<tool>`.
    #[serde(default, deserialize_with = "lenient")]
    pub tool_name: Option<String>,
    /// Tool events: the tool's arguments (`{"command": ...}`).
    #[serde(default, deserialize_with = "lenient")]
    pub tool_input: Option<Value>,
    /// `PostToolUse`: the tool's output (a string for `apply_patch` and the shell).
    #[serde(default, deserialize_with = "lenient")]
    pub tool_response: Option<Value>,
    /// Tool events: the call's id.
    #[serde(default, deserialize_with = "lenient")]
    pub tool_use_id: Option<String>,
    /// `Stop`: whether a stop hook already continued the turn.
    #[serde(default, deserialize_with = "lenient")]
    pub stop_hook_active: Option<bool>,
}

/// Codex CLI's hooks.
pub(crate) struct Codex;

impl AgentSpec for Codex {
    fn agent(&self) -> Agent {
        Agent::Codex
    }

    fn title(&self) -> &'static str {
        "Codex CLI"
    }

    fn scopes(&self) -> &'static [Scope] {
        &[Scope::User, Scope::Project]
    }

    fn settings_file(&self, places: &AgentPlaces, scope: Scope) -> Result<PathBuf> {
        match scope {
            Scope::User => Ok(places.codex_dir.join("hooks.json")),
            Scope::Project => Ok(places.project.join(".codex").join("hooks.json")),
            Scope::Local => {
                Err(Error::invalid("Codex CLI has no local hooks scope; choose the user or project scope"))
            }
        }
    }

    fn user_dir(&self, places: &AgentPlaces) -> PathBuf {
        places.codex_dir.clone()
    }

    fn shape(&self) -> SettingsShape {
        SettingsShape { comments: false, layout: Layout::Groups, version: None, switches: &[] }
    }

    fn events(&self) -> &'static [EventEntry] {
        &EVENTS
    }

    fn hook(&self, entry: &EventEntry, command: &str) -> CstInputValue {
        command_group(entry, None, command, TIMEOUT_S)
    }

    fn parse(&self, text: &str, _event: Option<&str>) -> Result<HookInvocation> {
        let p: CodexPayload = from_json(self.agent(), text)?;
        let event = classify(&p.hook_event_name, p.prompt.as_deref(), p.tool_name.as_deref(), &KINDS);
        Ok(HookInvocation {
            agent: self.agent(),
            event_name: p.hook_event_name,
            session_id: p.session_id,
            transcript_path: non_empty(p.transcript_path),
            cwd: non_empty(p.cwd),
            event,
            project_dir: None,
            agent_waits_until: None,
        })
    }

    /// `[features] codex_hooks = false` in the `config.toml` beside the hooks file.
    fn warnings(&self, path: &Path, _value: &Value) -> Vec<String> {
        let config = path.with_file_name("config.toml");
        let Ok(text) = std::fs::read_to_string(&config) else {
            return Vec::new();
        };
        let off =
            text.parse::<toml::Table>().ok().and_then(|t| t.get("features")?.get("codex_hooks")?.as_bool())
                == Some(false);
        if !off {
            return Vec::new();
        }
        vec![format!(
            "{} sets [features] codex_hooks = false, so Codex CLI runs no hooks (cairn's included); remove it (0.124 and later) or set it to true for checkpoints to be taken",
            config.display()
        )]
    }

    fn layers(&self) -> Layers {
        Layers::CodeAndConversation
    }

    fn notes(&self, _places: &AgentPlaces) -> Vec<String> {
        vec![
            "Codex CLI 0.124 and later run hooks by default; 0.122 and 0.123 need `codex_hooks = true` under [features] in config.toml".to_owned(),
            "Codex CLI versions with hook trust skip a hook until it is reviewed: run `/hooks` in Codex and trust cairn's (again after an install that changed the command); `codex exec` never runs an untrusted hook".to_owned(),
            "a project's .codex/hooks.json is read only when Codex trusts the project".to_owned(),
        ]
    }

    /// The rollout the payload names, when it reads as one (its first line a `session_meta`).
    fn conversation_file(&self, transcript: &Path) -> Option<PathBuf> {
        let read = cairn_transcript::Transcript::read_as_agent(transcript).ok()?;
        (read.format() == cairn_transcript::Format::Codex).then(|| transcript.to_path_buf())
    }
}
