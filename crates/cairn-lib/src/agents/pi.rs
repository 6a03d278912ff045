//! Pi (`@mariozechner/pi-coding-agent`, extension API as of 0.58.3): no hook settings, but
//! extensions, TypeScript files Pi loads from `<agent dir>/extensions/` (`$PI_CODING_AGENT_DIR`,
//! else `~/.pi/agent`) and the project's `.pi/extensions/`. cairn writes its own extension,
//! `cairn.ts`, which runs `cairn hook pi` with a payload of cairn's own shape on stdin:
//! `{"event", "sessionId", "sessionFile"?, "cwd", "prompt"?, "toolName"?}`.
//!
//! Quirks:
//! - `before_agent_start` is awaited before Pi appends the prompt or calls the model: the
//!   prompt's checkpoint is taken there, and the session file then ends just before the prompt.
//!   The agent-loop events (`turn_start`, `agent_end`) are queued and not awaited, which is why
//!   the prompt is not checkpointed at `turn_start`.
//! - `tool_result` handlers are awaited (they may patch the result); the extension runs cairn
//!   only for the tools that change files (`edit`, `write`, `bash`).
//! - `pi.exec` gives the child no stdin, so the extension spawns cairn with
//!   `node:child_process`, which works under Node and in Pi's Bun binary.
//! - A brand-new session's file is written only with the first answer: the first prompt's
//!   checkpoint has no conversation part, the later ones do.
//! - Pi shows no hook output; the extension passes cairn's one-line reports (and a paused
//!   checkpoint's sentence) to `ctx.ui.notify` when Pi has a UI.

use std::path::{Path, PathBuf};

use jsonc_parser::cst::CstInputValue;
use serde::{Deserialize, Serialize};

use super::own_file::command_lines;
use super::payload::{Kinds, classify, from_json, lenient, non_empty};
use super::spec::{AgentSpec, EventEntry, Layers, Layout, SettingsShape};
use super::{Agent, AgentPlaces, HookCommand, HookInvocation, Scope};
use crate::error::{Error, Result};

const PROMPT: &str = "before_agent_start";
const TOOL: &str = "tool_result";
const END: &str = "agent_end";

const EVENTS: [EventEntry; 3] = [
    EventEntry { event: PROMPT, matcher: None },
    EventEntry { event: TOOL, matcher: Some("edit|write|bash") },
    EventEntry { event: END, matcher: None },
];

const KINDS: Kinds =
    Kinds { prompt: PROMPT, tools: &[TOOL], end: END, file_tools: &["edit", "write", "bash"] };

/// The payload cairn's Pi extension sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PiPayload {
    /// Pi's event: `before_agent_start`, `tool_result` or `agent_end`.
    pub event: String,
    /// The session's id (`ctx.sessionManager.getSessionId()`).
    pub session_id: String,
    /// The session file (absent with `--no-session`).
    #[serde(default, deserialize_with = "lenient")]
    pub session_file: Option<PathBuf>,
    /// Pi's working directory, the project.
    #[serde(default, deserialize_with = "lenient")]
    pub cwd: Option<PathBuf>,
    /// `before_agent_start`: the prompt, expanded.
    #[serde(default, deserialize_with = "lenient")]
    pub prompt: Option<String>,
    /// `tool_result`: the tool (`edit`, `write`, `bash`).
    #[serde(default, deserialize_with = "lenient")]
    pub tool_name: Option<String>,
}

/// Pi's extension.
pub(crate) struct Pi;

impl AgentSpec for Pi {
    fn agent(&self) -> Agent {
        Agent::Pi
    }

