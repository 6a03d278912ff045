//! `cairn hooks install|uninstall|status`: cairn's entries in an agent's settings files (the
//! command they run is `cairn hook AGENT`, in `hook.rs`).
//!
//! `HOME`, `CLAUDE_CONFIG_DIR`, `GEMINI_CLI_HOME` and the current directory are read here and
//! passed to the library, which reads no environment.
//!

use cairn_lib::agents::{
    self, AgentPlaces, HooksChange, HooksInstallOptions, HooksStatus, HooksStatusOptions,
    HooksUninstallOptions,
};
use clap::Subcommand;

use crate::commands::GlobalArgs;
use crate::error::CommandResult;
use crate::printer::Printer;

/// The hooks commands.
#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Add cairn's hooks to an agent's settings file (nothing else in it changes).
    Install(HooksInstallOptions),
    /// Take cairn's hooks out of an agent's settings file.
    Uninstall(HooksUninstallOptions),
    /// Show which settings files hold cairn's hooks.
    Status(HooksStatusOptions),
}

/// Runs a hooks command.
pub fn run(_global: &GlobalArgs, cmd: HooksCommand, printer: &Printer) -> CommandResult {
    let places = places()?;
    match cmd {
        HooksCommand::Install(options) => {
            let change = agents::install(&places, &options)?;
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
    }
    out
}
