//! Gemini CLI (source at 0.56.0-nightly, August 2026, and its `docs/hooks/`):
//! `~/.gemini/settings.json` (home overridable with `GEMINI_CLI_HOME`) and the project's
//! `.gemini/settings.json`, JSON with comments, groups of command hooks named `cairn` with
//! timeouts in milliseconds; events on stdin like Claude Code's, with `transcript_path` empty
//! when no session is recorded.
//!
//! Quirks: the switches that turn hooks off moved between versions (see [`GeminiCli::warnings`]);
//! 0.24 and 0.25 kept theirs inside `hooks`; the project directory is in `GEMINI_PROJECT_DIR`
//! (Gemini CLI also sets `CLAUDE_PROJECT_DIR`, which is not read for it).

use std::path::{Path, PathBuf};

use jsonc_parser::cst::CstInputValue;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::entries::{self, command_group};
use super::payload::{Kinds, classify, from_json, lenient, non_empty};
use super::spec::{AgentSpec, EventEntry, Layers, Layout, SettingsShape};
use super::{Agent, AgentPlaces, HookInvocation, Scope};
use crate::error::{Error, Result};

/// Gemini CLI's tools that change files: `write_file`, `replace` (its editor) and the shell.
const FILE_TOOLS: [&str; 3] = ["write_file", "replace", "run_shell_command"];

const EVENTS: [EventEntry; 3] = [
    EventEntry { event: "BeforeAgent", matcher: None },
    EventEntry { event: "AfterTool", matcher: Some("write_file|replace|run_shell_command") },
    EventEntry { event: "AfterAgent", matcher: None },
];

const KINDS: Kinds =
    Kinds { prompt: "BeforeAgent", tools: &["AfterTool"], end: "AfterAgent", file_tools: &FILE_TOOLS };

/// How long Gemini CLI lets the hook run, in milliseconds.
const TIMEOUT_MS: u64 = 30_000;

/// The keys of Gemini CLI's `hooks` that are switches, not events (0.24 and 0.25).
const HOOKS_SWITCHES: [&str; 3] = ["enabled", "disabled", "notifications"];

/// A Gemini CLI hook event (`BeforeAgent`, `AfterTool`, `AfterAgent`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeminiCliPayload {
    /// The session's id.
    pub session_id: String,
    /// The session file (`~/.gemini/tmp/<project>/chats/session-*.jsonl`); empty when
    /// Gemini CLI records no session.
    #[serde(default, deserialize_with = "lenient")]
    pub transcript_path: Option<PathBuf>,
    /// Gemini CLI's working directory.
    #[serde(default, deserialize_with = "lenient")]
    pub cwd: Option<PathBuf>,
    /// The event: `BeforeAgent`, `AfterTool`, `AfterAgent`, `SessionStart`, ...
    pub hook_event_name: String,
    /// When the event fired (ISO 8601).
    #[serde(default, deserialize_with = "lenient")]
    pub timestamp: Option<String>,
    /// `BeforeAgent` and `AfterAgent`: the user's prompt.
    #[serde(default, deserialize_with = "lenient")]
    pub prompt: Option<String>,
    /// `AfterAgent`: the agent's final answer.
    #[serde(default, deserialize_with = "lenient")]
    pub prompt_response: Option<String>,
    /// `AfterAgent`: whether this runs within a retry a hook asked for.
    #[serde(default, deserialize_with = "lenient")]
    pub stop_hook_active: Option<bool>,
    /// Tool events: the tool (`write_file`, `replace`, `run_shell_command`, ...).
    #[serde(default, deserialize_with = "lenient")]
    pub tool_name: Option<String>,
    /// Tool events: the tool's arguments.
    #[serde(default, deserialize_with = "lenient")]
    pub tool_input: Option<Value>,
    /// `AfterTool`: the result (`llmContent`, `returnDisplay`, `error`).
    #[serde(default, deserialize_with = "lenient")]
    pub tool_response: Option<Value>,
}

/// Gemini CLI's hooks.
pub(crate) struct GeminiCli;

impl AgentSpec for GeminiCli {
    fn agent(&self) -> Agent {
        Agent::GeminiCli
    }

    fn title(&self) -> &'static str {
        "Gemini CLI"
    }

    fn scopes(&self) -> &'static [Scope] {
        &[Scope::User, Scope::Project]
    }

    fn settings_file(&self, places: &AgentPlaces, scope: Scope) -> Result<PathBuf> {
        match scope {
            Scope::User => Ok(places.gemini_dir.join("settings.json")),
            Scope::Project => Ok(places.project.join(".gemini").join("settings.json")),
            Scope::Local => Err(Error::invalid(
                "Gemini CLI has no local settings scope; choose the user or project scope",
            )),
        }
    }

    fn user_dir(&self, places: &AgentPlaces) -> PathBuf {
        places.gemini_dir.clone()
    }

    fn shape(&self) -> SettingsShape {
        SettingsShape { comments: true, layout: Layout::Groups, version: None, switches: &HOOKS_SWITCHES }
    }

    fn events(&self) -> &'static [EventEntry] {
        &EVENTS
    }

    fn hook(&self, entry: &EventEntry, command: &str) -> CstInputValue {
        // Gemini CLI names hooks in its `/hooks` listing and its enable/disable commands.
        command_group(entry, Some("cairn"), command, TIMEOUT_MS)
    }

    fn parse(&self, text: &str, _event: Option<&str>) -> Result<HookInvocation> {
        let p: GeminiCliPayload = from_json(self.agent(), text)?;
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

    fn project_dir_var(&self) -> Option<&'static str> {
        Some("GEMINI_PROJECT_DIR")
    }

    /// By version: `hooksConfig.enabled: false` (0.26 and later; the default is true from
    /// 0.27), `hooks.enabled: false` (0.24 and 0.25), `tools.enableHooks: false` (0.13 to
    /// 0.27; removed in 0.28), and a `hooksConfig.disabled` (or, 0.21 to 0.25,
    /// `hooks.disabled`) list naming cairn's hook by its name or command. A default cannot be
    /// told apart from another version's default without knowing the version.
    fn warnings(&self, path: &Path, value: &Value) -> Vec<String> {
        let file = path.display();
        let is_false = |pointer: &str| value.pointer(pointer) == Some(&Value::Bool(false));
        let mut out = Vec::new();
        for (pointer, key, versions) in [
            ("/hooksConfig/enabled", "hooksConfig.enabled", "0.26 and later"),
            ("/hooks/enabled", "hooks.enabled", "0.24 and 0.25"),
            ("/tools/enableHooks", "tools.enableHooks", "0.13 to 0.27"),
        ] {
            if is_false(pointer) {
                out.push(format!(
                    "{file} sets {key} to false, so Gemini CLI {versions} runs no hooks (cairn's included); set it to true for checkpoints to be taken"
                ));
            }
        }
        for (pointer, key) in
            [("/hooksConfig/disabled", "hooksConfig.disabled"), ("/hooks/disabled", "hooks.disabled")]
        {
            let names = value.pointer(pointer).and_then(Value::as_array).into_iter().flatten();
            if names
                .filter_map(Value::as_str)
                .any(|n| n == "cairn" || entries::is_cairn_command(self.agent(), n))
            {
                out.push(format!(
                    "{file} lists cairn's hook in {key}, so Gemini CLI skips it; take it out for checkpoints to be taken"
                ));
            }
        }
        out
    }

    fn layers(&self) -> Layers {
        Layers::CodeAndConversation
    }

    fn conversation_file(&self, transcript: &Path) -> Option<PathBuf> {
        Some(transcript.to_path_buf())
    }
}
