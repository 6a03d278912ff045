//! The pi profile: the `snapshot_save` and `snapshot_restore` tools of Pi's session snapshot
//! extension, over cairn's transcript snapshots.
//!
//! Both are refused until the user allows each one (`cairn agent allow transcript-save`,
//! `cairn agent allow transcript-restore`); the answer is read from the store's settings on
//! every call, and settings that cannot be read refuse the call and warn on stderr.
//!
//! Which conversation is saved: the file named by `CAIRN_TRANSCRIPT` when the server was given
//! one, otherwise the newest Pi or Claude Code session of the server's working directory. The
//! agents' directories follow the agents' own variables (`PI_CODING_AGENT_DIR`,
//! `CLAUDE_CONFIG_DIR`) and default to `~/.pi/agent/sessions` and `~/.claude/projects`.
//!
//! A restore writes a new session in the agent's directory for the working directory and
//! returns its file and the command that resumes it. The `prompt`, when given, is returned
//! and kept in a sidecar file beside the session (`<session>.prompt`) for the launcher to
//! deliver once; the server cannot replace the running agent's session by itself.

use std::path::PathBuf;

use cairn_lib::ops::agent::Capability;
use cairn_lib::ops::transcript::{AgentPlaces, TranscriptLoadOptions, TranscriptSaveOptions};
use serde::{Deserialize, Serialize};

use crate::error::{ServeError, ToolError};
use crate::registry::{Hints, ToolSpec};
use crate::state::ServerState;

/// Arguments of `snapshot_save`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveArgs {
    /// The snapshot's name: letters, digits, '.', '_' and '-', beginning and ending with a letter or digit. Lowercase kebab-case is recommended.
    pub name: String,
    /// Replace an existing snapshot of the same name; without it, saving an existing name fails.
    #[serde(default)]
    pub force: bool,
}

/// Arguments of `snapshot_restore`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreArgs {
    /// The snapshot to restore, by name.
    pub name: String,
    /// A literal message to submit once in the restored session (a leading '/' is text, not a command).
    pub prompt: Option<String>,
}

/// What `snapshot_save` returns.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SaveResult {
    /// The snapshot's name.
    pub name: String,
    /// The snapshot's id in the cairn store.
    pub snapshot_id: String,
    /// The session file whose active path was saved.
    pub session_file: String,
    /// How many entries the saved path holds.
    pub entries: usize,
    /// True when an existing snapshot of that name was replaced.
    pub replaced: bool,
}

/// What `snapshot_restore` returns.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct RestoreResult {
    /// The snapshot's name.
    pub name: String,
    /// The new session's file.
    pub session_file: String,
    /// The new session's id.
    pub session_id: String,
    /// The command that opens the new session (`pi --session FILE`, `claude --resume ID`).
    pub resume_command: Option<String>,
    /// The message to submit once in the new session, when one was given.
    pub prompt: Option<String>,
    /// The sidecar file holding that message.
    pub prompt_file: Option<String>,
}

/// The Pi extension's words: its two tools and their `name` and `force` arguments.
pub static WORDS: PiWords = PiWords;

/// How the pi profile's refusals name arguments and tools.
#[derive(Debug, Clone, Copy)]
pub struct PiWords;

impl cairn_lib::Words for PiWords {
    fn hint(&self, hint: &cairn_lib::Hint) -> String {
        use cairn_lib::{Hint, Operation};
        match hint {
            // The server finds the conversation itself; where the agents keep their sessions
            // is the user's setting, not an argument.
            Hint::GiveOneOf(_) | Hint::GiveOption("pi_dir" | "claude_dir") => {
                "ask the user to start the server where Pi or Claude Code keeps its sessions (PI_CODING_AGENT_DIR or CLAUDE_CONFIG_DIR)".to_owned()
            }
            other => crate::words::tool_hint(other, |op| match op {
                Operation::Save => Some("call snapshot_save".to_owned()),
                Operation::LoadTranscript { snapshot } => {
                    Some(format!("call snapshot_restore with name {snapshot:?}"))
                }
                _ => None,
            }),
        }
    }
}

const SAVE: &str = "Save the active path of the current conversation (root to leaf; other branches are left out) as a named snapshot. Saving an existing name fails unless force is true. Denied unless the user ran `cairn agent allow transcript-save`.";
const RESTORE: &str = "Restore a named conversation snapshot as a new session in the current working directory. Returns the new session's file and the command that resumes it; an optional literal prompt is recorded to be submitted exactly once in that session. The snapshot itself is unchanged. Denied unless the user ran `cairn agent allow transcript-restore`.";

/// What the server tells an agent when it connects.
pub const INSTRUCTIONS: &str = "snapshot_save keeps the active path of this conversation under a name; snapshot_restore starts a new session from a saved one. Both need the user's permission.";

/// The profile's tools.
pub fn tools() -> Result<Vec<ToolSpec>, ServeError> {
    let save_hints = Hints { read_only: false, destructive: true, idempotent: false, open_world: false };
    Ok(vec![
        ToolSpec::blocking("snapshot_save", SAVE, save_hints, save)?,
        ToolSpec::blocking("snapshot_restore", RESTORE, Hints::ADD, restore)?,
    ])
}

fn save(state: &ServerState, a: SaveArgs) -> Result<SaveResult, ToolError> {
    state.permit(Capability::TranscriptSave)?;
    let saved = state.store.transcript_save(&TranscriptSaveOptions {
        file: env_path("CAIRN_TRANSCRIPT"),
        name: Some(a.name.clone()),
        description: None,
        force: a.force,
        places: places()?,
        session: state.choice(None),
    })?;
    Ok(SaveResult {
        name: a.name,
        snapshot_id: saved.snapshot.id.to_string(),
        session_file: saved.file.to_string_lossy().into_owned(),
        entries: saved.summary.entry_count,
        replaced: saved.replaced.is_some(),
    })
}

fn restore(state: &ServerState, a: RestoreArgs) -> Result<RestoreResult, ToolError> {
    state.permit(Capability::TranscriptRestore)?;
    let loaded = state.store.transcript_load(&TranscriptLoadOptions {
        name: a.name.clone(),
        places: places()?,
        prompt: a.prompt,
        session: state.choice(None),
    })?;
    Ok(RestoreResult {
        name: a.name,
        session_file: loaded.file.to_string_lossy().into_owned(),
        session_id: loaded.session_id,
        resume_command: loaded.resume_command,
        prompt: loaded.prompt,
        prompt_file: loaded.prompt_file.map(|f| f.to_string_lossy().into_owned()),
    })
}

/// The agents' directories and the server's working directory, read at call time.
fn places() -> Result<AgentPlaces, ToolError> {
    let cwd = std::env::current_dir().map_err(|e| {
        crate::error::internal(format!(
            "cannot read the server's working directory ({e}); restart the server in the project"
        ))
    })?;
    AgentPlaces::resolve(
        env_path("HOME").as_deref(),
        env_path("PI_CODING_AGENT_DIR").as_deref(),
        env_path("CLAUDE_CONFIG_DIR").as_deref(),
        cwd.to_string_lossy().into_owned(),
    )
}

fn env_path(key: &str) -> Option<PathBuf> {
    std::env::var_os(key).filter(|v| !v.is_empty()).map(PathBuf::from)
}
