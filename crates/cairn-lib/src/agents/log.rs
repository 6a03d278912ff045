//! The hook log: one JSON line per hook run, in a file of the store, so a hook that must stay
//! silent towards the agent still leaves a trace of what it saw and did.
//!
//! Lines carry what identifies the event (agent, event, session, directory, tool) and the
//! outcome, never the prompt's text: the log is for diagnosing hooks, not a second transcript.
//! An event cairn could not read is logged too, as `rejected`, with the reason and its size.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{HookEvent, HookInvocation};
use crate::error::{Error, Result};

/// One line of the hook log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookLogLine {
    /// When the hook ran (RFC 3339 UTC).
    pub time: String,
    /// The agent.
    pub agent: String,
    /// The agent's event name.
    pub event: String,
    /// What it was classified as (`prompt_submitted`, `file_tool_finished`, `turn_ended`,
    /// `other`).
    pub kind: String,
    /// The agent's session id.
    pub session_id: String,
    /// The agent's working directory.
    pub cwd: Option<String>,
    /// The tool, for tool events.
    pub tool: Option<String>,
    /// What the hook did, in a few words.
    pub outcome: String,
    /// A rejected event: its size in bytes (what it held is never logged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

impl HookLogLine {
    /// The line for `invocation` with `outcome`.
    pub fn new(invocation: &HookInvocation, outcome: &str) -> HookLogLine {
        let (kind, tool) = match &invocation.event {
            HookEvent::PromptSubmitted { .. } => ("prompt_submitted", None),
            HookEvent::FileToolFinished { tool } => ("file_tool_finished", Some(tool.clone())),
            HookEvent::TurnEnded => ("turn_ended", None),
            HookEvent::Other { .. } => ("other", None),
        };
        HookLogLine {
            time: crate::time::now_rfc3339(),
            agent: invocation.agent.as_str().to_owned(),
            event: invocation.event_name.clone(),
            kind: kind.to_owned(),
            session_id: invocation.session_id.clone(),
            cwd: invocation.cwd.as_ref().map(|p| p.display().to_string()),
            tool,
            outcome: outcome.to_owned(),
            bytes: None,
        }
    }

    /// The line for an event that could not be read (kind `rejected`): the agent as the
    /// command named it, why, and the event's size, never its text.
    pub fn rejected(agent: &str, reason: &str, bytes: u64) -> HookLogLine {
        HookLogLine {
            time: crate::time::now_rfc3339(),
            agent: agent.to_owned(),
            event: String::new(),
            kind: "rejected".to_owned(),
            session_id: String::new(),
            cwd: None,
            tool: None,
            outcome: reason.to_owned(),
            bytes: Some(bytes),
        }
    }
}

/// Appends `line` to the log at `path` (created 0600, its directory 0700). One `write` call
/// per line, so lines of hooks running at once do not interleave.
pub fn append_hook_log(path: &Path, line: &HookLogLine) -> Result<()> {
    if let Some(dir) = path.parent() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir).map_err(|e| Error::io("create directory", dir, e))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(|e| Error::io("open", path, e))?;
    let mut text = serde_json::to_string(line)
        .map_err(|e| Error::invalid(format!("cannot encode a hook log line: {e}")))?;
    text.push('\n');
    file.write_all(text.as_bytes()).map_err(|e| Error::io("append to", path, e))
}
