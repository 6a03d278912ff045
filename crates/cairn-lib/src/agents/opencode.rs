//! OpenCode (1.x plugin API; read up to 1.18.34): no hook settings, but plugins, files that
//! OpenCode loads from `plugin/` (and `plugins/`) of each configuration directory: the user's
//! (`$OPENCODE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`) and the
//! project's `.opencode/`. cairn writes its own plugin, `cairn.ts`, with exactly one named async
//! export (what both the older loaders and the newer legacy path call), which runs `cairn hook
//! opencode` with a payload of cairn's own shape on stdin: `{"event", "sessionID", "messageID"?,
//! "directory"?, "worktree"?, "prompt"?, "tool"?}`.
//!
//! Quirks:
//! - `chat.message` is awaited before the user message is stored and before the model runs:
//!   the prompt's checkpoint is taken there. `tool.execute.after` is awaited too.
//! - A plugin hook that throws fails the prompt or the tool: every hook of cairn's plugin
//!   catches everything.
//! - The turn's end comes only as an event (`session.idle`), delivered without waiting.
//! - OpenCode V2 (`opencode2`) loads no V1 plugin.
//! - The conversations are SQLite rows (`opencode.db`) from 1.2, JSON files before: code only.

use std::path::{Path, PathBuf};

use jsonc_parser::cst::CstInputValue;
use serde::{Deserialize, Serialize};

use super::own_file::command_lines;
use super::payload::{Kinds, classify, from_json, lenient, non_empty};
use super::spec::{AgentSpec, EventEntry, Layers, Layout, SettingsShape};
use super::{Agent, AgentPlaces, HookCommand, HookInvocation, Scope};
use crate::error::{Error, Result};

const PROMPT: &str = "chat.message";
const TOOL: &str = "tool.execute.after";
const END: &str = "session.idle";

/// OpenCode's tools that change files.
const FILE_TOOLS: &[&str] = &["edit", "write", "patch", "multiedit", "apply_patch", "bash"];

const EVENTS: [EventEntry; 3] = [
    EventEntry { event: PROMPT, matcher: None },
    EventEntry { event: TOOL, matcher: Some("edit|write|patch|multiedit|apply_patch|bash") },
    EventEntry { event: END, matcher: None },
];

const KINDS: Kinds = Kinds { prompt: PROMPT, tools: &[TOOL], end: END, file_tools: FILE_TOOLS };

/// The payload cairn's OpenCode plugin sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenCodePayload {
    /// The hook or event: `chat.message`, `tool.execute.after` or `session.idle`.
    pub event: String,
    /// The session's id (`ses_...`).
    #[serde(rename = "sessionID")]
    pub session_id: String,
    /// `chat.message`: the user message's id (`msg_...`).
    #[serde(rename = "messageID", default, deserialize_with = "lenient")]
    pub message_id: Option<String>,
    /// The directory OpenCode runs in.
    #[serde(default, deserialize_with = "lenient")]
    pub directory: Option<PathBuf>,
    /// The project's worktree (`/` outside a git repository).
    #[serde(default, deserialize_with = "lenient")]
    pub worktree: Option<PathBuf>,
    /// `chat.message`: the prompt's text parts.
    #[serde(default, deserialize_with = "lenient")]
    pub prompt: Option<String>,
    /// `tool.execute.after`: the tool.
    #[serde(default, deserialize_with = "lenient")]
    pub tool: Option<String>,
}

/// OpenCode's plugin.
pub(crate) struct OpenCode;

impl AgentSpec for OpenCode {
    fn agent(&self) -> Agent {
        Agent::OpenCode
    }

