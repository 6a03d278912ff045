//! The pi profile: the `snapshot_save` and `snapshot_restore` tools of Pi's session snapshot
//! extension, over cairn's transcript snapshots.
//!
//! Permission: an answer set in the store's settings (`cairn agent allow|deny
//! transcript-save`) wins; otherwise the extension's own settings decide, the
//! `pi-session-snapshot` namespace of Pi's `settings.json` with a trusted project's
//! `.pi/settings.json` over it field by field; otherwise both are refused. Everything is read
//! again on every call, and settings that cannot be used refuse the call and warn on stderr.
//!
//! Which conversation is saved: the file named by `CAIRN_TRANSCRIPT` when the server was given
//! one, otherwise the session the server first saved (or, if it restored first, the newest
//! session when it did), never a newer file written since (such as a restored copy). A save
//! ends before an assistant message whose tool calls have no results yet: the call that
//! asked for the save is still running. Each save also keeps the extension's file,
//! `<Pi agent dir>/pi-session-snapshot/<name>.jsonl`, for `pi --fork`.
//!
//! A restore takes a name only, writes a new session in the agent's directory for the working
//! directory, ending with a note the user sees and the model does not, and returns its file
//! and the command that resumes it. The `prompt`, when given, is returned and kept in a
//! sidecar file beside the session (`<session>.prompt`) for the launcher to deliver once; the
//! server cannot replace the running agent's session by itself.

use std::path::PathBuf;
use std::sync::Mutex;

use cairn_lib::ops::permissions::{
    Capability, INVALID_CONFIG_CODE, PI_SETTINGS_NAMESPACE, PiSettingsFiles,
    check_agent_permission_with_default,
};
use cairn_lib::ops::transcript::{AgentPlaces, TranscriptLoadOptions, TranscriptSaveOptions};
use cairn_lib::{NotCovered, echo};
use serde::{Deserialize, Serialize};

use crate::error::{ServeError, ToolError};
use crate::registry::{Hints, ToolSpec};
use crate::state::{ServerState, warn};

/// The conversation one pi-profile server serves, fixed by its first save or restore.
#[derive(Debug, Default)]
pub struct PiSlot(Mutex<Option<PathBuf>>);

impl PiSlot {
    fn get(&self) -> Option<PathBuf> {
        self.0.lock().map(|g| g.clone()).unwrap_or_default()
    }

    fn keep(&self, file: PathBuf) {
        if let Ok(mut slot) = self.0.lock()
            && slot.is_none()
        {
            *slot = Some(file);
        }
    }
}

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
    /// The file `pi --fork` starts a new session from (Pi sessions only).
    pub fork_file: Option<String>,
    /// What the saved path leaves out of the session file, and why.
    pub not_covered: NotCovered,
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

const SAVE: &str = "Save the active path of the current conversation (root to leaf; other branches are left out) as a named snapshot. Saving an existing name fails unless force is true. Denied unless the user allowed it (`cairn agent allow transcript-save`, or agentSaveToolAllowed in Pi's settings). The path ends before the assistant message holding this call; read not_covered for what else it leaves out.";
const RESTORE: &str = "Restore a named conversation snapshot as a new session in the current working directory. Returns the new session's file and the command that resumes it; an optional literal prompt is recorded to be submitted exactly once in that session. The snapshot itself is unchanged. Takes a snapshot name only. Denied unless the user allowed it (`cairn agent allow transcript-restore`, or agentRestoreToolAllowed in Pi's settings).";

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
    let places = crate::state::agent_places()?;
    permit(state, Capability::TranscriptSave, &places)?;
    let fork_copy = extension_file(&places, &a.name);
    let file = match served_file(state) {
        Some(file) => file,
        None => places.newest_session()?.ok_or_else(|| no_session(&places))?,
    };
    let options = TranscriptSaveOptions {
        file: Some(file),
        name: Some(a.name.clone()),
        description: None,
        force: a.force,
        places,
        session: None,
        strict: false,
        cut_unanswered_tool_calls: true,
        fork_copy: Some(fork_copy),
    };
    let saved = state.store.transcript_save(&options, &state.context())?;
    state.pi.keep(saved.file.clone());
    Ok(SaveResult {
        name: a.name,
        snapshot_id: saved.snapshot.id.to_string(),
        session_file: saved.file.to_string_lossy().into_owned(),
        entries: saved.summary.entry_count,
        replaced: saved.replaced.is_some(),
        fork_file: saved.fork_file.map(|f| f.to_string_lossy().into_owned()),
        not_covered: saved.snapshot.not_covered,
    })
}