    fn title(&self) -> &'static str {
        "Pi"
    }

    fn scopes(&self) -> &'static [Scope] {
        &[Scope::User, Scope::Project]
    }

    fn settings_file(&self, places: &AgentPlaces, scope: Scope) -> Result<PathBuf> {
        match scope {
            Scope::User => Ok(places.pi_dir.join("extensions").join("cairn.ts")),
            Scope::Project => Ok(places.project.join(".pi").join("extensions").join("cairn.ts")),
            Scope::Local => Err(Error::invalid("Pi has no local scope; choose the user or project scope")),
        }
    }

    fn user_dir(&self, places: &AgentPlaces) -> PathBuf {
        places.pi_dir.clone()
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
        let p: PiPayload = from_json(self.agent(), text)?;
        let event = classify(&p.event, p.prompt.as_deref(), p.tool_name.as_deref(), &KINDS);
        let cwd = non_empty(p.cwd);
        Ok(HookInvocation {
            agent: self.agent(),
            event_name: p.event,
            session_id: p.session_id,
            transcript_path: non_empty(p.session_file),
            project_dir: cwd.clone(),
            cwd,
            event,
            agent_waits_until: None,
        })
    }

    fn layers(&self) -> Layers {
        Layers::CodeAndConversation
    }

    fn notes(&self, _places: &AgentPlaces) -> Vec<String> {
        vec![
            "Pi loads extensions when it starts: restart Pi (or run /reload) after installing".to_owned(),
            "a new session's file is written with its first answer, so the first prompt's checkpoint keeps the code only".to_owned(),
        ]
    }

    /// The session file, when it reads as Pi's.
    fn conversation_file(&self, transcript: &Path) -> Option<PathBuf> {
        let read = cairn_transcript::Transcript::read_as_agent(transcript).ok()?;
        (read.format() == cairn_transcript::Format::Pi).then(|| transcript.to_path_buf())
    }
}

// front words: the extension source cairn writes for Pi
const HEAD: &str = r#"// cairn's Pi extension: a checkpoint of the project before each prompt is acted on, after
// each tool that can change files, and when the answer ends (`cairn hook pi`).
// Written by `cairn hooks install pi`; `cairn hooks uninstall pi` removes it while it reads
// exactly as written. cairn neither replaces nor removes a copy that was edited.
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";

"#;

// front words: the extension source cairn writes for Pi
const BODY: &str = r#"
const FILE_TOOLS = ["edit", "write", "bash"];

// Runs cairn with the payload on stdin (pi.exec gives no stdin) and waits for it. Never
// throws and never rejects: a missing binary or a failing cairn leaves Pi as it was.
function cairn(event, ctx, fields) {
  return new Promise((resolve) => {
    try {
      accessSync(CAIRN, constants.X_OK);
      const sessions = ctx.sessionManager;
      const payload = {
        event,
        sessionId: sessions.getSessionId(),
        sessionFile: sessions.getSessionFile(),
        cwd: ctx.cwd,
        ...fields,
      };
      const args = ["hook", "pi"];
      if (STORE !== null) args.push("--store", STORE);
      const child = spawn(CAIRN, args, { cwd: ctx.cwd, stdio: ["pipe", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (chunk) => { out += chunk; });
      child.stderr.on("data", (chunk) => { err += chunk; });
      child.stdin.on("error", () => {});
      child.on("error", () => resolve());
      child.on("close", () => {
        try {
          let said = err.trim();
          if (out.trim()) said = JSON.parse(out).systemMessage || said;
          if (said && ctx.hasUI) ctx.ui.notify(said, "warning");
        } catch {}
        resolve();
      });
      child.stdin.end(JSON.stringify(payload));
    } catch {
      resolve();
    }
  });
}

export default function (pi) {
  // Awaited before Pi records the prompt or calls the model.
  pi.on("before_agent_start", async (event, ctx) => {
    await cairn("before_agent_start", ctx, { prompt: event.prompt });
  });
  pi.on("tool_result", async (event, ctx) => {
    if (FILE_TOOLS.includes(event.toolName)) await cairn("tool_result", ctx, { toolName: event.toolName });
  });
  pi.on("agent_end", async (_event, ctx) => {
    await cairn("agent_end", ctx, {});
  });
}
"#;
