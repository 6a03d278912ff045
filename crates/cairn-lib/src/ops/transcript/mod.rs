//! `cairn transcript …`: snapshots of agent conversations (Pi sessions, Claude Code transcripts).
//!
//! A transcript snapshot is a document snapshot (kind `transcript`, target
//! `transcript:<absolute file>`) whose document is the active root-to-leaf path of the session,
//! line for line as the agent wrote it. Reading, checking and writing the formats is
//! `cairn-transcript`'s job; this module puts those paths in the store and takes them out.
//!
//! Names: `cairn transcript load NAME` takes only a name, so transcript snapshot names form one
//! namespace per cairn session across every transcript file (as the Pi extension keeps one
//! directory of snapshots). Saving a name that another transcript snapshot holds is refused
//! unless forced; a forced save replaces that snapshot.

mod diff;
mod load;
mod manage;
mod save;
pub(crate) mod secrets;

use std::path::PathBuf;

use cairn_transcript::{ActivePath, AgentDirs, Transcript, TranscriptError};
pub use cairn_transcript::{Format, TranscriptDiff, TranscriptSummary};
use serde::{Deserialize, Serialize};

pub use diff::{TranscriptDiffOptions, TranscriptDiffResult};
pub use load::{TranscriptExportOptions, TranscriptLoadOptions, TranscriptWritten};
pub use manage::{
    ExtensionFile, TranscriptDeleteOptions, TranscriptDeleteResult, TranscriptList, TranscriptListEntry,
    TranscriptListOptions,
};
pub use save::{TranscriptSaveOptions, TranscriptSaveResult};
pub use secrets::TranscriptSecret;

use crate::Repository;
use crate::agents::places::AgentEnv;
use crate::error::{Error, ErrorKind, Hint, Operation, Result, echo};
use crate::name::validate_name;
use crate::session::SessionRef;
use crate::snapshot::Snapshot;
use crate::store::address::EnvLookup;

/// The snapshot kind of transcript snapshots.
pub const KIND: crate::targets::TargetKind = crate::targets::TargetKind::Transcript;

/// The lock that serialises changes to the transcript name namespace (saves and deletes), so
/// two saves of one name to different files cannot both succeed.
const NAMES_LOCK: &str = "transcript-names";

/// Where the agents keep their sessions, and the directory the caller works in. The engine
/// reads no environment: front ends resolve these (from `HOME` and flags) and pass them in.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentPlaces {
    /// Pi's sessions directory (by default `~/.pi/agent/sessions`).
    pub pi_dir: PathBuf,
    /// Claude Code's projects directory (by default `~/.claude/projects`).
    pub claude_dir: PathBuf,
    /// The working directory: it picks the newest session to save and the directory a loaded
    /// session is written to.
    pub cwd: String,
    /// Gemini CLI's user directory (by default `~/.gemini`); `None` leaves Gemini CLI's
    /// sessions out.
    #[serde(default)]
    pub gemini_dir: Option<PathBuf>,
    /// Codex CLI's home (`CODEX_HOME`, by default `~/.codex`), which holds its rollouts in
    /// `sessions/`; `None` leaves Codex CLI's sessions out.
    #[serde(default)]
    pub codex_dir: Option<PathBuf>,
}

impl AgentPlaces {
    /// The agents' default directories under `home`, for working directory `cwd` (as
    /// [`AgentPlaces::from_env`] finds them when none of the agents' variables is set).
    pub fn from_home(home: &std::path::Path, cwd: impl Into<String>) -> Self {
        let dirs = AgentDirs::from_home(home);
        Self {
            pi_dir: dirs.pi_sessions,
            claude_dir: dirs.claude_projects,
            cwd: cwd.into(),
            gemini_dir: dirs.gemini,
            codex_dir: dirs.codex,
        }
    }

    /// The agents' session directories as the agents find them in `env` (Pi's
    /// `PI_CODING_AGENT_DIR`, Claude Code's `CLAUDE_CONFIG_DIR`, Gemini CLI's `GEMINI_CLI_HOME`,
    /// else their defaults under `HOME`), for working directory `cwd`. Every front passes its
    /// environment here, so they all find the same sessions.
    pub fn from_env(env: &EnvLookup, cwd: impl Into<String>) -> Result<Self> {
        Self::from_env_and_dirs(env, cwd, None, None)
    }

