//! The hook events Claude Code and Gemini CLI send on stdin, typed, and what each means to cairn.
//!
//! Both agents send one JSON object per run with `session_id`, `transcript_path`, `cwd` and
//! `hook_event_name`, plus fields of the event (`prompt`, `tool_name`, `tool_input`,
//! `tool_response`, ...). The structs keep the fields cairn uses and ignore the rest, so a
//! newer agent that adds fields keeps working. Every optional field is read leniently
//! ([`lenient`]): a value of another type than cairn expects (a `tool_response` that is a
//! string, a number where a string was, a `permission_mode` of a newer agent) reads as absent
//! rather than rejecting the event, since a hook that turns an event away saves nothing. Only
//! `session_id` and `hook_event_name`, which every event has, are required. [`HookEvent`] is
//! the classification the moment logic acts on.

use std::path::PathBuf;
use std::time::SystemTime;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::Agent;
use super::entries::{CLAUDE_FILE_TOOLS, GEMINI_FILE_TOOLS};
use crate::error::{Error, Result};

/// The code of [`parse_payload`]'s refusal, whose message names the agent and the reason and
/// quotes nothing of the event (a front logs it as is).
pub const REJECTED: &str = "HOOK_EVENT_REJECTED";

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
    let refuse = |e: serde_json::Error| {
        Error::invalid(format!("the {agent} hook event was turned away: {}", reason(&e))).with_code(REJECTED)
    };
    match agent {
        Agent::ClaudeCode => {
            let p: ClaudeCodePayload = serde_json::from_str(text).map_err(refuse)?;
            let event = classify(&p.hook_event_name, p.prompt.as_deref(), p.tool_name.as_deref(), agent);
            Ok(HookInvocation {
                agent,
                event_name: p.hook_event_name,
                session_id: p.session_id,
                transcript_path: non_empty(p.transcript_path),
                cwd: non_empty(p.cwd),
                event,
                project_dir: None,
                agent_waits_until: None,
            })
        }
        Agent::GeminiCli => {
            let p: GeminiCliPayload = serde_json::from_str(text).map_err(refuse)?;
            let event = classify(&p.hook_event_name, p.prompt.as_deref(), p.tool_name.as_deref(), agent);
            Ok(HookInvocation {
                agent,
                event_name: p.hook_event_name,
                session_id: p.session_id,
                transcript_path: non_empty(p.transcript_path),
                cwd: non_empty(p.cwd),
                event,
                project_dir: None,
                agent_waits_until: None,
            })
        }
    }
}

/// Reads a field as `T` when it is one, else as absent: a field of the wrong type never
/// rejects the event.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(
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

fn classify(event: &str, prompt: Option<&str>, tool: Option<&str>, agent: Agent) -> HookEvent {
    let (prompt_event, tool_events, end_event, file_tools): (&str, &[&str], &str, &[&str]) = match agent {
        // A tool that failed half-way may still have changed files.
        Agent::ClaudeCode => {
            ("UserPromptSubmit", &["PostToolUse", "PostToolUseFailure"], "Stop", &CLAUDE_FILE_TOOLS)
        }
        Agent::GeminiCli => ("BeforeAgent", &["AfterTool"], "AfterAgent", &GEMINI_FILE_TOOLS),
    };
    if event == prompt_event {
        return HookEvent::PromptSubmitted { prompt: prompt.unwrap_or_default().to_owned() };
    }
    if tool_events.contains(&event)
        && let Some(tool) = tool.filter(|t| file_tools.contains(t))
    {
        return HookEvent::FileToolFinished { tool: tool.to_owned() };
    }
    if event == end_event {
        return HookEvent::TurnEnded;
    }
    HookEvent::Other { event: event.to_owned() }
}

/// Gemini CLI sends `""` when it records no session; treat that as absent.
fn non_empty(path: Option<PathBuf>) -> Option<PathBuf> {
    path.filter(|p| !p.as_os_str().is_empty())
}
