//! A whole transcript as read from disk, and extracting its active path.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::error::{Result, TranscriptError};
use crate::graph::{self, IdIndex};
use crate::jsonl::{self, SkippedLine};
use crate::model::{ActivePath, Entry, Format};
use crate::{claude, codex, gemini, pi};

/// A checked transcript: every line parsed, every parent link resolved, no cycles.
///
/// The format is told from the content, never from the file name.
#[derive(Debug, Clone)]
pub struct Transcript {
    pub(crate) source: String,
    pub(crate) format: Format,
    pub(crate) pi_version: Option<u32>,
    pub(crate) header: Option<String>,
    pub(crate) session_id: Option<String>,
    pub(crate) cwd: Option<String>,
    pub(crate) entries: Vec<Entry>,
    pub(crate) ids: IdIndex,
    pub(crate) leaf: Option<usize>,
    /// For Claude Code lines without `uuid`: the entry they point at, by index of the line.
    pub(crate) meta_refs: HashMap<usize, String>,
    /// Lines left out because they are not JSON objects (read as the agent reads).
    pub(crate) skipped: Vec<SkippedLine>,
    /// Lines of entries whose parent is not in the file, taken as roots as the agent does.
    pub(crate) orphans: Vec<usize>,
}

/// How forgiving a read is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reading {
    /// Refuse a line that is not a JSON object instead of skipping it.
    pub strict: bool,
    /// A saved path: an entry whose parent is not in it starts the path (its parent sat on a
    /// line that was skipped when it was saved).
    pub saved: bool,
}

impl Transcript {
    /// Reads and checks the transcript at `path`, refusing any line that is not JSON.
    pub fn read(path: &Path) -> Result<Transcript> {
        let text = std::fs::read_to_string(path).map_err(|e| TranscriptError::io("read", path, e))?;
        Transcript::parse(&path.display().to_string(), &text)
    }

    /// Reads the transcript at `path` as the agents read their own files: a line that is not
    /// a JSON object (a torn last line, two entries glued together) is left out and listed in
    /// [`Transcript::skipped_lines`], and an entry whose parent was on such a line starts the
    /// path, as it does when the agent walks back from its leaf.
    pub fn read_as_agent(path: &Path) -> Result<Transcript> {
        let text = std::fs::read_to_string(path).map_err(|e| TranscriptError::io("read", path, e))?;
        Transcript::parse_as_agent(&path.display().to_string(), &text)
    }

    /// Parses and checks transcript text; `source` names it in errors and in `parentSession`.
    pub fn parse(source: &str, text: &str) -> Result<Transcript> {
        Transcript::parse_with(source, text, Reading { strict: true, saved: false })
    }

    /// [`Transcript::parse`] as the agents read: see [`Transcript::read_as_agent`].
    pub fn parse_as_agent(source: &str, text: &str) -> Result<Transcript> {
        Transcript::parse_with(source, text, Reading { strict: false, saved: false })
    }

    /// Parses a saved path ([`ActivePath::document`]) again. A path saved from a file with
    /// skipped lines may start at an entry whose parent is not in it; that entry is its root.
    pub fn parse_saved(source: &str, text: &str) -> Result<Transcript> {
        Transcript::parse_with(source, text, Reading { strict: true, saved: true })
    }

    pub(crate) fn parse_with(source: &str, text: &str, reading: Reading) -> Result<Transcript> {
        if let Some(legacy) = gemini::parse_legacy(source, text) {
            return legacy;
        }
        let parsed = jsonl::parse_lines(source, text, reading.strict)?;
        let lines = parsed.lines;
        // Only when lines were skipped can a missing parent be explained by them.
        let tolerate_orphans = reading.saved || !parsed.skipped.is_empty();
        let first = &lines[0];
        let mut transcript = if pi::is_header(first) {
            pi::parse(source, lines, tolerate_orphans)?
        } else if codex::is_rollout(&lines) {
            codex::parse(source, lines)?
        } else if gemini::is_session(&lines) {
            gemini::parse(source, lines)?
        } else if lines.iter().any(claude::is_entry) {
            claude::parse(source, lines, tolerate_orphans)?
        } else if lines.iter().all(claude::is_summary) {
            return Err(TranscriptError::OnlySummaries { file: source.to_owned(), count: lines.len() });
        } else {
            return Err(TranscriptError::UnknownFormat { file: source.to_owned(), line: first.line });
        };
        transcript.skipped = parsed.skipped;
        Ok(transcript)
    }