    /// As [`AgentPlaces::from_env`], with Pi's sessions directory and Claude Code's projects
    /// directory given outright when the caller names them (`--pi-dir`, `--claude-dir`); a
    /// directory neither given nor found (no home is known) is refused in one line.
    pub fn from_env_and_dirs(
        env: &EnvLookup,
        cwd: impl Into<String>,
        pi_dir: Option<&std::path::Path>,
        claude_dir: Option<&std::path::Path>,
    ) -> Result<Self> {
        let vars = AgentEnv::read(env);
        let home = vars.home.as_deref();
        let missing = |what: &str, option: &'static str| {
            Error::invalid(format!("cannot tell where {what} keeps its sessions: no home directory is known"))
                .hint(Hint::GiveOption(option))
        };
        let pi_dir = match (pi_dir, &vars.pi_agent_dir, home) {
            (Some(dir), _, _) => dir.to_path_buf(),
            (None, Some(dir), _) => dir.join("sessions"),
            (None, None, Some(home)) => AgentDirs::from_home(home).pi_sessions,
            (None, None, None) => return Err(missing("Pi", "pi_dir")),
        };
        let claude_dir = match (claude_dir, &vars.claude_config_dir, home) {
            (Some(dir), _, _) => dir.to_path_buf(),
            (None, Some(dir), _) => dir.join("projects"),
            (None, None, Some(home)) => AgentDirs::from_home(home).claude_projects,
            (None, None, None) => return Err(missing("Claude Code", "claude_dir")),
        };
        // Codex CLI reads CODEX_HOME, else ~/.codex.
        let codex_dir = env("CODEX_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.and_then(|h| AgentDirs::from_home(h).codex));
        Ok(Self { pi_dir, claude_dir, cwd: cwd.into(), gemini_dir: vars.gemini_dir(), codex_dir })
    }

    /// The session file a save without a file would take now: the newest session of either
    /// agent for [`AgentPlaces::cwd`] (files that are not sessions of their own passed over).
    pub fn newest_session(&self) -> Result<Option<PathBuf>> {
        let found = cairn_transcript::newest_session(&self.dirs(), &self.cwd).map_err(transcript_error)?;
        Ok(found.map(|f| std::fs::canonicalize(&f.path).unwrap_or(f.path)))
    }

    /// Where a session of [`AgentPlaces::cwd`] is looked for: Pi's directory for it, and
    /// Claude Code's.
    pub fn session_dirs(&self) -> (PathBuf, PathBuf) {
        let dirs = self.dirs();
        (dirs.pi_dir_for(&self.cwd), dirs.claude_dir_for(&self.cwd))
    }

    /// Pi's agent directory (the parent of its sessions directory), which holds its
    /// `settings.json` and the snapshot extension's `pi-session-snapshot/` folder.
    pub fn pi_agent_dir(&self) -> PathBuf {
        self.pi_dir.parent().map(std::path::Path::to_path_buf).unwrap_or_else(|| self.pi_dir.clone())
    }

    pub(crate) fn dirs(&self) -> AgentDirs {
        AgentDirs {
            pi_sessions: self.pi_dir.clone(),
            claude_projects: self.claude_dir.clone(),
            gemini: self.gemini_dir.clone(),
            codex: self.codex_dir.clone(),
        }
    }
}

/// What a transcript snapshot records about its path beside the document (its `details`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Details {
    /// The session file the path was read from.
    source: String,
    /// The Pi session format version of the source; absent for Claude Code.
    #[serde(default)]
    pi_version: Option<u32>,
    /// What a listing shows.
    #[serde(flatten)]
    summary: TranscriptSummary,
    /// The entries that hold secret-shaped strings (which, never the strings).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    secrets: Vec<TranscriptSecret>,
    /// The copy written for `pi --fork`, which `cairn transcript delete` removes with the
    /// snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fork_file: Option<PathBuf>,
}

/// Converts an error of the transcript crate into an engine error of the matching kind.
pub(crate) fn transcript_error(err: TranscriptError) -> Error {
    let kind = match &err {
        TranscriptError::Io { .. } => ErrorKind::Io,
        TranscriptError::Exists { .. } => ErrorKind::Conflict,
        TranscriptError::WouldBeInvalid { .. } => ErrorKind::Corrupt,
        _ => ErrorKind::InvalidInput,
    };
    Error::new(kind, err.to_string())
}

