//! Cursor, the editor's agent and `cursor-agent` (Cursor's hooks docs, snapshot of 2026-08-25;
//! measurements against cursor-agent 2026.09.10): `~/.cursor/hooks.json` and the project's
//! `.cursor/hooks.json`, `{"version": 1, "hooks": {EVENT: [{"command", "timeout"}]}}` (no
//! groups; timeouts in seconds); events on stdin with `conversation_id` (the same for every
//! turn), `generation_id` (new at each prompt), `hook_event_name`, `workspace_roots` and
//! `transcript_path`.
//!
//! Quirks:
//! - One unknown event name, or a command holding a URL, silently disables the whole file:
//!   cairn writes only the four events below and refuses a command with `://` in it (an
//!   `s3://` store).
//! - A shell call fires `beforeShellExecution`/`preToolUse` and `afterShellExecution`/
//!   `postToolUse`, an edit `postToolUse` and `afterFileEdit`: cairn subscribes to one of each
//!   pair (`afterFileEdit`, `afterShellExecution`).
//! - `beforeSubmitPrompt` reads `{"continue": ...}` on stdout; what it does with nothing is not
//!   documented, so the hook always answers `{"continue":true}` there.
//! - The workspace is `workspace_roots[0]`; `afterFileEdit` carries no `cwd`.
//! - The conversations are in undocumented stores (a SQLite turn graph per chat, the editor's
//!   shared `state.vscdb`); `transcript_path` is a write-only mirror. Code only.
//! - Project hooks run only in a trusted workspace; `cursor-agent -p` fires no
//!   `beforeSubmitPrompt` or `stop`.

use std::path::{Path, PathBuf};

use jsonc_parser::cst::CstInputValue;
use serde::{Deserialize, Serialize};

use super::payload::{HookEvent, from_json, lenient, non_empty};
use super::spec::{AgentSpec, EventEntry, Layers, Layout, SettingsShape};
use super::{Agent, AgentPlaces, HookCommand, HookInvocation, Scope};
use crate::error::{Error, Result};

const PROMPT: &str = "beforeSubmitPrompt";
const FILE_EDIT: &str = "afterFileEdit";
const SHELL: &str = "afterShellExecution";
const STOP: &str = "stop";

const EVENTS: [EventEntry; 4] = [
    EventEntry { event: PROMPT, matcher: None },
    EventEntry { event: FILE_EDIT, matcher: None },
    EventEntry { event: SHELL, matcher: None },
    EventEntry { event: STOP, matcher: None },
];

/// How long Cursor lets the hook run, in seconds.
const TIMEOUT_S: u64 = 30;

/// A Cursor hook event (`beforeSubmitPrompt`, `afterFileEdit`, `afterShellExecution`, `stop`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CursorPayload {
    /// The conversation's id, the same for all its turns: the agent session.
    pub conversation_id: String,
    /// The id of this prompt's generation.
    #[serde(default, deserialize_with = "lenient")]
    pub generation_id: Option<String>,
    /// The event.
    pub hook_event_name: String,
    /// The workspace's folders, absolute; the first is the project.
    #[serde(default, deserialize_with = "lenient")]
    pub workspace_roots: Option<Vec<PathBuf>>,
    /// The conversation's transcript mirror, or null.
    #[serde(default, deserialize_with = "lenient")]
    pub transcript_path: Option<PathBuf>,
    /// Cursor's version.
    #[serde(default, deserialize_with = "lenient")]
    pub cursor_version: Option<String>,
    /// `beforeSubmitPrompt`: the prompt.
    #[serde(default, deserialize_with = "lenient")]
    pub prompt: Option<String>,
    /// `afterFileEdit`: the file edited, absolute.
    #[serde(default, deserialize_with = "lenient")]
    pub file_path: Option<PathBuf>,
    /// `afterShellExecution`: the command run.
    #[serde(default, deserialize_with = "lenient")]
    pub command: Option<String>,
    /// Shell and tool events: the working directory.
    #[serde(default, deserialize_with = "lenient")]
    pub cwd: Option<PathBuf>,
    /// `stop`: `completed`, `aborted` or `error`.
    #[serde(default, deserialize_with = "lenient")]
    pub status: Option<String>,
}