    /// The lines left out because they are not JSON objects (empty for a strict read).
    pub fn skipped_lines(&self) -> &[SkippedLine] {
        &self.skipped
    }

    /// The lines of entries whose parent is not in the file and that were taken as roots.
    pub fn orphan_lines(&self) -> &[usize] {
        &self.orphans
    }

    /// How many conversation entries are on branches the active path leaves out (sidechains,
    /// a subagent's own conversation, are not counted).
    pub fn entries_off_path(&self) -> usize {
        let on_path = self.active_path().entries.iter().filter(|e| e.id.is_some()).count();
        let all = self.entries.iter().filter(|e| e.id.is_some() && !e.sidechain).count();
        all.saturating_sub(on_path)
    }

    /// The file (or name) the transcript was read from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Which agent wrote it.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The Pi session format version (1, 2 or 3); `None` for Claude Code.
    pub fn pi_version(&self) -> Option<u32> {
        self.pi_version
    }

    /// The session id: the Pi header's `id`, or the Claude Code leaf's `sessionId`.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The working directory the session ran in, as recorded in the transcript.
    pub fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    /// Every line after the Pi header, in file order, all branches included.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The leaf's id: for Pi the last entry in the file, for Claude Code the last entry with
    /// a `uuid` that is not on a sidechain. `None` for a Pi session with no entries yet.
    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.and_then(|i| self.entries[i].id.as_deref())
    }

    /// The root-to-leaf path ending at the leaf, other branches left out.
    ///
    /// For Claude Code, a line without `uuid` is kept unless it points (through `leafUuid` or
    /// `messageId`) at an entry of this file that is not on the path; a kept line goes right
    /// after the path entry that preceded it in the file, or first if none did. That keeps
    /// summaries of earlier sessions and the file history of the kept messages, and drops
    /// the bookkeeping of abandoned branches and sidechains.
    pub fn active_path(&self) -> ActivePath {
        let path = match self.leaf {
            Some(leaf) => graph::root_to(&self.entries, &self.ids, leaf),
            None => Vec::new(),
        };
        let entries = match self.format {
            Format::Pi | Format::Gemini | Format::Codex => {
                path.iter().map(|&i| self.entries[i].clone()).collect()
            }
            Format::Claude => self.claude_path_with_meta(&path),
        };
        ActivePath {
            source: self.source.clone(),
            format: self.format,
            pi_version: self.pi_version,
            header: self.header.clone(),
            entries,
        }
    }

    fn claude_path_with_meta(&self, path: &[usize]) -> Vec<Entry> {
        let on_path: HashSet<usize> = path.iter().copied().collect();
        let mut leading = Vec::new();
        let mut after: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut anchor: Option<usize> = None;
        for (index, entry) in self.entries.iter().enumerate() {
            if on_path.contains(&index) {
                anchor = Some(index);
                continue;
            }
            if entry.id.is_some() {
                continue;
            }
            let keep = match self.meta_refs.get(&index) {
                Some(target) => self.ids.get(target).is_none_or(|t| on_path.contains(t)),
                None => true,
            };
            if keep {
                match anchor {
                    Some(a) => after.entry(a).or_default().push(index),
                    None => leading.push(index),
                }
            }
        }
        let mut order = leading;
        for &index in path {
            order.push(index);
            order.extend(after.remove(&index).unwrap_or_default());
        }
        order.into_iter().map(|i| self.entries[i].clone()).collect()
    }
}
