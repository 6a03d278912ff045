//! GitHub Copilot CLI (github/docs' CLI hooks reference @ 927566b0, changelog to 1.0.78,
//! measurements against copilot 1.0.83): `$COPILOT_HOME/hooks/*.json` (by default
//! `~/.copilot/hooks/`) and the repository's `.github/hooks/*.json`; cairn writes its own file,
//! `cairn.json`, `{"version": 1, "hooks": {EVENT: [{"type": "command", "bash", "timeoutSec"}]}}`
//! (no groups; timeouts in seconds). Events on stdin, camelCase: `sessionId`, `timestamp`
//! (Unix ms), `cwd`, and the event's fields (`prompt`; `toolName`, `toolArgs`, `toolResult`;
//! `transcriptPath` on `agentStop`).
//!
//! Quirks:
//! - The payload does not name its event (but for `notification`), so each installed command
//!   names it: `cairn hook copilot-cli --event postToolUse`.
//! - `toolArgs` is an object in current versions and a JSON string in older ones: both read.
//! - Never `preToolUse`: since 1.0.57 a failing `preToolUse` hook denies the tool.
//! - Repository hooks load only after the folder is trusted, and 1.0.83 was seen running none
//!   of them: the user scope is the one that works.
//! - Copilot CLI also reads Claude Code's `.claude/settings.json` hooks: with cairn installed
//!   for both, an event may be checkpointed twice (the ledger makes a repeated prompt one turn).
//! - The conversation (`session-state/<id>/events.jsonl`) is validated strictly on resume and
//!   its side files are undocumented: code only.

use std::path::{Path, PathBuf};

use jsonc_parser::cst::CstInputValue;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::payload::{Kinds, classify, from_json, lenient, non_empty, refused};
use super::spec::{AgentSpec, EventEntry, Layers, Layout, SettingsShape};
use super::{Agent, AgentPlaces, HookCommand, HookInvocation, Scope};
use crate::error::{Error, Result};

/// Copilot CLI's tools that change files: its editor's two tools and the shell.
const FILE_TOOLS: [&str; 3] = ["edit", "create", "bash"];

const EVENTS: [EventEntry; 3] = [
    EventEntry { event: "userPromptSubmitted", matcher: None },
    // Anchored as `^(?:edit|create|bash)$`; versions before 1.0.63 ignore it and send every tool.
    EventEntry { event: "postToolUse", matcher: Some("edit|create|bash") },
    EventEntry { event: "agentStop", matcher: None },
];

const KINDS: Kinds = Kinds {
    prompt: "userPromptSubmitted",
    tools: &["postToolUse"],
    end: "agentStop",
    file_tools: &FILE_TOOLS,
};

/// How long Copilot CLI lets the hook run, in seconds (its default too).
const TIMEOUT_S: u64 = 30;

/// A GitHub Copilot CLI hook event, of the event named on the command line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CopilotCliPayload {
    /// The session's id (its `session-state/<id>/` directory).
    pub session_id: String,
    /// The working directory.
    #[serde(default, deserialize_with = "lenient")]
    pub cwd: Option<PathBuf>,
    /// When the event fired, in milliseconds since the Unix epoch.
    #[serde(default, deserialize_with = "lenient")]
    pub timestamp: Option<u64>,
    /// `userPromptSubmitted`: the prompt.
    #[serde(default, deserialize_with = "lenient")]
    pub prompt: Option<String>,
    /// Tool events: `bash`, `edit`, `create`, `view`, ...
    #[serde(default, deserialize_with = "lenient")]
    pub tool_name: Option<String>,
    /// Tool events: the arguments, an object (a JSON string in older versions is parsed).
    #[serde(default, deserialize_with = "tool_args")]
    pub tool_args: Option<Value>,
    /// `postToolUse`: `{"resultType", "textResultForLlm"}`.
    #[serde(default, deserialize_with = "lenient")]
    pub tool_result: Option<Value>,
    /// `agentStop` and others: the session's `events.jsonl`.
    #[serde(default, deserialize_with = "lenient")]
    pub transcript_path: Option<PathBuf>,
    /// `notification` only: its event name.
    #[serde(default, rename = "hook_event_name", deserialize_with = "lenient")]
    pub hook_event_name: Option<String>,
}