/// The summary a snapshot's details hold, when they hold one.
pub(crate) fn summary_of(snapshot: &Snapshot) -> Option<TranscriptSummary> {
    serde_json::from_value::<Details>(snapshot.details.clone()).ok().map(|d| d.summary)
}

impl Repository {
    /// The transcript snapshot `reference` names in `session`: a name (looked up across every
    /// transcript file), an id or a unique id prefix.
    pub(crate) fn find_transcript(&self, session: &SessionRef, reference: &str) -> Result<Snapshot> {
        let reference = reference.trim();
        if reference.is_empty() {
            return Err(Error::invalid("the transcript snapshot name is empty; pass a name"));
        }
        if let Some(found) = self.transcript_named(session, reference)? {
            return Ok(found);
        }
        match self.resolve_snapshot(session, reference, None) {
            Ok(found) if found.kind == KIND => Ok(found),
            Ok(other) => Err(Error::invalid(format!(
                "{:?} is a {} snapshot, not a transcript snapshot",
                echo(reference),
                other.kind
            ))
            .hint(Hint::Run(Operation::ListTranscripts))),
            Err(e) if e.kind() == ErrorKind::NotFound => Err(Error::not_found(format!(
                "no transcript snapshot {:?} in session {:?}",
                echo(reference),
                session.name
            ))
            .hint(Hint::Run(Operation::ListTranscripts))
            .with_code("SNAPSHOT_NOT_FOUND")),
            Err(e) => Err(e),
        }
    }

    /// The transcript snapshot saved under `name`, and nothing else: no id, no prefix, no
    /// `latest` (what a front that speaks of snapshots by name only takes).
    pub(crate) fn find_transcript_by_name(&self, session: &SessionRef, name: &str) -> Result<Snapshot> {
        let name = name.trim();
        if name.is_empty() {
            return Err(Error::invalid(
                "the snapshot name is empty; pass the name a snapshot was saved under",
            ));
        }
        validate_name("snapshot", name)?;
        self.transcript_named(session, name)?.ok_or_else(|| {
            Error::not_found(format!(
                "no snapshot named {name:?}; pass the name a snapshot was saved under (snapshots are taken by name here, not by id or \"latest\")"
            ))
            .with_code("SNAPSHOT_NOT_FOUND")
        })
    }

    /// The transcript snapshot holding `name` in `session`, newest first should two ever hold
    /// it (a forced save interrupted between its two steps).
    pub(crate) fn transcript_named(&self, session: &SessionRef, name: &str) -> Result<Option<Snapshot>> {
        Ok(self.list_kind(KIND, session)?.into_iter().rev().find(|s| s.name.as_deref() == Some(name)))
    }

    /// The saved path of a transcript snapshot, with the file it was read from as its source,
    /// without the files saved with it.
    pub(crate) fn transcript_path(&self, snapshot: &Snapshot) -> Result<ActivePath> {
        let mut path = self.transcript_path_and_files(snapshot, false)?;
        path.take_attached();
        Ok(path)
    }

    /// The saved path of a transcript snapshot, with the files saved with it (subagent
    /// transcripts) still in it, for [`ActivePath::take_attached`]; every secret-shaped string
    /// is replaced by a marker when `redact` is set.
    pub(crate) fn transcript_path_and_files(&self, snapshot: &Snapshot, redact: bool) -> Result<ActivePath> {
        if snapshot.kind != KIND {
            return Err(Error::invalid(format!(
                "snapshot {} is a {} snapshot, not a transcript snapshot",
                snapshot.id, snapshot.kind
            )));
        }
        let bytes = self.read_document(snapshot)?;
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::corrupt(format!("transcript snapshot {} is not UTF-8 text", snapshot.id))
                .hint(Hint::Run(Operation::Check))
        })?;
        let source = serde_json::from_value::<Details>(snapshot.details.clone())
            .map(|d| d.source)
            .unwrap_or_else(|_| snapshot.target.trim_start_matches("transcript:").to_owned());
        let text = if redact { secrets::redact(&text) } else { text };
        let parsed = Transcript::parse_saved(&source, &text).map_err(|e| {
            Error::corrupt(format!("transcript snapshot {} no longer parses ({e})", snapshot.id))
                .hint(Hint::Run(Operation::Check))
        })?;
        Ok(parsed.active_path())
    }
}
