//! Claude Code's file-history backups, carried over to a forked session.
//!
//! Claude Code (2.1.88) backs up each file a session edits as
//! `<config dir>/file-history/<session id>/<name>@v<N>`, and the transcript holds
//! `file-history-snapshot` lines (no `uuid`) that name, for the user prompt whose uuid is their
//! `messageId`, the backup of each tracked file (`snapshot.trackedFileBackups.<path>
//! .backupFileName`). `/rewind` looks every backup up under the *current* session's id, so a
//! fork written under a new id needs its own copies: for the snapshots of the prompts it keeps,
//! every backup named is hard-linked (or, across file systems, copied) from the old session's
//! directory into the new one's. A snapshot of a prompt the fork does not keep is dropped, as
//! Claude Code ignores it on resume; a backup that cannot be found is taken out of its
//! snapshot, so the fork names no file that is not there.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Result, TranscriptError};
use crate::model::{ActivePath, Entry};

/// The `type` of a line that records a prompt's file backups.
const SNAPSHOT: &str = "file-history-snapshot";

/// The path's entries as the fork writes them, and the backup directory made for it.
pub(crate) struct Carried {
    /// The entries, with the snapshots of prompts that are not kept left out and each kept
    /// snapshot naming only backups the fork has.
    pub entries: Vec<Entry>,
    /// `file-history/<new id>/`, when a backup was linked into it.
    pub dir: Option<PathBuf>,
}

/// Prepares `path` to be written as session `new_id`: prunes its snapshot lines and links the
/// backups they name into `<config>/file-history/<new_id>/`. Without a config directory no
/// backup can be carried, so every backup reference is taken out.
///
/// On an error the backups already linked are removed again.
pub(crate) fn carry(path: &ActivePath, config: Option<&Path>, new_id: &str) -> Result<Carried> {
    let mut linker = Linker {
        root: config.map(|c| c.join("file-history")),
        old_ids: old_session_ids(path),
        new_id: new_id.to_owned(),
        made: None,
        done: HashMap::new(),
    };
    match carry_with(path, &mut linker) {
        Ok(entries) => Ok(Carried { entries, dir: linker.made }),
        Err(e) => {
            if let Some(dir) = &linker.made {
                let _ = std::fs::remove_dir_all(dir);
            }
            Err(e)
        }
    }
}

fn carry_with(path: &ActivePath, linker: &mut Linker) -> Result<Vec<Entry>> {
    let kept: HashSet<&str> = path.entries.iter().filter_map(|e| e.id.as_deref()).collect();
    let mut entries = Vec::with_capacity(path.entries.len());
    for entry in &path.entries {
        if entry.id.is_some() || entry.kind != SNAPSHOT {
            entries.push(entry.clone());
            continue;
        }
        let Ok(Value::Object(mut line)) = serde_json::from_str::<Value>(&entry.text) else {
            continue;
        };
        let message = line
            .get("messageId")
            .or_else(|| line.get("snapshot").and_then(|s| s.get("messageId")))
            .and_then(Value::as_str);
        if !message.is_some_and(|m| kept.contains(m)) {
            continue;
        }
        let backups = line
            .get_mut("snapshot")
            .and_then(|s| s.get_mut("trackedFileBackups"))
            .and_then(Value::as_object_mut);
        let mut changed = false;
        if let Some(backups) = backups {
            let mut gone = Vec::new();
            for (tracked, backup) in backups.iter() {
                // `null` records that the file did not exist yet: nothing to carry.
                if let Some(name) = backup.get("backupFileName").and_then(Value::as_str)
                    && !linker.link(name)?
                {
                    gone.push(tracked.clone());
                }
            }
            for tracked in gone {
                backups.remove(&tracked);
                changed = true;
            }
        }
        let mut entry = entry.clone();
        if changed {
            // Re-serialised only when a backup was taken out; keys come out sorted.
            entry.text = Value::Object(line).to_string();
        }
        entries.push(entry);
    }
    Ok(entries)
}

/// The session ids whose backup directories may hold the path's backups, most recent first:
/// each session id on the path from the leaf back (a resumed session has its backups linked
/// under each id it ran as), then the source file's name.
fn old_session_ids(path: &ActivePath) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    let from_entries = path.entries.iter().rev().filter(|e| e.id.is_some()).filter_map(|e| {
        let value: Value = serde_json::from_str(&e.text).ok()?;
        value.get("sessionId")?.as_str().map(str::to_owned)
    });
    let stem = Path::new(&path.source).file_stem().and_then(|s| s.to_str()).map(str::to_owned);
    for id in from_entries.chain(stem) {
        if is_file_name(&id) && !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// Links backups into the new session's directory, each name once.
struct Linker {
    root: Option<PathBuf>,
    old_ids: Vec<String>,
    new_id: String,
    /// The new session's backup directory, once created.
    made: Option<PathBuf>,
    /// Whether each backup name was carried.
    done: HashMap<String, bool>,
}

impl Linker {
    /// Carries backup `name`; `false` when no old session has it.
    fn link(&mut self, name: &str) -> Result<bool> {
        if let Some(&done) = self.done.get(name) {
            return Ok(done);
        }
        let done = self.link_once(name)?;
        self.done.insert(name.to_owned(), done);
        Ok(done)
    }

    fn link_once(&mut self, name: &str) -> Result<bool> {
        let Some(root) = &self.root else { return Ok(false) };
        if !is_file_name(name) {
            return Ok(false);
        }
        let Some(source) = self
            .old_ids
            .iter()
            .map(|id| root.join(id).join(name))
            .find(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
        else {
            return Ok(false);
        };
        let dir = root.join(&self.new_id);
        if self.made.is_none() {
            crate::fsio::create_private_dir(&dir)?;
            self.made = Some(dir.clone());
        }
        let dest = dir.join(name);
        match std::fs::hard_link(&source, &dest) {
            Ok(()) => Ok(true),
            // As Claude Code does: an existing backup is already carried.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(true),
            // Another file system, or links not allowed: a copy (mode included) will do.
            Err(_) => match std::fs::copy(&source, &dest) {
                Ok(_) => Ok(true),
                Err(e) => Err(TranscriptError::io("copy a file-history backup to", &dest, e)),
            },
        }
    }
}

/// A name used as one path component: no separators, not `.` or `..`.
fn is_file_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0'])
}
