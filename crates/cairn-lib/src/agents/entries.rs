//! The entries cairn adds to an agent's `hooks` settings, and how cairn recognises its own.
//!
//! Both agents read `"hooks": {EVENT: [{"matcher": ..., "hooks": [{"type": "command",
//! "command": ..., "timeout": ...}]}]}`. cairn adds one group per event, holding one command
//! hook that runs `cairn hook AGENT`. A hook is cairn's when its command runs a program named
//! `cairn` (any path) with the arguments `hook AGENT`, so a hook installed as
//! `/usr/local/bin/cairn hook claude-code` is recognised too, and nothing else ever is.

use jsonc_parser::cst::CstInputValue;
use serde_json::Value;

use super::Agent;

/// One event cairn hooks into.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EventEntry {
    /// The event's key in `hooks` (`UserPromptSubmit`, `AfterTool`, ...).
    pub event: &'static str,
    /// The tool-name matcher (a regular expression both agents accept), for tool events.
    pub matcher: Option<&'static str>,
}

/// Claude Code's tools that change files: the built-in editors and the shell.
pub(crate) const CLAUDE_FILE_TOOLS: [&str; 5] = ["Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"];
/// Gemini CLI's tools that change files: `write_file`, `replace` (its editor) and the shell.
pub(crate) const GEMINI_FILE_TOOLS: [&str; 3] = ["write_file", "replace", "run_shell_command"];

const CLAUDE_EVENTS: [EventEntry; 3] = [
    EventEntry { event: "UserPromptSubmit", matcher: None },
    EventEntry { event: "PostToolUse", matcher: Some("Write|Edit|MultiEdit|NotebookEdit|Bash") },
    EventEntry { event: "Stop", matcher: None },
];
const GEMINI_EVENTS: [EventEntry; 3] = [
    EventEntry { event: "BeforeAgent", matcher: None },
    EventEntry { event: "AfterTool", matcher: Some("write_file|replace|run_shell_command") },
    EventEntry { event: "AfterAgent", matcher: None },
];

/// How long the agent lets the hook run: Claude Code counts seconds, Gemini CLI milliseconds.
const CLAUDE_TIMEOUT_S: u64 = 30;
const GEMINI_TIMEOUT_MS: u64 = 30_000;

/// The events cairn hooks into for `agent`, in the order they are written.
pub(crate) fn events(agent: Agent) -> &'static [EventEntry] {
    match agent {
        Agent::ClaudeCode => &CLAUDE_EVENTS,
        Agent::GeminiCli => &GEMINI_EVENTS,
    }
}

/// The command the agent runs.
pub(crate) fn command(agent: Agent) -> String {
    format!("cairn hook {}", agent.as_str())
}

/// The group cairn appends to an event's list, keys in the order the agents' docs show them.
pub(crate) fn group(agent: Agent, entry: &EventEntry) -> CstInputValue {
    let text = |s: &str| CstInputValue::String(s.to_owned());
    let mut hook = Vec::new();
    if agent == Agent::GeminiCli {
        // Gemini CLI names hooks in its `/hooks` listing and its enable/disable commands.
        hook.push(("name".to_owned(), text("cairn")));
    }
    hook.push(("type".to_owned(), text("command")));
    hook.push(("command".to_owned(), text(&command(agent))));
    let timeout = match agent {
        Agent::ClaudeCode => CLAUDE_TIMEOUT_S,
        Agent::GeminiCli => GEMINI_TIMEOUT_MS,
    };
    hook.push(("timeout".to_owned(), CstInputValue::Number(timeout.to_string())));
    let mut group = Vec::new();
    if let Some(matcher) = entry.matcher {
        group.push(("matcher".to_owned(), text(matcher)));
    }
    group.push(("hooks".to_owned(), CstInputValue::Array(vec![CstInputValue::Object(hook)])));
    CstInputValue::Object(group)
}

/// Whether a hook object (an element of a group's `hooks`) is cairn's hook for `agent`.
pub(crate) fn is_cairn_hook(agent: Agent, hook: &Value) -> bool {
    let Some(command) = hook.get("command").and_then(Value::as_str) else {
        return false;
    };
    let mut words = command.split_whitespace();
    let program = words.next().unwrap_or_default();
    let name = program.rsplit('/').next().unwrap_or_default();
    name == "cairn"
        && words.next() == Some("hook")
        && words.next() == Some(agent.as_str())
        && words.next().is_none()
}

/// Whether any group of an event's list holds cairn's hook.
pub(crate) fn list_has_cairn(agent: Agent, list: &Value) -> bool {
    list.as_array().into_iter().flatten().any(|group| {
        group.get("hooks").and_then(Value::as_array).into_iter().flatten().any(|h| is_cairn_hook(agent, h))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cairn_hooks_are_recognised_by_program_and_arguments_only() {
        let hook = |c: &str| json!({"type": "command", "command": c});
        assert!(is_cairn_hook(Agent::ClaudeCode, &hook("cairn hook claude-code")));
        assert!(is_cairn_hook(Agent::ClaudeCode, &hook("/opt/bin/cairn  hook claude-code")));
        assert!(!is_cairn_hook(Agent::GeminiCli, &hook("cairn hook claude-code")));
        assert!(!is_cairn_hook(Agent::ClaudeCode, &hook("cairn hook claude-code --verbose")));
        assert!(!is_cairn_hook(Agent::ClaudeCode, &hook("echo cairn hook claude-code")));
        assert!(!is_cairn_hook(Agent::ClaudeCode, &hook("mycairn hook claude-code")));
    }
}
