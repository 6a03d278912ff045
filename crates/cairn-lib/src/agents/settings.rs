//! Reading, editing and writing an agent's settings file without disturbing what cairn does
//! not own.
//!
//! The file is edited as a concrete syntax tree (`jsonc-parser`'s CST), not re-serialised:
//! cairn's groups are appended to the event lists (or the lists and the `hooks` object are
//! created), and every other byte, comments, key order, spacing and string escapes included,
//! stays as it was. A serde round trip (even with `preserve_order`) would re-indent the file,
//! re-escape strings and drop the comments Gemini CLI allows. Removing cairn's groups undoes
//! exactly what appending them did, so an uninstall gives back the original bytes when cairn's
//! entries were the only change. New text follows the file's own indentation.
//!
//! A file that is not valid JSON (Claude Code: strict JSON; Gemini CLI: JSON with comments, as
//! it reads them) is refused in one line and never written. Writes are atomic: a temporary file
//! in the same directory, flushed, given the old file's mode, renamed over it; a symlinked
//! settings file (dotfile managers do this) is written through to its target.

use std::io::Write;
use std::path::{Path, PathBuf};

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstRootNode};
use serde_json::Value;

use super::entries;
use super::spec::{EventEntry, Layout};
use super::{Agent, HookCommand};
use crate::error::{Error, Result};

/// The text [`SettingsFile::with_entries`] gives, and what changed.
#[derive(Debug, Clone)]
pub(crate) struct Entries {
    pub text: String,
    pub events: Vec<&'static str>,
    pub replaced: Vec<&'static str>,
}

/// A settings file as read: its text (`None` when it does not exist) and its parsed value.
#[derive(Debug, Clone)]
pub(crate) struct SettingsFile {
    pub path: PathBuf,
    pub text: Option<String>,
    pub value: Value,
}

impl SettingsFile {
    /// Reads and checks the settings file at `path`; a missing file reads as `{}`.
    pub(crate) fn read(agent: Agent, path: &Path) -> Result<SettingsFile> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(SettingsFile {
                    path: path.to_path_buf(),
                    text: None,
                    value: Value::Object(Default::default()),
                });
            }
            Err(e) => return Err(Error::io("read", path, e)),
        };
        let value = parse(agent, &text).map_err(|reason| malformed(path, &reason))?;
        if !value.is_object() {
            return Err(malformed(path, "the top level is not an object"));
        }
        if let Some(hooks) = value.get("hooks") {
            let Some(events) = hooks.as_object() else {
                return Err(malformed(path, "\"hooks\" is not an object"));
            };
            // Gemini CLI 0.24 and 0.25 kept their switches in `hooks` too (`enabled`,
            // `disabled`, `notifications`); everything else there is an event's list.
            let switch = |key: &str| agent.spec().shape().switches.contains(&key);
            if let Some((event, _)) = events.iter().find(|(key, list)| !list.is_array() && !switch(key)) {
                return Err(malformed(path, &format!("\"hooks\".\"{event}\" is not a list")));
            }
        }
        Ok(SettingsFile { path: path.to_path_buf(), text: Some(text), value })
    }

    /// The events whose lists hold cairn's hook for `agent`.
    pub(crate) fn installed(&self, agent: Agent) -> Vec<&'static str> {
        let hooks = self.value.get("hooks");
        let layout = agent.spec().shape().layout;
        agent
            .spec()
            .events()
            .iter()
            .filter(|e| {
                hooks
                    .and_then(|h| h.get(e.event))
                    .is_some_and(|list| entries::list_has_cairn(agent, layout, list))
            })
            .map(|e| e.event)
            .collect()
    }

    /// The text with cairn's hook running `command` added for every event that lacks one,
    /// the events whose lists change, and those among them whose older cairn hook (a bare
    /// `cairn hook AGENT`, another path or store) is replaced: taken out where it was, the new
    /// group appended, so an upgrade leaves one cairn hook per event and an uninstall still
    /// gives back the bytes from before the first install.
    pub(crate) fn with_entries(&self, agent: Agent, command: &HookCommand) -> Result<Entries> {
        let spec = agent.spec();
        let shape = spec.shape();
        let hooks = self.value.get("hooks");
        let mut todo: Vec<(&EventEntry, String, bool)> = Vec::new();
        for entry in spec.events() {
            let command = spec.command(command, entry)?;
            let list = hooks.and_then(|h| h.get(entry.event));
            let current = list.is_some_and(|l| entries::list_has_command(agent, shape.layout, l, &command));
            if !current {
                let stale = list.is_some_and(|l| entries::list_has_cairn(agent, shape.layout, l));
                todo.push((entry, command, stale));
            }
        }
        let original = self.text.clone().unwrap_or_default();
        if todo.is_empty() {
            return Ok(Entries { text: original, events: Vec::new(), replaced: Vec::new() });
        }
        let base = if original.trim().is_empty() { "{}\n" } else { original.as_str() };
        let root = self.tree(base)?;
        let object = root.object_value_or_set();
        // A file cairn creates for an agent whose files carry a version starts with it.
        if let Some(version) = shape.version
            && self.text.as_deref().is_none_or(|t| t.trim().is_empty())
            && object.get("version").is_none()
        {
            object.append("version", CstInputValue::Number(version.to_string()));
        }
        let hooks = object
            .object_value_or_create("hooks")
            .ok_or_else(|| malformed(&self.path, "\"hooks\" is not an object"))?;
        for (entry, command, stale) in &todo {
            let list = hooks.array_value_or_create(entry.event).ok_or_else(|| {
                malformed(&self.path, &format!("\"hooks\".\"{}\" is not a list", entry.event))
            })?;
            if *stale {
                remove_from_list(agent, shape.layout, &list);
            }
            list.append(spec.hook(entry, command));
        }
        Ok(Entries {
            text: root.to_string(),
            events: todo.iter().map(|(e, _, _)| e.event).collect(),
            replaced: todo.iter().filter(|(_, _, stale)| *stale).map(|(e, _, _)| e.event).collect(),
        })
    }

    /// Why the agent would not run the hooks of this file, one sentence each (see
    /// [`super::spec::AgentSpec::warnings`]).
    pub(crate) fn warnings(&self, agent: Agent) -> Vec<String> {
        agent.spec().warnings(&self.path, &self.value)
    }

    /// The text with every hook of cairn's for `agent` taken out (a group left empty goes,
    /// then an event list left empty, then a `hooks` object left empty), and the events it
    /// was taken from.
    pub(crate) fn without_entries(&self, agent: Agent) -> Result<(String, Vec<String>)> {
        let original = self.text.clone().unwrap_or_default();
        if original.is_empty() {
            return Ok((original, Vec::new()));
        }
        let root = self.tree(&original)?;
        let Some(object) = root.object_value() else {
            return Ok((original, Vec::new()));
        };
        let Some(hooks_prop) = object.get("hooks") else {
            return Ok((original, Vec::new()));
        };
        let Some(hooks) = hooks_prop.value().and_then(|v| v.as_object()) else {
            return Ok((original, Vec::new()));
        };
        let mut removed_from = Vec::new();
        for prop in hooks.properties() {
            let Some(list) = prop.value().and_then(|v| v.as_array()) else {
                continue;
            };
            if remove_from_list(agent, agent.spec().shape().layout, &list) {
                removed_from.push(prop.decoded_name().unwrap_or_default());
                if list.elements().is_empty() {
                    prop.remove();
                }
            }
        }
        if !removed_from.is_empty() && hooks.properties().is_empty() {
            hooks_prop.remove();
        }
        Ok((root.to_string(), removed_from))
    }

    fn tree(&self, text: &str) -> Result<CstRootNode> {
        CstRootNode::parse(text, &ParseOptions::default()).map_err(|e| malformed(&self.path, &e.to_string()))
    }
}