fn restore(state: &ServerState, a: RestoreArgs) -> Result<RestoreResult, ToolError> {
    let places = crate::state::agent_places()?;
    permit(state, Capability::TranscriptRestore, &places)?;
    // The restored session becomes the newest file: fix the served one before writing it.
    if served_file(state).is_none()
        && let Ok(Some(newest)) = places.newest_session()
    {
        state.pi.keep(newest);
    }
    let extension = extension_file(&places, &a.name);
    let options = TranscriptLoadOptions {
        name: a.name.clone(),
        places,
        prompt: a.prompt,
        session: None,
        names_only: true,
        restore_note: Some(PI_SETTINGS_NAMESPACE.to_owned()),
    };
    let loaded = match state.store.transcript_load(&options, &state.context()) {
        // A snapshot the extension itself saved, before the user switched to cairn: take it
        // into the store as it is, then restore it like any other.
        Err(e) if e.kind() == cairn_lib::ErrorKind::NotFound && extension.is_file() => {
            let import = TranscriptSaveOptions {
                file: Some(extension),
                name: Some(a.name.clone()),
                description: Some("saved by the pi-session-snapshot extension".to_owned()),
                force: false,
                places: options.places.clone(),
                session: None,
                strict: false,
                cut_unanswered_tool_calls: false,
                fork_copy: None,
            };
            state.store.transcript_save(&import, &state.context())?;
            state.store.transcript_load(&options, &state.context())?
        }
        other => other?,
    };
    Ok(RestoreResult {
        name: a.name,
        session_file: loaded.file.to_string_lossy().into_owned(),
        session_id: loaded.session_id,
        resume_command: loaded.resume_command,
        prompt: loaded.prompt,
        prompt_file: loaded.prompt_file.map(|f| f.to_string_lossy().into_owned()),
    })
}

/// The extension's snapshot file for `name`: `<Pi agent dir>/pi-session-snapshot/<name>.jsonl`,
/// which `pi --fork` opens; cairn keeps it in step on each save and reads one the extension
/// wrote itself.
fn extension_file(places: &AgentPlaces, name: &str) -> PathBuf {
    places.pi_agent_dir().join(PI_SETTINGS_NAMESPACE).join(format!("{}.jsonl", name.trim()))
}

/// The refusal of a save with no conversation to save, in one sentence that asks of the agent
/// only what it can do: ask the user. Each path is cut as echoed input is, so a deep working
/// directory cannot push the advice past the length a refusal is cut to.
fn no_session(places: &AgentPlaces) -> ToolError {
    let (pi, claude) = places.session_dirs();
    ToolError::new(
        cairn_lib::ErrorKind::NotFound,
        format!(
            "found no Pi or Claude Code session of {} to save (looked in {} and {}); ask the user to start the server in the directory the agent works in, or with CAIRN_TRANSCRIPT naming the session file",
            echo(&places.cwd),
            echo(&pi.to_string_lossy()),
            echo(&claude.to_string_lossy()),
        ),
    )
}

/// The conversation this server saves: `CAIRN_TRANSCRIPT`, else the one it kept; `None` takes
/// the newest session of the working directory (the first time).
fn served_file(state: &ServerState) -> Option<PathBuf> {
    env_path("CAIRN_TRANSCRIPT").or_else(|| state.pi.get())
}

/// Refuses `capability` unless the store's settings, or else Pi's, allow it; warnings about
/// either go to stderr (never stdout, which carries the protocol on stdio).
fn permit(state: &ServerState, capability: Capability, places: &AgentPlaces) -> Result<(), ToolError> {
    let defaults = PiSettingsFiles::new(places, &crate::state::process_env()).read();
    for warning in &defaults.warnings {
        warn(warning);
    }
    check_agent_permission_with_default(
        &state.store,
        capability,
        &state.allow,
        &state.deny,
        defaults.default_for(capability),
    )
    .map_err(|err| {
        if err.code() == Some(INVALID_CONFIG_CODE) {
            warn(&err.render(&crate::words::CliWords));
        }
        ToolError::from(err)
    })
}

fn env_path(key: &str) -> Option<PathBuf> {
    std::env::var_os(key).filter(|v| !v.is_empty()).map(PathBuf::from)
}