/// `toolArgs` as an object: a string holding JSON is parsed, anything else kept as it is.
fn tool_args<'de, D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Option<Value>, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::String(text) => Some(serde_json::from_str(&text).unwrap_or(Value::String(text))),
        Value::Null => None,
        other => Some(other),
    })
}

/// GitHub Copilot CLI's hooks.
pub(crate) struct CopilotCli;

impl AgentSpec for CopilotCli {
    fn agent(&self) -> Agent {
        Agent::CopilotCli
    }

    fn title(&self) -> &'static str {
        "GitHub Copilot CLI"
    }

    fn scopes(&self) -> &'static [Scope] {
        &[Scope::User, Scope::Project]
    }

    fn settings_file(&self, places: &AgentPlaces, scope: Scope) -> Result<PathBuf> {
        match scope {
            Scope::User => Ok(places.copilot_dir.join("hooks").join("cairn.json")),
            Scope::Project => Ok(places.project.join(".github").join("hooks").join("cairn.json")),
            Scope::Local => Err(Error::invalid(
                "GitHub Copilot CLI has no local hooks scope; choose the user or project scope",
            )),
        }
    }

    fn user_dir(&self, places: &AgentPlaces) -> PathBuf {
        places.copilot_dir.clone()
    }

    fn shape(&self) -> SettingsShape {
        SettingsShape { comments: false, layout: Layout::Flat, version: Some(1), switches: &[] }
    }

    fn events(&self) -> &'static [EventEntry] {
        &EVENTS
    }

    fn command(&self, command: &HookCommand, entry: &EventEntry) -> Result<String> {
        command.render_for_event(self.agent(), Some(entry.event))
    }

    fn hook(&self, entry: &EventEntry, command: &str) -> CstInputValue {
        let text = |s: &str| CstInputValue::String(s.to_owned());
        let mut hook = vec![("type".to_owned(), text("command")), ("bash".to_owned(), text(command))];
        if let Some(matcher) = entry.matcher {
            hook.push(("matcher".to_owned(), text(matcher)));
        }
        hook.push(("timeoutSec".to_owned(), CstInputValue::Number(TIMEOUT_S.to_string())));
        CstInputValue::Object(hook)
    }

    fn parse(&self, text: &str, event: Option<&str>) -> Result<HookInvocation> {
        let p: CopilotCliPayload = from_json(self.agent(), text)?;
        let Some(event_name) = event.map(str::to_owned).or(p.hook_event_name) else {
            return Err(refused(
                self.agent(),
                "it names no event: the hook command installed is older than this cairn; install the hooks again",
            ));
        };
        let event = classify(&event_name, p.prompt.as_deref(), p.tool_name.as_deref(), &KINDS);
        Ok(HookInvocation {
            agent: self.agent(),
            event_name,
            session_id: p.session_id,
            transcript_path: non_empty(p.transcript_path),
            cwd: non_empty(p.cwd),
            event,
            project_dir: None,
            agent_waits_until: None,
        })
    }

    fn layers(&self) -> Layers {
        Layers::CodeOnly
    }

    fn notes(&self, _places: &AgentPlaces) -> Vec<String> {
        vec![
            "code only: GitHub Copilot CLI's sessions are not written back, so a rewind puts the files back and leaves the conversation".to_owned(),
            "repository hooks (.github/hooks/) load only in a trusted folder and some versions run none: prefer the user scope, and check with `/env` in copilot".to_owned(),
        ]
    }

    fn conversation_file(&self, _transcript: &Path) -> Option<PathBuf> {
        None
    }

    /// Nothing: its `userPromptSubmitted` output is not a message to the user; an interrupted
    /// restore is said on stderr alone.
    fn reply(&self, _invocation: &HookInvocation, _paused: Option<&str>) -> Option<String> {
        None
    }
}