/// Takes cairn's hooks out of one event list; whether any were there.
fn remove_from_list(agent: Agent, layout: Layout, list: &CstArray) -> bool {
    let mut removed = false;
    if layout == Layout::Flat {
        for hook in list.elements() {
            if is_cairn(agent, &hook) {
                hook.remove();
                removed = true;
            }
        }
        return removed;
    }
    for group in list.elements() {
        let Some(hooks) = group.as_object().and_then(|g| g.array_value("hooks")) else {
            continue;
        };
        let all = hooks.elements();
        let ours: Vec<CstNode> = all.iter().filter(|h| is_cairn(agent, h)).cloned().collect();
        if ours.is_empty() {
            continue;
        }
        removed = true;
        if ours.len() == all.len() {
            group.remove();
        } else {
            ours.into_iter().for_each(CstNode::remove);
        }
    }
    removed
}

fn is_cairn(agent: Agent, node: &CstNode) -> bool {
    node.as_object()
        .and_then(|o: CstObject| o.to_serde_value())
        .is_some_and(|v| entries::is_cairn_hook(agent, &v))
}

/// Parses settings text as the agent does: strict JSON (Claude Code, ...) or JSON with
/// comments (Gemini CLI).
fn parse(agent: Agent, text: &str) -> std::result::Result<Value, String> {
    match agent.spec().shape().comments {
        false => serde_json::from_str(text).map_err(|e| e.to_string()),
        true => {
            let options = ParseOptions {
                allow_comments: true,
                allow_loose_object_property_names: false,
                allow_trailing_commas: false,
                allow_missing_commas: false,
                ..ParseOptions::default()
            };
            jsonc_parser::parse_to_serde_value::<Option<Value>>(text, &options)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| "the file holds no value".to_owned())
        }
    }
}

fn malformed(path: &Path, reason: &str) -> Error {
    let reason = reason.lines().next().unwrap_or_default();
    Error::invalid(format!(
        "{} is not a settings file cairn can edit ({reason}); fix it by hand, it was left as it was",
        path.display()
    ))
}

/// Writes `text` to the settings file at `path` atomically, keeping the old file's mode
/// (0600 for a new file) and writing through a symlink to its target.
pub(crate) fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let target = real_target(path)?;
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("create directory", &dir, e))?;
    let mode = std::fs::metadata(&target).ok().map(|m| m.permissions());
    let mut temp = tempfile::Builder::new()
        .prefix(".cairn-")
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(|e| Error::io("create a temporary file in", &dir, e))?;
    let temp_path = temp.path().to_path_buf();
    temp.write_all(text.as_bytes())
        .and_then(|()| match mode {
            Some(mode) => temp.as_file().set_permissions(mode),
            None => Ok(()),
        })
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|e| Error::io("write", &temp_path, e))?;
    temp.persist(&target).map_err(|e| Error::io("replace", &target, e.error))?;
    Ok(())
}

/// Removes the settings file (through a symlink, the target stays and becomes `{}`), and its
/// directory when that is left empty: an install into a fresh home made `~/.claude` for it, and
/// an empty one holds nothing of the user's.
pub(crate) fn remove_file(path: &Path) -> Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return write_atomic(path, "{}\n");
    }
    std::fs::remove_file(path).map_err(|e| Error::io("remove", path, e))?;
    if let Some(dir) = path.parent() {
        // Fails, as it should, when anything else is in it.
        let _ = std::fs::remove_dir(dir);
    }
    Ok(())
}

fn real_target(path: &Path) -> Result<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            std::fs::canonicalize(path).map_err(|e| Error::io("follow the link", path, e))
        }
        _ => Ok(path.to_path_buf()),
    }
}