    fn title(&self) -> &'static str {
        "OpenCode"
    }

    fn scopes(&self) -> &'static [Scope] {
        &[Scope::User, Scope::Project]
    }

    fn settings_file(&self, places: &AgentPlaces, scope: Scope) -> Result<PathBuf> {
        match scope {
            Scope::User => Ok(places.opencode_dir.join("plugin").join("cairn.ts")),
            Scope::Project => Ok(places.project.join(".opencode").join("plugin").join("cairn.ts")),
            Scope::Local => {
                Err(Error::invalid("OpenCode has no local scope; choose the user or project scope"))
            }
        }
    }

    fn user_dir(&self, places: &AgentPlaces) -> PathBuf {
        places.opencode_dir.clone()
    }

    fn shape(&self) -> SettingsShape {
        SettingsShape { comments: false, layout: Layout::OwnFile, version: None, switches: &[] }
    }

    fn events(&self) -> &'static [EventEntry] {
        &EVENTS
    }

    fn hook(&self, _entry: &EventEntry, _command: &str) -> CstInputValue {
        CstInputValue::Null
    }

    fn own_file(&self, command: &HookCommand) -> Result<String> {
        Ok(format!("{HEAD}{}{BODY}", command_lines(command)?))
    }

    fn parse(&self, text: &str, _event: Option<&str>) -> Result<HookInvocation> {
        let p: OpenCodePayload = from_json(self.agent(), text)?;
        let event = classify(&p.event, p.prompt.as_deref(), p.tool.as_deref(), &KINDS);
        let directory = non_empty(p.directory);
        // Outside a git repository OpenCode's worktree is `/`: the project is the directory.
        let worktree = non_empty(p.worktree).filter(|w| w.parent().is_some());
        Ok(HookInvocation {
            agent: self.agent(),
            event_name: p.event,
            session_id: p.session_id,
            transcript_path: None,
            project_dir: worktree.or_else(|| directory.clone()),
            cwd: directory,
            event,
            agent_waits_until: None,
        })
    }

    fn layers(&self) -> Layers {
        Layers::CodeOnly
    }

    fn notes(&self, _places: &AgentPlaces) -> Vec<String> {
        vec![
            "code only: OpenCode keeps its conversations as SQLite rows (opencode.db, from 1.2), which cairn does not write, so a rewind puts the files back and leaves the conversation".to_owned(),
            "OpenCode loads plugins when it starts: restart it after installing; OpenCode V2 (opencode2) does not load this plugin".to_owned(),
        ]
    }

    fn conversation_file(&self, _transcript: &Path) -> Option<PathBuf> {
        None
    }
}

// front words: the plugin source cairn writes for OpenCode
const HEAD: &str = r#"// cairn's OpenCode plugin: a checkpoint of the project before each prompt is acted on, after
// each tool that can change files, and when the session goes idle (`cairn hook opencode`).
// Written by `cairn hooks install opencode`; `cairn hooks uninstall opencode` removes it while
// it reads exactly as written. cairn neither replaces nor removes a copy that was edited.
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";

"#;

// front words: the plugin source cairn writes for OpenCode
const BODY: &str = r#"
const FILE_TOOLS = ["edit", "write", "patch", "multiedit", "apply_patch", "bash"];

// Runs cairn with the payload on stdin and waits for it. Never throws and never rejects:
// OpenCode fails a prompt or a tool whose plugin hook throws.
function cairn(payload, cwd) {
  return new Promise((resolve) => {
    try {
      accessSync(CAIRN, constants.X_OK);
      const args = ["hook", "opencode"];
      if (STORE !== null) args.push("--store", STORE);
      const child = spawn(CAIRN, args, { cwd, stdio: ["pipe", "ignore", "ignore"] });
      child.stdin.on("error", () => {});
      child.on("error", () => resolve());
      child.on("close", () => resolve());
      child.stdin.end(JSON.stringify(payload));
    } catch {
      resolve();
    }
  });
}

export const CairnCheckpoints = async ({ directory, worktree }) => ({
  // Awaited before OpenCode stores the message and calls the model.
  "chat.message": async (input, output) => {
    try {
      const parts = (output && output.parts) || [];
      const prompt = parts
        .filter((part) => part && part.type === "text" && !part.synthetic)
        .map((part) => part.text)
        .join("\n");
      const messageID = output && output.message ? output.message.id : undefined;
      await cairn({ event: "chat.message", sessionID: input.sessionID, messageID, directory, worktree, prompt }, directory);
    } catch {}
  },
  "tool.execute.after": async (input) => {
    try {
      if (!FILE_TOOLS.includes(input.tool)) return;
      await cairn({ event: "tool.execute.after", sessionID: input.sessionID, directory, worktree, tool: input.tool }, directory);
    } catch {}
  },
  event: async ({ event }) => {
    try {
      if (!event || event.type !== "session.idle") return;
      await cairn({ event: "session.idle", sessionID: event.properties.sessionID, directory, worktree }, directory);
    } catch {}
  },
});
"#;
