//! `hooks install|uninstall|status`: cairn's entries in an agent's settings file (or, for an
//! agent that loads hooks as code, the one file cairn owns: see `own_file.rs`).
//!
//! Install appends cairn's group to each event list that lacks cairn's hook, and nothing else;
//! installing again changes nothing. A cairn hook that runs another command (an older install's
//! bare `cairn hook AGENT`, another binary or store) is replaced, not joined by a second one. Uninstall takes out exactly cairn's hooks; a file cairn
//! created holds nothing else afterwards and is removed. A dry run computes the same change
//! and returns it as a diff without writing. Install and status warn about settings that keep
//! the agent from running the file's hooks at all.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::own_file;
use super::settings::{self, SettingsFile};
use super::spec::Layout;
use super::{Agent, AgentPlaces, HookCommand, Layers, Scope};
use crate::error::{Error, Result};

/// Options of [`install`].
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct HooksInstallOptions {
    /// The agent whose settings get cairn's hooks: claude-code, gemini-cli, codex, cursor,
    /// copilot-cli, pi or opencode.
    #[cfg_attr(feature = "clap", arg(value_enum))]
    pub agent: Agent,
    /// Which settings file: user (every project; the default), project (shared with the
    /// project), or local (Claude Code only: this project, not shared).
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default)]
    pub scope: Option<Scope>,
    /// Show the change without writing it.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default)]
    pub dry_run: bool,
}

/// Options of [`uninstall`].
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct HooksUninstallOptions {
    /// The agent whose settings lose cairn's hooks: claude-code, gemini-cli, codex, cursor,
    /// copilot-cli, pi or opencode.
    #[cfg_attr(feature = "clap", arg(value_enum))]
    pub agent: Agent,
    /// Which settings file: user (the default), project or local (Claude Code only).
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default)]
    pub scope: Option<Scope>,
    /// Show the change without writing it.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default)]
    pub dry_run: bool,
}

/// Options of [`status`].
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct HooksStatusOptions {
    /// Only this agent (every agent by default).
    #[cfg_attr(feature = "clap", arg(value_enum))]
    #[serde(default)]
    pub agent: Option<Agent>,
}

/// What an install or uninstall changed (or, in a dry run, would change).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HooksChange {
    /// The agent.
    pub agent: Agent,
    /// The scope.
    pub scope: Scope,
    /// The settings file.
    pub file: PathBuf,
    /// Whether the file changes (false when there was nothing to do).
    pub changed: bool,
    /// Whether this was a dry run (nothing was written).
    pub dry_run: bool,
    /// The events whose lists got (or lost) cairn's hook.
    pub events: Vec<String>,
    /// Install: the events among them whose older cairn hook (another command) was replaced.
    #[serde(default)]
    pub replaced: Vec<String>,
    /// Settings of the file that keep the agent from running its hooks, one sentence each.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Install: what the user must know or do for the hooks to run (trust, versions, layers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Whether the file is created (install) or removed (uninstall of a file that held only
    /// cairn's entries).
    pub file_created: bool,
    /// Whether the file is removed.
    pub file_removed: bool,
    /// The change as a unified diff of the file.
    pub diff: String,
}

/// Where cairn's hooks are installed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HooksStatus {
    /// One row per agent and scope.
    pub places: Vec<HooksPlace>,
    /// Per agent listed that has any: the layers its turns keep and what the user must know.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentNotes>,
}

/// What the user must know of one agent's hooks beyond its files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentNotes {
    /// The agent.
    pub agent: Agent,
    /// The layers its turns keep.
    pub layers: Layers,
    /// One sentence each.
    pub notes: Vec<String>,
}

/// Options of [`install_all`].
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HooksInstallAllOptions {
    /// Show the changes without writing them.
    #[serde(default)]
    pub dry_run: bool,
}

/// What [`install_all`] did, agent by agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HooksInstallAll {
    /// The installs, one per agent whose user directory exists.
    pub changes: Vec<HooksChange>,
    /// The agents left out: no user directory, so the agent is not set up here.
    pub skipped: Vec<SkippedAgent>,
    /// The agents whose install failed, with why (the others are installed all the same).
    pub failed: Vec<FailedAgent>,
}

/// An agent [`install_all`] left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SkippedAgent {
    /// The agent.
    pub agent: Agent,
    /// The user directory that does not exist.
    pub dir: PathBuf,
}

/// An agent whose install [`install_all`] could not make.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FailedAgent {
    /// The agent.
    pub agent: Agent,
    /// Why, in one sentence.
    pub error: String,
}

/// One settings file and cairn's hooks in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HooksPlace {
    /// The agent.
    pub agent: Agent,
    /// The scope.
    pub scope: Scope,
    /// The settings file.
    pub file: PathBuf,
    /// Whether the file exists.
    pub exists: bool,
    /// The events that run cairn's hook.
    pub installed: Vec<String>,
    /// cairn's events that do not (all of them when nothing is installed).
    pub missing: Vec<String>,
    /// Why the file could not be read, when it could not.
    pub error: Option<String>,
    /// Settings of the file that keep the agent from running its hooks, one sentence each.
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// Adds cairn's hooks, running `command`, to the agent's settings file at the scope (user by
/// default).
pub fn install(
    places: &AgentPlaces,
    command: &HookCommand,
    options: &HooksInstallOptions,
) -> Result<HooksChange> {
    let scope = options.scope.unwrap_or_default();
    let file = places.settings_file(options.agent, scope)?;
    if options.agent.spec().shape().layout == Layout::OwnFile {
        let notes = options.agent.spec().notes(places);
        return own_file::install(options.agent, scope, file, command, options.dry_run, notes);
    }
    let settings = SettingsFile::read(options.agent, &file)?;
    let entries = settings.with_entries(options.agent, command)?;
    let text = entries.text;
    let created = settings.text.is_none() && !entries.events.is_empty();
    let owned = |events: &[&str]| events.iter().map(|e| (*e).to_owned()).collect();
    let change = HooksChange {
        agent: options.agent,
        scope,
        diff: diff(&file, settings.text.as_deref().unwrap_or_default(), &text),
        changed: !entries.events.is_empty(),
        dry_run: options.dry_run,
        events: owned(&entries.events),
        replaced: owned(&entries.replaced),
        warnings: settings.warnings(options.agent),
        notes: options.agent.spec().notes(places),
        file_created: created,
        file_removed: false,
        file,
    };
    if change.changed && !options.dry_run {
        settings::write_atomic(&change.file, &text)?;
    }
    Ok(change)
}