/// Cursor's hooks.
pub(crate) struct Cursor;

impl AgentSpec for Cursor {
    fn agent(&self) -> Agent {
        Agent::Cursor
    }

    fn title(&self) -> &'static str {
        "Cursor"
    }

    fn scopes(&self) -> &'static [Scope] {
        &[Scope::User, Scope::Project]
    }

    fn settings_file(&self, places: &AgentPlaces, scope: Scope) -> Result<PathBuf> {
        match scope {
            Scope::User => Ok(places.cursor_dir.join("hooks.json")),
            Scope::Project => Ok(places.project.join(".cursor").join("hooks.json")),
            Scope::Local => {
                Err(Error::invalid("Cursor has no local hooks scope; choose the user or project scope"))
            }
        }
    }

    fn user_dir(&self, places: &AgentPlaces) -> PathBuf {
        places.cursor_dir.clone()
    }

    fn shape(&self) -> SettingsShape {
        SettingsShape { comments: false, layout: Layout::Flat, version: Some(1), switches: &[] }
    }

    fn events(&self) -> &'static [EventEntry] {
        &EVENTS
    }

    fn command(&self, command: &HookCommand, _entry: &EventEntry) -> Result<String> {
        let text = command.render(self.agent())?;
        if text.contains("://") {
            return Err(Error::invalid(
                "Cursor turns off every hook of a file whose command holds a URL, and this store is named by one; install with a local store, or name the store in Cursor's environment and install without naming one",
            ));
        }
        Ok(text)
    }

    fn hook(&self, _entry: &EventEntry, command: &str) -> CstInputValue {
        CstInputValue::Object(vec![
            ("command".to_owned(), CstInputValue::String(command.to_owned())),
            ("timeout".to_owned(), CstInputValue::Number(TIMEOUT_S.to_string())),
        ])
    }

    fn parse(&self, text: &str, _event: Option<&str>) -> Result<HookInvocation> {
        let p: CursorPayload = from_json(self.agent(), text)?;
        let root = non_empty(p.workspace_roots.unwrap_or_default().into_iter().next());
        let event = match p.hook_event_name.as_str() {
            PROMPT => HookEvent::PromptSubmitted { prompt: p.prompt.unwrap_or_default() },
            // Cursor's tool types, as its matchers name them.
            FILE_EDIT => HookEvent::FileToolFinished { tool: "Write".to_owned() },
            SHELL => HookEvent::FileToolFinished { tool: "Shell".to_owned() },
            STOP => HookEvent::TurnEnded,
            other => HookEvent::Other { event: other.to_owned() },
        };
        Ok(HookInvocation {
            agent: self.agent(),
            event_name: p.hook_event_name,
            session_id: p.conversation_id,
            transcript_path: non_empty(p.transcript_path),
            cwd: non_empty(p.cwd).or_else(|| root.clone()),
            event,
            project_dir: root,
            agent_waits_until: None,
        })
    }

    fn layers(&self) -> Layers {
        Layers::CodeOnly
    }

    fn notes(&self, _places: &AgentPlaces) -> Vec<String> {
        vec![
            "code only: Cursor keeps its conversations in stores cairn does not write, so a rewind puts the files back and leaves the conversation".to_owned(),
            "a project's .cursor/hooks.json runs only in a trusted workspace; `cursor-agent -p` sends no prompt event, so its turns get tool checkpoints only".to_owned(),
            "with \"Include third-party Plugins, Skills, and other configs\" on, Cursor also runs Claude Code's hooks: install cairn for one of the two there".to_owned(),
        ]
    }

    fn conversation_file(&self, _transcript: &Path) -> Option<PathBuf> {
        None
    }

    fn reply(&self, invocation: &HookInvocation, _paused: Option<&str>) -> Option<String> {
        (invocation.event_name == PROMPT).then(|| r#"{"continue":true}"#.to_owned())
    }
}
