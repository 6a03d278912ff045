//! `cairn hooks install|uninstall|status`: cairn's entries in an agent's settings files (the
//! command they run is `cairn hook AGENT`, in `hook.rs`).
//!
//! `HOME`, `CLAUDE_CONFIG_DIR`, `GEMINI_CLI_HOME`, `CODEX_HOME`, `COPILOT_HOME` and the current
//! directory are read here and
//! passed to the library, which reads no environment; so are the running binary's path and
//! the store given by `--store` or `CAIRN_STORE`, which the installed command names (an agent
//! started from an IDE may see another `PATH` and no `CAIRN_STORE`).

use std::path::{Path, PathBuf};

use cairn_lib::agents::{
    self, Agent, AgentPlaces, HookCommand, HooksChange, HooksInstallAll, HooksInstallAllOptions,
    HooksInstallOptions, HooksStatus, HooksStatusOptions, HooksUninstallOptions, Layers, Scope,
};
use clap::{Args, Subcommand};

use crate::commands::GlobalArgs;
use crate::error::{CommandResult, usage};
use crate::printer::Printer;

/// The hooks commands.
#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Add cairn's hooks to an agent's settings file (nothing else in it changes).
    Install(HooksInstallArgs),
    /// Take cairn's hooks out of an agent's settings file.
    Uninstall(HooksUninstallOptions),
    /// Show which settings files hold cairn's hooks.
    Status(HooksStatusOptions),
}

/// Arguments of `cairn hooks install`: one agent, or `--all`.
#[derive(Debug, Args)]
pub struct HooksInstallArgs {
    /// The agent whose settings get cairn's hooks: claude-code, gemini-cli, codex, cursor,
    /// copilot-cli, pi or opencode.
    #[arg(value_enum, required_unless_present = "all")]
    pub agent: Option<Agent>,
    /// Every agent whose user configuration directory exists (`~/.claude`, `~/.gemini`,
    /// `~/.codex`, `~/.cursor`, `~/.copilot`), at the user scope.
    #[arg(long, conflicts_with_all = ["agent", "scope"])]
    pub all: bool,
    /// Which settings file: user (every project; the default), project (shared with the
    /// project), or local (Claude Code only: this project, not shared).
    #[arg(long, value_enum)]
    pub scope: Option<Scope>,
    /// Show the change without writing it.
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs a hooks command.
pub fn run(global: &GlobalArgs, cmd: HooksCommand, printer: &Printer) -> CommandResult {
    let places = places()?;
    match cmd {
        HooksCommand::Install(HooksInstallArgs { agent, all, scope, dry_run }) => {
            let command = hook_command(global)?;
            let Some(agent) = agent.filter(|_| !all) else {
                let done = agents::install_all(&places, &command, &HooksInstallAllOptions { dry_run })?;
                printer.result(&done, human_install_all);
                if !done.failed.is_empty() {
                    let names: Vec<&str> = done.failed.iter().map(|f| f.agent.as_str()).collect();
                    return Err(usage(format!("the install failed for {}", names.join(", "))));
                }
                return Ok(());
            };
            let options = HooksInstallOptions { agent, scope, dry_run };
            let change = agents::install(&places, &command, &options)?;
            printer.result(&change, |c| human_change(c, "add", "added", "to"));
        }
        HooksCommand::Uninstall(options) => {
            let change = agents::uninstall(&places, &options)?;
            printer.result(&change, |c| human_change(c, "remove", "removed", "from"));
        }
        HooksCommand::Status(options) => {
            let status = agents::status(&places, &options)?;
            printer.result(&status, human_status);
        }
    }
    Ok(())
}

/// What the installed hook runs: this binary, by its real path, and the store named at install
/// time (a relative one made absolute, an `s3://` address as given); with no store named, the
/// hook's own environment chooses, as every other command does.
fn hook_command(global: &GlobalArgs) -> CommandResult<HookCommand> {
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| usage(format!("cannot find cairn's own binary: {e}")))?;
    let named = global
        .store
        .clone()
        .or_else(|| std::env::var_os("CAIRN_STORE").filter(|v| !v.is_empty()).map(PathBuf::from));
    let store = match named {
        Some(store) if store.to_str().is_some_and(|s| s.contains("://")) => Some(store),
        Some(store) => Some(absolute(&store)?),
        None => None,
    };
    Ok(HookCommand::new(exe, store))
}