/// Takes cairn's hooks out of the agent's settings file at the scope (user by default).
pub fn uninstall(places: &AgentPlaces, options: &HooksUninstallOptions) -> Result<HooksChange> {
    let scope = options.scope.unwrap_or_default();
    let file = places.settings_file(options.agent, scope)?;
    if options.agent.spec().shape().layout == Layout::OwnFile {
        return own_file::uninstall(options.agent, scope, file, options.dry_run);
    }
    let settings = SettingsFile::read(options.agent, &file)?;
    let (text, events) = settings.without_entries(options.agent)?;
    // A file left as a bare `{}` (with the version a file of the agent starts with) held only
    // cairn's entries: cairn created it, so it goes.
    let removed = !events.is_empty() && is_bare(options.agent, &text);
    let change = HooksChange {
        agent: options.agent,
        scope,
        diff: diff(&file, settings.text.as_deref().unwrap_or_default(), if removed { "" } else { &text }),
        changed: !events.is_empty(),
        dry_run: options.dry_run,
        events,
        replaced: Vec::new(),
        warnings: Vec::new(),
        notes: Vec::new(),
        file_created: false,
        file_removed: removed,
        file,
    };
    if change.changed && !options.dry_run {
        if removed {
            settings::remove_file(&change.file)?
        } else {
            settings::write_atomic(&change.file, &text)?
        }
    }
    Ok(change)
}

/// Where cairn's hooks are installed, for every scope of one agent or both.
pub fn status(places: &AgentPlaces, options: &HooksStatusOptions) -> Result<HooksStatus> {
    let agents: Vec<Agent> = match options.agent {
        Some(agent) => vec![agent],
        None => Agent::ALL.to_vec(),
    };
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for agent in agents {
        for &scope in agent.scopes() {
            let file = places.settings_file(agent, scope)?;
            rows.push(place(agent, scope, file));
        }
        let said = agent.spec().notes(places);
        if !said.is_empty() {
            notes.push(AgentNotes { agent, layers: agent.layers(), notes: said });
        }
    }
    Ok(HooksStatus { places: rows, agents: notes })
}

/// Installs cairn's hooks at the user scope of every agent whose user directory exists (the
/// agent is set up on this machine); one agent's failure does not stop the others.
pub fn install_all(
    places: &AgentPlaces,
    command: &HookCommand,
    options: &HooksInstallAllOptions,
) -> Result<HooksInstallAll> {
    let mut all = HooksInstallAll { changes: Vec::new(), skipped: Vec::new(), failed: Vec::new() };
    for agent in Agent::ALL {
        let dir = agent.spec().user_dir(places);
        if !dir.is_dir() {
            all.skipped.push(SkippedAgent { agent, dir });
            continue;
        }
        let one = HooksInstallOptions { agent, scope: Some(Scope::User), dry_run: options.dry_run };
        match install(places, command, &one) {
            Ok(change) => all.changes.push(change),
            Err(e) => all.failed.push(FailedAgent { agent, error: error_text(e) }),
        }
    }
    Ok(all)
}

fn place(agent: Agent, scope: Scope, file: PathBuf) -> HooksPlace {
    if agent.spec().shape().layout == Layout::OwnFile {
        return own_file::place(agent, scope, file);
    }
    let all: Vec<String> = agent.spec().events().iter().map(|e| e.event.to_owned()).collect();
    match SettingsFile::read(agent, &file) {
        Ok(settings) => {
            let installed: Vec<String> = settings.installed(agent).into_iter().map(str::to_owned).collect();
            HooksPlace {
                agent,
                scope,
                exists: settings.text.is_some(),
                missing: all.into_iter().filter(|e| !installed.contains(e)).collect(),
                installed,
                error: None,
                warnings: settings.warnings(agent),
                file,
            }
        }
        Err(e) => HooksPlace {
            agent,
            scope,
            exists: file.exists(),
            installed: Vec::new(),
            missing: all,
            error: Some(error_text(e)),
            warnings: Vec::new(),
            file,
        },
    }
}

fn error_text(e: Error) -> String {
    e.message().to_owned()
}

fn is_bare(agent: Agent, text: &str) -> bool {
    if text.chars().filter(|c| !c.is_whitespace()).eq("{}".chars()) {
        return true;
    }
    let Some(version) = agent.spec().shape().version else {
        return false;
    };
    serde_json::from_str::<serde_json::Value>(text).ok().and_then(|v| v.as_object().cloned()).is_some_and(
        |o| o.len() == 1 && o.get("version").and_then(serde_json::Value::as_u64) == Some(version),
    )
}

pub(crate) fn diff(file: &std::path::Path, old: &str, new: &str) -> String {
    let name = file.display().to_string();
    similar::TextDiff::from_lines(old, new).unified_diff().context_radius(3).header(&name, &name).to_string()
}
