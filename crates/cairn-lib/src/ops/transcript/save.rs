//! `cairn transcript save [FILE] [NAME]`: the active path of a session, into the store.

use std::path::{Path, PathBuf};

use cairn_transcript::{SkippedLine, Transcript, TranscriptSummary, export_session, newest_session};
use serde::{Deserialize, Serialize};

use super::{AgentPlaces, Details, KIND, NAMES_LOCK, transcript_error};
use crate::Repository;
use crate::error::{Error, Hint, Result};
use crate::name::validate_name;
use crate::ops::document::DocumentSave;
use crate::ops::resolve::CallContext;
use crate::ops::save::{SaveOptions, SaveResult};
use crate::snapshot::{NotCovered, SkippedEntry, Snapshot, SnapshotStats};

/// What to save.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct TranscriptSaveOptions {
    /// The session file; `None` takes the newest session of either agent for `places.cwd`.
    pub file: Option<PathBuf>,
    /// The snapshot's name, unique among the transcript snapshots of the cairn session.
    pub name: Option<String>,
    /// What the snapshot is being taken before.
    pub description: Option<String>,
    /// Replace the transcript snapshot that holds the name instead of refusing.
    #[serde(default)]
    pub force: bool,
    /// Where the agents keep their sessions (used when `file` is `None`).
    #[serde(default)]
    pub places: AgentPlaces,
    /// The cairn session to save into.
    pub session: Option<String>,
    /// Refuse a file with a line that is not JSON, instead of leaving that line out as the
    /// agents do when they open their own files.
    #[serde(default)]
    pub strict: bool,
    /// End the saved path before an assistant message whose tool calls have no results yet
    /// (a save made by the agent while it runs), so the saved path can be resumed.
    #[serde(default)]
    pub cut_unanswered_tool_calls: bool,
    /// Also write a Pi path to this file, one `pi --fork FILE` opens (replaced on each save).
    #[serde(default)]
    pub fork_copy: Option<PathBuf>,
}

/// The new snapshot, what it holds, and the snapshot it replaced.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TranscriptSaveResult {
    /// The snapshot record.
    #[serde(flatten)]
    pub snapshot: Snapshot,
    /// The session file that was saved.
    pub file: PathBuf,
    /// What the saved path holds.
    #[schemars(with = "serde_json::Value")]
    pub summary: TranscriptSummary,
    /// The snapshot that held the name before a forced save, now removed from the session.
    pub replaced: Option<Snapshot>,
    /// How many entries on other branches of the conversation the active path leaves out.
    pub off_path: usize,
    /// Lines of the file that are not JSON and were left out, as the agent leaves them out.
    #[schemars(with = "Vec<serde_json::Value>")]
    pub skipped_lines: Vec<SkippedLine>,
    /// How many entries at the end were left out because an assistant message there has tool
    /// calls without results (only with `cut_unanswered_tool_calls`).
    pub cut_entries: usize,
    /// The copy written for `pi --fork`, when one was asked for and the path is Pi's.
    pub fork_file: Option<PathBuf>,
    /// Files saved with the path: the transcripts of the subagents its tool results name,
    /// relative to the session's directory.
    pub subagent_files: Vec<String>,
    /// The entries that hold secret-shaped strings (the snapshot keeps them as written; a
    /// redacted export replaces them).
    pub secrets: Vec<super::TranscriptSecret>,
}

impl Repository {
    /// Saves the active root-to-leaf path of a session file as a transcript snapshot.
    ///
    /// The file is read and checked completely before anything is written: a malformed line,
    /// a missing parent or a cycle fails with the line named, and the store is unchanged.
    pub fn transcript_save(
        &self,
        options: &TranscriptSaveOptions,
        context: &CallContext,
    ) -> Result<TranscriptSaveResult> {
        if let Some(name) = &options.name {
            validate_name("snapshot", name)?;
        }
        let session = self.call_session(options.session.as_deref(), context)?;
        let file = match &options.file {
            Some(file) => canonical_file(file)?,
            None => newest_for(&options.places)?,
        };
        let source = file.to_string_lossy().into_owned();
        let read = if options.strict { Transcript::read } else { Transcript::read_as_agent };
        let transcript = read(&file).map_err(transcript_error)?;
        let mut path = transcript.active_path();
        let off_path = transcript.entries_off_path();
        let cut_entries =
            if options.cut_unanswered_tool_calls { path.cut_unanswered_tool_calls() } else { 0 };
        let subagents = path.find_subagents(&file).map_err(transcript_error)?;
        let mut not_covered = not_covered(&transcript, off_path, cut_entries);
        not_covered.skipped.extend(subagents.missing.iter().map(|id| {
            SkippedEntry {
                path: format!("agent-{id}.jsonl"),
                reason:
                    "missing: a tool result names this subagent, but its transcript is not beside the session"
                        .to_owned(),
            }
        }));
        let summary = path.summary();
        let secrets = super::secrets::secret_entries(&path.document());
        let details = Details {
            source: source.clone(),
            pi_version: path.pi_version,
            summary: summary.clone(),
            secrets: secrets.clone(),
            fork_file: options.fork_copy.clone().filter(|_| path.format == cairn_transcript::Format::Pi),
        };
        let details = serde_json::to_value(&details)
            .map_err(|e| Error::corrupt(format!("could not encode the transcript details: {e}")))?;

        let _names = self.lock_target(NAMES_LOCK, "a transcript save")?;
        let holder = match &options.name {
            Some(name) => self.transcript_named(&session, name)?,
            None => None,
        };
        // A snapshot file already under the fork copy's name was written by someone else (the
        // Pi extension itself, before the user switched to cairn): never overwrite it silently.
        if let (None, false, Some(dest)) = (&holder, options.force, &options.fork_copy)
            && path.format == cairn_transcript::Format::Pi
            && dest.exists()
        {
            return Err(Error::conflict(format!(
                "a snapshot named {:?} already exists ({}); pick another name",
                options.name.as_deref().unwrap_or_default(),
                dest.display()
            ))
            .or_hint(Hint::SetOption("force"))
            .purpose("to replace it"));
        }
        if let (Some(holder), false) = (&holder, options.force) {
            return Err(Error::conflict(format!(
                "a transcript snapshot named {:?} already exists ({}, saved from {}); pick another name",
                holder.name.as_deref().unwrap_or_default(),
                holder.id,
                holder.target.trim_start_matches("transcript:")
            ))
            .or_hint(Hint::SetOption("force"))
            .purpose("to replace it"));
        }
        let save = DocumentSave {
            target: format!("{KIND}:{source}"),
            kind: KIND,
            name: options.name.clone(),
            description: options.description.clone(),
            force: options.force,
            details,
            stats: SnapshotStats { files: 1 + subagents.files.len() as u64, ..SnapshotStats::default() },
            not_covered,
            session: session.id,
        };
        let snapshot = self.save_document(&save, path.document_with(&subagents.files).as_bytes())?;
        let fork_file = match (&options.fork_copy, path.format) {
            (Some(dest), cairn_transcript::Format::Pi) => {
                export_session(&path, dest, true).map_err(transcript_error)?;
                Some(dest.clone())
            }
            _ => None,
        };
        // The new snapshot holds the name now; the one it replaces leaves the session (its data
        // is reclaimed by gc like any removed snapshot's).
        if let Some(old) = &holder {
            self.catalog().remove_membership(session.id, old.id)?;
        }
        Ok(TranscriptSaveResult {
            snapshot,
            file,
            summary,
            replaced: holder,
            off_path,
            skipped_lines: transcript.skipped_lines().to_vec(),
            cut_entries,
            fork_file,
            subagent_files: subagents.files.iter().map(|f| f.path.clone()).collect(),
            secrets,
        })
    }