/// `path` made absolute: resolved through links when it exists, else joined to the current
/// directory (a store the first checkpoint will create).
fn absolute(path: &Path) -> CommandResult<PathBuf> {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .map_err(|e| usage(format!("cannot make the store's path {} absolute: {e}", path.display())))
}

/// The agents' settings directories, as the agents find them in the environment.
fn places() -> CommandResult<AgentPlaces> {
    let project = std::env::current_dir()
        .map_err(|e| crate::error::usage(format!("cannot read the current directory: {e}")))?;
    AgentPlaces::from_env(&crate::context::process_env(), &project).map_err(|e| match e.code() {
        Some(agents::HOME_UNKNOWN) => crate::error::usage("cannot find the agents' settings: set HOME"),
        _ => e,
    })
}

fn human_change(change: &HooksChange, verb: &str, done: &str, preposition: &str) -> String {
    let mut out = human_change_lines(change, verb, done, preposition);
    for warning in &change.warnings {
        out.push_str(&format!("warning: {warning}\n"));
    }
    for note in &change.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

fn human_install_all(all: &HooksInstallAll) -> String {
    let mut out = String::new();
    for change in &all.changes {
        out.push_str(&human_change(change, "add", "added", "to"));
    }
    for failed in &all.failed {
        out.push_str(&format!("error: {}: {}\n", failed.agent, failed.error));
    }
    for skipped in &all.skipped {
        out.push_str(&format!("skipped {}: no {}\n", skipped.agent, skipped.dir.display()));
    }
    out
}

fn human_change_lines(change: &HooksChange, verb: &str, done: &str, preposition: &str) -> String {
    let scope = format!("{} scope", change.scope);
    let file = change.file.display();
    if !change.changed {
        let state = if verb == "add" { "already there" } else { "not there" };
        return format!("cairn's {} hooks are {state} in {file} ({scope}); nothing changed\n", change.agent);
    }
    let events = change.events.join(", ");
    let mut out = if change.dry_run {
        format!("would {verb} cairn's {} hooks ({events}) {preposition} {file} ({scope}):\n", change.agent)
    } else {
        format!("{done} cairn's {} hooks ({events}) {preposition} {file} ({scope})\n", change.agent)
    };
    if !change.replaced.is_empty() {
        out.push_str(&format!("an older cairn hook was replaced in {}\n", change.replaced.join(", ")));
    }
    if change.dry_run {
        out.push_str(&change.diff);
    } else if change.file_created {
        out.push_str("the file was created\n");
    } else if change.file_removed {
        out.push_str("the file held nothing else and was removed\n");
    }
    out
}

fn human_status(status: &HooksStatus) -> String {
    let mut out = String::new();
    for place in &status.places {
        let state = match (&place.error, place.exists, place.installed.is_empty()) {
            (Some(error), _, _) => format!("unreadable: {error}"),
            (None, false, _) => "not installed (no file)".to_owned(),
            (None, true, true) => "not installed".to_owned(),
            (None, true, false) if place.missing.is_empty() => {
                format!("installed: {}", place.installed.join(", "))
            }
            (None, true, false) => {
                format!(
                    "partly installed: {} (missing {})",
                    place.installed.join(", "),
                    place.missing.join(", ")
                )
            }
        };
        out.push_str(&format!(
            "{:<12} {:<8} {}  {state}\n",
            place.agent.as_str(),
            place.scope.as_str(),
            place.file.display()
        ));
        for warning in &place.warnings {
            out.push_str(&format!("warning: {warning}\n"));
        }
        // An agent's notes follow its last row.
        let last = status.places.iter().rposition(|p| p.agent == place.agent);
        if last.is_some_and(|i| std::ptr::eq(&status.places[i], place))
            && let Some(notes) = status.agents.iter().find(|a| a.agent == place.agent)
        {
            let layers = match notes.layers {
                Layers::CodeAndConversation => "code and conversation",
                Layers::CodeOnly => "code only",
            };
            out.push_str(&format!("  {} keeps: {layers}\n", place.agent.title()));
            for note in &notes.notes {
                out.push_str(&format!("  note: {note}\n"));
            }
        }
    }
    out
}
