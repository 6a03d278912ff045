//! Claude Code (hooks reference of late 2025, Claude Code 2.0; `PostToolUseFailure` from
//! 2.1.88): `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR`), `.claude/settings.json`,
//! `.claude/settings.local.json`, strict JSON, groups of command hooks with timeouts in
//! seconds; events on stdin with `session_id`, `transcript_path`, `cwd`, `hook_event_name`.
//!
//! Quirks: `"disableAllHooks": true` turns every hook off; the project root is in
//! `CLAUDE_PROJECT_DIR`, whatever directory the shell tool is in.

use std::path::{Path, PathBuf};

use jsonc_parser::cst::CstInputValue;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::entries::command_group;
use super::payload::{Kinds, classify, from_json, lenient, non_empty};
use super::spec::{AgentSpec, EventEntry, Layers, Layout, SettingsShape};
use super::{Agent, AgentPlaces, HookInvocation, Scope};
use crate::error::Result;

/// Claude Code's tools that change files: the built-in editors and the shell.
const FILE_TOOLS: [&str; 5] = ["Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"];

const TOOL_MATCHER: &str = "Write|Edit|MultiEdit|NotebookEdit|Bash";
const EVENTS: [EventEntry; 4] = [
    EventEntry { event: "UserPromptSubmit", matcher: None },
    EventEntry { event: "PostToolUse", matcher: Some(TOOL_MATCHER) },
    // A tool that failed half-way (a shell command that exited 1 after writing, an edit cut
    // short) may still have changed files: Claude Code sends it here, not to PostToolUse.
    EventEntry { event: "PostToolUseFailure", matcher: Some(TOOL_MATCHER) },
    EventEntry { event: "Stop", matcher: None },
];

/// Which events mean what. A tool that failed half-way may still have changed files.
const KINDS: Kinds = Kinds {
    prompt: "UserPromptSubmit",
    tools: &["PostToolUse", "PostToolUseFailure"],
    end: "Stop",
    file_tools: &FILE_TOOLS,
};

/// How long Claude Code lets the hook run, in seconds.
const TIMEOUT_S: u64 = 30;

/// A Claude Code hook event (`UserPromptSubmit`, `PostToolUse`, `Stop`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaudeCodePayload {
    /// The session's id (the transcript's `sessionId`).
    pub session_id: String,
    /// The session's transcript (`~/.claude/projects/<dir>/<session>.jsonl`).
    #[serde(default, deserialize_with = "lenient")]
    pub transcript_path: Option<PathBuf>,
    /// Claude Code's working directory.
    #[serde(default, deserialize_with = "lenient")]
    pub cwd: Option<PathBuf>,
    /// The event: `UserPromptSubmit`, `PostToolUse`, `Stop`, `SessionStart`, ...
    pub hook_event_name: String,
    /// `default`, `plan`, `acceptEdits`, `bypassPermissions`, ...
    #[serde(default, deserialize_with = "lenient")]
    pub permission_mode: Option<String>,
    /// `UserPromptSubmit`: the prompt as submitted.
    #[serde(default, deserialize_with = "lenient")]
    pub prompt: Option<String>,
    /// Tool events: the tool (`Write`, `Edit`, `Bash`, `mcp__server__tool`, ...).
    #[serde(default, deserialize_with = "lenient")]
    pub tool_name: Option<String>,
    /// Tool events: the tool's arguments.
    #[serde(default, deserialize_with = "lenient")]
    pub tool_input: Option<Value>,
    /// `PostToolUse`: the tool's result.
    #[serde(default, deserialize_with = "lenient")]
    pub tool_response: Option<Value>,
    /// Tool events: the tool call's id (`toolu_...`).
    #[serde(default, deserialize_with = "lenient")]
    pub tool_use_id: Option<String>,
    /// `Stop`: whether Claude Code is already continuing because of a stop hook.
    #[serde(default, deserialize_with = "lenient")]
    pub stop_hook_active: Option<bool>,
}

/// Claude Code's hooks.
pub(crate) struct ClaudeCode;

impl AgentSpec for ClaudeCode {
    fn agent(&self) -> Agent {
        Agent::ClaudeCode
    }

    fn title(&self) -> &'static str {
        "Claude Code"
    }

    fn scopes(&self) -> &'static [Scope] {
        &[Scope::User, Scope::Project, Scope::Local]
    }

    fn settings_file(&self, places: &AgentPlaces, scope: Scope) -> Result<PathBuf> {
        Ok(match scope {
            Scope::User => places.claude_dir.join("settings.json"),
            Scope::Project => places.project.join(".claude").join("settings.json"),
            Scope::Local => places.project.join(".claude").join("settings.local.json"),
        })
    }

    fn user_dir(&self, places: &AgentPlaces) -> PathBuf {
        places.claude_dir.clone()
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
        let p: ClaudeCodePayload = from_json(self.agent(), text)?;
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
        // front words: the variable Claude Code sets for its hooks, read by the front
        Some("CLAUDE_PROJECT_DIR")
    }

    fn warnings(&self, path: &Path, value: &Value) -> Vec<String> {
        let mut out = Vec::new();
        if value.get("disableAllHooks") == Some(&Value::Bool(true)) {
            out.push(format!(
                "{} sets \"disableAllHooks\": true, so Claude Code runs none of its hooks (cairn's included); remove that key for checkpoints to be taken",
                path.display()
            ));
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
