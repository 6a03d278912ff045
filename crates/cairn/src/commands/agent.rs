//! `cairn agent status|allow|deny|reset`: what MCP agents may do. The answer is kept in the
//! store's settings, so it holds for every server, including ones already running. `status`
//! (and each change) also shows what Pi's own settings files give the pi profile's two tools
//! while the store leaves them unset, read as a pi-profile server started here reads them.

use cairn_lib::ops::permissions::{AgentStatus, PiSettingsFiles, parse_capabilities};
use cairn_lib::ops::transcript::AgentPlaces;
use clap::Subcommand;

use crate::commands::GlobalArgs;
use crate::context::open_store;
use crate::error::CommandResult;
use crate::printer::Printer;

/// The agent commands.
#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Show what agents may do: save, restore, remove, transcript-save, transcript-restore.
    Status,
    /// Let agents do these from now on.
    Allow {
        /// Capabilities: save, restore, remove, transcript-save, transcript-restore or all.
        #[arg(required = true, value_name = "CAPABILITY")]
        capabilities: Vec<String>,
    },
    /// Refuse these to agents from now on.
    Deny {
        /// Capabilities: save, restore, remove, transcript-save, transcript-restore or all.
        #[arg(required = true, value_name = "CAPABILITY")]
        capabilities: Vec<String>,
    },
    /// Return these to their defaults (save allowed; everything else refused).
    Reset {
        /// Capabilities: save, restore, remove, transcript-save, transcript-restore or all.
        #[arg(required = true, value_name = "CAPABILITY")]
        capabilities: Vec<String>,
    },
}

/// Runs an agent command.
pub fn run(global: &GlobalArgs, cmd: AgentCommand, printer: &Printer) -> CommandResult {
    let mut store = open_store(global)?;
    let status = match cmd {
        AgentCommand::Status => store.agent_status()?,
        AgentCommand::Allow { capabilities } => store.agent_allow(&parse_capabilities(&capabilities)?)?,
        AgentCommand::Deny { capabilities } => store.agent_deny(&parse_capabilities(&capabilities)?)?,
        AgentCommand::Reset { capabilities } => store.agent_reset(&parse_capabilities(&capabilities)?)?,
    };
    let status = match pi_settings_files() {
        Some(files) => status.with_pi_settings(&files),
        None => status,
    };
    printer.result(&status.in_words(&cairn_mcp::words::CliWords), human);
    Ok(())
}

/// Pi's settings files for this directory, found as a pi-profile server finds them (`None`
/// when no home directory is known, so Pi's directory cannot be found).
fn pi_settings_files() -> Option<PiSettingsFiles> {
    let env = crate::context::process_env();
    let cwd = std::env::current_dir().ok()?.to_string_lossy().into_owned();
    let places = AgentPlaces::from_env(&env, cwd).ok()?;
    Some(PiSettingsFiles::new(&places, &env))
}

fn human(status: &AgentStatus) -> String {
    let mut out: String = status
        .capabilities
        .iter()
        .map(|c| {
            format!(
                "{:<18} {}{}\n",
                c.capability.as_str(),
                if c.allowed { "allowed" } else { "refused" },
                match (c.set, c.from_pi_settings) {
                    (true, _) => "",
                    (false, true) => "  (default, from Pi's settings)",
                    (false, false) => "  (default)",
                }
            )
        })
        .collect();
    // Part of the answer, not a side note: while a value is invalid everything reads refused.
    for warning in &status.warnings {
        out.push_str(&format!("warning: {warning}\n"));
    }
    if let Some(pi) = &status.pi_settings {
        let word = |allowed: bool| if allowed { "allow" } else { "refuse" };
        out.push_str(&format!(
            "Pi's settings, for the pi profile where the store leaves a tool unset: {} snapshot_save, {} snapshot_restore\n",
            word(pi.save_allowed),
            word(pi.restore_allowed),
        ));
        for file in &pi.existing {
            let untrusted = *file == pi.files.project && !pi.files.project_trusted;
            let note = if untrusted {
                " (untrusted: it may only turn a tool off; CAIRN_PI_TRUST_PROJECT=1 trusts it)"
            } else {
                ""
            };
            out.push_str(&format!("  from {}{note}\n", file.display()));
        }
        for warning in &pi.warnings {
            out.push_str(&format!("warning: {warning}\n"));
        }
    }
    out
}
