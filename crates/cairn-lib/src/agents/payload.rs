//! The one event type every agent's payload is parsed into ([`HookInvocation`], classified as
//! a [`HookEvent`]), and the lenient reading the agents' parsers share.
//!
//! Each agent module types its own payload (one JSON object per run, with the session, the
//! transcript, the directory and the event's fields); the structs keep the fields cairn uses
//! and ignore the rest, so a
//! newer agent that adds fields keeps working. Every optional field is read leniently
//! ([`lenient`]): a value of another type than cairn expects (a `tool_response` that is a
//! string, a number where a string was, a `permission_mode` of a newer agent) reads as absent
//! rather than rejecting the event, since a hook that turns an event away saves nothing. Only
//! the session id and the event's name, which every event has, are required. [`HookEvent`] is
//! the classification the moment logic acts on.

use std::path::PathBuf;
use std::time::SystemTime;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::Agent;
use crate::error::{Error, Result};

/// The code of [`parse_payload`]'s refusal, whose message names the agent and the reason and
/// quotes nothing of the event (a front logs it as is).
pub const REJECTED: &str = "HOOK_EVENT_REJECTED";

/// What an event means to cairn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HookEvent {
    /// The user submitted a prompt; the agent has not acted on it yet.
    PromptSubmitted {
        /// The prompt.
        prompt: String,
    },
    /// A tool that can change files (an editor or the shell) finished.
    FileToolFinished {
        /// The tool's name.
        tool: String,
    },
    /// The agent finished its answer to a prompt.
    TurnEnded,
    /// Anything else (another tool, session start, notifications, ...).
    Other {
        /// The agent's event name.
        event: String,
    },
}

/// One hook run: which agent, which session, and what happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HookInvocation {
    /// The agent that ran the hook.
    pub agent: Agent,
    /// The agent's event name, as sent.
    pub event_name: String,
    /// The agent's session id.
    pub session_id: String,
    /// The session's transcript, when the agent named one.
    pub transcript_path: Option<PathBuf>,
    /// The agent's working directory.
    pub cwd: Option<PathBuf>,
    /// What it means.
    pub event: HookEvent,
    /// The agent's project directory, which the agents put in the hook's environment rather
    /// than in the event (`CLAUDE_PROJECT_DIR`, `GEMINI_PROJECT_DIR`): the front fills it in.
    /// The turn's workspace is this directory, not `cwd`, which follows the agent's shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_dir: Option<PathBuf>,
    /// When the agent stopped waiting for this hook (see [`super::agent_waits_until`]): the
    /// front fills it in. A checkpoint whose capture begins later is marked inexact. `None`:
    /// the caller waits for the checkpoint, which is then exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_waits_until: Option<SystemTime>,
}

/// Parses the JSON an agent sent on stdin and classifies it.
pub fn parse_payload(agent: Agent, text: &str) -> Result<HookInvocation> {
    agent.spec().parse(text, None)
}

/// Parses the JSON an agent sent on stdin, for the event named on the command line (`cairn
/// hook copilot-cli --event postToolUse`: GitHub Copilot CLI's payloads do not name their
/// event), and classifies it.
pub fn parse_hook_event(agent: Agent, text: &str, event: Option<&str>) -> Result<HookInvocation> {
    agent.spec().parse(text, event)
}

impl HookInvocation {
    /// The conversation file a prompt's moment keeps, when the event named one that exists
    /// and cairn reads this agent's conversations (see [`super::spec::AgentSpec::conversation_file`]).
    pub(crate) fn conversation_file(&self) -> Option<PathBuf> {
        let file = self.transcript_path.as_ref().filter(|f| f.is_file())?;
        self.agent.spec().conversation_file(file)
    }
}

/// Reads an agent's payload as `T`, refused in a sentence that quotes nothing of it.
pub(crate) fn from_json<T: DeserializeOwned>(agent: Agent, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| refused(agent, &reason(&e)))
}

/// The refusal of an event of `agent`, for `why`.
pub(crate) fn refused(agent: Agent, why: &str) -> Error {
    Error::invalid(format!("the {agent} hook event was turned away: {why}")).with_code(REJECTED)
}

/// Reads a field as `T` when it is one, else as absent: a field of the wrong type never
/// rejects the event.
pub(crate) fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    deserializer: D,
) -> std::result::Result<Option<T>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(serde_json::from_value(value).ok())
}

/// Why serde refused an event, in words that quote nothing of it: serde's own message can
/// hold a value of the payload (`invalid type: string "..."`), which may be the prompt.
fn reason(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let at = format!("line {}, column {}", e.line(), e.column());
    match e.classify() {
        Category::Eof if e.line() == 1 && e.column() == 0 => "it is empty".to_owned(),
        Category::Eof => format!("it ends early ({at})"),
        Category::Syntax => format!("it is not JSON ({at})"),
        Category::Io => "it could not be read".to_owned(),
        Category::Data => {
            let message = e.to_string();
            match message.strip_prefix("missing field ") {
                Some(rest) => format!("it has no {}", rest.split(" at line").next().unwrap_or_default()),
                None => format!("it is not an event object, or a field cairn reads has another type ({at})"),
            }
        }
    }
}

/// Which of an agent's events mean what to cairn.
pub(crate) struct Kinds {
    /// The prompt-submitted event.
    pub prompt: &'static str,
    /// The events of a finished tool.
    pub tools: &'static [&'static str],
    /// The turn-ended event.
    pub end: &'static str,
    /// The tools that can change files.
    pub file_tools: &'static [&'static str],
}

/// What `event` (with its prompt and tool, when it has them) means to cairn.
pub(crate) fn classify(event: &str, prompt: Option<&str>, tool: Option<&str>, kinds: &Kinds) -> HookEvent {
    if event == kinds.prompt {
        return HookEvent::PromptSubmitted { prompt: prompt.unwrap_or_default().to_owned() };
    }
    if kinds.tools.contains(&event)
        && let Some(tool) = tool.filter(|t| kinds.file_tools.contains(t))
    {
        return HookEvent::FileToolFinished { tool: tool.to_owned() };
    }
    if event == kinds.end {
        return HookEvent::TurnEnded;
    }
    HookEvent::Other { event: event.to_owned() }
}

/// Gemini CLI sends `""` when it records no session; treat that as absent.
pub(crate) fn non_empty(path: Option<PathBuf>) -> Option<PathBuf> {
    path.filter(|p| !p.as_os_str().is_empty())
}
