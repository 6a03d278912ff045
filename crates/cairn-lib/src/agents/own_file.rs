//! Install, uninstall and status for agents that load hooks as code (Pi's extensions, OpenCode's
//! plugins): cairn writes one file of its own whole ([`AgentSpec::own_file`]), instead of
//! entries in a settings file.
//!
//! The file names the command it runs in two lines, `const CAIRN = "...";` and
//! `const STORE = ...;`, JSON string literals (also valid TypeScript). From them cairn rebuilds
//! the text it would have written for that command: a file that reads exactly so is cairn's,
//! to replace on install (another binary or store) and to remove on uninstall. A file that
//! reads otherwise was changed by hand or is someone else's, and cairn refuses to touch it.

use std::path::{Path, PathBuf};

use super::install::{HooksChange, HooksPlace};
use super::spec::AgentSpec;
use super::{Agent, HookCommand, Scope, settings};
use crate::error::{Error, Result};

/// The line naming cairn's binary.
const PROGRAM_LINE: &str = "const CAIRN = ";
/// The line naming the store (`null`: the hook's environment chooses).
const STORE_LINE: &str = "const STORE = ";

/// The two lines naming `command`, for the head of an own file.
pub(crate) fn command_lines(command: &HookCommand) -> Result<String> {
    let text = |path: &Path| {
        path.to_str().map(str::to_owned).ok_or_else(|| {
            Error::invalid(format!("{} is not UTF-8 and cannot be written into a hook file", path.display()))
        })
    };
    let program = serde_json::to_string(&text(&command.program)?).unwrap_or_default();
    let store = match &command.store {
        Some(store) => serde_json::to_string(&text(store)?).unwrap_or_default(),
        None => "null".to_owned(),
    };
    Ok(format!("{PROGRAM_LINE}{program};\n{STORE_LINE}{store};\n"))
}

/// The command a file names in its two lines, if it names one.
fn recorded_command(text: &str) -> Option<HookCommand> {
    let value = |prefix: &str| {
        let line = text.lines().find_map(|l| l.strip_prefix(prefix))?;
        serde_json::from_str::<Option<String>>(line.strip_suffix(';')?).ok()
    };
    let program = value(PROGRAM_LINE)??;
    let store = value(STORE_LINE)?;
    Some(HookCommand::new(program, store.map(PathBuf::from)))
}

/// What a file on disk is to cairn.
enum Found {
    Missing,
    /// cairn's file, exactly as written for the command it names.
    Ours(String),
    /// Anything else: changed by hand, or not cairn's.
    Changed(String),
}

fn read(spec: &dyn AgentSpec, file: &Path) -> Result<Found> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Missing),
        Err(e) => return Err(Error::io("read", file, e)),
    };
    let ours = recorded_command(&text).and_then(|c| spec.own_file(&c).ok()).is_some_and(|t| t == text);
    Ok(if ours { Found::Ours(text) } else { Found::Changed(text) })
}

fn events(spec: &dyn AgentSpec) -> Vec<String> {
    spec.events().iter().map(|e| e.event.to_owned()).collect()
}

fn changed_by_hand(file: &Path, doing: &str) -> Error {
    Error::invalid(format!(
        "{} is not the file cairn wrote (it was changed since, or is not cairn's), so cairn does not {doing} it; move it away (or delete it) and run the command again",
        file.display()
    ))
}

/// Writes cairn's file for `command` at `file`, unless it is already there.
pub(crate) fn install(
    agent: Agent,
    scope: Scope,
    file: PathBuf,
    command: &HookCommand,
    dry_run: bool,
    notes: Vec<String>,
) -> Result<HooksChange> {
    let spec = agent.spec();
    let text = spec.own_file(command)?;
    let (old, replaced) = match read(spec, &file)? {
        Found::Missing => (None, false),
        Found::Ours(old) => {
            let stale = old != text;
            (Some(old), stale)
        }
        Found::Changed(_) => return Err(changed_by_hand(&file, "replace")),
    };
    let changed = old.as_deref() != Some(text.as_str());
    let change = HooksChange {
        agent,
        scope,
        diff: super::install::diff(&file, old.as_deref().unwrap_or_default(), &text),
        changed,
        dry_run,
        events: if changed { events(spec) } else { Vec::new() },
        replaced: if replaced { events(spec) } else { Vec::new() },
        warnings: Vec::new(),
        notes,
        file_created: old.is_none(),
        file_removed: false,
        file,
    };
    if change.changed && !dry_run {
        settings::write_atomic(&change.file, &text)?;
    }
    Ok(change)
}

/// Removes cairn's file at `file`, refused when it is not exactly what cairn wrote.
pub(crate) fn uninstall(agent: Agent, scope: Scope, file: PathBuf, dry_run: bool) -> Result<HooksChange> {
    let spec = agent.spec();
    let old = match read(spec, &file)? {
        Found::Missing => None,
        Found::Ours(old) => Some(old),
        Found::Changed(_) => return Err(changed_by_hand(&file, "remove")),
    };
    let change = HooksChange {
        agent,
        scope,
        diff: super::install::diff(&file, old.as_deref().unwrap_or_default(), ""),
        changed: old.is_some(),
        dry_run,
        events: if old.is_some() { events(spec) } else { Vec::new() },
        replaced: Vec::new(),
        warnings: Vec::new(),
        notes: Vec::new(),
        file_created: false,
        file_removed: old.is_some(),
        file,
    };
    if change.changed && !dry_run {
        // The file itself, or the link to it: cairn owns the name, not a link's target.
        std::fs::remove_file(&change.file).map_err(|e| Error::io("remove", &change.file, e))?;
    }
    Ok(change)
}

/// The status row of cairn's file at `file`.
pub(crate) fn place(agent: Agent, scope: Scope, file: PathBuf) -> HooksPlace {
    let spec = agent.spec();
    let row = |exists, installed: bool, error, warnings| HooksPlace {
        agent,
        scope,
        file: file.clone(),
        exists,
        installed: if installed { events(spec) } else { Vec::new() },
        missing: if installed { Vec::new() } else { events(spec) },
        error,
        warnings,
    };
    match read(spec, &file) {
        Ok(Found::Missing) => row(false, false, None, Vec::new()),
        Ok(Found::Ours(_)) => row(true, true, None, Vec::new()),
        Ok(Found::Changed(text)) => {
            let runs = recorded_command(&text).is_some();
            let warning = format!(
                "{} was changed since cairn wrote it (or is not cairn's): cairn will neither replace nor remove it",
                file.display()
            );
            row(true, runs, None, vec![warning])
        }
        Err(e) => row(file.exists(), false, Some(e.message().to_owned()), Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_lines_read_back() {
        for store in [None, Some(PathBuf::from("/s \"x\"/it's")), Some(PathBuf::from("s3://b/p"))] {
            let command = HookCommand::new("/opt/my cairn/cairn", store);
            let text = format!("// head\n{}\nrest\n", command_lines(&command).unwrap());
            assert_eq!(recorded_command(&text), Some(command));
        }
        assert_eq!(recorded_command("const CAIRN = 3;\nconst STORE = null;\n"), None);
    }
}
