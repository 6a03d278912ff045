//! `cairn transcript load NAME` and `export NAME -o FILE`: a saved path written back as a
//! session file. The snapshot itself is only read.

use std::io::Write;
use std::path::{Path, PathBuf};

use cairn_transcript::{Format, LoadOptions, RestoreNote, WrittenSession, export_session, load_session};
use serde::{Deserialize, Serialize};

use super::{AgentPlaces, transcript_error};
use crate::Repository;
use crate::error::{Error, Hint, Result};
use crate::ops::resolve::CallContext;
use crate::snapshot::Snapshot;

/// Which snapshot to load, where, and what to say first in the new session.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct TranscriptLoadOptions {
    /// The transcript snapshot: a name, an id or a unique id prefix.
    pub name: String,
    /// Where the agents keep their sessions, and the working directory of the new session.
    #[serde(default)]
    pub places: AgentPlaces,
    /// A message to deliver once in the new session: recorded in the result and in a sidecar
    /// file next to the session (`<session file without .jsonl>.prompt`).
    pub prompt: Option<String>,
    /// The cairn session to look the snapshot up in.
    pub session: Option<String>,
    /// Take `name` as a name only (no id, id prefix or `latest`).
    #[serde(default)]
    pub names_only: bool,
    /// End a new Pi session with a note, `Restored session snapshot "<name>".`, that the user
    /// sees and the model's context leaves out (a Pi `custom` entry of this type).
    #[serde(default)]
    pub restore_note: Option<String>,
}

/// Which snapshot to export, and where to. The doc comments are the CLI's help.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct TranscriptExportOptions {
    /// The transcript snapshot: a name, an id or a unique id prefix.
    pub name: String,
    /// The file to write.
    #[cfg_attr(feature = "clap", arg(long, short, value_name = "FILE"))]
    pub output: PathBuf,
    /// Replace the file when it exists.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long, short))]
    pub force: bool,
    /// The session to look the snapshot up in (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
    /// Replace access keys, tokens and private keys with a [REDACTED:rule] marker.
    // Every secret-shaped string, in the written file.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub redact: bool,
}

/// A session file written from a snapshot, and how to open it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TranscriptWritten {
    /// The snapshot that was written out (unchanged by this).
    pub snapshot: Snapshot,
    /// The file written.
    pub file: PathBuf,
    /// Which agent's format the file is in.
    #[schemars(with = "String")]
    pub format: Format,
    /// The session id in the file.
    pub session_id: String,
    /// The command that resumes the session (`pi --session FILE`, `claude --resume ID`).
    pub resume_command: Option<String>,
    /// The command that starts a new session from the file (`pi --fork FILE`), for Pi.
    pub fork_command: Option<String>,
    /// The message to deliver once in the new session, when one was given.
    pub prompt: Option<String>,
    /// The sidecar file holding that message.
    pub prompt_file: Option<PathBuf>,
    /// Files written beside the session (its subagents' transcripts).
    pub subagent_files: Vec<PathBuf>,
}

impl Repository {
    /// Writes a transcript snapshot as a new session of its agent, in the agent's directory for
    /// `places.cwd`: a new session id, files 0600 and directories 0700.
    pub fn transcript_load(
        &self,
        options: &TranscriptLoadOptions,
        context: &CallContext,
    ) -> Result<TranscriptWritten> {
        if options.places.cwd.is_empty() {
            return Err(Error::invalid("no working directory to load the session for; pass one"));
        }
        let session = self.call_session(options.session.as_deref(), context)?;
        let snapshot = if options.names_only {
            self.find_transcript_by_name(&session, &options.name)?
        } else {
            self.find_transcript(&session, &options.name)?
        };
        let mut path = self.transcript_path_and_files(&snapshot, false)?;
        let attached = path.take_attached();
        let note = options.restore_note.as_ref().map(|custom_type| RestoreNote {
            custom_type: custom_type.clone(),
            name: snapshot.name.clone().unwrap_or_else(|| options.name.trim().to_owned()),
        });
        let load = LoadOptions {
            cwd: options.places.cwd.clone(),
            parent_session: None,
            rewrite_cwd: false,
            note,
            attached,
        };
        let written = load_session(&path, &options.places.dirs(), &load).map_err(transcript_error)?;
        let prompt_file = match &options.prompt {
            Some(prompt) => match write_prompt(&written.path, prompt) {
                Ok(file) => Some(file),
                Err(e) => {
                    // A session without the message it was meant to start with is not what
                    // was asked for: take it back.
                    let _ = std::fs::remove_file(&written.path);
                    for file in &written.attached {
                        let _ = std::fs::remove_file(file);
                    }
                    return Err(e);
                }
            },
            None => None,
        };
        Ok(written_result(snapshot, written, options.prompt.clone(), prompt_file))
    }

    /// Writes a transcript snapshot to `options.output` as a file its agent accepts (for Pi,
    /// a version 3 session that `pi --fork FILE` opens).
    pub fn transcript_export(
        &self,
        options: &TranscriptExportOptions,
        context: &CallContext,
    ) -> Result<TranscriptWritten> {
        let session = self.call_session(options.session.as_deref(), context)?;
        let snapshot = self.find_transcript(&session, &options.name)?;
        let mut path = self.transcript_path_and_files(&snapshot, options.redact)?;
        path.take_attached();
        let written = export_session(&path, &options.output, options.force).map_err(|e| match e {
            cairn_transcript::TranscriptError::Exists { path } => {
                Error::conflict(format!("{} already exists; choose another path", path.display()))
                    .or_hint(Hint::SetOption("force"))
                    .purpose("to replace it")
            }
            other => transcript_error(other),
        })?;
        Ok(written_result(snapshot, written, None, None))
    }
}

fn written_result(
    snapshot: Snapshot,
    written: WrittenSession,
    prompt: Option<String>,
    prompt_file: Option<PathBuf>,
) -> TranscriptWritten {
    TranscriptWritten {
        snapshot,
        file: written.path,
        format: written.format,
        session_id: written.session_id,
        resume_command: written.resume_command,
        fork_command: written.fork_command,
        prompt,
        prompt_file,
        subagent_files: written.attached,
    }
}

/// Writes `prompt` to the sidecar of `session_file`, 0600, never replacing a file.
fn write_prompt(session_file: &Path, prompt: &str) -> Result<PathBuf> {
    let file = session_file.with_extension("prompt");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut out = options.open(&file).map_err(|e| Error::io("create", &file, e))?;
    if let Err(e) = out.write_all(prompt.as_bytes()).and_then(|()| out.sync_data()) {
        let _ = std::fs::remove_file(&file);
        return Err(Error::io("write", &file, e));
    }
    Ok(file)
}