    /// `Repository::save` of a `transcript:FILE` target: the same save, with the generic options.
    pub(crate) fn save_transcript_target(
        &self,
        file: &Path,
        options: &SaveOptions,
        context: &CallContext,
    ) -> Result<SaveResult> {
        let saved = self.transcript_save(
            &TranscriptSaveOptions {
                file: Some(file.to_path_buf()),
                name: options.name.clone(),
                description: options.description.clone(),
                force: options.force,
                places: AgentPlaces::default(),
                session: options.session.clone(),
                ..TranscriptSaveOptions::default()
            },
            context,
        )?;
        // The keep policy does not apply to transcript snapshots: each is a deliberate, named
        // checkpoint of a conversation.
        Ok(SaveResult { snapshot: saved.snapshot, removed_by_policy: Vec::new() })
    }
}

/// What the saved path leaves out of the file: lines that are not JSON, entries whose parent
/// sat on such a line, entries on other branches, and a cut unanswered tool call.
fn not_covered(transcript: &Transcript, off_path: usize, cut_entries: usize) -> NotCovered {
    let mut skipped: Vec<SkippedEntry> = transcript
        .skipped_lines()
        .iter()
        .map(|s| SkippedEntry {
            path: format!("line {}", s.line),
            reason: format!("not-json: {}; left out, as the agent leaves it out", s.reason),
        })
        .collect();
    skipped.extend(transcript.orphan_lines().iter().map(|line| SkippedEntry {
        path: format!("line {line}"),
        reason: "parent-missing: its parent is not in the file (most likely on a line left out), so the path starts here, as the agent's does".to_owned(),
    }));
    if off_path > 0 {
        skipped.push(SkippedEntry {
            path: format!("{off_path} entries on other branches"),
            reason: "off-path: not on the active path from the first entry to the leaf".to_owned(),
        });
    }
    if cut_entries > 0 {
        skipped.push(SkippedEntry {
            path: format!("the last {cut_entries} entries"),
            reason: "unanswered-tool-call: an assistant message there has tool calls without results yet"
                .to_owned(),
        });
    }
    NotCovered { skipped, ..NotCovered::default() }
}

/// The canonical path of an existing regular file, with a clear error otherwise.
fn canonical_file(file: &Path) -> Result<PathBuf> {
    let canonical = std::fs::canonicalize(file).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::not_found(format!(
                "{} does not exist; pass a Pi session file or a Claude Code transcript",
                file.display()
            ))
        } else {
            Error::io("resolve", file, e)
        }
    })?;
    if !canonical.is_file() {
        return Err(Error::invalid(format!(
            "{} is not a file; pass a Pi session file or a Claude Code transcript",
            file.display()
        )));
    }
    Ok(canonical)
}

/// The newest session of either agent for the working directory.
fn newest_for(places: &AgentPlaces) -> Result<PathBuf> {
    if places.cwd.is_empty() {
        return Err(Error::invalid(
            "no session file given and no working directory to find one for; pass the file",
        ));
    }
    let dirs = places.dirs();
    match newest_session(&dirs, &places.cwd).map_err(transcript_error)? {
        Some(found) => canonical_file(&found.path),
        None => Err(Error::not_found(format!(
            "no Pi or Claude Code session of {} in {} or {}; pass the session file",
            places.cwd,
            dirs.pi_dir_for(&places.cwd).display(),
            dirs.claude_dir_for(&places.cwd).display()
        ))
        .or_hint(Hint::GiveOneOf(&["pi_dir", "claude_dir"]))
        .purpose("to point at the agents' directories")),
    }
}
